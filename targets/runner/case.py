"""One case's state: what the runner knows of a case while it runs (targets/runner/target.py: the ``target`` the case
holds)."""

from __future__ import annotations

import time
from contextvars import ContextVar
from dataclasses import dataclass, field

from wirecheck.protocols.clauses import Clause
from wirecheck.protocols.spec import ProtocolSpec
from wirecheck.protocols.verdicts import HarnessError, Verdict
from wirecheck.protocols.transcript import Event, Transcript
from wirecheck.targets.differential import Tally
from wirecheck.targets.runner.target_info import TargetInfo

#: told (with the client's command) as a real client starts: its traffic reaches the target alone, so the running
#: case's answers are compared up to then (targets.clients.run_client calls it; each client case sets it)
CLIENT_STARTING: ContextVar = ContextVar("client_starting", default=None)

@dataclass
class CaseState:
    case_id: str
    nodeid: str
    clause: Clause
    spec: ProtocolSpec
    hostile: bool
    transcript: Transcript
    info: TargetInfo | None = None
    started: float = field(default_factory=time.monotonic)
    verdict: Verdict | None = None
    recorded: bool = False
    #: (outcome, transcript events) of earlier runs (--confirm)
    attempts: list[tuple[str, list[Event]]] = field(default_factory=list)
    confirmed: tuple | None = None  # (the first failure, the attempt that passed): FLAKY
    differences: list = field(default_factory=list)  # --differential: each connection's first difference
    tally: Tally | None = None  # --differential: answers compared of answers exchanged
    facts: dict = field(default_factory=dict)  # what the case learnt about its setting (a client's version)
    #: bulk cases: protocol -> the run's state-coverage map (strategies/coverage.py CoverageMap.to_dict())
    coverage: dict = field(default_factory=dict)
    #: files kept beside the transcript when it is kept (reports.records.Evidence: a real client's capture and log)
    evidence: list = field(default_factory=list)

    @property
    def target_info(self) -> TargetInfo:
        """The case's target, once resolved (``plugin.resolve_target`` sets ``info`` before the case runs)."""
        if self.info is None:
            raise HarnessError(f"{self.case_id}: no target was resolved for the case")
        return self.info


def survives_clause(spec: ProtocolSpec) -> Clause:
    """Every protocol's catalogue has ``<name>.robustness.survives``: the target still answers after a case."""
    return spec.catalogue[f"{spec.name}.robustness.survives"]
