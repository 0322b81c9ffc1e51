"""A state machine's moves as data: each state and the states it may move to. A move the table does not lead to
is a defect of the broker (IllegalTransition), unless a fault asks for it."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

State = TypeVar("State", bound=enum.Enum)


class IllegalTransition(AssertionError):
    """The broker moved a state machine where its table does not lead: a defect of the reference broker."""


@dataclass(frozen=True)
class Transitions(Generic[State]):
    what: str  # "transaction", "classic group": named in the error
    next: Mapping[State, frozenset[State]]

    def moved(self, current: State, to: State, faulted: bool = False) -> State:
        """``to``, when the table leads there from ``current`` (or a fault asks for the move)."""
        if to not in self.next[current] and not faulted:
            raise IllegalTransition(f"{self.what} state {current.value} -> {to.value}")
        return to

    def previous(self, to: State) -> set[State]:
        """The states a machine may reach ``to`` from (the form Kafka's sources list them in)."""
        return {state for state, nexts in self.next.items() if to in nexts}
