"""``wirecheck safety barco`` end to end against the reference broker: its discovery rewritten to the proxy's ports,
clean under kill -9 restarts and proxy faults, and acknowledged chunks lost at a restart
(barco.safety-unsynced-tail-lost) caught. Short runs (about 13 s each); the 2-minute runs are in BENCHMARKS.md
"Safety"."""

import subprocess
import sys

import pytest

from tests.safety.runs import safety_run

pytestmark = [pytest.mark.slow, pytest.mark.interop]

pytest.importorskip("httpx")


def safety(tmp_path, *args):
    return safety_run(tmp_path, "barco", 8, 3, 11, *args)


def test_clean_reference_broker_under_restarts_and_proxy_faults(tmp_path):
    done, result = safety(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert result["valid"] and result["restarts"] >= 2, result
    assert result["acknowledged"] > 100 and result["read_values"] >= result["acknowledged"], result
    # the producer is told no offset: what needs one is not judged, and the report says why
    assert {"lost-write", "nonmonotonic-send-realtime"} <= set(result["unjudged"]), result["unjudged"]
    assert "not judged: lost-write" in (tmp_path / "report" / "report.txt").read_text()


def test_acknowledged_chunks_lost_at_a_restart_are_caught(tmp_path):
    done, result = safety(tmp_path, "--reference-fault", "barco.safety-unsynced-tail-lost")
    assert done.returncode == 1, done.stdout + done.stderr
    assert {"unseen", "inconsistent-offsets"} & set(result["anomaly_counts"]), result["anomaly_counts"]


def test_list_faults_names_the_safety_fault_and_its_anomalies():
    done = subprocess.run([sys.executable, "-m", "wirecheck", "safety", "barco", "--list-faults"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "barco.safety-unsynced-tail-lost  (caught as unseen or inconsistent-offsets)" in done.stdout
