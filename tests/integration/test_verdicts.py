"""Verdicts a vendor can gate a release on: a dead target is one failure and the rest TARGET-DOWN (or, with
--target-restart, the run goes on); a broken setup step BLOCKs the cases that need it; a failure that passes
when re-run is FLAKY; a misconfigured run fails at once in one line.

The vtoy protocol (tests/verdicts/) is registered through WIRECHECK_PROTOCOLS; its server runs as a child
process so that it can die. Every run is a pytest subprocess with a generous timeout as a hang guard.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from wirecheck.targets.launcher import launch

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, WIRECHECK_PROTOCOLS="tests.verdicts.spec", PYTHONPATH=str(ROOT))
CASES = "tests/verdicts/cases.py"


class Result:
    def __init__(self, proc: subprocess.CompletedProcess, report: Path):
        self.code = proc.returncode
        self.out = proc.stdout + proc.stderr
        self.run_dirs = sorted(report.iterdir()) if report.exists() else []
        self.records = [json.loads(line) for d in self.run_dirs for p in d.glob("cases-*.jsonl")
                        for line in p.read_text().splitlines()]

    def verdicts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self.records:
            counts[record["verdict"]] = counts.get(record["verdict"], 0) + 1
        return counts

    @property
    def run_json(self) -> dict:
        return json.loads((self.run_dirs[0] / "run.json").read_text())


def pytest_run(tmp_path: Path, *args: str, timeout: float = 120) -> Result:
    report = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                           "-o", "addopts=", "--report-dir", str(report), *args],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout)
    return Result(proc, report)


class VtoyProcess:
    """``python -m tests.verdicts.server`` as a child process; ``restart_command`` starts it again on the same
    port and records the new pid, so that the test stops exactly what it started."""

    def __init__(self, tmp_path: Path, *flags: str):
        self.pid_file = tmp_path / "vtoy.pids"
        self.process = subprocess.Popen([sys.executable, "-m", "tests.verdicts.server", *flags], cwd=ROOT, env=ENV,
                                        stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline())

    @property
    def target(self) -> str:
        return f"--target=vtoy=127.0.0.1:{self.port}"

    def restart_command(self) -> str:
        return (f"{sys.executable} -m tests.verdicts.server --port {self.port} > /dev/null & "
                f"echo $! >> {self.pid_file}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        if self.pid_file.exists():
            for pid in self.pid_file.read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass


@pytest.fixture
def vtoy(tmp_path):
    started: list[VtoyProcess] = []

    def start(*flags: str) -> VtoyProcess:
        server = VtoyProcess(tmp_path, *flags)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# -- 1. a target that dies -------------------------------------------------------------------------------------


def test_a_dead_target_is_one_failure_and_every_later_case_target_down(tmp_path, vtoy):
    server = vtoy("--die-on", "READ")
    result = pytest_run(tmp_path, CASES, server.target)
    assert result.code == 1, result.out[-3000:]
    assert result.verdicts() == {"OK": 4, "FAILED": 1, "TARGET-DOWN": 7}, result.out[-3000:]
    (failed,) = [r for r in result.records if r["verdict"] == "FAILED"]
    assert failed["case"] == "vtoy.read.data" and failed["clause"] == "vtoy.robustness.survives"
    assert failed["message"].startswith("target stopped answering after frame") and "READ wc-" in failed["message"]
    headline = result.run_json["headline"]
    assert headline.startswith("target died at case vtoy.read.data after frame") and \
        headline.endswith("; 7 cases not run")
    assert f"wirecheck: {headline}" in result.out
    down = [r for r in result.records if r["verdict"] == "TARGET-DOWN"]
    assert all(r["transcript"] is None and r["duration_s"] < 1 for r in down)  # no network: nothing to wait for
    page = (result.run_dirs[0] / "summary.html").read_text()
    assert "target stopped answering" in page and "READ wc-" in page and "7 TARGET-DOWN" in page


def test_target_restart_brings_the_target_back_and_later_cases_pass(tmp_path, vtoy):
    server = vtoy("--die-on", "READ")
    result = pytest_run(tmp_path, CASES, server.target, "--target-restart", server.restart_command())
    assert result.verdicts() == {"OK": 11, "FAILED": 1}, result.out[-3000:]
    assert result.code == 1
    assert result.run_json["headline"] is None


def test_a_foreground_restart_command_is_waited_for_by_the_probe_and_stopped_with_the_run(tmp_path, vtoy):
    """The contract of --target-restart: the command may stay in the foreground (as the README's own broker
    command does); the run goes on once the target answers, and what the command started ends with the run."""
    server = vtoy("--die-on", "READ")
    started = time.monotonic()
    result = pytest_run(tmp_path, CASES, server.target, "--target-restart",
                        f"{sys.executable} -m tests.verdicts.server --port {server.port}")
    assert result.verdicts() == {"OK": 11, "FAILED": 1}, result.out[-3000:]
    assert time.monotonic() - started < 60  # not the restart timeout (120 s): the probe saw it come back
    with pytest.raises(ConnectionRefusedError):  # the restarted server did not outlive the run
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()


def test_a_failing_restart_command_is_said_once_and_the_cases_after_are_target_down(tmp_path, vtoy):
    server = vtoy("--die-on", "READ")
    result = pytest_run(tmp_path, CASES, server.target, "--target-restart", "echo no such broker; exit 3")
    assert "wirecheck: --target-restart exited with status 3 before the target answered" in result.out
    assert result.verdicts() == {"OK": 4, "FAILED": 1, "TARGET-DOWN": 7}, result.out[-3000:]


def test_the_bulk_engine_names_the_mutant_that_preceded_the_death(tmp_path):
    broker = launch(["rustlog"], faults=["rustlog.crash-on-deep-json"], workdir=tmp_path / "broker")
    try:
        result = pytest_run(tmp_path, "suites/rustlog/test_robustness.py", "suites/rustlog/test_admin.py",
                            f"--target=rustlog=127.0.0.1:{broker.ports['rustlog']}",
                            "-k", "test_bulk_mutants or rustlog.ping", timeout=300)
    finally:
        broker.stop()
    assert result.verdicts() == {"FAILED": 1, "TARGET-DOWN": 1}, result.out[-3000:]
    (failed,) = [r for r in result.records if r["verdict"] == "FAILED"]
    # The mutant (index, operator, field, hex): the one the engine pinned, or, when the target died while several
    # batches were in flight, their range and the first of them (a dead target cannot be asked which one).
    assert re.match(r"target stopped answering after (mutants #\d+-#\d+ were in flight, the first )?"
                    r"mutant #\d+ \S+ at \S+: [0-9a-f]+", failed["message"]), failed["message"]
    assert "--fuzz-seed=0" in failed["reproduce"]


def test_with_target_restart_the_bulk_engine_pins_the_mutant_that_killed_the_target(tmp_path):
    """The FAILED case names exactly one mutant, never a range: the one whose connection died, or, when several
    were in flight, the one found by restarting the target and replaying them in halves (the restart command
    starts the same faulted broker on the same port; tests/unit/test_fuzz_pin.py checks the bisection itself)."""
    broker = launch(["rustlog"], faults=["rustlog.crash-on-deep-json"], workdir=tmp_path / "broker")
    port, pids = broker.ports["rustlog"], tmp_path / "restarted.pids"
    restart = (f"{sys.executable} -m wirecheck.broker --protocols rustlog --rustlog-port {port} "
               f"--fault rustlog.crash-on-deep-json > /dev/null 2>&1 & echo $! >> {pids}")
    try:
        result = pytest_run(tmp_path, "suites/rustlog/test_robustness.py", f"--target=rustlog=127.0.0.1:{port}",
                            "-k", "test_bulk_mutants", "--target-restart", restart, timeout=300)
    finally:
        broker.stop()
        for pid in (pids.read_text().split() if pids.exists() else []):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    (failed,) = [r for r in result.records if r["verdict"] == "FAILED"]
    killer = re.match(r"target stopped answering after mutant #\d+ \S+ at \S+: ([0-9a-f]+)", failed["message"])
    assert killer and "in flight" not in failed["message"], failed["message"]
    assert "5b5b5b5b5b5b5b5b" in killer.group(1), failed["message"]  # JSON nested deeper than the fault allows
    transcript = (result.run_dirs[0] / failed["transcript"]).read_text()
    assert ("restarting the target" not in transcript) or "pinned by replaying" in transcript


# -- 2. a broken setup step ------------------------------------------------------------------------------------


def test_a_broken_precondition_blocks_the_cases_that_need_it(tmp_path, vtoy):
    server = vtoy("--break-make")
    result = pytest_run(tmp_path, CASES, server.target)
    assert result.code == 1
    assert result.verdicts() == {"OK": 8, "FAILED": 1, "BLOCKED": 3}, result.out[-3000:]
    (failed,) = [r for r in result.records if r["verdict"] == "FAILED"]
    assert failed["case"] == failed["clause"] == "vtoy.make.made"
    blocked = [r for r in result.records if r["verdict"] == "BLOCKED"]
    assert {r["case"] for r in blocked} == {r["clause"] for r in blocked} == {"vtoy.read.data"}
    assert all("precondition failed: wc-" in r["message"] and "got FAIL" in r["message"] for r in blocked)
    assert all(r["transcript"] for r in blocked)


# -- 3. flaky ---------------------------------------------------------------------------------------------------


def test_a_failure_that_passes_when_run_again_is_flaky(tmp_path, vtoy):
    server = vtoy("--flaky-echo")  # every other ECHO answered wrongly, the first one wrong
    result = pytest_run(tmp_path, CASES, server.target, "--confirm", "2")
    assert result.code == 0, result.out[-3000:]
    assert result.verdicts() == {"OK": 10, "FLAKY": 2}
    flaky = [r for r in result.records if r["verdict"] == "FLAKY"]
    assert all(r["attempts"] == 2 and "passed on attempt 2" in r["message"] for r in flaky)
    transcript = json.loads((result.run_dirs[0] / flaky[0]["transcript"]).read_text())
    assert [a["attempt"] for a in transcript["attempts"]] == [1]
    assert any("ECHX" in e.get("decoded", "") for e in transcript["attempts"][0]["events"])
    assert any(e.get("decoded") == "ECHO 0" for e in transcript["events"] if e["kind"] == "recv")


def test_flaky_fails_the_run_only_under_strict_and_without_confirm_it_is_a_failure(tmp_path, vtoy):
    strict = pytest_run(tmp_path / "strict", CASES, vtoy("--flaky-echo").target, "--confirm", "2", "--strict")
    assert strict.code == 1 and strict.verdicts() == {"OK": 10, "FLAKY": 2}
    once = pytest_run(tmp_path / "once", CASES, vtoy("--flaky-echo").target)
    assert once.code == 1 and once.verdicts() == {"OK": 11, "FAILED": 1}


def test_a_failure_on_every_attempt_stays_failed_with_every_attempt_kept(tmp_path, vtoy):
    server = vtoy("--break-make")
    result = pytest_run(tmp_path, CASES, server.target, "--confirm", "2", "-k", "test_make")
    (failed,) = result.records
    assert failed["verdict"] == "FAILED" and failed["attempts"] == 3
    transcript = json.loads((result.run_dirs[0] / failed["transcript"]).read_text())
    assert len(transcript["attempts"]) == 2


# -- 5. misconfiguration: one line, exit code 4 -------------------------------------------------------------------


@pytest.mark.parametrize("option, says", [
    ("--target=garbage", "--target garbage: expected [PROTOCOL=]HOST:PORT"),
    ("--protocol=nonexistent", "--protocol nonexistent: unknown protocol"),
    ("--deadline=-1", "--deadline -1: expected a positive number of seconds"),
    ("--deadline=0", "--deadline 0: expected a positive number of seconds"),
    ("--target-option=bogus", "--target-option bogus: expected PROTOCOL.KEY=VALUE"),
    ("--target-option=kafka.topics=orders:x", "--target-option kafka.topics=orders:x: expected NAME[:PARTITIONS]"),
    ("--target=no.such.host.invalid:7070", "--target no.such.host.invalid:7070: cannot resolve host"),
    ("--target=127.0.0.1:99999", "--target 127.0.0.1:99999: port 99999 is out of range"),
    ("--reference-fault=nonexistent", "--reference-fault nonexistent: no such fault"),
    ("--report-dir={file}/sub", "is a file, not a directory"),
    ("--confirm=-1", "--confirm -1: expected a count"),
])
def test_a_misconfigured_run_fails_at_once_in_one_line(tmp_path, option, says):
    afile = tmp_path / "afile"
    afile.write_text("")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
                           "suites/rustlog", option.format(file=afile)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode == 4
    assert len(lines) == 1 and says in lines[0], lines


def _unusable_target_run(tmp_path, address: str, *named: str) -> tuple[int, list[str]]:
    target = f"--target={named[0]}={address}" if named else f"--target={address}"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
                           "--report-dir", str(tmp_path / "reports"), "suites/rustlog", target],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)  # a hang guard, not a timing
    return proc.returncode, [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]


@pytest.fixture
def closed_port():
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]


@pytest.fixture
def silent_port():
    server = socket.create_server(("127.0.0.1", 0))
    held = []
    threading.Thread(target=lambda: [held.append(server.accept()) for _ in range(64)], daemon=True).start()
    yield server.getsockname()[1]
    server.close()


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def http_port():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("named", [(), ("rustlog",)])
def test_a_closed_port_is_said_once(tmp_path, closed_port, named):
    code, lines = _unusable_target_run(tmp_path, f"127.0.0.1:{closed_port}", *named)
    assert code == 4 and len(lines) == 1 and lines[0].endswith(f"127.0.0.1:{closed_port}: connection refused"), lines


@pytest.mark.parametrize("named", [(), ("rustlog",)])
def test_a_silent_server_is_said_once(tmp_path, silent_port, named):
    code, lines = _unusable_target_run(tmp_path, f"127.0.0.1:{silent_port}", *named)
    assert code == 4 and len(lines) == 1 and lines[0].endswith("accepts but never answers within 2 s"), lines


@pytest.mark.parametrize("named", [(), ("kafka",)])
def test_an_http_server_is_said_once(tmp_path, http_port, named):
    code, lines = _unusable_target_run(tmp_path, f"127.0.0.1:{http_port}", *named)
    assert code == 4 and len(lines) == 1 and lines[0].endswith("answers HTTP"), lines
    if named:
        assert "does not answer like kafka" in lines[0]


def test_a_run_in_which_no_collected_case_can_run_fails(tmp_path):
    broker = launch(["rustlog"], workdir=tmp_path / "broker")
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
                               "--report-dir", str(tmp_path / "reports"), "suites/kafka", "-k", "kafka.topics",
                               f"--target=rustlog=127.0.0.1:{broker.ports['rustlog']}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
    finally:
        broker.stop()
    assert proc.returncode == 4  # a usage error, as for a named target that answers like another protocol
    assert "ERROR: no target can run a case: --target 127.0.0.1:" in proc.stdout
    assert "answers like rustlog (the collected cases are for kafka)" in proc.stdout


def test_run_json_names_each_target_with_the_protocol_it_was_probed_as(tmp_path, vtoy):
    server = vtoy()
    result = pytest_run(tmp_path, CASES, f"--target=127.0.0.1:{server.port}", "-k", "test_ping and not again")
    assert result.code == 0, result.out[-2000:]
    assert result.run_json["targets"] == {"vtoy": {"address": f"127.0.0.1:{server.port}", "reference": False,
                                                   "faults": [], "found": "answers like vtoy",
                                                   "upstream": None, "probed_as": "vtoy"}}


# -- 6. the run directory ----------------------------------------------------------------------------------------


def test_hypothesis_storage_lives_where_example_db_says(tmp_path):
    storage = tmp_path / "hypothesis"
    result = pytest_run(tmp_path, "suites/rustlog/test_robustness.py", "-k", "property",
                        "--example-db", str(storage))
    assert result.code == 0, result.out[-2000:]
    assert (storage / "constants").is_dir()  # Hypothesis' caches follow the option, not the working directory
    page = (result.run_dirs[0] / "summary.html").read_text()
    assert "<script" not in page and "http" not in page.replace("http-", "")  # self-contained: no links out
    assert "Totals" in page and "OK" in page


def test_a_named_protocol_whose_hello_goes_unanswered_is_tested_and_fails_on_the_hello_clause(tmp_path):
    """The probe decides the protocol only when none is named: a server whose PING (the hello) goes unanswered,
    but which answers otherwise, is tested as the protocol named; its hello's clause fails, the rest runs."""
    server = VtoyProcess(tmp_path, "--silent-ping")
    try:
        result = pytest_run(tmp_path, CASES, server.target, "--deadline", "0.5")
    finally:
        server.stop()
    assert result.code == 1, result.out[-3000:]
    assert {r["clause"] for r in result.records if r["verdict"] == "FAILED"} == {"vtoy.ping.pong"}, result.out[-3000:]
    assert result.verdicts().get("OK", 0) >= 4 and "TARGET-DOWN" not in result.verdicts(), result.verdicts()


def test_a_should_divergence_in_a_fixture_is_non_strict_and_the_case_body_does_not_run(tmp_path, vtoy):
    """Before, the fixture's NON-STRICT setup passed and pytest ran the body without the fixture's value: a
    KeyError inside the tool, recorded under the divergence instead of as an internal error."""
    server = vtoy()
    result = pytest_run(tmp_path, "tests/verdicts/fixture_cases.py", server.target)
    assert result.verdicts() == {"NON-STRICT": 1}, result.out
    assert result.code == 0 and "KeyError" not in result.out and "body ran" not in result.out, result.out
