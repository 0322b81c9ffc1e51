"""``wirecheck safety kafka`` end to end against the reference broker, as a user runs it: a clean run has no anomaly,
and a run against a broker that breaks a guarantee names the anomaly (the long runs, every fault, 2 minutes each:
BENCHMARKS.md "Safety")."""

import subprocess
import sys

import pytest

from tests.safety.runs import safety_run

pytestmark = [pytest.mark.slow, pytest.mark.interop]

pytest.importorskip("confluent_kafka")


def safety(tmp_path, *args):
    return safety_run(tmp_path, "kafka", 20, 7, 7, *args)


def test_clean_reference_broker_under_restarts_and_proxy_faults(tmp_path):
    done, result = safety(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert result["valid"] and result["restarts"] >= 2, result
    assert result["acknowledged"] > 100 and result["counts"]["ok"] > 100, result
    plot = (tmp_path / "report" / "plot.svg").read_text()  # the plot beside it, every fault window shaded
    assert plot.count('class="fault"') == len(result["fault_windows"]) > 0


def test_aborted_records_visible_after_a_restart_are_caught(tmp_path):
    done, result = safety(tmp_path, "--reference-fault", "kafka.safety-aborted-index-lost")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "aborted-read" in result["anomaly_counts"], result["anomaly_counts"]


@pytest.mark.parametrize("args", [
    ["no-such-protocol"],
    ["kafka", "--target", "kafka=nowhere"],
    ["kafka", "--target", "kafka=127.0.0.1:9", "--reference-fault", "kafka.safety-log-end-reused"],
    ["kafka", "--reference-fault", "kafka.no-such-fault"],
    ["kafka", "--target-pid", "1"],
    ["kafka", "--time", "0"],
    ["kafka", "--bogus"],
])
def test_misuse_exits_4(args):
    done = subprocess.run([sys.executable, "-m", "wirecheck", "safety", *args], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 4, done.stderr
    assert done.stderr.strip(), "misuse says why"


def test_list_faults_names_each_safety_fault_and_its_anomaly():
    from wirecheck.protocols.kafka.faults import SAFETY_FAULTS

    done = subprocess.run([sys.executable, "-m", "wirecheck", "safety", "kafka", "--list-faults"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    for fault in SAFETY_FAULTS:
        assert fault in done.stdout
