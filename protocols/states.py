"""Reaction states: what a protocol's answers mean to a fuzzer that learns from them. Pure data and lookups.

A *reaction state* is one cell of a protocol's state-coverage map: the session state a connection was in, the
request kind sent (with its version where the protocol versions requests), and the target's reaction normalised
by the protocol (``answer`` or ``answer:<reply>``, ``error:<name>``, ``close``, ``silence``, ``malformed``).

Each protocol declares its :class:`StateModel` beside its spec (``protocols/<name>/states.py``, referenced by
``ProtocolSpec.states``): the session states of one connection and the answered requests that move between them,
how its error codes are named, and the cells its clause catalogue names (every error a clause names, with the
request that draws it). The bulk engine reads only this declaration: no protocol is coded in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from wirecheck.protocols.reactions import ANSWER, CLOSE, ERROR, MALFORMED, RESET, SILENCE, Observation

ANY = "*"  # a transition that applies in every session state
ENDED = "ended"  # a connection the target closed: the next request goes on a new one, in the initial state
#: the reactions every protocol normalises to (an error and, where the protocol names its replies, an answer carry
#: a name after a colon)
KINDS = (ANSWER, ERROR, CLOSE, SILENCE, MALFORMED)


@dataclass(frozen=True)
class Transition:
    """An answered request that moves a connection from one session state to another."""

    before: str  # a session state, or ANY
    request: str  # the request kind (no version)
    reaction: str  # the normalised reaction that makes the move (exact: "answer:AppendSetup", "answer")
    after: str


@dataclass(frozen=True)
class Cell:
    """A (request, reaction) cell a clause names: the request kind that draws it and the reaction."""

    clause: str
    request: str
    reaction: str


@dataclass(frozen=True)
class StateModel:
    """A protocol's reaction states, as data.

    ``initial``: a new connection's session state (after the protocol's greeting, where it has one).
    ``states``: every session state, with why it matters (what a server does differently in it).
    ``transitions``: the moves. ``error_names``: the error-code -> name table (a code it lacks reads ``error:<n>``).
    ``named_answers``: an answer's reaction carries the reply's name (``answer:<detail>``) where the classifier's
    detail is the reply's name (Pravega: one reply type per outcome). ``requests``: every request kind of the
    protocol. ``error_vocabulary``: how clause texts write an error -> its name in a reaction (``error:<name>``).
    ``cells``: what the catalogue names (:func:`named_errors` finds them; a test holds the two together). ``steps``: the request kinds a
    guided run may send, valid, to reach a state (the protocol's adapter builds them: ``Adapter.step(kind, rng)``;
    a step whose request carries values of an earlier step's answer is built from it: ``Mutant.build``); the
    sequence of them that reaches each state follows from ``transitions`` (:func:`step_paths`).
    """

    initial: str
    states: Mapping[str, str]
    transitions: tuple[Transition, ...] = ()
    error_names: Mapping[int, str] | Callable[[int], str] = field(default_factory=dict)
    named_answers: bool = False
    requests: tuple[str, ...] = ()
    error_vocabulary: Mapping[str, str] = field(default_factory=dict)
    cells: tuple[Cell, ...] = ()
    steps: tuple[str, ...] = ()

    def __post_init__(self):
        if self.initial not in self.states:
            raise ValueError(f"initial state {self.initial!r} is not among {sorted(self.states)}")
        for move in self.transitions:
            for state in (move.before, move.after):
                if state != ANY and state not in self.states:
                    raise ValueError(f"transition {move}: unknown state {state!r}")
        # (state, request, reaction) -> next state, with ANY looked up second
        object.__setattr__(self, "_moves", {(m.before, m.request, m.reaction): m.after for m in self.transitions})

    def error_name(self, code: int | None) -> str:
        names = self.error_names
        if callable(names):
            return names(code) if code is not None else "?"
        return names.get(code, str(code)) if code is not None else "?"

    def reaction(self, obs: Observation) -> str:
        """The normalised reaction of one observation."""
        kind = obs.kind
        if kind == ERROR:
            return f"{ERROR}:{self.error_name(obs.code)}"
        if kind == ANSWER:
            return f"{ANSWER}:{obs.detail}" if self.named_answers and isinstance(obs.detail, str) and obs.detail \
                else ANSWER
        if kind in (CLOSE, RESET):
            return CLOSE
        if kind == SILENCE:
            return SILENCE
        return MALFORMED

    def after(self, state: str, request: str, reaction: str) -> str:
        """The session state after ``request`` drew ``reaction`` in ``state``."""
        if reaction == CLOSE:
            return ENDED
        moves: dict = self._moves  # type: ignore[attr-defined]
        return moves.get((state, request, reaction)) or moves.get((ANY, request, reaction)) or state


def step_paths(model: StateModel, kinds: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Session state -> the shortest sequence of step requests (of ``kinds``, each answered as its transition
    says) that reaches it from the initial state; the initial state's is empty. Breadth first, in the order the
    transitions are declared: the same paths every time."""
    paths: dict[str, tuple[str, ...]] = {model.initial: ()}
    frontier = [model.initial]
    while frontier:
        reached = []
        for state in frontier:
            for move in model.transitions:
                if move.request in kinds and move.before in (state, ANY) and move.after not in paths:
                    paths[move.after] = paths[state] + (move.request,)
                    reached.append(move.after)
        frontier = reached
    return paths


def named_errors(model: StateModel, catalogue) -> list[tuple[str, str]]:
    """(clause id, error reaction) for every error a clause's requirement names, as the vocabulary writes it."""
    found = []
    patterns = [(re.compile(rf"(?<!\w){re.escape(text)}(?!\w)"), name)
                for text, name in model.error_vocabulary.items()]
    for clause in catalogue:
        for pattern, name in patterns:
            if pattern.search(clause.requirement) and (clause.id, f"{ERROR}:{name}") not in found:
                found.append((clause.id, f"{ERROR}:{name}"))
    return found


def request_kind(request: str) -> str:
    """A request label without its version ("Produce v9" -> "Produce")."""
    return request.split(" v", 1)[0]
