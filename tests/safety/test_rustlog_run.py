"""``wirecheck safety rustlog`` end to end against the reference broker: clean under kill -9 restarts and proxy
faults, and an offset handed out twice (rustlog.safety-log-end-reused) caught. Short runs (about 12 s each); the
2-minute runs are in BENCHMARKS.md "Safety"."""

import subprocess
import sys

import pytest

from tests.safety.runs import safety_run

pytestmark = [pytest.mark.slow]


def safety(tmp_path, *args):
    return safety_run(tmp_path, "rustlog", 8, 3, 11, *args)


def test_clean_reference_broker_under_restarts_and_proxy_faults(tmp_path):
    done, result = safety(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert result["valid"] and result["restarts"] >= 2, result
    assert result["acknowledged"] > 100, result
    # every value carries the offset the server gave it: only the transaction kinds go unjudged
    assert set(result["unjudged"]) == {"aborted-read", "precommitted-read"}


def test_an_offset_handed_out_twice_is_caught(tmp_path):
    done, result = safety(tmp_path, "--reference-fault", "rustlog.safety-log-end-reused")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "inconsistent-offsets" in result["anomaly_counts"], result["anomaly_counts"]


def test_list_faults_names_the_safety_fault_and_its_anomaly():
    done = subprocess.run([sys.executable, "-m", "wirecheck", "safety", "rustlog", "--list-faults"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "rustlog.safety-log-end-reused  (caught as inconsistent-offsets)" in done.stdout
