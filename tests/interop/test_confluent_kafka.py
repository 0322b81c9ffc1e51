"""confluent-kafka / librdkafka (default settings) through the reference broker, including a rebalance."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("confluent_kafka", reason="confluent_kafka is in the interop extra: pip install wirecheck[interop]")
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.interop.offsets import committed

pytestmark = pytest.mark.interop
N = 20


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)], request_timeout=5).values():
        future.result(timeout=10)


def produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(topic, key=b"k%d" % i, value=b"v%d" % i, partition=i % partitions,
                         on_delivery=lambda err, msg: err and errors.append(err))
    assert producer.flush(10) == 0
    assert errors == []


def test_create_produce_consume_commit(kafka_bootstrap, unique):
    topic, group = unique("ck-topic"), unique("ck-group")
    create_topic(kafka_bootstrap, topic, 2)
    produce(kafka_bootstrap, topic, N, 2)
    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        values, deadline = [], time.monotonic() + 15
        while len(values) < N and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert sorted(values) == sorted(b"v%d" % i for i in range(N))
    assert committed(kafka_bootstrap, group, topic, 2) == {0: N // 2, 1: N // 2}


def assignment_of(consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def poll_until(consumers, condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(0.05)
        if condition():
            return True
    return False


def test_two_consumers_rebalance_and_take_over_on_leave(kafka_bootstrap, unique):
    topic, group = unique("ck-rebalance"), unique("ck-rebalance-group")
    create_topic(kafka_bootstrap, topic, 4)
    config = {"bootstrap.servers": kafka_bootstrap, "group.id": group, "auto.offset.reset": "earliest"}
    a, b = Consumer(config), Consumer(config)
    try:
        a.subscribe([topic])
        assert poll_until([a], lambda: assignment_of(a) == {0, 1, 2, 3}, 15), assignment_of(a)
        b.subscribe([topic])
        split = lambda: (assignment_of(a) | assignment_of(b) == {0, 1, 2, 3}  # noqa: E731
                         and not assignment_of(a) & assignment_of(b)
                         and len(assignment_of(a)) == len(assignment_of(b)) == 2)
        assert poll_until([a, b], split, 20), (assignment_of(a), assignment_of(b))
        b.close()
        b = None
        assert poll_until([a], lambda: assignment_of(a) == {0, 1, 2, 3}, 20), assignment_of(a)
    finally:
        a.close()
        if b is not None:
            b.close()


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_produce_consume_and_offsets_for_times(kafka_bootstrap, unique, codec):
    from confluent_kafka import TopicPartition

    topic = unique(f"ck-{codec}")
    create_topic(kafka_bootstrap, topic, 1)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "compression.type": codec, "linger.ms": 50})
    for i in range(50):
        producer.produce(topic, value=b"value-%d " % i * 20, partition=0, timestamp=1_000_000 + i)
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": unique("unused"),
                         "enable.auto.commit": False})
    try:
        found = consumer.offsets_for_times([TopicPartition(topic, 0, 1_000_000 + 17)], timeout=10)
        assert found[0].offset == 17
        consumer.assign([TopicPartition(topic, 0, 0)])
        values, deadline = [], time.monotonic() + 10
        while len(values) < 50 and time.monotonic() < deadline:
            for message in consumer.consume(100, 0.2):
                if message.error() is None:
                    values.append(message.value())
    finally:
        consumer.close()
    assert values == [b"value-%d " % i * 20 for i in range(50)]
