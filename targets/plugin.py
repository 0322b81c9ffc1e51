"""wirecheck's pytest plugin: options and hooks only; the runner (targets/runner/) does the work.

A conformance case is a pytest test marked ``@pytest.mark.case("<clause id>", hostile=False)``. The hooks
resolve the clause from its protocol's catalogue, give the test a ``target`` for that protocol (or report the
case NOT-RUN when no target speaks it, TARGET-DOWN when its target died earlier), run the liveness probe after
hostile and failed cases, re-run a failed case ``--confirm N`` times (FLAKY when a re-run passes), turn what
the case raised into a verdict, and emit the run's events, which the reporters (records, terminal summary,
summary page, Allure) consume. Every option is checked at configure: a bad one is one line and exit code 4.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from _pytest.outcomes import OutcomeException

from wirecheck.protocols.clients import dependencies
from wirecheck.protocols.registry import all_specs
from wirecheck.reports.allure import AllureReporter
from wirecheck.protocols.verdicts import ANSWERED_OTHERWISE, Divergence, HarnessError, TargetDied, Unimplemented, Verdict
from wirecheck.reports.records import RunWriter
from wirecheck.reports.render import render_failure
from wirecheck.reports.rootcause import carry, reattribute
from wirecheck.reports.summary_page import SummaryPage
from wirecheck.reports.terminal import TerminalSummary
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.corpus import ReplayCase, ReplayFile, in_corpus, replay_command
from wirecheck.targets.rejudged import show_blocked, show_carried
from wirecheck.targets.fuzz import FuzzBudget, register_hypothesis_profiles, shrink_budget
from wirecheck.targets.runner.case import CaseState, Target
from wirecheck.reports.events import CaseStarted, Exchange, RunFinished, Subscriber, VerdictReached
from wirecheck.targets.runner.run import Run, RunOptions, UsageProblem
from wirecheck.targets.runner.validate import validate, writable_dir
from wirecheck.targets.runner.verdicts import (NOT_RUN, TARGET_DOWN, apply_baseline, classify, expect_carried,
                                               flaky, unwrap)

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
    group.addoption("--reference-variant", action="append", default=[], metavar="NAME",
                    help="start the bundled reference broker with this variant: another reading the spec permits "
                         "(the whole suite must pass against it)")
    group.addoption("--reference-arg", action="append", default=[], metavar="ARG",
                    help="pass ARG to the bundled reference broker's command line (e.g. --reference-arg=--kafka-sasl-"
                         "users=FILE)")
    group.addoption("--stop-at-clause", action="append", default=[], metavar="CLAUSE",
                    help="stop the run once this clause is reported FAILED, running the cases named after it first "
                         "(self-validation runs use it)")
    group.addoption("--target-restart", default=None, metavar="COMMAND",
                    help="shell command that restarts the given target after it died; the run goes on once it "
                         "answers the liveness probe again (without it, later cases are TARGET-DOWN)")
    group.addoption("--confirm", type=int, default=None, metavar="N",
                    help="re-run a failed case N times; FLAKY when a re-run passes (fails the run only with "
                         "--strict). Default 0, 2 with --fuzz=nightly")
    group.addoption("--upstream", action="append", default=[], metavar="PROTOCOL[@VERSION]",
                    help="start the real server the protocol's suite describes (kafka: Apache Kafka, installed by "
                         "'wirecheck upstream kafka --install') on loopback and test it as the target")
    group.addoption("--differential", action="store_true",
                    help="also send every conversation to a clean bundled reference broker and report where the "
                         "answers differ, beside each case's own verdict (with --strict, a case that passed but "
                         "answered otherwise is DIVERGENT and fails the run)")
    group.addoption("--oracle", action="append", default=[], metavar="PROTOCOL=HOST:PORT",
                    help="--differential against this server instead of the bundled reference broker, for that "
                         "protocol (repeatable; implies --differential)")
    group.addoption("--corpus", action="append", default=[], metavar="DIR",
                    help="replay files (written for every case that did not pass, replays/ in a run directory) to "
                         "play against the target before the generated cases: FAILED where a failure reproduces")
    group.addoption("--example-db", default=None, metavar="DIR|none",
                    help="Hypothesis' storage: example database and caches (default: "
                         "$XDG_CACHE_HOME/wirecheck/hypothesis, outside the checkout; 'none': no example database)")


def _options(config) -> RunOptions:
    return RunOptions(
        targets=config.getoption("target"), protocol=config.getoption("protocol"),
        strict=bool(config.getoption("strict")), deadline=config.getoption("deadline"),
        baseline=config.getoption("baseline"), report_dir=config.getoption("report_dir"),
        keep_transcripts=config.getoption("keep_transcripts"), pcap=config.getoption("pcap"),
        reference_faults=config.getoption("reference_fault"), reference_args=config.getoption("reference_arg"),
        reference_variants=config.getoption("reference_variant"),
        stop_at_clause=config.getoption("stop_at_clause"),
        target_options=config.getoption("target_option"),
        tls=bool(config.getoption("target_tls") or config.getoption("target_ca")),
        tls_ca=config.getoption("target_ca"), tls_verify=not config.getoption("target_insecure"),
        hypothesis_seed=config.getoption("hypothesis_seed", default=None),
        argv=list(config.invocation_params.args),
        target_restart=config.getoption("target_restart"), confirm=config.getoption("confirm"),
        differential=config.getoption("differential") or bool(config.getoption("oracle")),
        oracles=config.getoption("oracle"), upstream=config.getoption("upstream"))


def pytest_configure(config):
    config.addinivalue_line("markers", "case(id, hostile=False): a conformance case checking one clause")
    budget = FuzzBudget.parse(config.getoption("fuzz"), config.getoption("fuzz_seed"))
    register_hypothesis_profiles(budget)
    specs = all_specs()
    options = _options(config)
    workerinput = getattr(config, "workerinput", None)
    try:
        validate(options, specs)
        _use_example_database(config.getoption("example_db"))
        run = Run(options, budget, specs, worker=workerinput["workerid"] if workerinput else "main",
                  run_id=workerinput["wirecheck_run_id"] if workerinput else None)
        if not config.option.help:
            run.start_upstreams(workerinput.get("wirecheck_upstream") if workerinput else None)
            run.survey_targets(workerinput.get("wirecheck_surveys") if workerinput else None)
    except UsageProblem as exc:
        raise pytest.UsageError(str(exc)) from None
    writer = RunWriter(Path(run.options.report_dir), run.run_id, run.worker, run.metadata(), pcap=run.options.pcap)
    writer.replay_context = {"nonce": run.nonce, "deadline": run.deadline}
    summary = TerminalSummary()
    run.writer, run.summary = writer, summary
    run.say = lambda line: _say(config, line)
    reporters: tuple[Subscriber, ...] = (writer, SummaryPage(writer), summary, AllureReporter())
    for reporter in reporters:
        run.events.subscribe(reporter)
    config.wirecheck = run
    for corpus in config.getoption("corpus"):
        if not Path(corpus).is_dir():
            raise pytest.UsageError(f"--corpus {corpus}: not a directory of replay files")
        config.args.append(corpus)  # collected by pytest_collect_file below


def pytest_collect_file(file_path, parent):
    if in_corpus(file_path, parent.config.getoption("corpus")):
        return ReplayFile.from_parent(parent, path=file_path)
    return None


def _use_example_database(where: str | None) -> None:
    """Hypothesis' storage (its example database and caches) lives outside the checkout: a user cache directory
    unless ``--example-db`` names one; ``none`` keeps no database (the caches go to the cache directory)."""
    from hypothesis import settings
    from hypothesis.configuration import set_hypothesis_home_dir
    from hypothesis.database import DirectoryBasedExampleDatabase

    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    default = os.path.join(cache, "wirecheck", "hypothesis")
    keep = where is None or where.lower() != "none"
    home = where if where is not None and keep else default
    writable_dir("--example-db", home)
    set_hypothesis_home_dir(home)
    database = DirectoryBasedExampleDatabase(os.path.join(home, "examples")) if keep else None
    settings.register_profile("wirecheck", parent=settings.get_profile("wirecheck"), database=database)
    settings.load_profile("wirecheck")


def pytest_report_header(config):
    run: Run | None = getattr(config, "wirecheck", None)
    if run is None:
        return None
    lines = [f"wirecheck target {line}" for line in run.target_lines]
    if not run.options.targets:
        lines.append("wirecheck target: the bundled reference broker (started for this run on 127.0.0.1)")
    if run.confirm:
        lines.append(f"wirecheck: a failed case is run {run.confirm} more times (--confirm)")
    return lines


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is absent or disabled (-p no:xdist)
def pytest_configure_node(node):
    """xdist controller -> worker: one run id and report directory for the whole run, and the targets as the
    controller found them (each target is probed once per run)."""
    node.workerinput["wirecheck_run_id"] = node.config.wirecheck.run_id
    node.workerinput["wirecheck_surveys"] = node.config.wirecheck.surveys
    node.workerinput["wirecheck_upstream"] = node.config.wirecheck.upstream_handover()


@pytest.hookimpl(tryfirst=True)  # before junitxml writes its file: a re-judged case is shown as the records hold it
def pytest_sessionfinish(session, exitstatus):
    run: Run = session.config.wirecheck
    run.finish()
    writer, summary = run.writer, run.summary
    if not run.is_controller or writer is None:
        run.events.emit(RunFinished(controller=run.is_controller))
        return
    assert summary is not None  # set with the writer (pytest_configure)
    if _carry_blocked(run, writer, session.config) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    totals = writer.totals()
    if totals.get(Verdict.TARGET_DOWN.value) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # cases that could not run are not passes
    ran = set(totals) - {Verdict.NOT_RUN.value, Verdict.TARGET_DOWN.value}
    if run.options.targets and totals and not ran and session.exitstatus == 0:
        summary.nothing_ran = True
        summary.target_lines = run.target_lines
        summary.collected_protocols = {r["protocol"] for r in writer.records()}
        session.exitstatus = pytest.ExitCode.USAGE_ERROR  # as for a named target that speaks another protocol
    # last: run.json and summary.html carry the exit code the run ends with
    run.events.emit(RunFinished(controller=True, exit_status=int(session.exitstatus)))


def _carry_blocked(run: Run, writer: RunWriter, config) -> bool:
    """Every clause that blocked a case gets a failure of its own (reports.rootcause.carry), then a client scenario
    that failed beside a failed clause it depends on is BLOCKED by it (reports.rootcause.reattribute, shown so in
    pytest's own reports too); True when a MUST clause (or any, under --strict) had to be carried, i.e. the run
    failed on it."""
    records = list(writer.records())
    carried = carry(records, run.strict)
    expect_carried(run.baseline, carried)
    moved = reattribute(records, dependencies(run.specs.values()))
    if carried or moved:
        writer.rewrite(records)
    show_carried(config, [record for record in carried if record["verdict"] == "FAILED"])
    show_blocked(config, moved)
    return any(record["verdict"] == "FAILED" for record in carried)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    run: Run = config.wirecheck
    assert run.summary is not None  # set with the writer (pytest_configure)
    run.summary.write(terminalreporter, run.writer, run.is_controller)


# -- the target fixture ---------------------------------------------------------------------------------------


def _case_state(item) -> CaseState | None:
    return item.stash.get(case_key, None)


@pytest.fixture
def target(request) -> Iterator[Target]:
    """The server under test for this case's protocol; NOT-RUN when none speaks it."""
    tgt = resolve_target(request.node)
    yield tgt
    tgt.close_all()


def _say(config, line: str) -> None:
    """One line on the terminal now (an xdist worker has no terminal: the run's summary says it at the end)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # said inside a case: past pytest's output capture
            reporter.write_line(line, red=True)


def resolve_target(item) -> Target:
    """The ``target`` of a case item (skipped NOT-RUN when no target speaks its protocol, TARGET-DOWN when its
    target died earlier)."""
    state = _case_state(item)
    if state is None:
        raise HarnessError(f"{item.nodeid} uses `target` but has no @pytest.mark.case(...)")
    run: Run = item.config.wirecheck
    try:
        info = run.targets().get(state.spec.name)
    except UsageProblem as exc:
        raise pytest.UsageError(str(exc)) from None
    if info is None:
        pytest.skip(f"{NOT_RUN}: no target speaks {state.spec.name} (give --target {state.spec.name}=HOST:PORT)")
    down = run.down_reason(state.spec.name)
    if down is not None:
        pytest.skip(f"{TARGET_DOWN}: {down}")
    state.info = info
    return Target(run, state)


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
                          Transcript(protocol, spec.describe, spec.describe_answer))
        item.stash[case_key] = state
        item.extra_keyword_matches.update({case_id, protocol})
        run.collected_protocols.add(protocol)
        item.repr_failure = _case_repr_failure(item, item.repr_failure)
    # The regression corpus first, then the cases of a --stop-at-clause clause (the run can stop soonest); a
    # stable sort keeps every other order.
    wanted = set(run.options.stop_at_clause)
    items.sort(key=lambda item: (not isinstance(item, ReplayCase),
                                 getattr(_case_state(item), "case_id", None) not in wanted))


def _case_repr_failure(item, default):
    """A divergence is shown as case, clause, expected vs actual, transcript and reproducer; pytest's traceback
    (slow to build, and about our code, not the target) is kept for harness errors only."""

    def repr_failure(excinfo, *args, **kwargs):
        exc = unwrap(excinfo.value)
        if isinstance(exc, Divergence):
            state = _case_state(item)
            assert state is not None  # installed on case items only (pytest_collection_modifyitems)
            run: Run = item.config.wirecheck
            notes = list(getattr(excinfo.value, "__notes__", [])) + list(getattr(exc, "__notes__", []))
            if exc is not excinfo.value:
                notes.insert(0, f"{type(excinfo.value).__name__}: the failure did not reproduce on replay (flaky)")
            return render_failure(state, exc, run.reproduce(case_selector(item), state.info), notes=notes)
        return default(excinfo, *args, **kwargs)

    return repr_failure


# -- running: liveness after hostile and failed cases, re-runs of failures ---------------------------------------


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
    if state is None or state.info is None:
        return (yield)
    run: Run = item.config.wirecheck
    try:
        yield
        failure = _checked(run, state, None)
    except Exception as exc:  # noqa: BLE001 - judged below, then raised again
        failure = _checked(run, state, exc)
    attempt, first = 1, failure
    while failure is not None and attempt <= run.confirm and _confirmable(failure, run, state.case_id):
        state.attempts.append((f"attempt {attempt}: {_one_line(failure)}", list(state.transcript.events)))
        attempt += 1
        target = getattr(item, "funcargs", {}).get("target")
        if target is not None:
            target.close_all()
        state.transcript.clear()
        state.transcript.note(f"attempt {attempt} of {run.confirm + 1} (--confirm {run.confirm})")
        try:
            item.runtest()
            failure = _checked(run, state, None)
        except Exception as exc:  # noqa: BLE001
            failure = _checked(run, state, exc)
        if failure is None:
            state.confirmed = (first, attempt)
    if failure is not None:
        raise failure


def _checked(run: Run, state: CaseState, exc: BaseException | None) -> BaseException | None:
    """What a case attempt amounts to: None (passed), what it raised, or the target's death after it. The
    liveness probe runs after a hostile case and after any failure (then the death, if any, is cached)."""
    if isinstance(exc, OutcomeException) or isinstance(unwrap(exc) if exc else None, Unimplemented):
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


def _confirmable(failure: BaseException, run: Run, case_clause: str) -> bool:
    """Only a FAILED verdict is re-run: not a dead target, a blocked precondition or a harness error."""
    exc = unwrap(failure)
    return not isinstance(exc, TargetDied) and classify(exc, "call", None, run.strict,
                                                        case_clause).verdict is Verdict.FAILED


def _one_line(exc: BaseException) -> str:
    return (str(unwrap(exc)).splitlines() or [type(exc).__name__])[0][:300]


# -- verdicts --------------------------------------------------------------------------------------------------


def case_selector(item) -> list[str]:
    """How pytest finds this case again from where the run ran: its path and name when the suite's file lies
    under the directory pytest ran in (a checkout), otherwise ``--pyargs`` and the module's import name (the
    installed package, ``pytest --pyargs wirecheck.suites`` or ``wirecheck run``), which works anywhere."""
    name = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name
    path = Path(item.path)
    try:
        return [f"{path.relative_to(item.config.invocation_params.dir).as_posix()}::{name}"]
    except ValueError:
        pass
    suites = importlib.util.find_spec("wirecheck.suites")
    for location in (suites.submodule_search_locations or []) if suites else ():
        if path.is_relative_to(location):
            module = ".".join(["wirecheck.suites", *path.relative_to(location).with_suffix("").parts])
            return ["--pyargs", f"{module}::{name}"]
    return [f"{path}::{name}"]  # outside the package (a user's own suite): its absolute path


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
    if state.confirmed is not None and rep.passed and call.when == "call":
        first, attempt = state.confirmed
        result = flaky(classify(first, "call", None, run.strict, state.case_id), attempt, run.strict)
    else:
        result = apply_baseline(run.baseline, state.case_id,
                                classify(exc, call.when, skip_reason, run.strict, state.case_id), item.name)
    _set_pytest_outcome(item, rep, result)
    if call.when == "setup" and rep.passed:  # a fixture's SHOULD-level divergence: the case body cannot run
        rep.outcome, rep.longrepr = "skipped", (str(item.path), item.location[1] or 0, result.message)
    if result.verdict is Verdict.OK and (state.differences or (state.tally and not state.tally.complete)):
        result = replace(result, message=_differences_note(state))  # --differential: evidence beside the verdict
    if result.divergence is not None:
        _note_example(run, state, exc)
    state.verdict = result.verdict
    state.recorded = True
    keep = result.verdict not in (Verdict.OK, Verdict.NOT_RUN, Verdict.UNIMPLEMENTED) or run.options.keep_transcripts
    reproduce = None
    if result.verdict not in (Verdict.OK, Verdict.NOT_RUN):
        reproduce = run.reproduce(case_selector(item), state.info) if not isinstance(item, ReplayCase) else \
            replay_command(item.path, state.info)
    params = dict(getattr(getattr(item, "callspec", None), "params", {}))
    run.events.emit(VerdictReached(state, result.verdict, result.message, result.divergence, reproduce, keep, params,
                                   result.blocking))
    # A case BLOCKED by the clause counts too: the run's end makes it that clause's FAILED case (reports.rootcause)
    div = result.divergence if result.verdict is Verdict.FAILED else result.blocking
    if div is not None and div.clause.id in run.options.stop_at_clause:
        item.session.shouldfail = f"{div.clause.id} reported FAILED (--stop-at-clause)"
    return rep


def _differences_note(state) -> str:
    """An OK case's message under --differential: where it answered otherwise, and how much was compared."""
    partly = f"differential: {state.tally.text()}" if state.tally and not state.tally.complete else ""
    if not state.differences:
        return partly
    first = state.differences[0]
    more = f"; {len(state.differences) - 1} more connection(s) differed" if len(state.differences) > 1 else ""
    return (f"{ANSWERED_OTHERWISE} (not judged a failure: the case's checks passed; "
            f"{first.clause.id}): {first.summary()}{more}" + (f"; {partly}" if partly else ""))[:1000]


def _note_example(run: Run, state: CaseState, exc: BaseException | None) -> None:
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


def _set_pytest_outcome(item, rep, result) -> None:
    """Make pytest's own outcome agree with the verdict (UNIMPLEMENTED skips, NON-STRICT passes, ...)."""
    if result.verdict in (Verdict.NOT_RUN, Verdict.TARGET_DOWN) and rep.skipped:
        # one reason for many cases: without a location, pytest's skip summary folds them into one line
        rep.longrepr = ("wirecheck", None, _skip_reason(rep))
        return
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
