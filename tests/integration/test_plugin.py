"""The pytest plugin as users meet it: verdicts, --strict, baselines, targets, NOT-RUN, probing, xdist."""

import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from wirecheck.targets.launcher import launch

ROOT = Path(__file__).resolve().parents[2]


def suite(tmp_path, *args, timeout=180):
    """Run pytest on the RustLog suite; returns (exit code, records, output)."""
    report = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites/rustlog", "-q", "-p", "no:cacheprovider",
                           "-o", "addopts=", "--report-dir", str(report), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    records = [json.loads(line) for p in report.glob("*/cases-*.jsonl") for line in p.read_text().splitlines()]
    return proc.returncode, records, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def broker():
    process = launch(["rustlog"])
    yield process
    process.stop()


def test_should_violation_is_non_strict_unless_strict(tmp_path):
    code, records, out = suite(tmp_path, "--reference-fault", "rustlog.beyond-hw-416", "-k", "rustlog.fetch.beyond-hw")
    assert code == 0, out
    assert {r["verdict"] for r in records} == {"NON-STRICT"}
    assert "wirecheck NON-STRICT" in out
    code, records, out = suite(tmp_path / "strict", "--strict", "--reference-fault", "rustlog.beyond-hw-416",
                               "-k", "rustlog.fetch.beyond-hw")
    assert code == 1
    assert {r["verdict"] for r in records} == {"FAILED"}
    assert all(r["expected"] and r["actual"] and r["reproduce"] for r in records)


def test_failure_report_names_case_clause_and_reproducer(tmp_path):
    code, records, out = suite(tmp_path, "--reference-fault", "rustlog.next-offset-off-by-one", "-k", "next-offset")
    assert code == 1
    assert "wirecheck FAILED rustlog.fetch.next-offset" in out
    assert re.search(r"expected  next_offset \d+\n  actual    next_offset \d+", out), out[-3000:]
    assert "reproduce pytest suites/rustlog/test_fetch.py" in out
    assert "RECV" in out and "00000000  00 00 00" in out  # the conversation, hex and decoded
    failed = [r for r in records if r["verdict"] == "FAILED"]
    run_dir = next((tmp_path / "reports").iterdir())
    transcript = json.loads((run_dir / failed[0]["transcript"]).read_text())
    assert transcript["schema"] == "wirecheck.transcript/1" and transcript["events"]
    run = json.loads((run_dir / "run.json").read_text())
    assert run["totals"]["FAILED"] == len(failed) and run["finished_at"]


def test_stop_at_clause_runs_that_clauses_cases_first_and_stops_there(tmp_path):
    clause = "rustlog.fetch.next-offset"
    code, records, out = suite(tmp_path, "--strict", "--reference-fault", "rustlog.next-offset-off-by-one",
                               "--stop-at-clause", clause)
    assert code == 1, out
    assert records and records[-1]["clause"] == clause and records[-1]["verdict"] == "FAILED"
    assert all(r["clause"] == clause for r in records), [(r["case"], r["clause"]) for r in records]
    assert f"{clause} reported FAILED (--stop-at-clause)" in out


def test_baseline_turns_known_failures_into_xfail_and_stale_entries_into_xpass(tmp_path):
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"schema": "wirecheck.baseline/1", "entries": [
        {"case": "rustlog.fetch.next-offset", "reason": "known: ticket 12", "expires": "2999-01-01"}]}))
    code, records, out = suite(tmp_path / "a", "--baseline", str(baseline), "--reference-fault",
                               "rustlog.next-offset-off-by-one", "-k", "rustlog.fetch.next-offset")
    assert code == 0, out
    assert {r["verdict"] for r in records} == {"XFAIL"}
    code, records, out = suite(tmp_path / "b", "--baseline", str(baseline), "-k", "rustlog.fetch.next-offset")
    assert code == 1
    assert {r["verdict"] for r in records} == {"XPASS"}


def test_explicit_target_and_probing(tmp_path, broker):
    address = f"127.0.0.1:{broker.ports['rustlog']}"
    code, records, out = suite(tmp_path / "named", "--target", f"rustlog={address}", "-k", "rustlog.ping.pong")
    assert code == 0, out
    assert records and all(r["target"] == address and r["verdict"] == "OK" for r in records)
    code, records, out = suite(tmp_path / "probed", "--target", address, "-k", "rustlog.ping.pong")
    assert code == 0, out
    assert records and all(r["target"] == address for r in records)


def test_protocol_without_target_is_not_run(tmp_path, broker):
    """A rustlog target, the kafka suite: every case NOT-RUN, and a run in which nothing could run fails."""
    report = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites/kafka", "-q", "-p", "no:cacheprovider",
                           "-o", "addopts=", "--report-dir", str(report), "-k", "kafka.topics",
                           "--target", f"rustlog=127.0.0.1:{broker.ports['rustlog']}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=180)
    records = [json.loads(line) for p in report.glob("*/cases-*.jsonl") for line in p.read_text().splitlines()]
    assert records and {r["verdict"] for r in records} == {"NOT-RUN"}
    assert proc.returncode == 4 and "passed" not in proc.stdout.splitlines()[-1]  # the line: test_verdicts.py


def test_cases_not_run_are_summarised_in_one_line_per_reason(tmp_path, broker):
    """A RustLog target and the Kafka suite beside it: one SKIPPED line for every Kafka case, and no Kafka version
    matrix (its suite never ran)."""
    report = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites/kafka", "suites/rustlog", "-q", "-rs",
                           "-p", "no:cacheprovider", "-o", "addopts=", "--report-dir", str(report), "-k",
                           "kafka.produce or rustlog.ping.pong", "--target",
                           f"rustlog=127.0.0.1:{broker.ports['rustlog']}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=180)
    skipped = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED")]
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert len(skipped) == 1 and skipped[0].startswith("SKIPPED [") and "no target speaks kafka" in skipped[0], skipped
    assert "version matrix" not in proc.stdout
    support = proc.stdout.split("wirecheck API support")[1].splitlines()[1:3]
    assert support[0] == "rustlog ping 1/1" and not support[1].startswith("kafka")  # only the suite that ran


def test_silent_target_is_said_once_at_the_start(tmp_path):
    server = socket.create_server(("127.0.0.1", 0))
    held = []
    threading.Thread(target=lambda: [held.append(server.accept()) for _ in range(20)], daemon=True).start()
    started = time.monotonic()
    code, records, out = suite(tmp_path, "--target", f"rustlog=127.0.0.1:{server.getsockname()[1]}",
                               "--deadline", "0.3", "-k", "rustlog.ping.pong")
    assert code == 4 and not records
    assert time.monotonic() - started < 30  # a hang guard
    assert "accepts but never answers within 0.3 s" in out
    server.close()


def test_case_ids_select_and_xdist_shares_one_run(tmp_path):
    code, records, out = suite(tmp_path, "-n", "2", "-k", "rustlog.admin or rustlog.commit")
    assert code == 0, out
    assert {r["worker"] for r in records} == {"gw0", "gw1"}
    assert {r["case"].split(".")[1] for r in records} == {"admin", "commit"}
    assert len({r["run_id"] for r in records}) == 1
