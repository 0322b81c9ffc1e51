"""aiokafka's AIOKafkaAdminClient through the reference broker: describe a broker config, and list and describe
groups and their committed offsets (creating, describing, altering and deleting a topic is the suite case
kafka.clients.aiokafka.admin)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("aiokafka", reason="aiokafka is in the interop extra: pip install wirecheck[interop]")
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import OffsetAndMetadata
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

pytestmark = pytest.mark.interop


def with_admin(bootstrap: str, scenario):
    async def run():
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
        await admin.start()
        try:
            return await scenario(admin)
        finally:
            await admin.close()
    return asyncio.run(run())


def test_describe_broker_config(kafka_bootstrap):
    async def scenario(admin):
        [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "0",
                                                                  configs={"broker.id": None})])
        [(error_code, _, _, _, entries)] = response.resources
        assert error_code == 0
        assert [tuple(e[:3]) for e in entries] == [("broker.id", "0", True)]  # (name, value, read_only)

    with_admin(kafka_bootstrap, scenario)


def test_groups_and_their_offsets(kafka_bootstrap, unique):
    topic, group = unique("ak-grp"), unique("ak-group")

    async def scenario(admin):
        await admin.create_topics([NewTopic(topic, 1, 1)])
        consumer = AIOKafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group, enable_auto_commit=False)
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, 0)])
            await consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(5, "")})
        finally:
            await consumer.stop()
        assert (group, "") in await admin.list_consumer_groups()
        offsets = await admin.list_consumer_group_offsets(group)
        assert {tp: meta.offset for tp, meta in offsets.items()} == {TopicPartition(topic, 0): 5}
        [response] = await admin.describe_consumer_groups([group])
        [(error_code, group_id, state, *_)] = response.groups  # (error_code, group, state, protocol_type, ...)
        assert (error_code, group_id, state) == (0, group, "Empty")

    with_admin(kafka_bootstrap, scenario)
