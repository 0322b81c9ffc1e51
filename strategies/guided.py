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
* mutate: mutants of corpus recipes, weighted towards those whose reaction states are the least visited;
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
from wirecheck.strategies.coverage import CoverageMap
from wirecheck.strategies.engine import Mutant

SEQUENCE = 8  # mutants planned after a prefix
EXPLORE = 0.3  # share of a sequence's mutants drawn fresh (the suffix) once the corpus has recipes
REWEIGH = 32  # sequences planned between two weighings of the corpus (it changes slowly)
STEP = "step"  # a recipe's operator when it is a valid step request

Recipe = tuple[tuple[str, ...], str, str]  # (step prefix, operator, request kind)
Step = Callable[[str, random.Random], Mutant]  # a valid request of a step kind (Adapter.step)


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
        self._queue: deque[Mutant] = deque()
        #: aimed-at session state -> the corpus's weights, recomputed after it grew or every REWEIGH sequences
        self._weights: dict[str | None, list[float]] = {}
        self._planned = 0

    def __iter__(self):
        return self

    def __next__(self) -> Mutant:
        if not self._queue:
            if self.feedback:
                self._learn()
            self._plan()
        return self._queue.popleft()

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
            entry = self._pick(weights) if weights and self.rng.random() >= EXPLORE else None
            self._queue.append(self._redraw(entry.recipe, prefix) if entry is not None else self._fresh(prefix))

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

    def _pick(self, weights: list[float]) -> Entry:
        entry = self.rng.choices(self.corpus, weights)[0]
        entry.picked += 1
        return entry

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


def guided(adapter, mutants: Iterator[Mutant], coverage: CoverageMap, rng: random.Random | None = None,
           feedback: bool = True) -> Guided:
    """The guided iterator over the adapter's mutator ``mutants`` (its own generator unless ``rng``), with the
    adapter's step requests (``Adapter.step``) where it has them: of the kinds it names in ``step_kinds`` (every
    step the protocol declares, without it)."""
    drawn: random.Random = rng or getattr(mutants, "rng", None) or random.Random(0)
    return Guided(mutants, coverage, drawn, getattr(adapter, "step", None), feedback,
                  getattr(adapter, "step_kinds", None))
