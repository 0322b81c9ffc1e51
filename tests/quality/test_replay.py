"""Replay files: every case that did not pass leaves one in the run directory; ``wirecheck replay FILE --target``
plays it against any server. Against the faulted broker that failed it reproduces (FAILED, the same clause, exit
1), against the clean broker it does not (OK, exit 0), as often as it is played (the run's resource names are
renamed on each replay). ``--corpus DIR`` runs such files as cases before the generated ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.quality.harness import ROOT
from tests.quality.replay_sweep import sweep
from wirecheck.targets.launcher import launch

#: protocol -> (fault, the failing case's selection)
FAULTED = {
    "rustlog": ("rustlog.next-offset-off-by-one", "rustlog.fetch.next-offset"),
    "kafka": ("kafka.hw-off-by-one", "kafka.fetch.high-watermark"),
    "fluvio": ("fluvio.fetch-hw-off-by-one", "fluvio.fetch.high-watermark"),
    "pravega": ("pravega.table-version-not-bumped", "pravega.table.version-bump"),
    "barco": ("barco.stream-id-wrong", "barco.framing.stream-id-echo"),
}


def failing_run(tmp_path: Path, protocol: str, fault: str, selection: str) -> list[dict]:
    report = tmp_path / "reports"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=",
                    f"suites/{protocol}", "-k", selection, "--reference-fault", fault, "--report-dir", str(report)],
                   cwd=ROOT, capture_output=True, text=True, timeout=300)
    return [dict(json.loads(line), run_dir=str(path.parent)) for path in report.glob("*/cases-*.jsonl")
            for line in path.read_text().splitlines() if line.strip()]


def replay(path: Path, protocol: str, broker) -> subprocess.CompletedProcess:
    endpoints = [arg for name, port in broker.endpoints.get(protocol, {}).items()
                 for arg in ("--endpoint", f"{name}=127.0.0.1:{port}")]
    return subprocess.run([sys.executable, "-m", "wirecheck", "replay", str(path), "--target",
                           f"{protocol}=127.0.0.1:{broker.ports[protocol]}", *endpoints],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("protocol", sorted(FAULTED))
def test_a_failure_reproduces_against_the_faulted_broker_and_not_against_the_clean_one(tmp_path, protocol):
    fault, selection = FAULTED[protocol]
    failed = [r for r in failing_run(tmp_path, protocol, fault, selection) if r["verdict"] == "FAILED"]
    assert failed and all(r.get("replay") for r in failed), failed
    record = failed[0]
    path = Path(record["run_dir"]) / record["replay"]
    for faults, code, verdict in (([fault], 1, f"FAILED {record['clause']} "), ([], 0, "OK ")):
        broker = launch([protocol], faults=faults, workdir=tmp_path / f"broker-{len(faults)}")
        try:
            for _ in range(2):  # a second time against the same server: the names are fresh again
                done = replay(path, protocol, broker)
                assert done.returncode == code and f": {verdict}" in done.stdout, done.stdout + done.stderr
        finally:
            broker.stop()


def test_a_corpus_runs_first_and_fails_only_where_the_failure_reproduces(tmp_path):
    fault, selection = FAULTED["rustlog"]
    failed = [r for r in failing_run(tmp_path, "rustlog", fault, selection) if r["verdict"] == "FAILED"]
    corpus = Path(failed[0]["run_dir"]) / "replays"
    for faults, verdict in (([fault], "FAILED"), ([], "OK")):
        report = tmp_path / f"corpus-{len(faults)}"
        args = [arg for f in faults for arg in ("--reference-fault", f)]
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                               "-o", "addopts=", "suites/rustlog/test_admin.py", "--corpus", str(corpus), *args,
                               "--report-dir", str(report)], cwd=ROOT, capture_output=True, text=True, timeout=300)
        records = [json.loads(line) for path in report.glob("*/cases-*.jsonl")
                   for line in path.read_text().splitlines() if line.strip()]
        assert records[0]["nodeid"].endswith("]") and "replay[" in records[0]["nodeid"], records[0]  # first
        assert records[0]["verdict"] == verdict and records[0]["case"] == failed[0]["case"], records[0]
        assert all(r["verdict"] == "OK" for r in records[1:]), proc.stdout[-3000:]


#: the sweep in CI: transaction faults (their cases build on a producer id and epoch the broker chose, which the
#: replay must carry into later requests, record batch CRCs included; these four were "does not reproduce"
#: before) and one fault per other protocol;
#: bench/replay_sweep.py sweeps every fault (BENCHMARKS.md "Replay sweep")
SWEEP = ["kafka.txn-old-epoch-accepted", "kafka.txn-aborted-not-listed", "kafka.txn-marker-not-control",
         "kafka.txn-read-committed-past-lso", "rustlog.next-offset-off-by-one", "fluvio.fetch-hw-off-by-one",
         "pravega.table-version-not-bumped", "barco.stream-id-wrong"]


@pytest.mark.parametrize("fault", SWEEP)
def test_every_failure_of_a_fault_replays_as_failed_or_says_why_not(fault):
    results = sweep(fault)
    assert results, f"{fault}: no failing case left a replay"
    wrong = [f"{r.case}: {r.line}" for r in results if r.verdict not in ("FAILED", "NOT REPLAYABLE")]
    assert not wrong, wrong
