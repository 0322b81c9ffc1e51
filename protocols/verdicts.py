"""Verdicts and the exceptions through which a case reports them.

A case raises :class:`Divergence` when the target breaks a clause, :class:`Unimplemented` when the target does
not advertise what the case needs. Anything else escaping a case is the harness's own fault (ERROR).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable

from wirecheck.protocols.clauses import Clause, Level


class Verdict(enum.Enum):
    """Every verdict and what each output makes of it, in one table (one row a verdict):

    - ``severity``: which verdict wins when several of one clause meet in a run (the worst; each rank distinct)
    - ``executed``: the case ran against a target and produced an answer about it
    - ``passing``: counted as passing in pass rates (the case held, failed only as the vendor said it would, or
      failed once and passed when run again: FLAKY, counted among the flaky cases too)
    - ``marked``: a report shows it with a warning mark (something for its reader to act on; FLAKY and BLOCKED
      are marked although they pass or fail nothing)
    - ``kept``: its conversation is kept, with a replay file (the case talked to the target and did not just pass;
      passes too under --keep-transcripts, without a replay file)
    - ``divergence``: it reports a divergence of its clause (which then needs no carrier: reports.rootcause)
    - ``mark``: its cell in the terminal's matrices
    - ``outcome``: pytest's outcome for it, which the terminal's counts and JUnit XML show ("passed", "failed",
      "skipped", "xfailed"); ``strict_outcome`` under --strict where that differs (FLAKY fails the run there)
    - ``allure``: its Allure status (passed, failed, broken, skipped)
    """

    # text, severity, executed, passing, marked, kept, divergence, mark, outcome, allure[, strict outcome]
    NOT_RUN = ("NOT-RUN", 0, False, False, False, False, False, "..", "skipped", "skipped")
    TARGET_DOWN = ("TARGET-DOWN", 1, False, False, True, False, False, "DOWN", "skipped", "skipped")  # the target
    # died earlier in the run: the case could not run (the run fails)
    UNIMPLEMENTED = ("UNIMPLEMENTED", 2, False, False, False, False, False, "--", "skipped", "skipped")
    BLOCKED = ("BLOCKED", 3, False, False, True, True, False, "blk", "skipped", "skipped")  # a precondition (create
    # a topic, produce, join) failed: the clause was not reached
    OK = ("OK", 4, True, True, False, False, False, "ok", "passed", "passed")
    XFAIL = ("XFAIL", 5, True, True, False, True, True, "xf", "xfailed", "skipped")
    FLAKY = ("FLAKY", 6, True, True, True, True, True, "flk", "passed", "passed", "failed")  # failed, then passed
    # when run again (--confirm N)
    NON_STRICT = ("NON-STRICT", 7, True, True, False, True, True, "ns", "passed", "passed")
    DIVERGENT = ("DIVERGENT", 8, True, False, True, True, True, "div", "failed", "failed")  # answered otherwise
    # than the reference broker (--differential --strict)
    XPASS = ("XPASS", 9, True, False, True, True, False, "XP", "failed", "failed")
    ERROR = ("ERROR", 10, True, False, True, True, False, "ERR", "failed", "broken")
    FAILED = ("FAILED", 11, True, False, True, True, True, "FAIL", "failed", "failed")

    def __new__(cls, text: str, severity: int, executed: bool, passing: bool, marked: bool, kept: bool,
                divergence: bool, mark: str, outcome: str, allure: str, strict_outcome: str | None = None):
        row = object.__new__(cls)
        row._value_ = text
        row.severity, row.executed, row.passing, row.marked, row.kept = severity, executed, passing, marked, kept
        row.divergence = divergence
        row.mark, row.outcome, row.allure = mark, outcome, allure
        row.strict_outcome = strict_outcome or outcome
        return row

    def __init__(self, *row) -> None:
        self.severity: int
        self.executed: bool
        self.passing: bool
        self.marked: bool
        self.kept: bool
        self.divergence: bool
        self.mark: str
        self.outcome: str
        self.allure: str
        self.strict_outcome: str

    def pytest_outcome(self, strict: bool) -> str:
        """What pytest (its terminal counts, JUnit XML) shows for this verdict."""
        return self.strict_outcome if strict else self.outcome

    @classmethod
    def named(cls, text: str) -> "Verdict":
        """The verdict a record names; one this version does not know is suspect, like an ERROR."""
        try:
            return cls(text)
        except ValueError:
            return cls.ERROR

    @classmethod
    def names(cls, predicate: Callable[["Verdict"], bool]) -> tuple[str, ...]:
        """The texts of the verdicts ``predicate`` holds for (column filters of the Spark pipeline)."""
        return tuple(verdict.value for verdict in cls if predicate(verdict))


def worst(verdicts: Iterable[str]) -> str:
    """The most severe of ``verdicts`` (texts; an unknown verdict counts as an ERROR)."""
    return max((Verdict.named(text) for text in verdicts), key=lambda verdict: verdict.severity).value


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
