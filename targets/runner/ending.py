"""The run's end. The process that owns the run merges every worker's case records once, applies the run-level
half of the isolation rule (reports.rootcause: carry, then reattribute), emits each verdict that changed
(VerdictRevised), decides the exit code, and emits RunFinished with the merged records and run.json, which every
output writes from. An xdist worker only says it finished."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from wirecheck.protocols.clients import dependencies
from wirecheck.protocols.verdicts import Verdict
from wirecheck.reports.events import RunFinished, VerdictRevised
from wirecheck.reports.records import read_records, run_document, totals
from wirecheck.reports.rootcause import carry, reattribute
from wirecheck.targets.runner.verdicts import expect_carried

if TYPE_CHECKING:
    from wirecheck.targets.runner.run import Run

#: the exit codes the runner decides (pytest's own numbers: ExitCode.TESTS_FAILED, ExitCode.USAGE_ERROR)
FAILED_EXIT = 1
USAGE_EXIT = 4


def end(run: "Run", exit_status: int) -> int:
    """Stop what the run started, then (the controller) judge the whole run; the exit code it ends with."""
    run.finish()
    if not run.is_controller:
        run.events.emit(RunFinished(controller=False))
        return exit_status
    records = read_records(run.report_dir)
    revisions = revise(run, records)
    for revision in revisions:
        run.events.emit(revision)
    if exit_status == 0 and any(r.now.pytest_outcome(run.strict) == "failed" for r in revisions):
        exit_status = FAILED_EXIT  # a carried MUST clause (any, under --strict): the run failed on it
    counts = totals(records)
    if counts.get(Verdict.TARGET_DOWN.value) and exit_status == 0:
        exit_status = FAILED_EXIT  # cases that could not run are not passes
    nothing_ran = None
    ran = set(counts) - {Verdict.NOT_RUN.value, Verdict.TARGET_DOWN.value}
    if run.options.targets and counts and not ran and exit_status == 0:
        protocols = sorted({record["protocol"] for record in records})
        # the same line as when a named target answers like another protocol (exit 4 too)
        nothing_ran = ("ERROR: no target can run a case: " + "; ".join(f"--target {line}" for line in run.target_lines)
                       + f" (the collected cases are for {', '.join(protocols)})")
        exit_status = USAGE_EXIT
    document = run_document(run.head, records, exit_status) if run.report_dir.exists() else None
    run.events.emit(RunFinished(controller=True, exit_status=exit_status,
                                records=tuple(MappingProxyType(record) for record in records), document=document,
                                run_dir=run.report_dir if document is not None else None,
                                revised=bool(revisions), nothing_ran=nothing_ran))
    return exit_status


def revise(run: "Run", records: list[dict]) -> list[VerdictRevised]:
    """Every clause that blocked a case gets a failure of its own (reports.rootcause.carry; the baseline applies
    to it), then a client scenario that failed beside a failed clause it depends on is BLOCKED by it
    (reports.rootcause.reattribute). ``records`` change in place; what changed, as events."""
    carried = carry(records, run.strict)
    expect_carried(run.baseline, carried)
    moved = reattribute(records, dependencies(run.specs.values()))
    return [VerdictRevised(record["nodeid"], record["case"], was, Verdict(record["verdict"]), record["message"])
            for was, changed in ((Verdict.BLOCKED, carried), (Verdict.FAILED, moved)) for record in changed]
