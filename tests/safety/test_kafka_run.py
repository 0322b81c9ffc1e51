"""``wirecheck safety kafka`` end to end against the reference broker, as a user runs it: a clean run has no anomaly,
and a run against a broker that breaks a guarantee names the anomaly (the long runs, every fault, 2 minutes each:
BENCHMARKS.md "Safety"). The runs have every client: confluent-kafka, kafka-python and the Java client (a JVM
whose history lines the Python recorder never wrote)."""

import re
import subprocess
import sys
from collections import Counter

import pytest

from tests.safety.runs import safety_run
from wirecheck.reports.safety import history
from wirecheck.suites.kafka.clients import java_driver
from wirecheck.targets.clients import not_installed
from wirecheck.targets.safety.run import RANGE

pytestmark = [pytest.mark.slow, pytest.mark.interop]

pytest.importorskip("confluent_kafka")

JAVA_CLIENT = re.compile(r"^kafka-clients \S+ safety client: role (\w+) slot", re.MULTILINE)  # its log's first line


@pytest.fixture
def java_client():
    if java_driver.missing():
        not_installed("the Apache Kafka Java client's driver (and java)", java_driver.INSTALL)


def safety(tmp_path, *args):
    return safety_run(tmp_path, "kafka", 20, 7, 7, *args)


@pytest.mark.usefixtures("java_client")
def test_clean_reference_broker_under_restarts_and_proxy_faults(tmp_path):
    done, result = safety(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert result["valid"] and result["restarts"] >= 2, result
    assert result["acknowledged"] > 100 and result["counts"]["ok"] > 100, result
    plot = (tmp_path / "report" / "plot.svg").read_text()  # the plot beside it, every fault window shaded
    assert plot.count('class="fault"') == len(result["fault_windows"]) > 0
    # the Java client's processes (client-N.log says so) wrote valid history lines of every role, which made it into
    # the checked history
    clients = tmp_path / "report" / "clients"
    java: dict[int, str] = {}
    for log in clients.glob("client-*.log"):
        if found := JAVA_CLIENT.search(log.read_text(errors="replace")):
            java[int(log.stem.split("-")[1])] = found[1]
    assert sorted(set(java.values())) == ["poll", "send", "txn"], java
    ops = history.read(tmp_path / "report" / "history.jsonl")
    done_by_java = Counter((java[op["process"] // RANGE], op["f"], op["type"]) for op in ops
                           if isinstance(op["process"], int) and op["process"] // RANGE in java)
    for base in java:
        history.read(clients / f"client-{base}.jsonl")
    for role in ("send", "txn", "poll"):
        assert done_by_java[role, role, "ok"] > 5, done_by_java
    assert done_by_java["poll", "assign", "ok"] >= 1, done_by_java
    read = {v for op in ops if op["type"] == "ok" and op["f"] == "poll" and op["process"] // RANGE in java
            for pairs in op["value"][0][1].values() for _, v in pairs}
    assert read & {v for op in ops if op["type"] == "ok" and op["process"] // RANGE not in java and op["f"] == "send"
                   for _, _, (_, v) in op["value"]}, "the Java consumer reads the other clients' values"


@pytest.mark.usefixtures("java_client")
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
    ["kafka", "--upstream", "0.0.1"],
    ["kafka", "--upstream", "--target", "kafka=127.0.0.1:9"],
    ["kafka", "--upstream", "--reference-fault", "kafka.safety-log-end-reused"],
    ["kafka", "--upstream", "--target-pid", "1"],
    ["rustlog", "--upstream"],
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
