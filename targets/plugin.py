"""wirecheck's pytest plugin: options and hooks only; the runner (targets/runner/) decides and emits.

A conformance case is a pytest test marked ``@pytest.mark.case("<clause id>", hostile=False)``. The hooks
resolve the clause from its protocol's catalogue, give the test a ``target`` for that protocol (or report the
case NOT-RUN when no target speaks it, TARGET-DOWN when its target died earlier), hand the runner what each phase
raised (targets/runner/judging.py: liveness probe, --confirm re-runs, the verdict, its event) and make pytest's
outcome the verdict's. The outputs (records, summary page, terminal summary, Allure, pytest's own counts and JUnit)
are subscribed here to the runner's events; at the session's end the runner judges the whole run
(targets/runner/ending.py). Every option is checked at configure: a bad one is one line and exit code 4.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.outcomes import OutcomeException

from wirecheck.protocols.registry import all_specs
from wirecheck.protocols.transcript import Transcript
from wirecheck.protocols.verdicts import Divergence, HarnessError, Verdict
from wirecheck.reports.allure import AllureReporter
from wirecheck.reports.records import RunWriter
from wirecheck.reports.render import render_failure
from wirecheck.reports.summary_page import SummaryPage
from wirecheck.reports.terminal import TerminalSummary
from wirecheck.targets.corpus import ReplayCase, ReplayFile, in_corpus, replay_command
from wirecheck.targets.fuzz import FuzzBudget, register_hypothesis_profiles
from wirecheck.targets.rejudged import PytestOutcomes
from wirecheck.targets.runner import judging
from wirecheck.targets.runner.case import CaseState
from wirecheck.targets.runner.target import Target
from wirecheck.targets.runner.ending import end
from wirecheck.targets.runner.run import Run, RunOptions, UsageProblem
from wirecheck.targets.runner.validate import validate, writable_dir
from wirecheck.targets.runner.verdicts import NOT_RUN, TARGET_DOWN, Classified, unwrap

case_key = pytest.StashKey["CaseState"]()
summary_key = pytest.StashKey[TerminalSummary]()


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
    group.addoption("--fuzz-workers", type=int, default=None, metavar="N",
                    help="split each bulk mutation case over N processes (a target with cores to spare); the "
                         "seed names the same mutants at any N")
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
    budget = FuzzBudget.parse(config.getoption("fuzz"), config.getoption("fuzz_seed"),
                              config.getoption("fuzz_workers"))
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
    writer = RunWriter(Path(run.options.report_dir), run.open_records(), run.worker, pcap=run.options.pcap)
    writer.replay_context = {"nonce": run.nonce, "deadline": run.deadline}
    run.say = lambda line: _say(config, line)
    allure_dir = config.getoption("allure_report_dir", default=None)
    summary = config.stash[summary_key] = TerminalSummary()
    # every output receives every event; none depends on another having handled it first
    for output in (writer, SummaryPage(), summary, AllureReporter(Path(allure_dir) if allure_dir else None),
                   PytestOutcomes(config, run.strict)):
        run.events.subscribe(output)
    config.wirecheck = run
    for corpus in config.getoption("corpus"):
        if not Path(corpus).is_dir():
            raise pytest.UsageError(f"--corpus {corpus}: not a directory of replay files")
        config.args.append(corpus)  # collected by pytest_collect_file below


def pytest_collect_file(file_path, parent):
    if in_corpus(file_path, parent.config.getoption("corpus")):
        return ReplayFile.from_parent(parent, path=file_path, resolve=resolve_target)
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


@pytest.hookimpl(tryfirst=True)  # before junitxml writes its file: a revised verdict is shown as the records hold it
def pytest_sessionfinish(session, exitstatus):
    status = end(session.config.wirecheck, int(session.exitstatus))
    if status != session.exitstatus:
        session.exitstatus = pytest.ExitCode(status)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    summary = config.stash.get(summary_key, None)
    if summary is not None:
        summary.write(terminalreporter)


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
    """A divergence is shown as case, clause, expected vs actual, transcript and reproducer (set once the runner
    judged it: ``pytest_runtest_makereport``); pytest's traceback (slow to build, and about our code, not the
    target) is kept for harness errors only."""

    def repr_failure(excinfo, *args, **kwargs):
        exc = unwrap(excinfo.value)
        if isinstance(exc, Divergence):
            return str(exc)
        return default(excinfo, *args, **kwargs)

    return repr_failure


# -- running: liveness after hostile and failed cases, re-runs of failures ---------------------------------------


def pytest_runtest_setup(item):
    state = _case_state(item)
    if state is not None:
        judging.start(item.config.wirecheck, state)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    state = _case_state(item)
    if state is None or state.info is None:
        return (yield)
    run: Run = item.config.wirecheck
    try:
        yield
        failure = judging.checked(run, state, None)
    except Exception as exc:  # noqa: BLE001 - judged below, then raised again
        failure = judging.checked(run, state, exc, isinstance(exc, OutcomeException))
    attempt, first = 1, failure
    while failure is not None and attempt <= run.confirm and judging.confirmable(run, state, failure):
        state.attempts.append((f"attempt {attempt}: {judging.one_line(failure)}", list(state.transcript.events)))
        attempt += 1
        target = getattr(item, "funcargs", {}).get("target")
        if target is not None:
            target.close_all()
        state.transcript.clear()
        state.transcript.note(f"attempt {attempt} of {run.confirm + 1} (--confirm {run.confirm})")
        try:
            item.runtest()
            failure = judging.checked(run, state, None)
        except Exception as exc:  # noqa: BLE001
            failure = judging.checked(run, state, exc, isinstance(exc, OutcomeException))
        if failure is None:
            state.confirmed = (first, attempt)
    if failure is not None:
        raise failure


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
    result = judging.judge(run, state, exc, call.when, skip_reason, item.name)
    reproduce = None
    if result.verdict not in (Verdict.OK, Verdict.NOT_RUN):
        reproduce = run.reproduce(case_selector(item), state.info) if not isinstance(item, ReplayCase) else \
            replay_command(item.path, state.info)
    _set_pytest_outcome(item, rep, result, run.strict)
    if call.when == "setup" and rep.passed:  # a fixture's SHOULD-level divergence: the case body cannot run
        rep.outcome, rep.longrepr = "skipped", (str(item.path), item.location[1] or 0, result.message)
    failed = unwrap(exc) if exc is not None else None
    if rep.failed and isinstance(failed, Divergence) and result.longrepr is None:
        notes = list(getattr(exc, "__notes__", [])) + list(getattr(failed, "__notes__", []))
        if failed is not exc:
            notes.insert(0, f"{type(exc).__name__}: the failure did not reproduce on replay (flaky)")
        rep.longrepr = render_failure(state, result.verdict, failed, reproduce, notes=notes)
    params = dict(getattr(getattr(item, "callspec", None), "params", {}))
    stop = judging.reach(run, state, result, reproduce, params)
    if stop is not None:
        item.session.shouldfail = stop
    return rep


def _set_pytest_outcome(item, rep, result: Classified, strict: bool) -> None:
    """Make pytest's own outcome the verdict's (protocols.verdicts.Verdict: UNIMPLEMENTED skips, NON-STRICT
    passes, XPASS fails, ...)."""
    if result.verdict in (Verdict.NOT_RUN, Verdict.TARGET_DOWN) and rep.skipped:
        # one reason for many cases: without a location, pytest's skip summary folds them into one line
        rep.longrepr = ("wirecheck", None, _skip_reason(rep))
        return
    outcome = result.verdict.pytest_outcome(strict)
    if outcome == "xfailed":
        rep.outcome, rep.wasxfail, rep.longrepr = "skipped", result.longrepr, None
    elif outcome == "skipped":
        if result.longrepr is not None:
            rep.outcome, rep.longrepr = "skipped", (str(item.path), item.location[1] or 0, result.longrepr)
    elif outcome == "passed":
        rep.outcome, rep.longrepr = "passed", result.longrepr
    else:
        rep.outcome = "failed"
        if result.longrepr is not None:
            rep.longrepr = result.longrepr


def _skip_reason(rep) -> str:
    if isinstance(rep.longrepr, tuple):
        return str(rep.longrepr[2]).removeprefix("Skipped: ")
    return str(rep.longrepr or "")
