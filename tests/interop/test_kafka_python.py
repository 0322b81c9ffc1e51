"""kafka-python (default settings: idempotent producer, acks=all, newest versions) through the reference broker."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from tests.interop.offsets import committed, stored_producer_ids

pytestmark = pytest.mark.interop
N = 20


def test_create_produce_consume_commit(kafka_bootstrap, unique):
    topic, group = unique("kp-topic"), unique("kp-group")
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, request_timeout_ms=5000)
    try:
        admin.create_topics([NewTopic(topic, 2, 1)], timeout_ms=5000)
    finally:
        admin.close()

    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, request_timeout_ms=5000, max_block_ms=10000)
    try:
        futures = [producer.send(topic, key=b"k%d" % (i % 2), value=b"v%d" % i, partition=i % 2) for i in range(N)]
        producer.flush(timeout=10)
        offsets = [f.get(timeout=10).offset for f in futures]
    finally:
        producer.close(timeout=5)
    assert sorted(offsets) == sorted(list(range(N // 2)) * 2)
    assert stored_producer_ids(kafka_bootstrap, topic) and min(stored_producer_ids(kafka_bootstrap, topic)) >= 0

    consumer = KafkaConsumer(topic, bootstrap_servers=kafka_bootstrap, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=10000,
                             request_timeout_ms=10000)
    try:
        values = []
        for message in consumer:
            values.append(message.value)
            if len(values) == N:
                break
        consumer.commit()
        assert consumer.committed(TopicPartition(topic, 0)) == N // 2
    finally:
        consumer.close()
    assert sorted(values) == sorted(b"v%d" % i for i in range(N))
    assert committed(kafka_bootstrap, group, topic, 2) == {0: N // 2, 1: N // 2}
