"""wirecheck's pytest plugin: options, targets, the ``target`` fixture, verdicts and run records.

A conformance case is a pytest test marked ``@pytest.mark.case("<clause id>", hostile=False)``. The plugin
resolves the clause from its protocol's catalogue, gives the test a ``target`` for that protocol (or reports the
case NOT-RUN when no target speaks it), runs the liveness probe after hostile cases, turns the case's outcome into
a verdict, and writes one record per case (docs/report-schema.md).
"""

from __future__ import annotations

import itertools
import secrets
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from protocols.clauses import Clause
from protocols.registry import ProtocolSpec, all_specs
from reports.baseline import Baseline
from reports.model import Divergence, HarnessError, Unimplemented, Verdict
from reports.records import RunWriter, new_run_id
from reports.render import render_failure
from reports.transcript import Transcript
from targets import probe
from targets.fuzz import FuzzBudget, register_hypothesis_profiles
from targets.session import Session

NOT_RUN = "NOT-RUN"
UNIMPLEMENTED = "UNIMPLEMENTED"

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
    group.addoption("--deadline", type=float, default=2.0, help="seconds to wait for any answer (default 2)")
    group.addoption("--report-dir", default="wirecheck-reports", help="where run records go (default %(default)s)")
    group.addoption("--keep-transcripts", action="store_true", help="write transcripts of passing cases too")
    group.addoption("--pcap", action="store_true",
                    help="also write each kept transcript as a pcap (the pipeline can do it later, off the hot path)")
    group.addoption("--reference-fault", action="append", default=[], metavar="NAME",
                    help="start the bundled reference broker with this fault (self-validation)")
    group.addoption("--stop-at-clause", action="append", default=[], metavar="CLAUSE",
                    help="stop the run once this clause is reported FAILED (self-validation runs use it)")


def pytest_configure(config):
    config.addinivalue_line("markers", "case(id, hostile=False): a conformance case checking one clause")
    budget = FuzzBudget.parse(config.getoption("fuzz"), config.getoption("fuzz_seed"))
    register_hypothesis_profiles(budget)
    config.wirecheck = Wirecheck(config, budget)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is absent or disabled (-p no:xdist)
def pytest_configure_node(node):
    """xdist controller -> worker: one run id and report directory for the whole run."""
    node.workerinput["wirecheck_run_id"] = node.config.wirecheck.run_id


def pytest_sessionstart(session):
    session.config.wirecheck.start()


def pytest_sessionfinish(session, exitstatus):
    session.config.wirecheck.finish()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    wc: Wirecheck = config.wirecheck
    if wc.non_strict:
        terminalreporter.section("wirecheck NON-STRICT (SHOULD-level divergences)")
        for line in wc.non_strict:
            terminalreporter.line(line)
    if wc.writer is not None and wc.is_controller:
        _version_matrix(terminalreporter, wc.writer.version_matrix())
        totals = wc.writer.totals()
        if totals:
            summary = ", ".join(f"{n} {v}" for v, n in sorted(totals.items()))
            terminalreporter.write_line(f"wirecheck verdicts: {summary}")
            terminalreporter.write_line(f"wirecheck records: {wc.writer.run_dir}")


_MATRIX_MARK = {"OK": "ok", "NON-STRICT": "ns", "UNIMPLEMENTED": "--", "FAILED": "FAIL", "ERROR": "ERR",
                "XFAIL": "xf", "XPASS": "XP", "NOT-RUN": ".."}


def _version_matrix(terminalreporter, matrix) -> None:
    """Advertised equals implemented, at a glance: one line per API, one cell per version."""
    if not matrix:
        return
    terminalreporter.section("wirecheck version matrix (ok, ns = NON-STRICT, -- = not advertised, FAIL)")
    for (protocol, api), cells in sorted(matrix.items()):
        row = " ".join(f"v{v}:{_MATRIX_MARK.get(cells[v], cells[v])}" for v in sorted(cells))
        terminalreporter.line(f"{protocol} {api:<18} {row}")


# -- targets ---------------------------------------------------------------------------------------------------


@dataclass
class TargetInfo:
    protocol: str
    address: tuple[str, int]
    reference: bool  # the bundled broker, started by us

    @property
    def text(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"


class Wirecheck:
    """Per-process state of the plugin: options, targets, the run writer."""

    def __init__(self, config, budget: FuzzBudget):
        self.config = config
        self.budget = budget
        self.specs: dict[str, ProtocolSpec] = all_specs()
        self.strict = bool(config.getoption("strict"))
        self.deadline = config.getoption("deadline")
        self.baseline = Baseline.load(config.getoption("baseline")) if config.getoption("baseline") else None
        workerinput = getattr(config, "workerinput", None)
        self.worker = workerinput["workerid"] if workerinput else "main"
        self.is_controller = workerinput is None
        self.run_id = workerinput["wirecheck_run_id"] if workerinput else new_run_id()
        self.nonce = secrets.token_hex(3)
        self._counter = itertools.count()
        self._targets: dict[str, TargetInfo] | None = None
        self.broker = None  # BrokerProcess when we launched the reference
        self.writer: RunWriter | None = None
        self.non_strict: list[str] = []
        self.collected_protocols: set[str] = set()  # the reference broker runs only these personalities

    # -- lifecycle

    def start(self) -> None:
        self.writer = RunWriter(Path(self.config.getoption("report_dir")), self.run_id, self.worker,
                                self._run_metadata())

    def finish(self) -> None:
        if self.broker is not None:
            self.broker.stop()
        if self.writer is not None and self.is_controller:
            self.writer.write_run_end()

    def _run_metadata(self) -> dict:
        targets = {}
        for spec in self.config.getoption("target"):
            name, _, address = spec.rpartition("=")
            targets[name or self.config.getoption("protocol") or "probe"] = {
                "address": address, "reference": False, "faults": []}
        return {
            "profile": self.budget.name,
            "strict": self.strict,
            "baseline": self.config.getoption("baseline"),
            "targets": targets or {"*": {"address": "reference broker", "reference": True,
                                         "faults": self.config.getoption("reference_fault")}},
            "argv": list(self.config.invocation_params.args),
        }

    # -- targets

    def targets(self) -> dict[str, TargetInfo]:
        if self._targets is None:
            self._targets = self._resolve_targets()
        return self._targets

    def _resolve_targets(self) -> dict[str, TargetInfo]:
        given = self.config.getoption("target")
        if not given:
            return self._launch_reference()
        found: dict[str, TargetInfo] = {}
        for text in given:
            name, _, address_text = text.rpartition("=")
            try:
                address = probe.parse_address(address_text)
            except (ValueError, OSError) as exc:
                raise pytest.UsageError(f"--target {text}: {exc}") from None
            if name:
                names = [name]
            elif self.config.getoption("protocol"):
                names = [self.config.getoption("protocol")]
            else:
                names = probe.detect(address, self.specs, self.deadline)
                if not names:
                    raise pytest.UsageError(f"--target {text}: no known protocol answered; "
                                            f"name it: --target PROTOCOL={address_text}")
            for n in names:
                if n not in self.specs:
                    raise pytest.UsageError(f"--target {text}: unknown protocol {n!r}; known: {sorted(self.specs)}")
                found[n] = TargetInfo(n, address, reference=False)
        return found

    def _launch_reference(self) -> dict[str, TargetInfo]:
        from targets.launcher import launch

        workdir = self.writer.run_dir / f"broker-{self.worker}-{next(self._counter)}"
        self.broker = launch(protocols=sorted(self.collected_protocols) or None,
                             faults=self.config.getoption("reference_fault"), workdir=workdir,
                             extra_args=["--retention-records", "5000", "--segment-records", "1000"])
        return {name: TargetInfo(name, (self.broker.host, port), reference=True)
                for name, port in self.broker.ports.items() if name in self.specs}

    def target_options(self, protocol: str) -> dict[str, str]:
        """``--target-option PROTOCOL.KEY=VALUE`` settings for one protocol."""
        options = {}
        for text in self.config.getoption("target_option"):
            key, sep, value = text.partition("=")
            name, dot, key = key.partition(".")
            if not sep or not dot:
                raise pytest.UsageError(f"--target-option {text!r}: expected PROTOCOL.KEY=VALUE")
            if name == protocol:
                options[key] = value
        return options

    def relaunch_reference(self) -> None:
        self.broker.stop()
        self._targets = self._launch_reference()

    def unique(self, stem: str) -> str:
        """A resource name no other example, worker or run uses (valid as a topic name everywhere)."""
        return f"wc-{self.nonce}-{self.worker}-{next(self._counter)}-{stem}"[:200]

    def reproduce(self, item, info: TargetInfo | None) -> str:
        args = ["pytest", item.nodeid]
        if info is not None and not info.reference:
            args += ["--target", f"{info.protocol}={info.text}"]
        for fault in self.config.getoption("reference_fault"):
            args += ["--reference-fault", fault]
        if self.budget.name != "ci":
            args.append(f"--fuzz={self.budget.name}")
        args.append(f"--fuzz-seed={self.budget.seed}")
        if self.strict:
            args.append("--strict")
        seed = self.config.getoption("hypothesis_seed", default=None)
        if seed is not None:
            args.append(f"--hypothesis-seed={seed}")
        return shlex.join(args)


# -- per-case state and the target fixture ------------------------------------------------------------------


@dataclass
class CaseState:
    case_id: str
    clause: Clause
    spec: ProtocolSpec
    hostile: bool
    transcript: Transcript
    info: TargetInfo | None = None
    started: float = field(default_factory=time.monotonic)
    verdict: Verdict | None = None
    recorded: bool = False


class Target:
    """What a case holds: the address, sessions that record into the case's transcript, unique names."""

    def __init__(self, wc: Wirecheck, state: CaseState):
        self._wc = wc
        self._state = state
        self.info = state.info
        self.case_id = state.case_id  # protocols with a client id field stamp it into requests
        self.spec = state.spec
        self.address = state.info.address
        self.deadline = wc.deadline
        self.fuzz = wc.budget
        self.options = wc.target_options(state.spec.name)
        self.transcript = state.transcript
        self.catalogue = state.spec.catalogue
        self._sessions: list[Session] = []

    def connect(self, deadline: float | None = None) -> Session:
        try:
            session = Session(self.address, self.spec, self.transcript, deadline or self.deadline)
        except OSError as exc:
            raise Divergence(self.catalogue[f"{self.spec.name}.robustness.survives"],
                             f"a connection to {self.info.text}", f"connect failed: {exc}") from None
        self._sessions.append(session)
        return session

    def unique(self, stem: str = "t") -> str:
        return self._wc.unique(stem)

    def clause(self, clause_id: str) -> Clause:
        return self.catalogue[clause_id]

    def close_all(self) -> None:
        for session in self._sessions:
            try:
                session.close()
            except OSError:
                pass
        self._sessions.clear()


def _case_state(item) -> CaseState | None:
    return item.stash.get(case_key, None)


@pytest.fixture
def target(request) -> Target:
    """The server under test for this case's protocol; NOT-RUN when none speaks it."""
    state = _case_state(request.node)
    if state is None:
        raise HarnessError(f"{request.node.nodeid} uses `target` but has no @pytest.mark.case(...)")
    wc: Wirecheck = request.config.wirecheck
    info = wc.targets().get(state.spec.name)
    if info is None:
        pytest.skip(f"{NOT_RUN}: no target speaks {state.spec.name} (give --target {state.spec.name}=HOST:PORT)")
    state.info = info
    tgt = Target(wc, state)
    yield tgt
    tgt.close_all()


@pytest.fixture
def fuzz(request) -> FuzzBudget:
    return request.config.wirecheck.budget


# -- collection ------------------------------------------------------------------------------------------------


def pytest_collection_modifyitems(session, config, items):
    wc: Wirecheck = config.wirecheck
    for item in items:
        mark = item.get_closest_marker("case")
        if mark is None:
            continue
        case_id = mark.args[0]
        protocol = case_id.split(".", 1)[0]
        spec = wc.specs.get(protocol)
        if spec is None or case_id not in spec.catalogue:
            raise pytest.UsageError(f"{item.nodeid}: case {case_id!r} names no clause of a known catalogue")
        state = CaseState(case_id, spec.catalogue[case_id], spec, bool(mark.kwargs.get("hostile")),
                          Transcript(protocol, spec.describe))
        item.stash[case_key] = state
        item.extra_keyword_matches.update({case_id, protocol})
        wc.collected_protocols.add(protocol)
        item.repr_failure = _case_repr_failure(item, item.repr_failure)


def _case_repr_failure(item, default):
    """A divergence is shown as case, clause, expected vs actual, transcript and reproducer; pytest's traceback
    (slow to build, and about our code, not the target) is kept for harness errors only."""

    def repr_failure(excinfo, *args, **kwargs):
        exc = _unwrap(excinfo.value)
        if isinstance(exc, Divergence):
            state = _case_state(item)
            wc: Wirecheck = item.config.wirecheck
            notes = list(getattr(excinfo.value, "__notes__", [])) + list(getattr(exc, "__notes__", []))
            if exc is not excinfo.value:
                notes.insert(0, f"{type(excinfo.value).__name__}: the failure did not reproduce on replay (flaky)")
            return render_failure(state, exc, wc.reproduce(item, state.info), notes=notes)
        return default(excinfo, *args, **kwargs)

    return repr_failure


# -- running: liveness after hostile cases ----------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    state = _case_state(item)
    try:
        result = yield
    except BaseException:
        if state is not None and state.hostile and state.info is not None:
            _liveness(item, state, raise_on_death=False)
        raise
    if state is not None and state.hostile and state.info is not None:
        _liveness(item, state, raise_on_death=True)
    return result


def _liveness(item, state: CaseState, raise_on_death: bool) -> None:
    wc: Wirecheck = item.config.wirecheck
    state.transcript.note("liveness probe: a known-good request on a new connection")
    ok, what = probe.hello_answered(state.info.address, state.spec, wc.deadline, state.transcript)
    if ok:
        return
    if wc.broker is not None and state.info.reference and not wc.broker.alive:
        what += f"; the reference broker {wc.broker.exit_status()}"
        wc.relaunch_reference()  # later cases get a live broker; this one still fails
        state.transcript.note("the reference broker was restarted for the cases that follow")
    state.transcript.note(f"liveness probe failed: {what}")
    if raise_on_death:
        raise Divergence(state.spec.catalogue[f"{state.spec.name}.robustness.survives"],
                         "the target still answers a known-good request", what)


# -- verdicts and records -------------------------------------------------------------------------------------


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
    wc: Wirecheck = item.config.wirecheck
    verdict, message, divergence = _classify(wc, item, state, call, rep)
    verdict, rep = _apply_baseline(wc, state, verdict, message, rep)
    state.verdict = verdict
    state.recorded = True
    if verdict is Verdict.NON_STRICT:
        wc.non_strict.append(f"{state.case_id} ({item.nodeid}): {message}")
    _record(wc, item, state, verdict, message, divergence)
    if verdict is Verdict.FAILED and divergence is not None \
            and divergence.clause.id in item.config.getoption("stop_at_clause"):
        item.session.shouldfail = f"{divergence.clause.id} reported FAILED (--stop-at-clause)"
    return rep


def _classify(wc: Wirecheck, item, state: CaseState, call, rep):
    """(verdict, one-line message, divergence or None); adjusts ``rep`` for pytest's own outcome."""
    excinfo = call.excinfo
    if rep.skipped:
        reason = _skip_reason(rep)
        verdict = Verdict.NOT_RUN if reason.startswith(NOT_RUN) else Verdict.UNIMPLEMENTED
        return verdict, reason, None
    if excinfo is None:
        return Verdict.OK, "", None
    exc = _unwrap(excinfo.value)
    if isinstance(exc, Unimplemented):
        rep.outcome = "skipped"
        rep.longrepr = (str(item.path), item.location[1] or 0, f"{UNIMPLEMENTED}: {exc}")
        return Verdict.UNIMPLEMENTED, str(exc), None
    if isinstance(exc, Divergence):
        verdict = exc.verdict
        if verdict is Verdict.NON_STRICT and not wc.strict:
            rep.outcome = "passed"
            rep.longrepr = None
        else:
            verdict = Verdict.FAILED
        return verdict, str(exc), exc
    if call.when == "call" or isinstance(exc, HarnessError):
        return Verdict.ERROR, f"{type(exc).__name__}: {exc}".splitlines()[0][:500], None
    return Verdict.ERROR, f"{call.when} failed: {type(exc).__name__}: {exc}".splitlines()[0][:500], None


def _unwrap(exc: BaseException) -> BaseException:
    """The divergence inside an exception group (Hypothesis reports a failure that did not reproduce, i.e. a
    flaky target, as a group): a divergence seen once is still a divergence."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _unwrap(inner)
            if isinstance(found, (Divergence, Unimplemented)):
                return found
    return exc


def _skip_reason(rep) -> str:
    if isinstance(rep.longrepr, tuple):
        return str(rep.longrepr[2]).removeprefix("Skipped: ")
    return str(rep.longrepr or "")


def _apply_baseline(wc: Wirecheck, state: CaseState, verdict: Verdict, message: str, rep):
    if wc.baseline is None:
        return verdict, rep
    entry = wc.baseline.entry_for(state.case_id)
    if entry is None:
        return verdict, rep
    if verdict in (Verdict.FAILED, Verdict.ERROR):
        rep.outcome = "skipped"
        rep.wasxfail = f"baseline: {entry.reason}"
        rep.longrepr = None
        return Verdict.XFAIL, rep
    if verdict is Verdict.OK:
        # A known failure that now passes: the baseline is stale, and a stale baseline hides regressions.
        rep.outcome = "failed"
        rep.longrepr = (f"XPASS {state.case_id}: listed in the baseline ({entry.reason}) but passes now; "
                        f"remove it from {wc.baseline.path}")
        return Verdict.XPASS, rep
    return verdict, rep


def _record(wc: Wirecheck, item, state: CaseState, verdict: Verdict, message: str, div: Divergence | None):
    clause = div.clause if div is not None else state.clause
    transcript_path = None
    if state.transcript.events and (verdict not in (Verdict.OK, Verdict.NOT_RUN, Verdict.UNIMPLEMENTED)
                                    or item.config.getoption("keep_transcripts")):
        transcript_path = wc.writer.write_transcript(state.case_id, item.nodeid, state.transcript,
                                                     pcap=item.config.getoption("pcap"))
        _attach_to_allure(state, item)
    params = getattr(getattr(item, "callspec", None), "params", {})
    wc.writer.write_case({
        "case": state.case_id,
        "nodeid": item.nodeid,
        "protocol": state.spec.name,
        "clause": clause.id,
        "requirement": clause.requirement,
        "source": clause.source,
        "level": clause.level.value,
        "verdict": verdict.value,
        "message": message,
        "expected": div.expected if div else None,
        "actual": div.actual if div else None,
        "duration_s": round(time.monotonic() - state.started, 6),
        "target": state.info.text if state.info else None,
        "api": params.get("api"),
        "api_version": params.get("api_version"),
        "transcript": transcript_path,
        "reproduce": wc.reproduce(item, state.info) if verdict not in (Verdict.OK, Verdict.NOT_RUN) else None,
        "worker": wc.worker,
    })


def _attach_to_allure(state: CaseState, item) -> None:
    try:
        import allure
    except ImportError:
        return
    allure.attach(state.transcript.render(limit=400), name=f"{state.case_id} transcript",
                  attachment_type=allure.attachment_type.TEXT)


def pytest_runtest_setup(item):
    state = _case_state(item)
    if state is not None:
        state.started = state.transcript.started = time.monotonic()
        _allure_labels(state)


def _allure_labels(state: CaseState) -> None:
    try:
        import allure
    except ImportError:
        return
    allure.dynamic.label("case", state.case_id)
    allure.dynamic.label("clause_level", state.clause.level.value)
    allure.dynamic.feature(state.spec.name)
    allure.dynamic.description(f"{state.clause.requirement}\n\nSource: {state.clause.source}")

