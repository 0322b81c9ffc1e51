"""confluent-kafka / librdkafka transactions through the reference broker: a transactional producer (init,
begin, produce, send_offsets_to_transaction, commit, abort) and a read_committed consumer that sees the
committed records only."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("confluent_kafka", reason="confluent_kafka is in the interop extra: pip install wirecheck[interop]")
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.interop.offsets import committed
from tests.interop.test_confluent_kafka import create_topic

pytestmark = pytest.mark.interop


def read_all(bootstrap: str, topic: str, isolation: str, expected: int, seconds: float = 15) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}-{isolation}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "isolation.level": isolation})
    values, deadline = [], time.monotonic() + seconds
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        while time.monotonic() < deadline and len(values) < expected:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
        # a little longer: nothing more may arrive (e.g. aborted records leaking through)
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
    finally:
        consumer.close()
    return values


def test_transactional_producer_and_read_committed_consumer(kafka_bootstrap, unique):
    topic, group = unique("ck-txn"), unique("ck-txn-group")
    create_topic(kafka_bootstrap, topic, 1)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": unique("ck-txn-id"),
                         "transaction.timeout.ms": 30000})
    producer.init_transactions(10)

    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, value=b"committed-%d" % i, partition=0)
    offsets = [TopicPartition(topic, 0, 7)]
    consumer_for_offsets = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": group})
    try:
        producer.send_offsets_to_transaction(offsets, consumer_for_offsets.consumer_group_metadata(), 10)
    finally:
        consumer_for_offsets.close()
    producer.commit_transaction(10)

    producer.begin_transaction()
    for i in range(2):
        producer.produce(topic, value=b"aborted-%d" % i, partition=0)
    producer.flush(10)
    producer.abort_transaction(10)

    producer.begin_transaction()
    producer.produce(topic, value=b"committed-3", partition=0)
    producer.commit_transaction(10)

    committed_values = [b"committed-%d" % i for i in range(4)]
    assert read_all(kafka_bootstrap, topic, "read_committed", 4) == committed_values
    uncommitted = read_all(kafka_bootstrap, topic, "read_uncommitted", 6)
    assert sorted(uncommitted) == sorted(committed_values + [b"aborted-0", b"aborted-1"])
    assert committed(kafka_bootstrap, group, topic, 1) == {0: 7}
