"""The run's event stream: case started, exchange, verdict, run finished.

The runner emits; the reporters subscribe (the JSON-lines and transcript writer, the terminal summary,
Allure). A reporter is any object with ``handle(event)``; it sees every event and ignores what it does not
need. Exchange events (every byte sent or received) are emitted only when a subscriber asks for them, so the
bulk fuzz path pays nothing for them otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from wirecheck.protocols.verdicts import Divergence, Verdict

if TYPE_CHECKING:
    from wirecheck.targets.runner.case import CaseState


class Subscriber(Protocol):
    def handle(self, event: Any) -> None: ...


@dataclass(frozen=True)
class CaseStarted:
    case: "CaseState"


@dataclass(frozen=True)
class Exchange:
    case: "CaseState"
    event: Any  # protocols.transcript.Event: connect, send, recv, partial, closed, reset, silent, close, note


@dataclass(frozen=True)
class VerdictReached:
    case: "CaseState"
    verdict: Verdict
    message: str
    divergence: Divergence | None
    reproduce: str | None
    keep_transcript: bool  # the transcript is written for this verdict (failures always; passes on request)
    params: dict = field(default_factory=dict)  # the case's pytest parameters (message, version, ...)
    blocking: Divergence | None = None  # BLOCKED: the divergence (of another clause) that blocked the case


@dataclass(frozen=True)
class RunFinished:
    controller: bool  # True in the process that owns the whole run (not an xdist worker)
    exit_status: int | None = None  # the controller's: the exit code the run ends with


class EventStream:
    def __init__(self):
        self._subscribers: list[Subscriber] = []
        self.wants_exchanges = False

    def subscribe(self, subscriber: Subscriber, exchanges: bool = False) -> None:
        self._subscribers.append(subscriber)
        self.wants_exchanges |= exchanges

    def emit(self, event) -> None:
        for subscriber in self._subscribers:
            subscriber.handle(event)
