"""Running a real client library or tool against the target, bounded and diagnosable.

A client scenario (``<protocol>.clients.<client>.<scenario>`` cases) runs the client as a child process in its
own process group, so that a client that hangs is stopped whole (with whatever it started) when the scenario's
time limit passes. The driver writes one JSON document as its last stdout line (what it observed); its stderr is
the client's own log, of which the last lines are kept for the verdict. Each scenario captures its clients' traffic
and keeps their whole logs (targets/client_capture.py): the verdict names where they are. Nothing here knows a
protocol.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import pytest

from wirecheck.protocols.clients import scenario_clauses
from wirecheck.protocols.verdicts import ClientDefectMet, Divergence, HarnessError
from wirecheck.targets.client_capture import ClientLog, ScenarioCapture
from wirecheck.targets.runner.verdicts import NOT_RUN

LOG_LINES = 25  # of the client's own log, kept with a failing verdict
#: set (to 1) where every client must be installed, e.g. the project's CI: a missing one is then an ERROR
REQUIRE_CLIENTS = "WIRECHECK_REQUIRE_CLIENTS"
#: the running client scenario's capture (set around a ``clients_case`` test, used by every client run in it)
_SCENARIO: ContextVar[ScenarioCapture | None] = ContextVar("client_scenario", default=None)


@dataclass(frozen=True)
class ClientRun:
    argv: tuple[str, ...]
    returncode: int | None  # None: stopped at the time limit
    output: dict | None  # the driver's JSON document, None when it wrote none
    log_tail: str  # the last lines of the client's stderr
    seconds: float
    stdout: str = ""  # all of it, for tools that print their results as lines (kcat)

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def summary(self) -> str:
        """How the client ended, with the last lines of its log: for a verdict's actual value."""
        if self.timed_out:
            how = f"still running after {self.seconds:.0f} s (stopped)"
        elif self.output is None:
            how = f"exited with status {self.returncode} without a result"
        else:
            how = f"exited with status {self.returncode}"
        last = f"; the client's last log lines:\n{self.log_tail}" if self.log_tail.strip() else ""
        waiting = self.output.get("waiting_for") if self.output else None
        return how + (f", waiting for {waiting}" if waiting else "") + last


@dataclass(frozen=True)
class JavaDriver:
    """A driver written in Java: a Maven project built into one runnable jar (``mvn package``), run as ``java -jar``
    on the same jobs as the protocol's other drivers."""
    project: Path  # the folder of its pom.xml
    jar_name: str  # what ``mvn package`` builds into target/
    install: str  # the line that builds it, from the checkout's root

    @property
    def jar(self) -> Path:
        return self.project / "target" / self.jar_name

    def missing(self) -> bool:
        """No java on PATH, or the jar not built (or built before its sources last changed)."""
        if shutil.which("java") is None or not self.jar.is_file():
            return True
        sources = [self.project / "pom.xml", *(self.project / "src").rglob("*")]
        return max(path.stat().st_mtime for path in sources if path.is_file()) > self.jar.stat().st_mtime

    def argv(self) -> list[str]:
        return ["java", "-jar", str(self.jar)]


def not_installed(client: str, install: str):
    """A client missing on this machine: the case is NOT-RUN with the line that installs it (a missing client
    says nothing about the target), or, where WIRECHECK_REQUIRE_CLIENTS=1, an ERROR of the run."""
    if os.environ.get(REQUIRE_CLIENTS) == "1":
        raise HarnessError(f"the {client} client is not installed ({install}), and {REQUIRE_CLIENTS}=1")
    pytest.skip(f"{NOT_RUN}: the {client} client is not installed here ({install})")


def clients_case(spec, scenario: str):
    """Parametrize a scenario's case over ``client``: one case per client of ``spec.clients`` that supports it,
    each reporting under its own clause ``<protocol>.clients.<client>.<scenario>`` (the clause audit counts them
    from this decorator), and run it as a ``client_scenario`` (its clients' traffic captured)."""
    clauses = scenario_clauses(spec.name, spec.clients, scenario)
    cases = pytest.mark.parametrize("client", [pytest.param(name, marks=pytest.mark.case(clause), id=name)
                                               for name, clause in clauses.items()])

    def captured(test):
        @functools.wraps(test)
        def scenario(*args, **kwargs):
            with client_scenario(kwargs.get("target")):
                return test(*args, **kwargs)
        return cases(scenario)
    return captured


@contextmanager
def client_scenario(target):
    """The scope of one client scenario: its clients' runs are captured from before the first to the case's end,
    and their traffic and logs kept with the case (``target.keep_evidence``). A divergence after a client ran names
    where they are (its note)."""
    if target is None or not hasattr(target, "keep_evidence"):
        yield None
        return
    scenario = ScenarioCapture.for_case(target)
    token = _SCENARIO.set(scenario)
    try:
        yield scenario
    except Divergence as div:
        if not scenario.ran:
            raise
        failure = div.with_note("; ".join(filter(None, (div.note, scenario.where()))))
        scenario.finish()  # the client's traffic, read for a known defect of its own
        met = scenario.defect_shown()
        if met is not None:
            defect, evidence = met
            raise ClientDefectMet(defect.name, evidence, failure, defect.describe()) from None
        raise failure from None
    finally:
        _SCENARIO.reset(token)
        scenario.finish()


def client_id() -> str | None:
    """The client id this scenario's clients send (``job["client_id"]``), so that the capture keeps their
    connections only; None outside a scenario or where the protocol's requests carry none."""
    scenario = _SCENARIO.get()
    return scenario.client_id if scenario is not None else None


def run_client(argv: list[str], stdin: str = "", timeout: float = 60.0, env: dict | None = None,
               cwd: str | None = None) -> ClientRun:
    """Run ``argv`` with ``stdin``; stop its whole process group after ``timeout`` seconds. Inside a client
    scenario the run is captured and its whole log kept."""
    scenario = _SCENARIO.get()
    if scenario is not None:
        scenario.before_run()
    from wirecheck.targets.runner.case import CLIENT_STARTING

    if (starting := CLIENT_STARTING.get()) is not None:  # --differential: the case's answers compared up to here
        starting(os.path.basename(argv[0]))
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd, env=None if env is None else {**os.environ, **env},
                            start_new_session=True)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        _stop_group(proc)
        out, err = proc.communicate()
        code = None
    run = ClientRun(tuple(argv), code, last_json(out), _tail(err), time.monotonic() - started, out or "")
    if scenario is not None:
        scenario.logs.append(ClientLog(run.argv, code, run.seconds, err or ""))
    return run


def drive(target, client: str, argv: list[str], job: dict, timeout: float, cwd: str | None = None,
          env: dict | None = None) -> ClientRun:
    """Run a driver on ``job`` (JSON on stdin) with ``run_client``; the command, the job and how it ended go into
    the case's transcript; the scenario's capture holds the client's own traffic. The job carries the scenario's
    client id (``client_id``) where the protocol's requests name one."""
    if client_id() is not None:
        job = {"client_id": client_id(), **job}
    target.transcript.note(f"client {client}: {' '.join(argv)} with job {json.dumps(job)[:1500]}")
    run = run_client(argv, json.dumps(job), timeout, env=env, cwd=cwd)
    target.transcript.note(f"client {client}: {run.summary()[:3000]}; result {json.dumps(run.output)[:3000]}")
    return run


def finished(clause, run: ClientRun, expected: str) -> dict:
    """The driver's result, or the clause's divergence saying how the client ended (failed, hung, what it was
    waiting for)."""
    if run.returncode != 0 or run.output is None or "waiting_for" in run.output:
        raise Divergence(clause, expected, f"the client {run.summary()}")
    return run.output


def _stop_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(3)
            return
        except subprocess.TimeoutExpired:
            continue


def last_json(text: str) -> dict | None:
    """The last stdout line that is a JSON object (drivers print one; clients may print other lines before)."""
    for line in reversed((text or "").splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def _tail(text: str, lines: int = LOG_LINES) -> str:
    return "\n".join((text or "").rstrip().splitlines()[-lines:])
