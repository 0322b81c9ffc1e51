"""aiokafka's AIOKafkaAdminClient through the reference broker: create, list, describe and delete topics, describe
and alter configs (topic and broker resources), and list and describe groups and their committed offsets."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("aiokafka", reason="aiokafka is in the interop extra: pip install wirecheck[interop]")
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import OffsetAndMetadata
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

pytestmark = pytest.mark.interop
TOPIC_CONFIG, DEFAULT_CONFIG = 1, 5  # DescribeConfigsResponse ConfigSource
UNKNOWN_TOPIC_OR_PARTITION, TOPIC_ALREADY_EXISTS = 3, 36


def with_admin(bootstrap: str, scenario):
    async def run():
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
        await admin.start()
        try:
            return await scenario(admin)
        finally:
            await admin.close()
    return asyncio.run(run())


async def topic_configs(admin: AIOKafkaAdminClient, topic: str) -> dict[str, tuple[str, int]]:
    """name -> (value, source) of a topic's configs (aiokafka answers plain tuples in the schema's field order)."""
    [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    [(error_code, _, _, name, entries)] = response.resources
    assert (error_code, name) == (0, topic)
    return {entry[0]: (entry[1], entry[3]) for entry in entries}  # (name, value, read_only, source, ...)


def test_topic_lifecycle(kafka_bootstrap, unique):
    topic = unique("ak-admin")

    async def scenario(admin):
        created = await admin.create_topics([NewTopic(topic, 2, 1, topic_configs={"retention.ms": "3600000"})])
        assert [t[:2] for t in created.topic_errors] == [(topic, 0)]
        assert topic in await admin.list_topics()
        [described] = await admin.describe_topics([topic])
        assert described["error_code"] == 0
        assert sorted(p["partition"] for p in described["partitions"]) == [0, 1]
        twice = await admin.create_topics([NewTopic(topic, 1, 1)])  # aiokafka returns the error, it does not raise
        assert [t[:2] for t in twice.topic_errors] == [(topic, TOPIC_ALREADY_EXISTS)]
        deleted = await admin.delete_topics([topic])
        assert [tuple(t) for t in deleted.topic_error_codes] == [(topic, 0)]
        assert topic not in await admin.list_topics()
        again = await admin.delete_topics([topic])
        assert [t[1] for t in again.topic_error_codes] == [UNKNOWN_TOPIC_OR_PARTITION]

    with_admin(kafka_bootstrap, scenario)


def test_describe_and_alter_topic_configs(kafka_bootstrap, unique):
    topic = unique("ak-cfg")

    async def scenario(admin):
        await admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"retention.ms": "3600000"})])
        configs = await topic_configs(admin, topic)
        assert configs["retention.ms"] == ("3600000", TOPIC_CONFIG)
        assert configs["cleanup.policy"] == ("delete", DEFAULT_CONFIG)
        [altered] = await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={
            "retention.ms": "1000", "max.message.bytes": "2048"})])
        assert [r[0] for r in altered.resources] == [0]
        configs = await topic_configs(admin, topic)
        assert configs["retention.ms"] == ("1000", TOPIC_CONFIG)
        assert configs["max.message.bytes"] == ("2048", TOPIC_CONFIG)

    with_admin(kafka_bootstrap, scenario)


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
