"""The Apache Kafka Java client's place in the Kafka safety workload: the slots it takes exist beside kafka-python's
and confluent-kafka's in every role, a Java slot's process becomes the JVM with the workload's numbers, and a run
without java stops at its start, saying what to install (the runs with the Java slots: test_kafka_run.py)."""

import subprocess
import sys

import pytest

from wirecheck.targets.safety import kafka, kafka_java, workload


def test_java_takes_a_slot_of_every_role_and_leaves_confluent_and_kafka_python_theirs():
    assert set(kafka.KAFKA_JAVA_SLOTS) == set(kafka.ROLES)
    for role, slots in kafka.KAFKA_JAVA_SLOTS.items():
        assert slots and all(0 <= slot < kafka.ROLES[role] for slot in slots), role
        assert not set(slots) & set(kafka.KAFKA_PYTHON_SLOTS[role]), role
        assert len(set(slots) | set(kafka.KAFKA_PYTHON_SLOTS[role])) < kafka.ROLES[role], role


def test_a_java_slot_execs_the_jar_with_the_workloads_numbers_and_the_others_stay_python():
    options = {"bootstrap": "127.0.0.1:1", "topic": "t", "history": "h.jsonl", "started": 12.5, "base": 3_000_000_000,
               "slot": kafka.KAFKA_JAVA_SLOTS["txn"][0], "seed": 9}
    argv = kafka.client_argv("txn", options["slot"], options)
    assert argv is not None and argv[0] == "java" and argv[argv.index("-jar") + 2:argv.index("-jar") + 4] == \
        ["safety", "txn"]
    given = dict(zip(argv[argv.index("txn") + 1::2], argv[argv.index("txn") + 2::2], strict=True))
    assert given["--partitions"] == str(kafka.PARTITIONS) and given["--base"] == "3000000000"
    assert given["--life"] == ",".join(map(str, workload.LIFE)) and float(given["--started"]) == 12.5
    assert kafka.client_argv("txn", kafka.KAFKA_PYTHON_SLOTS["txn"][0], options) is None
    assert kafka.client_argv("final", 0, options) is None  # the final read stays confluent-kafka's
    with pytest.raises(Exception, match="JVM"):  # never run by Python in its place
        kafka.KafkaWorkload("127.0.0.1:1", "t", None, None, None, options["slot"]).role("txn")


def test_without_java_the_run_stops_at_its_start_naming_the_install(tmp_path):
    done = subprocess.run([sys.executable, "-m", "wirecheck", "safety", "kafka", "--time", "30",
                           "--report-dir", str(tmp_path)], capture_output=True, text=True, timeout=120,
                          env={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert done.returncode == 3, done.stdout + done.stderr
    assert "java" in done.stderr and kafka_java.DRIVER.install in done.stderr, done.stderr
    assert not list((tmp_path / "clients").glob("client-*.jsonl")), "no client started"


def test_the_jar_is_the_kafka_suites_java_driver():
    from wirecheck.suites.kafka.clients import java_driver

    assert kafka_java.DRIVER == java_driver.DRIVER  # one jar, found by its path from targets/ (which imports no suite)
