"""One case's state and the ``target`` a case holds: the address, sessions that record into the case's
transcript, unique resource names, the protocol's options."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from protocols.clauses import Clause
from protocols.spec import ProtocolSpec
from reports.model import Divergence, Verdict
from reports.transcript import Transcript
from targets.session import Session

if TYPE_CHECKING:
    from targets.runner.run import Run, TargetInfo


@dataclass
class CaseState:
    case_id: str
    nodeid: str
    clause: Clause
    spec: ProtocolSpec
    hostile: bool
    transcript: Transcript
    info: "TargetInfo | None" = None
    started: float = field(default_factory=time.monotonic)
    verdict: Verdict | None = None
    recorded: bool = False


def survives_clause(spec: ProtocolSpec) -> Clause:
    """Every protocol's catalogue has ``<name>.robustness.survives``: the target still answers after a case."""
    return spec.catalogue[f"{spec.name}.robustness.survives"]


class Target:
    """What a case holds: the address, sessions that record into the case's transcript, unique names."""

    def __init__(self, run: "Run", state: CaseState):
        self._run = run
        self._state = state
        self.info = state.info
        self.case_id = state.case_id  # protocols with a client id field stamp it into requests
        self.spec = state.spec
        self.address = state.info.address
        self.deadline = run.deadline
        self.fuzz = run.budget
        self.options = run.target_options(state.spec.name)
        self.transcript = state.transcript
        self.catalogue = state.spec.catalogue
        self._sessions: list[Session] = []

    def connect(self, deadline: float | None = None, address: tuple[str, int] | None = None) -> Session:
        """A session to the target, or to another endpoint of the same target (``address``)."""
        try:
            session = Session(address or self.address, self.spec, self.transcript, deadline or self.deadline,
                              tls=self._run.tls_for(self.info))
        except OSError as exc:
            raise Divergence(survives_clause(self.spec), f"a connection to {self.info.text}",
                             f"connect failed: {exc}") from None
        self._sessions.append(session)
        return session

    def unique(self, stem: str = "t") -> str:
        return self._run.unique(stem)

    def clause(self, clause_id: str) -> Clause:
        return self.catalogue[clause_id]

    def close_all(self) -> None:
        for session in self._sessions:
            try:
                session.close()
            except OSError:
                pass
        self._sessions.clear()
