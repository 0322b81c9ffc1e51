"""Bulk mutants from traced seeds: a protocol states, per operator, a :class:`Rule` (which seeds, which field,
which choices, how to re-frame, what the spec permits); :class:`RuleMutator` applies the shared operator
(``strategies.operators``) and builds the :class:`~strategies.engine.Mutant`.

A protocol's bulk mutator subclasses :class:`RuleMutator` and supplies two things: ``seed(group)``, a traced
seed of a named group (with a fresh request id where the answer is matched to it), and
``reframe(seed, frame, mode)``, which fixes what a mutation made untrue but the operator did not mean to break
(the outer length, a checksum).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Callable, Union

from wirecheck.protocols.reactions import Reaction
from wirecheck.strategies import operators
from wirecheck.strategies.binary import Span
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.traced import TracedSeed

#: re-framing modes: fix the outer length and any checksum over it; fix the checksum only (the outer length is
#: the lie being told); leave the bytes as the operator made them
WHOLE, CHECKSUM, AS_IS = "whole", "checksum", "as-is"

#: a permitted reaction, or a function of (seed, span, mutated bytes before re-framing) giving one
Permitted = Union[Reaction, Callable[[TracedSeed, Span, bytes], Reaction]]


@dataclass(frozen=True)
class Rule:
    """How one protocol applies one operator, and what the spec permits the target to do with the result."""

    seeds: str  # the seed group the mutant starts from (the protocol's ``seed(group)``)
    field: str | Callable[[TracedSeed, random.Random], Span]  # the field the operator breaks: a path, or a chooser
    reaction: Permitted
    # what the operator picks from (values to set, byte counts to add, byte strings to insert), or a function of
    # (mutator, seed) giving them for this mutant (another seed's bytes, say)
    choices: tuple | Callable[["RuleMutator", TracedSeed], tuple] = ()
    reframe: str = WHOLE
    incomplete: bool | Callable[[TracedSeed, Span, bytes], bool] = False  # the frame promises bytes never sent


class RuleMutator:
    """Seeded mutants, an endless iterator of :class:`Mutant`: each one shared operator applied to a traced seed
    as the protocol's rule for it says."""

    RULES: dict[str, Rule] = {}
    OPERATORS: tuple[str, ...] = ()
    WEIGHTS: dict[str, float] = {}  # an operator's share of the mutants (default 1); empty: all equal

    def __init__(self, rng: random.Random, enabled: tuple[str, ...] | None = None):
        self.rng = rng
        self.operators = tuple(self.OPERATORS if enabled is None else enabled)
        # each operator's apply function, looked up once (the registry is read on every mutant otherwise)
        self._apply = {name: operators.get(name).apply for name in self.RULES}
        self._cumulative = (list(itertools.accumulate(self.WEIGHTS.get(name, 1) for name in self.operators))
                            if self.WEIGHTS else None)

    def __iter__(self):
        return self

    def __next__(self) -> Mutant:
        if self._cumulative is None:
            return self.mutant(self.rng.choice(self.operators))
        return self.mutant(self.rng.choices(self.operators, cum_weights=self._cumulative)[0])

    # -- what the protocol supplies

    def seed(self, group: str) -> TracedSeed:
        raise NotImplementedError

    def reframe(self, seed: TracedSeed, frame: bytes, mode: str) -> bytes:
        raise NotImplementedError

    # -- the shared part

    def mutant(self, operator: str) -> Mutant:
        rule = self.RULES.get(operator)
        if rule is None:
            raise ValueError(f"unknown operator {operator!r}")
        return self.build(operator, rule, self.seed(rule.seeds))

    REDRAW = 8  # tries at drawing a given request kind by its operator's seed group

    def mutant_like(self, operator: str, request: str) -> Mutant:
        """A new mutant by ``operator`` of a request of kind ``request`` (no version) where the operator's seed
        group draws one within a few tries, else of whatever it drew (a guided run redraws a corpus recipe)."""
        rule = self.RULES.get(operator)
        if rule is None:
            raise ValueError(f"unknown operator {operator!r}")
        seed = self.seed(rule.seeds)
        for _ in range(self.REDRAW - 1):  # seeds are cheap to draw, mutants less so: the seed is chosen first
            if seed.name == request:
                break
            seed = self.seed(rule.seeds)
        return self.build(operator, rule, seed)

    def build(self, operator: str, rule: Rule, seed: TracedSeed) -> Mutant:
        """The mutant of ``seed`` the rule makes (a protocol that picks the seed before the operator calls it)."""
        span = rule.field(seed, self.rng) if callable(rule.field) else seed.field(rule.field)
        choices = rule.choices(self, seed) if callable(rule.choices) else rule.choices
        broken = self._apply[operator](self.rng, seed.frame, span, choices)
        reaction = rule.reaction if isinstance(rule.reaction, Reaction) else rule.reaction(seed, span, broken)
        incomplete = rule.incomplete(seed, span, broken) if callable(rule.incomplete) else rule.incomplete
        frame = broken if rule.reframe == AS_IS else self.reframe(seed, broken, rule.reframe)
        return Mutant(frame, operator, span.path, reaction, seed.context, incomplete, request=request_of(seed))


def request_of(seed: TracedSeed) -> str:
    """The request kind a mutant of ``seed`` is, with the seed's version where it has one (Kafka's)."""
    version = getattr(seed, "version", None)
    return seed.name if version is None else f"{seed.name} v{version}"
