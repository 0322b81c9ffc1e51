"""wirecheck's pytest plugin: options and hooks only; the runner (targets/runner/) does the work.

A conformance case is a pytest test marked ``@pytest.mark.case("<clause id>", hostile=False)``. The hooks
resolve the clause from its protocol's catalogue, give the test a ``target`` for that protocol (or report the
case NOT-RUN when no target speaks it), run the liveness probe after hostile cases, turn what the case raised
into a verdict, and emit the run's events, which the reporters (records, terminal summary, Allure) consume.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from protocols.registry import all_specs
from reports.allure import AllureReporter
from reports.model import Divergence, HarnessError, Verdict
from reports.records import RunWriter
from reports.render import render_failure
from reports.terminal import TerminalSummary
from reports.transcript import Transcript
from targets.fuzz import FuzzBudget, register_hypothesis_profiles
from targets.runner.case import CaseState, Target, survives_clause
from reports.events import CaseStarted, Exchange, RunFinished, VerdictReached
from targets.runner.run import Run, RunOptions, UsageProblem
from targets.runner.verdicts import NOT_RUN, apply_baseline, classify, unwrap

case_key = pytest.StashKey["CaseState"]()


# -- options -------------------------------------------------------------------------------------------------


def pytest_addoption(parser):
    group = parser.getgroup("wirecheck", "wirecheck conformance suite")
    group.addoption("--target", action="append", default=[], metavar="[PROTOCOL=]HOST:PORT",
                    help="server to test; repeatable, one per protocol. Without it the bundled reference broker "
                         "is started on ephemeral 127.0.0.1 ports.")
    group.addoption("--protocol", default=None,
                    help="protocol of a bare --target HOST:PORT (default: probe the target)")
    # --strict is pytest's own option (strict markers, config, xfail); wirecheck reads it too: under --strict,
    # SHOULD-level divergences (NON-STRICT) fail the run.
    group.addoption("--baseline", default=None, metavar="FILE",
                    help="vendor baseline (JSON): listed cases that fail are XFAIL, that pass are XPASS")
    group.addoption("--fuzz", default="ci", metavar="ci|nightly|N",
                    help="fuzz budget: ci (default, fast and reproducible), nightly (deep), or an example count")
    group.addoption("--fuzz-seed", type=int, default=None, help="seed of the bulk mutation cases")
    group.addoption("--target-option", action="append", default=[], metavar="PROTOCOL.KEY=VALUE",
                    help="a protocol-specific setting for the target, e.g. fluvio.topics=orders:3 (see each suite)")
    group.addoption("--target-tls", action="store_true",
                    help="speak TLS to every --target (verifying its certificate against the system store or "
                         "--target-ca)")
    group.addoption("--target-ca", default=None, metavar="FILE",
                    help="CA certificate(s) (PEM) that signed the targets' certificates; implies --target-tls")
    group.addoption("--target-insecure", action="store_true",
                    help="with --target-tls: do not verify the target's certificate (self-signed test servers)")
    group.addoption("--deadline", type=float, default=2.0, help="seconds to wait for any answer (default 2)")
    group.addoption("--report-dir", default="wirecheck-reports", help="where run records go (default %(default)s)")
    group.addoption("--keep-transcripts", action="store_true", help="write transcripts of passing cases too")
    group.addoption("--pcap", action="store_true",
                    help="also write each kept transcript as a pcap (the pipeline can do it later, off the hot path)")
    group.addoption("--reference-fault", action="append", default=[], metavar="NAME",
                    help="start the bundled reference broker with this fault (self-validation)")
    group.addoption("--reference-arg", action="append", default=[], metavar="ARG",
                    help="pass ARG to the bundled reference broker's command line (e.g. --reference-arg=--kafka-sasl-"
                         "users=FILE)")
    group.addoption("--stop-at-clause", action="append", default=[], metavar="CLAUSE",
                    help="stop the run once this clause is reported FAILED (self-validation runs use it)")


def _options(config) -> RunOptions:
    return RunOptions(
        targets=config.getoption("target"), protocol=config.getoption("protocol"),
        strict=bool(config.getoption("strict")), deadline=config.getoption("deadline"),
        baseline=config.getoption("baseline"), report_dir=config.getoption("report_dir"),
        keep_transcripts=config.getoption("keep_transcripts"), pcap=config.getoption("pcap"),
        reference_faults=config.getoption("reference_fault"), reference_args=config.getoption("reference_arg"),
        stop_at_clause=config.getoption("stop_at_clause"),
        target_options=config.getoption("target_option"),
        tls=bool(config.getoption("target_tls") or config.getoption("target_ca")),
        tls_ca=config.getoption("target_ca"), tls_verify=not config.getoption("target_insecure"),
        hypothesis_seed=config.getoption("hypothesis_seed", default=None),
        argv=list(config.invocation_params.args))


def pytest_configure(config):
    config.addinivalue_line("markers", "case(id, hostile=False): a conformance case checking one clause")
    budget = FuzzBudget.parse(config.getoption("fuzz"), config.getoption("fuzz_seed"))
    register_hypothesis_profiles(budget)
    workerinput = getattr(config, "workerinput", None)
    run = Run(_options(config), budget, all_specs(),
              worker=workerinput["workerid"] if workerinput else "main",
              run_id=workerinput["wirecheck_run_id"] if workerinput else None)
    run.writer = RunWriter(Path(run.options.report_dir), run.run_id, run.worker, run.metadata(),
                           pcap=run.options.pcap)
    run.summary = TerminalSummary()
    for reporter in (run.writer, run.summary, AllureReporter()):
        run.events.subscribe(reporter)
    config.wirecheck = run


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is absent or disabled (-p no:xdist)
def pytest_configure_node(node):
    """xdist controller -> worker: one run id and report directory for the whole run."""
    node.workerinput["wirecheck_run_id"] = node.config.wirecheck.run_id


def pytest_sessionfinish(session, exitstatus):
    run: Run = session.config.wirecheck
    run.finish()
    run.events.emit(RunFinished(controller=run.is_controller))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    run: Run = config.wirecheck
    run.summary.write(terminalreporter, run.writer, run.is_controller)


# -- the target fixture ---------------------------------------------------------------------------------------


def _case_state(item) -> CaseState | None:
    return item.stash.get(case_key, None)


@pytest.fixture
def target(request) -> Target:
    """The server under test for this case's protocol; NOT-RUN when none speaks it."""
    state = _case_state(request.node)
    if state is None:
        raise HarnessError(f"{request.node.nodeid} uses `target` but has no @pytest.mark.case(...)")
    run: Run = request.config.wirecheck
    try:
        info = run.targets().get(state.spec.name)
    except UsageProblem as exc:
        raise pytest.UsageError(str(exc)) from None
    if info is None:
        pytest.skip(f"{NOT_RUN}: no target speaks {state.spec.name} (give --target {state.spec.name}=HOST:PORT)")
    state.info = info
    tgt = Target(run, state)
    yield tgt
    tgt.close_all()


@pytest.fixture
def fuzz(request) -> FuzzBudget:
    return request.config.wirecheck.budget


# -- collection ------------------------------------------------------------------------------------------------


def pytest_collection_modifyitems(session, config, items):
    run: Run = config.wirecheck
    for item in items:
        mark = item.get_closest_marker("case")
        if mark is None:
            continue
        case_id = mark.args[0]
        protocol = case_id.split(".", 1)[0]
        spec = run.specs.get(protocol)
        if spec is None or case_id not in spec.catalogue:
            raise pytest.UsageError(f"{item.nodeid}: case {case_id!r} names no clause of a known catalogue")
        state = CaseState(case_id, item.nodeid, spec.catalogue[case_id], spec, bool(mark.kwargs.get("hostile")),
                          Transcript(protocol, spec.describe))
        item.stash[case_key] = state
        item.extra_keyword_matches.update({case_id, protocol})
        run.collected_protocols.add(protocol)
        item.repr_failure = _case_repr_failure(item, item.repr_failure)


def _case_repr_failure(item, default):
    """A divergence is shown as case, clause, expected vs actual, transcript and reproducer; pytest's traceback
    (slow to build, and about our code, not the target) is kept for harness errors only."""

    def repr_failure(excinfo, *args, **kwargs):
        exc = unwrap(excinfo.value)
        if isinstance(exc, Divergence):
            state = _case_state(item)
            run: Run = item.config.wirecheck
            notes = list(getattr(excinfo.value, "__notes__", [])) + list(getattr(exc, "__notes__", []))
            if exc is not excinfo.value:
                notes.insert(0, f"{type(excinfo.value).__name__}: the failure did not reproduce on replay (flaky)")
            return render_failure(state, exc, run.reproduce(item.nodeid, state.info), notes=notes)
        return default(excinfo, *args, **kwargs)

    return repr_failure


# -- running: liveness after hostile cases ----------------------------------------------------------------------


def pytest_runtest_setup(item):
    state = _case_state(item)
    if state is not None:
        run: Run = item.config.wirecheck
        state.started = state.transcript.started = time.monotonic()
        if run.events.wants_exchanges:
            state.transcript.listener = lambda event: run.events.emit(Exchange(state, event))
        run.events.emit(CaseStarted(state))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    state = _case_state(item)
    hostile = state is not None and state.hostile and state.info is not None
    try:
        result = yield
    except BaseException:
        if hostile:
            item.config.wirecheck.liveness(state)  # a dead reference broker is restarted for later cases
        raise
    if hostile:
        alive, what = item.config.wirecheck.liveness(state)
        if not alive:
            raise Divergence(survives_clause(state.spec), "the target still answers a known-good request", what)
    return result


# -- verdicts --------------------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    state = _case_state(item)
    if state is None or state.recorded:
        return rep
    if call.when == "setup" and rep.passed:
        return rep
    if call.when == "teardown" and not rep.failed:
        return rep
    run: Run = item.config.wirecheck
    skip_reason = _skip_reason(rep) if rep.skipped else None
    exc = call.excinfo.value if call.excinfo is not None and skip_reason is None else None
    result = apply_baseline(run.baseline, state.case_id, classify(exc, call.when, skip_reason, run.strict))
    _set_pytest_outcome(item, rep, result)
    state.verdict = result.verdict
    state.recorded = True
    keep = result.verdict not in (Verdict.OK, Verdict.NOT_RUN, Verdict.UNIMPLEMENTED) or run.options.keep_transcripts
    reproduce = run.reproduce(item.nodeid, state.info) if result.verdict not in (Verdict.OK, Verdict.NOT_RUN) \
        else None
    params = dict(getattr(getattr(item, "callspec", None), "params", {}))
    run.events.emit(VerdictReached(state, result.verdict, result.message, result.divergence, reproduce, keep, params))
    div = result.divergence
    if result.verdict is Verdict.FAILED and div is not None and div.clause.id in run.options.stop_at_clause:
        item.session.shouldfail = f"{div.clause.id} reported FAILED (--stop-at-clause)"
    return rep


def _set_pytest_outcome(item, rep, result) -> None:
    """Make pytest's own outcome agree with the verdict (UNIMPLEMENTED skips, NON-STRICT passes, ...)."""
    if result.outcome is None:
        return
    if result.outcome == "xfail":
        rep.outcome, rep.wasxfail, rep.longrepr = "skipped", result.longrepr, None
    elif result.outcome == "skipped":
        rep.outcome, rep.longrepr = "skipped", (str(item.path), item.location[1] or 0, result.longrepr)
    else:
        rep.outcome, rep.longrepr = result.outcome, result.longrepr


def _skip_reason(rep) -> str:
    if isinstance(rep.longrepr, tuple):
        return str(rep.longrepr[2]).removeprefix("Skipped: ")
    return str(rep.longrepr or "")
