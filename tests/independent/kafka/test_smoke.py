"""Smoke test: start the independent broker, produce and consume with kafka-python."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

kafka = pytest.importorskip("kafka")

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture()
def broker(tmp_path):
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.independent.kafka", "--host", "127.0.0.1", "--port", "0",
         "--ready-file", str(ready)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60  # a loaded 2-core machine starts a Python process in seconds
        while not ready.exists():
            assert proc.poll() is None, "broker exited early"
            assert time.monotonic() < deadline, "broker did not become ready"
            time.sleep(0.05)
        yield f"127.0.0.1:{json.loads(ready.read_text())['broker']}"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_produce_and_consume(broker):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker, request_timeout_ms=5000)
    try:
        admin.create_topics([NewTopic("smoke", 1, 1)])
    finally:
        admin.close()

    producer = KafkaProducer(bootstrap_servers=broker, enable_idempotence=False, linger_ms=0)
    offsets = [producer.send("smoke", key=b"k%d" % i, value=b"v%d" % i).get(5).offset for i in range(3)]
    producer.close(5)
    assert offsets == [0, 1, 2]

    consumer = KafkaConsumer(
        "smoke",
        bootstrap_servers=broker,
        group_id="smoke-group",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=8000,
    )
    got = []
    try:
        for msg in consumer:
            got.append((msg.offset, msg.key, msg.value))
            if len(got) == 3:
                break
        consumer.commit()
        committed = consumer.committed(kafka.TopicPartition("smoke", 0))
    finally:
        consumer.close()
    assert got == [(0, b"k0", b"v0"), (1, b"k1", b"v1"), (2, b"k2", b"v2")]
    assert committed == 3
