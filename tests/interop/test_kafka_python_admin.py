"""kafka-python's KafkaAdminClient through the reference broker: topic and broker configs, partitions, and the
group admin calls (list, offsets, delete offsets, delete groups), plus describe_cluster."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.structs import OffsetAndMetadata

pytestmark = pytest.mark.interop


@pytest.fixture
def admin(kafka_bootstrap):
    client = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, request_timeout_ms=5000)
    yield client
    client.close()


def new_topic(admin: KafkaAdminClient, name: str) -> str:
    admin.create_topics([NewTopic(name, 1, 1)], timeout_ms=5000)
    return name


def topic_configs(admin: KafkaAdminClient, topic: str, config_filter: str = "all") -> dict:
    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter=config_filter)
    return described["topic"][topic]


def test_topic_configs(admin, unique):
    topic = new_topic(admin, unique("kp-cfg"))
    assert topic_configs(admin, topic)["retention.ms"]["config_source"] == "DEFAULT_CONFIG"
    altered = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={
        "retention.ms": "3600000", "cleanup.policy": ("APPEND", "compact")})])
    assert altered == {"topic": {topic: "OK"}}
    modified = topic_configs(admin, topic, "modified")
    assert {k: v["value"] for k, v in modified.items()} == {"retention.ms": "3600000",
                                                           "cleanup.policy": "delete,compact"}
    refused = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={"wirecheck.x": "1"})],
                                  raise_on_unknown=False)
    assert "Error 40" in refused["topic"][topic]


def test_broker_configs_are_read_only(admin):
    described = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "0", configs={"broker.id": None})],
                                       config_filter="all")
    assert described["broker"]["0"]["broker.id"]["read_only"] is True


def test_create_partitions(admin, unique):
    topic = new_topic(admin, unique("kp-grow"))
    result = admin.create_partitions({topic: NewPartitions(3)})
    assert [r.error_code for r in result.results] == [0]
    assert sorted(p["partition_index"] for p in admin.describe_topics([topic])[0]["partitions"]) == [0, 1, 2]


def test_group_admin(admin, kafka_bootstrap, unique):
    topic, group = new_topic(admin, unique("kp-grp")), unique("kp-group")
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(4, "", -1)})
    finally:
        consumer.close()
    assert group in {g["group_id"] for g in admin.list_groups()}
    assert admin.list_group_offsets(group)[group][TopicPartition(topic, 0)].offset == 4
    admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
    assert admin.list_group_offsets(group)[group] == {}
    absent = unique("kp-absent")
    assert admin.delete_groups([group, absent]) == {group: "OK", absent: "GroupIdNotFoundError"}
    assert group not in {g["group_id"] for g in admin.list_groups()}


def test_describe_cluster(admin, kafka_bootstrap):
    cluster = admin.describe_cluster()
    host, port = kafka_bootstrap.rsplit(":", 1)
    assert [(b["broker_id"], b["host"], b["port"]) for b in cluster["brokers"]] == [(0, host, int(port))]
    assert cluster["controller_id"] == 0
