"""aiokafka (default settings: ApiVersions v0, non-flexible versions) through the reference broker."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("aiokafka", reason="aiokafka is in the interop extra: pip install wirecheck[interop]")
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.interop.offsets import committed

pytestmark = pytest.mark.interop
N = 20


async def scenario(bootstrap: str, topic: str, group: str) -> list[bytes]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 2, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    await producer.start()
    try:
        for i in range(N):
            await producer.send_and_wait(topic, b"v%d" % i, key=b"k%d" % i, partition=i % 2)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                auto_offset_reset="earliest", enable_auto_commit=False, request_timeout_ms=10000)
    await consumer.start()
    values = []
    try:
        async def read_all():
            async for message in consumer:
                values.append(message.value)
                if len(values) == N:
                    return
        await asyncio.wait_for(read_all(), 15)
        await consumer.commit()
        assert await consumer.committed(TopicPartition(topic, 1)) == N // 2
    finally:
        await consumer.stop()
    return values


def test_create_produce_consume_commit(kafka_bootstrap, unique):
    topic, group = unique("ak-topic"), unique("ak-group")
    values = asyncio.run(asyncio.wait_for(scenario(kafka_bootstrap, topic, group), 40))
    assert sorted(values) == sorted(b"v%d" % i for i in range(N))
    assert committed(kafka_bootstrap, group, topic, 2) == {0: N // 2, 1: N // 2}
