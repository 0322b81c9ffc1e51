"""confluent-kafka's AdminClient (librdkafka) through the reference broker: describe/alter configs (classic and
incremental), create_partitions, delete_records, describe_cluster and deleting groups."""

from __future__ import annotations

import pytest

pytest.importorskip("confluent_kafka", reason="confluent_kafka is in the interop extra: pip install wirecheck[interop]")
from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions,
                                   ResourceType)

from tests.interop.offsets import committed
from tests.interop.confluent_support import create_topic, produce

pytestmark = pytest.mark.interop
TIMEOUT = 10


@pytest.fixture
def admin(kafka_bootstrap):
    return AdminClient({"bootstrap.servers": kafka_bootstrap})


def topic_configs(admin: AdminClient, topic: str) -> dict:
    (future,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    return future.result(timeout=TIMEOUT)


def test_describe_and_alter_topic_configs(admin, kafka_bootstrap, unique):
    topic = unique("ck-cfg")
    create_topic(kafka_bootstrap, topic, 1)
    configs = topic_configs(admin, topic)
    assert configs["retention.ms"].value == "604800000" and configs["retention.ms"].is_default
    (future,) = admin.alter_configs([ConfigResource(ResourceType.TOPIC, topic,
                                                    set_config={"retention.ms": "3600000"})]).values()
    future.result(timeout=TIMEOUT)
    assert topic_configs(admin, topic)["retention.ms"].value == "3600000"
    append = ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND)
    (future,) = admin.incremental_alter_configs([ConfigResource(ResourceType.TOPIC, topic,
                                                                incremental_configs=[append])]).values()
    future.result(timeout=TIMEOUT)
    configs = topic_configs(admin, topic)
    assert set(configs["cleanup.policy"].value.split(",")) == {"delete", "compact"}
    assert configs["retention.ms"].value == "3600000"  # incremental: the other override stays
    bad = ConfigEntry("wirecheck.no.such.config", "1", incremental_operation=AlterConfigOpType.SET)
    (future,) = admin.incremental_alter_configs([ConfigResource(ResourceType.TOPIC, topic,
                                                                incremental_configs=[bad])]).values()
    with pytest.raises(KafkaException) as refused:
        future.result(timeout=TIMEOUT)
    assert refused.value.args[0].name() == "INVALID_CONFIG"


def test_describe_broker_configs(admin):
    (future,) = admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")]).values()
    configs = future.result(timeout=TIMEOUT)
    assert configs["broker.id"].value == "0" and configs["broker.id"].is_read_only


def test_create_partitions(admin, kafka_bootstrap, unique):
    topic = unique("ck-grow")
    create_topic(kafka_bootstrap, topic, 1)
    (future,) = admin.create_partitions([NewPartitions(topic, 3)]).values()
    future.result(timeout=TIMEOUT)
    assert sorted(admin.list_topics(topic, timeout=TIMEOUT).topics[topic].partitions) == [0, 1, 2]


def test_delete_records(admin, kafka_bootstrap, unique):
    topic = unique("ck-del")
    create_topic(kafka_bootstrap, topic, 1)
    produce(kafka_bootstrap, topic, 5, 1)
    (future,) = admin.delete_records([TopicPartition(topic, 0, 3)]).values()
    assert future.result(timeout=TIMEOUT).low_watermark == 3


def test_describe_cluster(admin, kafka_bootstrap):
    cluster = admin.describe_cluster().result(timeout=TIMEOUT)
    host, port = kafka_bootstrap.rsplit(":", 1)
    assert [(n.id, n.host, n.port) for n in cluster.nodes] == [(0, host, int(port))]
    assert cluster.controller.id == 0 and cluster.cluster_id


def test_delete_consumer_group(admin, kafka_bootstrap, unique):
    from confluent_kafka import Consumer

    topic, group = unique("ck-dg"), unique("ck-dg-group")
    create_topic(kafka_bootstrap, topic, 1)
    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
    finally:
        consumer.close()
    assert committed(kafka_bootstrap, group, topic, 1) == {0: 4}
    (future,) = admin.delete_consumer_groups([group], request_timeout=TIMEOUT).values()
    future.result(timeout=TIMEOUT)
    assert committed(kafka_bootstrap, group, topic, 1) == {0: -1}
