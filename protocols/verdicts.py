"""Verdicts and the exceptions through which a case reports them.

A case raises :class:`Divergence` when the target breaks a clause, :class:`Unimplemented` when the target does
not advertise what the case needs. Anything else escaping a case is the harness's own fault (ERROR).
"""

from __future__ import annotations

import enum

from wirecheck.protocols.clauses import Clause, Level


class Verdict(enum.Enum):
    OK = "OK"
    NON_STRICT = "NON-STRICT"
    UNIMPLEMENTED = "UNIMPLEMENTED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    XFAIL = "XFAIL"
    XPASS = "XPASS"
    NOT_RUN = "NOT-RUN"
    TARGET_DOWN = "TARGET-DOWN"  # the target died earlier in the run: the case could not run (the run fails)
    BLOCKED = "BLOCKED"  # a precondition (create a topic, produce, join) failed: the clause was not reached
    FLAKY = "FLAKY"  # failed, then passed when run again (--confirm N)
    DIVERGENT = "DIVERGENT"  # answered otherwise than the reference broker (--differential)


class Divergence(AssertionError):
    """The target did something the clause does not permit."""

    def __init__(self, clause: Clause, expected: str, actual: str, note: str = ""):
        self.clause = clause
        self.expected = expected
        self.actual = actual
        self.note = note
        super().__init__(f"{clause.id}: expected {expected}; got {actual}" + (f" ({note})" if note else ""))

    def with_note(self, note: str) -> "Divergence":
        """The same divergence (of the same kind) with another note."""
        noted = type(self).__new__(type(self))
        noted.__dict__.update(self.__dict__, note=note)
        noted.args = (f"{self.clause.id}: expected {self.expected}; got {self.actual}" + (f" ({note})" if note else ""),)
        return noted

    @property
    def verdict(self) -> Verdict:
        """NON-STRICT for a SHOULD clause (the plugin turns it into FAILED under --strict)."""
        return Verdict.NON_STRICT if self.clause.level is Level.SHOULD else Verdict.FAILED


#: how an OK case record's message starts when --differential saw the target answer otherwise (not a failure)
ANSWERED_OTHERWISE = "answered otherwise than the reference broker"


class Differs(Divergence):
    """--differential --strict: a case whose checks passed answered otherwise than the reference broker on the
    same conversation (DIVERGENT, failing the run)."""

    def __init__(self, clause: Clause, path: str, expected: str, actual: str, requests: int = 0, note: str = ""):
        self.path = path  # the first differing field
        self.requests = requests  # requests on the connection up to the differing answer
        super().__init__(clause, expected, actual, note)

    @property
    def verdict(self) -> Verdict:
        return Verdict.DIVERGENT


class TargetDied(Divergence):
    """The target stopped answering (refused, closed, reset or silent on a new connection) after this case's
    traffic: a failure of the protocol's survives clause, named by the step that preceded the death."""

    def __init__(self, clause: Clause, step: str, actual: str, note: str = ""):
        self.step = step
        super().__init__(clause, "the target still answers a known-good request", actual, note)
        self.args = (f"target stopped answering after {step}",)

    def __str__(self) -> str:
        return self.args[0]


class Blocked(Exception):
    """A case's precondition (setup) failed: the clause under test was never reached.

    ``divergence`` is what broke, under its own clause. It is a real divergence of the target unless
    ``carries`` is False (a permission the operator withheld, which no clause can require): the run makes sure
    every clause that blocked a case has a FAILED case of its own (``reports.rootcause.carry``)."""

    def __init__(self, precondition: str, divergence: Divergence, carries: bool = True):
        self.precondition = precondition
        self.divergence = divergence
        self.carries = carries
        super().__init__(f"precondition failed: {precondition} ({divergence.clause.id}: expected "
                         f"{divergence.expected}; got {divergence.actual})")

    @classmethod
    def met(cls, divergence: Divergence) -> "Blocked":
        """A divergence of another clause met on the way to this case's own: the isolation rule makes it a
        blocked precondition here; it fails under its own clause (its case, or the run's carrier)."""
        return cls(f"{divergence.clause.id} holds", divergence)


class ClientDefectMet(Exception):
    """A client scenario failed where the client's own traffic shows a known defect of that client version
    (protocols.clients.ClientDefect): the client's, not the target's (XFAIL). ``divergence``: how the scenario
    failed."""

    def __init__(self, defect: str, evidence: str, divergence: Divergence, about: str):
        super().__init__(f"the client's own known defect {defect}: {evidence}; the scenario: {divergence}; the "
                         f"defect: {about}")
        self.divergence = divergence


class Unimplemented(Exception):
    """The target does not advertise the feature this case needs (a skip, counted and reported)."""


class HarnessError(Exception):
    """wirecheck itself cannot go on (bad option, broken reference broker launch, ...)."""
