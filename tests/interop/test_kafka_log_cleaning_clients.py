"""Real clients read what the reference broker's retention and log cleaner leave (a short
``--kafka-retention-check-ms``): confluent-kafka consumes a compacted topic across its offset holes, and
kafka-python starts from the log start offset that retention moved."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("confluent_kafka", reason="confluent_kafka is in the interop extra: pip install wirecheck[interop]")
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer
from kafka.structs import TopicPartition as KpTopicPartition

from tests.interop.kafka_support import InProcessBroker

pytestmark = pytest.mark.interop
DAY = 24 * 3600 * 1000


@pytest.fixture(scope="module")
def bootstrap():
    with InProcessBroker(retention_check_ms=50, retention_ms=DAY) as broker:
        yield f"127.0.0.1:{broker.port}"


def create(bootstrap: str, topic: str, configs: dict) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(10)


def produce(bootstrap: str, topic: str, records: list[tuple[bytes, bytes, int]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for key, value, timestamp in records:
        producer.produce(topic, key=key, value=value, timestamp=timestamp, partition=0)
        producer.flush(10)  # one batch each
    assert producer.flush(10) == 0


def consume_all(bootstrap: str, topic: str, expected: int) -> list[tuple[int, bytes, bytes]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-reader", "enable.auto.commit": False})
    out, deadline = [], time.monotonic() + 15
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        while len(out) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                out.append((message.offset(), message.key(), message.value()))
    finally:
        consumer.close()
    return out


def log_start(bootstrap: str, topic: str, wanted: int) -> int:
    """The partition's low watermark once it is ``wanted`` (retention runs every 50 ms), or after 10 s."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-watcher"})
    try:
        deadline = time.monotonic() + 10
        while (low := consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=5)[0]) != wanted \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        return low
    finally:
        consumer.close()


def test_confluent_kafka_reads_a_compacted_topic(bootstrap):
    topic, old = "cleaned-compact", int(time.time() * 1000) - 30 * DAY
    create(bootstrap, topic, {"cleanup.policy": "compact"})
    produce(bootstrap, topic, [(b"k1", b"a", old), (b"k2", b"b", old), (b"k1", b"c", old),
                               (b"k3", b"active", old + 8 * DAY)])
    expected = [(1, b"k2", b"b"), (2, b"k1", b"c"), (3, b"k3", b"active")]
    deadline = time.monotonic() + 10  # the cleaner runs every 50 ms: read until it has, or give up
    while (got := consume_all(bootstrap, topic, 3)) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert got == expected


def test_kafka_python_starts_at_the_log_start_retention_moved(bootstrap):
    topic, now = "cleaned-retention", int(time.time() * 1000)
    create(bootstrap, topic, {})
    produce(bootstrap, topic, [(b"k", b"expired", now - 30 * DAY), (b"k", b"kept", now)])
    assert log_start(bootstrap, topic, wanted=1) == 1
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=5000)
    try:
        consumer.assign([KpTopicPartition(topic, 0)])
        consumer.seek_to_beginning()
        assert [(m.offset, m.value) for m in consumer] == [(1, b"kept")]
    finally:
        consumer.close()
