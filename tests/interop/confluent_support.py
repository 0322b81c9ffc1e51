"""confluent-kafka helpers for the interop tests that remain (EOS across a crash): create a topic, read a topic at an
isolation level."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)], request_timeout=5).values():
        future.result(timeout=10)


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
