"""Verdicts and the exceptions through which a case reports them.

A case raises :class:`Divergence` when the target breaks a clause, :class:`Unimplemented` when the target does
not advertise what the case needs. Anything else escaping a case is the harness's own fault (ERROR).
"""

from __future__ import annotations

import enum

from protocols.clauses import Clause, Level


class Verdict(enum.Enum):
    OK = "OK"
    NON_STRICT = "NON-STRICT"
    UNIMPLEMENTED = "UNIMPLEMENTED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    XFAIL = "XFAIL"
    XPASS = "XPASS"
    NOT_RUN = "NOT-RUN"


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


class Unimplemented(Exception):
    """The target does not advertise the feature this case needs (a skip, counted and reported)."""


class HarnessError(Exception):
    """wirecheck itself cannot go on (bad option, broken reference broker launch, ...)."""
