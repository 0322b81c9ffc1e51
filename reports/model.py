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


class Divergence(AssertionError):
    """The target did something the clause does not permit."""

    def __init__(self, clause: Clause, expected: str, actual: str, note: str = ""):
        self.clause = clause
        self.expected = expected
        self.actual = actual
        self.note = note
        super().__init__(f"{clause.id}: expected {expected}; got {actual}" + (f" ({note})" if note else ""))

    @property
    def verdict(self) -> Verdict:
        """NON-STRICT for a SHOULD clause (the plugin turns it into FAILED under --strict)."""
        return Verdict.NON_STRICT if self.clause.level is Level.SHOULD else Verdict.FAILED


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
    """A case's precondition (setup) failed: the clause under test was never reached."""

    def __init__(self, precondition: str, divergence: Divergence):
        self.precondition = precondition
        self.divergence = divergence
        super().__init__(f"precondition failed: {precondition} ({divergence.clause.id}: expected "
                         f"{divergence.expected}; got {divergence.actual})")


class Unimplemented(Exception):
    """The target does not advertise the feature this case needs (a skip, counted and reported)."""


class HarnessError(Exception):
    """wirecheck itself cannot go on (bad option, broken reference broker launch, ...)."""
