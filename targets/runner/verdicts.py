"""From what a case raised to a verdict, independent of pytest.

A case reports through exceptions: :class:`Divergence` (a clause was broken; MUST -> FAILED, SHOULD ->
NON-STRICT unless ``--strict``), :class:`Unimplemented` (the target does not advertise the feature), a skip
whose reason starts with NOT-RUN (no target speaks the protocol) or TARGET-DOWN (its target died earlier),
:class:`Blocked` (a precondition failed: the clause under test was never reached). Anything else is the
harness's own ERROR. A vendor's baseline turns known failures into XFAIL and a listed case that passes into
XPASS. A failure that passes when run again (``--confirm N``) is FLAKY (:func:`flaky`). An answer that differs
from the reference broker's (``--differential``, :class:`Differs`) is DIVERGENT.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

from wirecheck.reports.baseline import Baseline
from wirecheck.protocols.verdicts import (Blocked, ClientDefectMet, Differs, Divergence, HarnessError, TargetDied,
                                          Unimplemented, Verdict)

NOT_RUN = Verdict.NOT_RUN.value
TARGET_DOWN = Verdict.TARGET_DOWN.value
UNIMPLEMENTED = Verdict.UNIMPLEMENTED.value


@dataclass
class Classified:
    verdict: Verdict
    message: str
    divergence: Divergence | None = None
    #: what pytest shows for it instead of its own text (a skip's or an expected failure's reason, why a pass
    #: fails); None: pytest's own (a divergence: its rendering, reports/render.py)
    longrepr: str | None = None
    blocking: Divergence | None = None  # BLOCKED: the divergence that blocked the case (not a withheld permission)


def classify(exc: BaseException | None, when: str, skip_reason: str | None, strict: bool,
             case_clause: str | None = None) -> Classified:
    """The verdict of one case phase: ``exc`` raised in phase ``when``, or skipped with ``skip_reason``.

    The isolation rule: a divergence FAILs only the case whose own clause (``case_clause``) it is. Met in any
    other case it BLOCKs that case, naming the clause that broke; the run then makes sure that clause has a
    FAILED case (``reports.rootcause.carry``); see :func:`_met_on_the_way` for what stays where it appears."""
    if skip_reason is not None:
        if skip_reason.startswith(TARGET_DOWN):
            return Classified(Verdict.TARGET_DOWN, skip_reason.removeprefix(TARGET_DOWN + ": "))
        verdict = Verdict.NOT_RUN if skip_reason.startswith(NOT_RUN) else Verdict.UNIMPLEMENTED
        return Classified(verdict, skip_reason)
    if exc is None:
        return Classified(Verdict.OK, "")
    exc = unwrap(exc)
    if isinstance(exc, Unimplemented):
        return Classified(Verdict.UNIMPLEMENTED, str(exc), longrepr=f"{UNIMPLEMENTED}: {exc}")
    if _met_on_the_way(exc, case_clause, strict):
        exc = Blocked.met(exc)
    if isinstance(exc, Blocked):
        return Classified(Verdict.BLOCKED, str(exc), longrepr=f"BLOCKED: {exc}",
                          blocking=exc.divergence if exc.carries else None)
    if isinstance(exc, ClientDefectMet):
        return Classified(Verdict.XFAIL, str(exc), exc.divergence, longrepr=f"XFAIL: {exc}")
    if isinstance(exc, Differs):  # --differential --strict (the runner raises it only then)
        return Classified(Verdict.DIVERGENT, str(exc), exc)
    if isinstance(exc, Divergence):
        if exc.verdict is Verdict.NON_STRICT and not strict:
            return Classified(Verdict.NON_STRICT, str(exc), exc)
        return Classified(Verdict.FAILED, str(exc), exc)
    text = f"{type(exc).__name__}: {exc}"
    if when != "call" and not isinstance(exc, HarnessError):
        text = f"{when} failed: {text}"
    return Classified(Verdict.ERROR, text.splitlines()[0][:500] if text else "")


def _met_on_the_way(exc: BaseException, case_clause: str | None, strict: bool) -> TypeGuard[Divergence]:
    """A divergence of another clause than the case's that fails the run: it BLOCKs the case. A SHOULD-level one
    outside --strict stays NON-STRICT (a warning under its own clause, the case having passed), a dead target
    fails the case that killed it, and a --differential --strict difference is the case's own (it passed its
    checks)."""
    return (isinstance(exc, Divergence) and not isinstance(exc, (Differs, TargetDied)) and case_clause is not None
            and exc.clause.id != case_clause and (exc.verdict is Verdict.FAILED or strict))


def unwrap(exc: BaseException) -> BaseException:
    """The divergence inside an exception group (Hypothesis reports a failure that did not reproduce, i.e. a
    flaky target, as a group): a divergence seen once is still a divergence."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = unwrap(inner)
            if isinstance(found, (Divergence, Unimplemented, Blocked)):
                return found
    return exc


def flaky(first: Classified, attempts: int) -> Classified:
    """A failure (``first``) that passed on one of ``attempts`` runs: FLAKY; it fails the run only under
    --strict (the verdict table's strict outcome)."""
    message = f"failed, then passed on attempt {attempts}: {first.message}"
    return Classified(Verdict.FLAKY, message, first.divergence, longrepr=f"FLAKY {message}")


def expect_carried(baseline: Baseline | None, carried: list[dict]) -> None:
    """A failure carried into a blocked case (reports.rootcause.carry) that the baseline lists is XFAIL too, the
    records changed in place: a server's known divergence met only on the way to another case stays expected."""
    for record in carried:
        test = record["nodeid"].rpartition("::")[2]
        entry = baseline.entry_for(record["case"], clause=record["clause"], test=test) if baseline else None
        if entry is not None and record["verdict"] == Verdict.FAILED.value:
            record.update(verdict=Verdict.XFAIL.value, message=f"{record['message']} [expected: {entry.describe()}]")


def apply_baseline(baseline: Baseline | None, case_id: str, result: Classified, test: str | None = None) \
        -> Classified:
    """XFAIL for a listed case that fails; XPASS (a failure: the baseline is stale) for one that passes. ``test``:
    the test's name with its parameters, for entries that list one parameter of a case."""
    failed = result.divergence.clause.id if result.divergence is not None else None
    entry = baseline.entry_for(case_id, clause=failed, test=test) if baseline is not None else None
    if baseline is None or entry is None:
        return result
    if result.verdict in (Verdict.FAILED, Verdict.ERROR):
        return Classified(Verdict.XFAIL, f"{result.message} [expected: {entry.describe()}]", result.divergence,
                          longrepr=f"baseline: {entry.describe()}")
    if result.verdict is Verdict.OK and not entry.intermittent:
        # A known failure that now passes: the baseline is stale, and a stale baseline hides regressions.
        return Classified(Verdict.XPASS, result.message,
                          longrepr=f"XPASS {case_id}: listed in the baseline ({entry.describe()}) but passes now; "
                                   f"remove it from {baseline.path}")
    return result
