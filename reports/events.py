"""The run's event stream: a case started, its verdict, a verdict the run's end revised, the run finished.

The runner (targets/runner/) decides and emits; the outputs subscribe (the run directory's writer, the terminal
summary, summary.html, Allure, and pytest's own terminal counts and JUnit XML). A subscriber is any object with
``handle(event)``; it sees every event and ignores what it does not need. Every event is a frozen record: what a
subscriber receives is what every other one receives, whatever the order they subscribed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from wirecheck.protocols.clauses import Clause
from wirecheck.protocols.transcript import Event, Transcript
from wirecheck.protocols.verdicts import Divergence, Verdict


class Subscriber(Protocol):
    def handle(self, event: Any) -> None: ...


@dataclass(frozen=True)
class CaseStarted:
    case_id: str
    nodeid: str
    protocol: str
    clause: Clause  # the case's own clause


@dataclass(frozen=True)
class CaseRecord:
    """What one case amounted to, as the runner judged it (the source of its line in the case records)."""

    case_id: str
    nodeid: str
    protocol: str
    clause: Clause  # the case's own clause (a divergence's, when one was found, is ``divergence.clause``)
    verdict: Verdict
    message: str
    divergence: Divergence | None
    blocking: Divergence | None  # BLOCKED: the divergence (of another clause) that blocked the case
    reproduce: str | None
    duration_s: float
    target: str | None  # the target's address, once resolved
    message_type: str | None  # the message a per-version case sends, and its version
    version: Any
    #: a copy of the conversation, when the verdict keeps it (failures always; passes on request); else None
    transcript: Transcript | None
    attempts: tuple[tuple[str, tuple[Event, ...]], ...]  # (outcome, events) of earlier runs (--confirm)
    facts: Mapping[str, Any]
    coverage: Mapping[str, Any]  # bulk cases: protocol -> the state-coverage map
    differential: Mapping[str, Any] | None  # --differential: answers compared of answers exchanged
    evidence: tuple[Any, ...]  # reports.records.Evidence: files kept beside a kept transcript


@dataclass(frozen=True)
class VerdictReached:
    case: CaseRecord


@dataclass(frozen=True)
class VerdictRevised:
    """The run's end changed a case's verdict once every case was recorded (reports.rootcause): a BLOCKED case
    that carries the failure of a clause no case of its own reported, or a failed client scenario BLOCKED by a
    clause it depends on that FAILED."""

    nodeid: str
    case_id: str
    was: Verdict
    now: Verdict
    message: str


@dataclass(frozen=True)
class RunFinished:
    controller: bool  # True in the process that owns the whole run (not an xdist worker)
    exit_status: int | None = None  # the controller's: the exit code the run ends with
    #: the controller's: every worker's case records, merged once and revised (read-only views)
    records: tuple[Mapping[str, Any], ...] = ()
    document: Mapping[str, Any] | None = None  # the controller's run.json
    run_dir: Path | None = None  # where the run's records are (None: no case was recorded)
    revised: bool = False  # some verdict was revised: the case records on disk are out of date
    nothing_ran: str | None = None  # targets were given but no collected case could run: the line saying so


class EventStream:
    def __init__(self):
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def emit(self, event) -> None:
        for subscriber in self._subscribers:
            subscriber.handle(event)
