"""Guided bulk fuzzing: mutants drawn from what the target's answers taught the run (AFLNet's state-guided loop,
on a black box). Pure: the coverage map (strategies/coverage.py) is filled by the I/O loop as batches are judged,
and read here each time a new sequence is planned.

A *recipe* is how a mutant was made: the session-state prefix it was sent after (valid step requests, e.g.
Pravega's SetupAppend), the operator, and the request kind. A recipe whose mutant reached a new reaction state or
a new transition joins the corpus. Each sequence is planned as AFLNet plans one:

* prefix: the steps that reach a session state, chosen with the least mutants sent in it so far (a step prefix
  not yet tried comes first: one per state the declared transitions lead to). A step whose request carries a
  value of an earlier step's answer (a producer id) is made when that answer is read (``Mutant.build``, sent by
  the I/O loop), and its prefix begins a batch;
* mutate: mutants of corpus recipes, weighted towards those whose reaction states are the least visited, each
  chosen when it is sent, among a few so drawn, as the one most likely to make a transition not seen yet (AFLNet's
  measure) from the reaction state it follows on its connection: the I/O loop says which connection the next batch
  goes on (``CoverageMap.following``), a mutant later in a batch follows the one before it, and what a recipe
  draws, and whether that keeps the connection open, is what its mutants drew so far (``CoverageMap.drawn``);
* suffix: fresh mutants drawn as blind mode draws them (exploration), so new recipes keep coming.

Everything is drawn from the run's seeded generator and from the target's reactions, in the order the engine judges
them (targets/fuzzing.py judges batches in the order it sent them): the seed reproduces a guided run exactly
against a target that reacts the same way. ``feedback=False`` plans the same kind of sequences without reading
the map: the same ingredients (steps and operators) drawn blind, the baseline bench/guided.py measures against.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterator

from wirecheck.protocols.states import request_kind, step_paths
from wirecheck.strategies.coverage import CoverageMap, State
from wirecheck.strategies.engine import Mutant

SEQUENCE = 8  # mutants planned after a prefix
EXPLORE = 0.15  # share of a sequence's mutants drawn fresh (the suffix) once the corpus has recipes
REWEIGH = 32  # sequences planned between two weighings of the corpus (it changes slowly)
STEP = "step"  # a recipe's operator when it is a valid step request
AIMS = 16  # corpus recipes drawn for each mutated mutant: the one aiming best at a new transition is sent
OPEN = 0.35  # worth of keeping the connection open (the next mutant on it can aim again), a new transition's is 1

Recipe = tuple[tuple[str, ...], str, str]  # (step prefix, operator, request kind)
Step = Callable[[str, random.Random], Mutant]  # a valid request of a step kind (Adapter.step)
Where = tuple[str, State | str]  # (session state, reaction state) a mutant follows on its connection


@dataclass
class Entry:
    """A corpus recipe and the reaction states (request kind, reaction) it was first to reach."""

    recipe: Recipe
    found: list = field(default_factory=list)  # in the order found (a list: the run must not depend on hashing)
    picked: int = 0


class Guided:
    """An endless iterator of mutants for the bulk engine, steered by ``coverage``."""

    def __init__(self, mutator: Iterator[Mutant], coverage: CoverageMap, rng: random.Random,
                 step: Step | None = None, feedback: bool = True, kinds: tuple[str, ...] | None = None):
        self.mutator, self.coverage, self.rng, self.step, self.feedback = mutator, coverage, rng, step, feedback
        model = coverage.model
        kinds = model.steps if kinds is None else kinds  # the step kinds the adapter can make against this target
        self.steps = tuple(kind for kind in model.steps if kind in kinds) if step is not None else ()
        #: session state -> the steps that reach it: those the declared transitions lead along (protocols/states.py
        #: step_paths), until steps are seen to reach one otherwise. A state whose steps were answered with an error
        #: (Kafka's InitProducerId meeting a transaction left ongoing) is aimed at again: it is the least visited
        self.prefixes: dict[str, tuple[str, ...]] = step_paths(model, self.steps)
        self.paths = [path for path in self.prefixes.values() if path]
        self.untried = list(self.paths)
        self.corpus: list[Entry] = []
        self._entries: dict[Recipe, Entry] = {}
        self._queue: deque[Mutant | _Aim] = deque()
        #: aimed-at session state -> the corpus's weights, recomputed after it grew or every REWEIGH sequences
        self._weights: dict[str | None, list[float]] = {}
        self._planned = 0
        self._batches = -1  # the I/O loop's batches announced when the last mutant was sent (CoverageMap.batches)
        #: (session state, reaction state) the next mutant of the same batch follows (None: not foreseen)
        self._then: Where | None = None

    def __iter__(self):
        return self

    def __next__(self) -> Mutant:
        if not self._queue:
            if self.feedback:
                self._learn()
            self._plan()
        item = self._queue.popleft()
        if not self.feedback:  # nothing to aim: every item was made when planned
            assert isinstance(item, Mutant)
            return item
        where = self._where()
        mutant = self._aim(item, where) if isinstance(item, _Aim) else item
        self._foresee(mutant, where)
        return mutant

    # -- learning from the map

    def _learn(self) -> None:
        """Recipes whose mutants reached something new join the corpus; a session state first reached after a
        prefix is reached by that prefix from then on."""
        fresh, self.coverage.fresh = self.coverage.fresh, []
        for mutant, found in fresh:
            if not mutant.origin or mutant.build is not None:  # made from its prefix's answers: not sent alone
                continue
            cell = found if len(found) == 3 else found[1]  # a new reaction state, or a new pair's second
            state, request, reaction = cell
            self.prefixes.setdefault(state, mutant.origin[0])
            entry = self._entries.get(mutant.origin)
            if entry is None:
                entry = self._entries[mutant.origin] = Entry(mutant.origin)
                self.corpus.append(entry)
            if (request_kind(request), reaction) not in entry.found:
                entry.found.append((request_kind(request), reaction))

    # -- planning a sequence

    def _plan(self) -> None:
        state, prefix = self._prefix()
        steps = [self._step(kind, prefix) for kind in prefix]
        if any(step.build is not None for step in steps):  # read its answers before the later steps are made
            steps[0].leads = True
        self._queue.extend(steps)
        self._planned += 1
        weights = self._weights.get(state, [])
        if self.feedback and self.corpus and (len(weights) != len(self.corpus) or self._planned % REWEIGH == 0):
            weights = self._weights[state] = self._weigh(state)
        for _ in range(SEQUENCE):
            if weights and self.rng.random() >= EXPLORE:  # a corpus recipe, chosen when it is sent
                self._queue.append(_Aim(prefix, weights))
            else:
                self._queue.append(self._fresh(prefix))

    def _prefix(self) -> tuple[str | None, tuple[str, ...]]:
        """The session state the next sequence aims at (None: not known yet) and the steps that reach it."""
        rng = self.rng
        if not self.steps:
            return self.coverage.model.initial, ()
        if not self.feedback:
            return None, rng.choice([(), *self.paths])
        if self.untried:
            return None, self.untried.pop(0)
        # the least explored session state (AFLNet's state selection), ties broken by the seeded generator
        visits = self.coverage.in_state
        states = sorted(self.prefixes)
        state = rng.choices(states, [1.0 / (1 + visits.get(state, 0)) for state in states])[0]
        return state, self.prefixes[state]

    def _weigh(self, state: str | None) -> list[float]:
        """Each corpus recipe's weight for a sequence aimed at ``state``: higher the less visited its rarest
        reaction state is in that session state (AFLNet picks seeds per state), and the less it was picked."""
        reached = self._reached(state)
        return [1.0 / (1 + min(reached.get(cell, 0) for cell in entry.found) + entry.picked / 64)
                for entry in self.corpus]

    # -- aiming at transitions not seen yet

    def _where(self) -> Where | None:
        """The (session state, reaction state) the next mutant follows on its connection: where the I/O loop said
        its batch goes on, or after the mutant before it in the same batch (None: not foreseen)."""
        coverage = self.coverage
        if coverage.batches != self._batches:  # it begins a batch
            self._batches = coverage.batches
            return coverage.ahead
        return self._then

    def _aim(self, aim: _Aim, where: Where | None) -> Mutant:
        """A mutant of the corpus recipe, among ``AIMS`` drawn, whose reactions so far would most often make a
        transition from ``where`` not seen yet (or seen the least), and keep the connection open."""
        corpus = self.corpus[:len(aim.weights)]  # the corpus as it was weighed
        if where is None:
            drawn = self.rng.choices(corpus, aim.weights)
        else:  # half by weight (rare reaction states), half alike (any recipe can make a new transition)
            drawn = self.rng.choices(corpus, aim.weights, k=AIMS // 2) + self.rng.choices(corpus, k=AIMS // 2)
        best, score = drawn[0], -1.0
        if where is not None:
            state, last = where
            pairs, followed, known = self.coverage.pairs, self.coverage.followed, self.coverage.drawn
            for entry in drawn:
                reactions = known.get(entry.recipe[1:])
                if not reactions:  # never judged yet: as good as a new transition
                    worth = 1.0 + OPEN
                else:
                    total = sum(reactions.values())
                    worth = 0.0
                    for (request, reaction), count in reactions.items():
                        cell = (state, request, reaction)
                        worth += count * (1.0 / (1 + pairs.get((last, cell), 0)) + (OPEN if cell in followed else 0.0))
                    worth /= total
                if worth > score:
                    best, score = entry, worth
        best.picked += 1
        return self._redraw(best.recipe, aim.prefix)

    def _foresee(self, mutant: Mutant, where: Where | None) -> None:
        """What the next mutant of the same batch follows: the reaction state this one's recipe drew most."""
        reactions = self.coverage.drawn.get(mutant.origin[1:]) if mutant.origin else None
        if where is None or not reactions:
            self._then = None
            return
        request, reaction = max(reactions.items(), key=lambda item: item[1])[0]
        state = where[0]
        self._then = (self.coverage.model.after(state, request_kind(request), reaction), (state, request, reaction))

    def _reached(self, state: str | None) -> dict[tuple[str, str], int]:
        """(request kind, reaction) -> mutants that drew it in ``state`` (in any state for None)."""
        counts: dict[tuple[str, str], int] = {}
        for (sent_in, request, reaction), count in self.coverage.cells.items():
            if state is None or sent_in == state:
                key = (request_kind(request), reaction)
                counts[key] = counts.get(key, 0) + count
        return counts

    # -- making the mutants

    def _fresh(self, prefix: tuple[str, ...]) -> Mutant:
        return self._origin(next(self.mutator), prefix)

    def _origin(self, mutant: Mutant, prefix: tuple[str, ...]) -> Mutant:
        """``mutant`` with its recipe: the prefix, the rule's name (the operator itself, or its family where a
        detail was added to it) and the request kind."""
        rules = getattr(self.mutator, "RULES", {})
        mutant.origin = (prefix, mutant.operator if mutant.operator in rules else mutant.family,
                         request_kind(mutant.request))
        return mutant

    def _redraw(self, recipe: Recipe, prefix: tuple[str, ...]) -> Mutant:
        """A new mutant of the recipe's operator and request kind (the protocol's mutator draws the bytes), sent
        after ``prefix``: the recipe's own or the chosen state's."""
        _, operator, kind = recipe
        if operator == STEP:
            return self._step(kind, prefix)
        make: Callable[[str, str], Mutant] | None = getattr(self.mutator, "mutant_like", None)
        if make is None:  # a mutator that cannot make a named operator's mutant: a fresh one instead
            return self._fresh(prefix)
        try:
            return self._origin(make(operator, kind), prefix)
        except LookupError:  # no seed of the enabled requests fits the operator
            return self._fresh(prefix)

    def _step(self, kind: str, prefix: tuple[str, ...]) -> Mutant:
        assert self.step is not None  # a prefix has steps only when the adapter makes them
        mutant = self.step(kind, self.rng)
        mutant.origin = (prefix, STEP, kind)
        return mutant


@dataclass
class _Aim:
    """A place in a planned sequence for a corpus recipe, chosen when it is sent (:meth:`Guided._aim`)."""

    prefix: tuple[str, ...]
    weights: list[float]


def guided(adapter, mutants: Iterator[Mutant], coverage: CoverageMap, rng: random.Random | None = None,
           feedback: bool = True) -> Guided:
    """The guided iterator over the adapter's mutator ``mutants`` (its own generator unless ``rng``), with the
    adapter's step requests (``Adapter.step``) where it has them: of the kinds it names in ``step_kinds`` (every
    step the protocol declares, without it)."""
    drawn: random.Random = rng or getattr(mutants, "rng", None) or random.Random(0)
    return Guided(mutants, coverage, drawn, getattr(adapter, "step", None), feedback,
                  getattr(adapter, "step_kinds", None))
