"""confluent-kafka's (librdkafka's) part of the Python client driver (python_driver.py): each scenario as it
runs it (its share-group and telemetry scenarios are in confluent_share.py and confluent_telemetry.py)."""

from __future__ import annotations

import time

from wirecheck.suites.kafka.clients.python_common import (ALTERED, CODECS, CONFLUENT_SASL, CONSUME_SECONDS,
                                                          HEARTBEAT_MS, PRODUCE_SECONDS, TRANSFORM, Waiting,
                                                          consumed_record, known_offset, raw, read_destination,
                                                          rounds, sasl_options, settled)


def confluent_to_server(job: dict) -> dict:
    named = {"client.id": job["client_id"]} if job.get("client_id") else {}
    return {"bootstrap.servers": job["bootstrap"], **named, **sasl_options(job, CONFLUENT_SASL)}


def confluent_kafka(job: dict) -> dict:
    import confluent_kafka
    from confluent_kafka import Consumer, Producer

    result = {"client": "confluent-kafka", "version": f"{confluent_kafka.__version__} (librdkafka "
                                                      f"{confluent_kafka.libversion()[0]})",
              "codecs": list(CODECS)}  # librdkafka builds in every codec
    if job["action"] == "describe":
        return result
    producer = Producer({**confluent_to_server(job), "compression.type": job["codec"],
                         **({"enable.idempotence": True} if job.get("idempotent") else {})})
    delivered: dict[int, list] = {}

    def report(index):
        def done(err, msg):
            delivered[index] = [msg.partition(), msg.offset()] if err is None else [None, str(err)]
        return done

    index = 0
    for part in rounds(job):
        for r in part:
            producer.produce(job["topic"], value=raw(r["value"]), key=raw(r["key"]), partition=r["partition"],
                             timestamp=r["timestamp"], headers=[(n, raw(v)) for n, v in r["headers"]],
                             on_delivery=report(index))
            index += 1
        if producer.flush(PRODUCE_SECONDS):
            raise Waiting("delivery reports of the produced records")
    result["produced"] = [delivered[i] for i in range(len(job["records"]))]
    consumer = Consumer({**confluent_to_server(job), "group.id": job["group"],
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([job["topic"]])
    result["consumed"] = []
    end = time.monotonic() + CONSUME_SECONDS
    try:
        while len(result["consumed"]) < len(job["records"]):
            if time.monotonic() > end:
                raise Waiting(f"records ({len(result['consumed'])} of {len(job['records'])} consumed)")
            m = consumer.poll(0.5)
            if m is None:
                continue
            if m.error():
                raise RuntimeError(f"consumer error: {m.error()}")
            result["consumed"].append(consumed_record(m.partition(), m.offset(), m.key(), m.value(), m.headers(),
                                                      m.timestamp()[1]))
    finally:
        consumer.close()
    return result


class ConfluentMember:
    def __init__(self, job: dict):
        from confluent_kafka import Consumer
        self.consumer = Consumer({**confluent_to_server(job), "group.id": job["group"],
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                  "heartbeat.interval.ms": HEARTBEAT_MS})
        self.consumer.subscribe([job["topic"]])
        self.topic = job["topic"]

    def poll(self):
        m = self.consumer.poll(0.1)
        if m is None:
            return []
        if m.error():
            raise RuntimeError(f"consumer error: {m.error()}")
        return [(m.partition(), m.offset(), m.value())]

    def commit(self, partition: int, offset: int) -> None:
        from confluent_kafka import TopicPartition
        self.consumer.commit(offsets=[TopicPartition(self.topic, partition, offset)], asynchronous=False)

    def assignment(self) -> set:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        self.consumer.close()


class ConfluentConsumerProtocolMember(ConfluentMember):
    """A librdkafka member of the KIP-848 protocol: the coordinator assigns and sets the heartbeat interval
    (librdkafka refuses heartbeat.interval.ms, session.timeout.ms and assignment strategies with it)."""

    def __init__(self, job: dict):
        from confluent_kafka import Consumer
        self.consumer = Consumer({**confluent_to_server(job), "group.id": job["group"],
                                  "group.protocol": "consumer", "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False})
        self.consumer.subscribe([job["topic"]])
        self.topic = job["topic"]


def confluent_produce(job: dict):
    from confluent_kafka import Producer

    def produce(items):
        producer = Producer({**confluent_to_server(job)})
        for partition, value in items:
            producer.produce(job["topic"], value=value, partition=partition)
        if producer.flush(PRODUCE_SECONDS):
            raise Waiting("delivery reports of the produced records")
    return produce


def confluent_transactions(job: dict) -> dict:
    from confluent_kafka import Consumer, Producer, TopicPartition

    values = [raw(v) for v in job["values"]]
    confluent_produce({**job, "topic": job["source"]})([(0, v) for v in values])
    consumer = Consumer({**confluent_to_server(job), "group.id": job["group"],
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})
    consumer.assign([TopicPartition(job["source"], 0, 0)])
    read = []
    end = time.monotonic() + CONSUME_SECONDS
    while len(read) < len(values):
        if time.monotonic() > end:
            raise Waiting(f"source records ({len(read)} of {len(values)} read)")
        read += [m.value() for m in consumer.consume(100, 0.2) if m.error() is None]
    producer = Producer({**confluent_to_server(job), "transactional.id": job["transactional_id"]})
    producer.init_transactions(CONSUME_SECONDS)
    for commit in (False, True):
        producer.begin_transaction()
        for value in read:
            producer.produce(job["dest"], value=TRANSFORM + value, partition=0)
        producer.send_offsets_to_transaction([TopicPartition(job["source"], 0, len(read))],
                                             consumer.consumer_group_metadata(), CONSUME_SECONDS)
        producer.flush(CONSUME_SECONDS)
        if commit:
            producer.commit_transaction(CONSUME_SECONDS)
        else:
            producer.abort_transaction(CONSUME_SECONDS)
    [committed] = consumer.committed([TopicPartition(job["source"], 0)], CONSUME_SECONDS)
    consumer.close()
    reader = Consumer({**confluent_to_server(job), "group.id": job["group"] + "-reader",
                       "auto.offset.reset": "earliest", "enable.auto.commit": False,
                       "isolation.level": "read_committed"})
    reader.assign([TopicPartition(job["dest"], 0, 0)])
    dest = read_destination(job, lambda: [m.value() for m in reader.consume(100, 0.1) if m.error() is None],
                            reader.close)
    return {"dest": dest, "committed": committed.offset}


def confluent_admin(job: dict) -> dict:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic,
                                       ResourceType)

    admin, topic, result = AdminClient({**confluent_to_server(job)}), job["topic"], {}
    [(_, created)] = admin.create_topics([NewTopic(topic, 2, 1)]).items()
    created.result(CONSUME_SECONDS)
    result["partitions"] = settled(lambda: _confluent_partitions(admin, topic), lambda count: count > 0)

    def config() -> str | None:
        [future] = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
        try:
            return future.result(CONSUME_SECONDS)[ALTERED[0]].value
        except KafkaException:  # the broker does not know the topic yet (asked again, bounded)
            return None
    result["before"] = settled(config, lambda value: value is not None)
    entry = ConfigEntry(*ALTERED, incremental_operation=AlterConfigOpType.SET)  # the plain call is deprecated
    [future] = admin.incremental_alter_configs([ConfigResource(ResourceType.TOPIC, topic,
                                                               incremental_configs=[entry])]).values()
    future.result(CONSUME_SECONDS)
    result["after"] = settled(config, lambda value: value == ALTERED[1])
    [deleted] = admin.delete_topics([topic]).values()
    deleted.result(CONSUME_SECONDS)
    result["listed_after_delete"] = settled(lambda: topic in admin.list_topics(timeout=CONSUME_SECONDS).topics,
                                            lambda listed: not listed)
    return result


def _confluent_partitions(admin, topic: str) -> int:
    """The partitions Metadata lists for ``topic`` (0 while the broker does not know it)."""
    found = admin.list_topics(topic, timeout=CONSUME_SECONDS).topics.get(topic)
    return 0 if found is None or found.error is not None else len(found.partitions)


def confluent_cluster_admin(job: dict) -> dict:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, NewPartitions

    confluent_produce(job)([(0, raw(v)) for v in job["values"]])
    admin, topic = AdminClient({**confluent_to_server(job)}), job["topic"]
    [grown] = admin.create_partitions([NewPartitions(topic, job["grow_to"])]).values()
    grown.result(CONSUME_SECONDS)
    partitions = settled(lambda: _confluent_partitions(admin, topic), lambda count: count >= job["grow_to"])
    [deleted] = admin.delete_records([TopicPartition(topic, 0, job["delete_below"])]).values()
    deleted.result(CONSUME_SECONDS)
    cluster = admin.describe_cluster().result(CONSUME_SECONDS)
    return {"partitions": partitions, "brokers": [[n.id, n.host, n.port] for n in cluster.nodes]}


def confluent_group_admin(job: dict) -> dict:
    from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    topic, group = job["topic"], job["group"]
    consumer = Consumer({**confluent_to_server(job), "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, job["offset"])], asynchronous=False)
    finally:
        consumer.close()
    admin = AdminClient({**confluent_to_server(job)})

    def listed() -> bool:
        return group in {g.group_id for g in admin.list_consumer_groups().result(CONSUME_SECONDS).valid}
    result = {"listed": listed()}
    [future] = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)]).values()
    offsets = {tp.partition: tp.offset for tp in future.result(CONSUME_SECONDS).topic_partitions if tp.topic == topic}
    result["offset"] = known_offset(offsets.get(0))
    [deleted] = admin.delete_consumer_groups([group], request_timeout=CONSUME_SECONDS).values()
    deleted.result(CONSUME_SECONDS)
    result["listed_after_delete"] = listed()
    return result
