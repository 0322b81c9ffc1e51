"""From a case's attempts to the verdict the runner emits: the liveness probe after an attempt, which failures are
re-run (--confirm), the verdict (classify, the baseline, FLAKY, --differential's evidence) and the frozen record
every output receives (reports/events.py). No pytest in here: the plugin hands over what the case raised."""

from __future__ import annotations

import copy
import time
from collections import deque
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from wirecheck.protocols.transcript import Transcript
from wirecheck.protocols.verdicts import ANSWERED_OTHERWISE, TargetDied, Unimplemented, Verdict
from wirecheck.reports.events import CaseRecord, CaseStarted, VerdictReached
from wirecheck.targets.fuzz import shrink_budget
from wirecheck.targets.runner.case import CaseState
from wirecheck.targets.runner.verdicts import Classified, apply_baseline, classify, flaky, unwrap

if TYPE_CHECKING:
    from wirecheck.targets.runner.run import Run


def start(run: "Run", state: CaseState) -> None:
    """A case begins: its clock, and the event."""
    state.started = state.transcript.started = time.monotonic()
    run.events.emit(CaseStarted(state.case_id, state.nodeid, state.spec.name, state.clause))


def checked(run: "Run", state: CaseState, exc: BaseException | None, test_outcome: bool = False) \
        -> BaseException | None:
    """What a case attempt amounts to: None (passed), what it raised, or the target's death after it. The
    liveness probe runs after a hostile case and after any failure (then the death, if any, is cached).
    ``test_outcome``: ``exc`` is the test runner's own outcome (a skip, an xfail), not something the target did."""
    if test_outcome or isinstance(unwrap(exc) if exc else None, Unimplemented):
        return exc  # skips and UNIMPLEMENTED say nothing about the target's health
    if exc is None and state.differences and run.strict:  # --differential --strict: answered otherwise
        return state.differences[0].as_divergence()
    if exc is None and not state.hostile:
        return None
    found = run.check_target(state, unwrap(exc) if exc is not None else None)
    if isinstance(found, TargetDied) and isinstance(unwrap(exc) if exc is not None else None, TargetDied):
        return exc  # the case saw the death itself (a property example names the one that caused it)
    if exc is None or isinstance(found, TargetDied):
        return found
    return exc


def confirmable(run: "Run", state: CaseState, failure: BaseException) -> bool:
    """Only a FAILED verdict is re-run: not a dead target, a blocked precondition or a harness error."""
    exc = unwrap(failure)
    return not isinstance(exc, TargetDied) and classify(exc, "call", None, run.strict,
                                                        state.case_id).verdict is Verdict.FAILED


def one_line(exc: BaseException) -> str:
    return (str(unwrap(exc)).splitlines() or [type(exc).__name__])[0][:300]


def judge(run: "Run", state: CaseState, exc: BaseException | None, when: str, skip_reason: str | None,
          test: str) -> Classified:
    """The verdict of a case phase (``exc`` raised in phase ``when``, or skipped with ``skip_reason``): a re-run
    that passed is FLAKY, the baseline applies (``test``: the test's name with its parameters), an OK case carries
    --differential's evidence, and a failing property's shrunk example goes into the transcript."""
    if state.confirmed is not None and exc is None and skip_reason is None and when == "call":
        first, attempt = state.confirmed
        result = flaky(classify(first, "call", None, run.strict, state.case_id), attempt)
    else:
        result = apply_baseline(run.baseline, state.case_id,
                                classify(exc, when, skip_reason, run.strict, state.case_id), test)
    if result.verdict is Verdict.OK and (state.differences or (state.tally and not state.tally.complete)):
        result = replace(result, message=_differences_note(state))  # --differential: evidence beside the verdict
    if result.divergence is not None:
        _note_example(run, state, exc)
    return result


def reach(run: "Run", state: CaseState, result: Classified, reproduce: str | None, params: dict) -> str | None:
    """Emit the case's verdict; why the run should stop now (--stop-at-clause), or None."""
    state.verdict = result.verdict
    state.recorded = True
    run.events.emit(VerdictReached(record_of(run, state, result, reproduce, params)))
    # A case BLOCKED by the clause counts too: the run's end makes it that clause's FAILED case (reports.rootcause)
    div = result.divergence if result.verdict is Verdict.FAILED else result.blocking
    if div is not None and div.clause.id in run.options.stop_at_clause:
        return f"{div.clause.id} reported FAILED (--stop-at-clause)"
    return None


def record_of(run: "Run", state: CaseState, result: Classified, reproduce: str | None, params: dict) -> CaseRecord:
    """The frozen record of a judged case: a copy of what its state holds now."""
    keep = result.verdict.kept or run.options.keep_transcripts
    message = params.get(state.spec.message_param) if state.spec.message_param else None
    return CaseRecord(
        case_id=state.case_id, nodeid=state.nodeid, protocol=state.spec.name, clause=state.clause,
        verdict=result.verdict, message=result.message, divergence=result.divergence, blocking=result.blocking,
        reproduce=reproduce, duration_s=round(time.monotonic() - state.started, 6),
        target=state.info.text if state.info else None,
        message_type=None if message is None else str(message),  # an API name or a numeric key alike
        version=params.get(state.spec.version_param) if state.spec.version_param else None,
        transcript=_copy(state.transcript) if keep and (state.transcript.events or state.attempts) else None,
        attempts=tuple((outcome, tuple(events)) for outcome, events in state.attempts),
        facts=MappingProxyType(dict(state.facts)), coverage=MappingProxyType(dict(state.coverage)),
        differential=MappingProxyType(state.tally.as_dict()) if state.tally is not None else None,
        evidence=tuple(state.evidence))


def _copy(transcript: Transcript) -> Transcript:
    """The conversation as it is now (what the case's teardown adds later is not the verdict's)."""
    kept = copy.copy(transcript)
    kept.events = deque(transcript.events, maxlen=transcript.events.maxlen)
    return kept


def _differences_note(state: CaseState) -> str:
    """An OK case's message under --differential: where it answered otherwise, and how much was compared."""
    partly = f"differential: {state.tally.text()}" if state.tally and not state.tally.complete else ""
    if not state.differences:
        return partly
    first = state.differences[0]
    more = f"; {len(state.differences) - 1} more connection(s) differed" if len(state.differences) > 1 else ""
    return (f"{ANSWERED_OTHERWISE} (not judged a failure: the case's checks passed; "
            f"{first.clause.id}): {first.summary()}{more}" + (f"; {partly}" if partly else ""))[:1000]


def _note_example(run: "Run", state: CaseState, exc: BaseException | None) -> None:
    """Hypothesis' falsifying example (the shrunk one, as the notes on what it raised say) into the transcript,
    where the failing conversation is: a vendor sees both the example and the bytes."""
    notes = [note for raised in (exc, unwrap(exc) if exc is not None else None) if raised is not None
             for note in getattr(raised, "__notes__", [])]
    example = "\n".join(dict.fromkeys(note for note in notes if note.strip()))
    if "explicit example" in example:  # an @example the case names: run as written, never shrunk
        state.transcript.note(f"Hypothesis' shrunk example (an explicit one, not shrunk):\n{example}"[:4000])
    elif any(mark in example for mark in ("Falsifying", "Failing test case", "state = ")):
        budget = shrink_budget(run.budget)
        state.transcript.note(f"Hypothesis' shrunk example (the smallest found within the shrinking budget of "
                              f"{budget} s):\n{example}"[:4000])
