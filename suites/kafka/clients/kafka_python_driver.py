"""kafka-python's part of the Python client driver (python_driver.py): each scenario as kafka-python runs it."""

from __future__ import annotations

import time

from wirecheck.suites.kafka.clients.python_common import (ALTERED, CODECS, CONSUME_SECONDS, HEARTBEAT_MS, TRANSFORM,
                                                          Waiting, consumed_record, known_offset, raw,
                                                          read_destination, rounds, settled, to_server)


def kafka_python(job: dict) -> dict:
    import kafka
    from kafka import KafkaConsumer, KafkaProducer, codec

    offered = [c for c, has in zip(CODECS, (codec.has_gzip(), codec.has_snappy(), codec.has_lz4(),
                                            codec.has_zstd())) if has]
    result = {"client": "kafka-python", "version": kafka.__version__, "codecs": offered}
    if job["action"] == "describe":
        return result
    options = {} if job["codec"] == "none" else {"compression_type": job["codec"]}
    if job.get("idempotent"):
        options["enable_idempotence"] = True
    producer = KafkaProducer(**to_server(job), **options)
    try:
        futures = []
        for part in rounds(job):
            futures += [producer.send(job["topic"], key=raw(r["key"]), value=raw(r["value"]), partition=r["partition"],
                                      timestamp_ms=r["timestamp"], headers=[(n, raw(v)) for n, v in r["headers"]])
                        for r in part]
            producer.flush(timeout=CONSUME_SECONDS)
        result["produced"] = [[m.partition, m.offset] for m in (f.get(timeout=CONSUME_SECONDS) for f in futures)]
    finally:
        producer.close(timeout=5)
    consumer = KafkaConsumer(job["topic"], **to_server(job), group_id=job["group"],
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=CONSUME_SECONDS * 1000)
    try:
        result["consumed"] = []
        for m in consumer:
            result["consumed"].append(consumed_record(m.partition, m.offset, m.key, m.value, m.headers, m.timestamp))
            if len(result["consumed"]) >= len(job["records"]):
                break
    finally:
        consumer.close()
    return result


KAFKA_PYTHON_POLL_MS = 1000


class KafkaPythonMember:
    def __init__(self, job: dict):
        from kafka import KafkaConsumer
        self.consumer = KafkaConsumer(**to_server(job), group_id=job["group"],
                                      auto_offset_reset="earliest", enable_auto_commit=False,
                                      heartbeat_interval_ms=HEARTBEAT_MS)
        self.topic = job["topic"]
        # kafka-python 3.0.12 client races (seen in groups mixing it with librdkafka too): a leader whose metadata
        # does not know the topic yet assigns nothing and may never rejoin, so the topic's metadata is loaded
        # before subscribing; a poll that times out while the leader's SyncGroup is in flight can lose the join's
        # completion, so polls are long (a poll returns at once when a record is there)
        self.consumer.partitions_for_topic(self.topic)
        self.consumer.subscribe([self.topic])

    def poll(self):
        batches = self.consumer.poll(timeout_ms=KAFKA_PYTHON_POLL_MS, max_records=1)
        return [(m.partition, m.offset, m.value) for messages in batches.values() for m in messages]

    def commit(self, partition: int, offset: int) -> bool:
        """False when the group refused the commit because it rebalanced under it (kafka-python's CommitFailedError,
        as aiokafka's: AiokafkaMember.commit)."""
        from kafka.errors import CommitFailedError
        from kafka.structs import OffsetAndMetadata, TopicPartition
        try:
            self.consumer.commit({TopicPartition(self.topic, partition): OffsetAndMetadata(offset, None, -1)})
        except CommitFailedError:
            return False
        return True

    def assignment(self) -> set:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        self.consumer.close()


def kafka_python_produce(job: dict, **options):
    from kafka import KafkaProducer

    def produce(items):
        producer = KafkaProducer(**to_server(job), **options)
        try:
            for future in [producer.send(job["topic"], value=v, partition=p) for p, v in items]:
                future.get(timeout=CONSUME_SECONDS)
        finally:
            producer.close(timeout=5)
    return produce


def kafka_python_transactions(job: dict) -> dict:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.structs import TopicPartition
    from kafka.structs import OffsetAndMetadata

    values = [raw(v) for v in job["values"]]
    kafka_python_produce({**job, "topic": job["source"]})([(0, v) for v in values])
    source = TopicPartition(job["source"], 0)
    consumer = KafkaConsumer(**to_server(job), group_id=job["group"],
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             isolation_level="read_committed")
    consumer.assign([source])
    read = []
    end = time.monotonic() + CONSUME_SECONDS
    while len(read) < len(values):
        if time.monotonic() > end:
            raise Waiting(f"source records ({len(read)} of {len(values)} read)")
        read += [m.value for ms in consumer.poll(timeout_ms=200).values() for m in ms]
    producer = KafkaProducer(**to_server(job), transactional_id=job["transactional_id"])
    try:
        producer.init_transactions()
        for commit in (False, True):
            producer.begin_transaction()
            for value in read:
                producer.send(job["dest"], value=TRANSFORM + value, partition=0)
            producer.send_offsets_to_transaction({source: OffsetAndMetadata(len(read), None, -1)},
                                                 consumer.group_metadata())
            producer.flush()
            (producer.commit_transaction if commit else producer.abort_transaction)()
    finally:
        producer.close(timeout=5)
    # the offset is the group's once the commit's markers are written, after commit_transaction returns: a client
    # without KIP-447's RequireStable sees it a moment later (OffsetFetch answers the last stable offset)
    committed = settled(lambda: consumer.committed(source), lambda offset: offset is not None)
    consumer.close()
    reader = KafkaConsumer(**to_server(job), auto_offset_reset="earliest",
                           enable_auto_commit=False, isolation_level="read_committed")
    reader.assign([TopicPartition(job["dest"], 0)])
    dest = read_destination(job, lambda: [m.value for ms in reader.poll(timeout_ms=100).values() for m in ms],
                            reader.close)
    return {"dest": dest, "committed": committed}


def kafka_python_admin(job: dict) -> dict:
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

    admin = KafkaAdminClient(**to_server(job), request_timeout_ms=CONSUME_SECONDS * 1000)
    topic, result = job["topic"], {}
    try:
        admin.create_topics([NewTopic(topic, 2, 1)], timeout_ms=CONSUME_SECONDS * 1000)
        # a broker learns of a created topic from its controller a moment later (the admin client's javadoc:
        # "it may take several seconds ... for all the brokers to become aware"): described once it knows it
        [described] = settled(lambda: admin.describe_topics([topic]), lambda found: found[0]["partitions"])
        result["partitions"] = len(described["partitions"])

        def config() -> str | None:
            entry = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)],
                                           config_filter="all")["topic"].get(topic, {}).get(ALTERED[0])
            return None if entry is None else entry["value"]
        result["before"] = settled(config, lambda value: value is not None)
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=dict([ALTERED]))])
        result["after"] = settled(config, lambda value: value == ALTERED[1])
        admin.delete_topics([topic], timeout_ms=CONSUME_SECONDS * 1000)
        result["listed_after_delete"] = settled(lambda: topic in admin.list_topics(), lambda listed: not listed)
    finally:
        admin.close()
    return result


def kafka_python_cluster_admin(job: dict) -> dict:
    from kafka import KafkaAdminClient
    from kafka.structs import TopicPartition
    from kafka.admin import NewPartitions

    kafka_python_produce(job)([(0, raw(v)) for v in job["values"]])
    admin = KafkaAdminClient(**to_server(job), request_timeout_ms=CONSUME_SECONDS * 1000)
    try:
        admin.create_partitions({job["topic"]: NewPartitions(job["grow_to"])})
        # Admin.java: "It may take several seconds after this method returns success for all the brokers to become
        # aware that the partitions have been created": described until they show, bounded
        [described] = settled(lambda: admin.describe_topics([job["topic"]]),
                              lambda found: len(found[0]["partitions"]) >= job["grow_to"])
        admin.delete_records({TopicPartition(job["topic"], 0): job["delete_below"]})
        cluster = admin.describe_cluster()
    finally:
        admin.close()
    return {"partitions": len(described["partitions"]),
            "brokers": [[b["broker_id"], b["host"], b["port"]] for b in cluster["brokers"]]}


def kafka_python_group_admin(job: dict) -> dict:
    from kafka import KafkaAdminClient, KafkaConsumer
    from kafka.structs import TopicPartition
    from kafka.structs import OffsetAndMetadata

    partition, group = TopicPartition(job["topic"], 0), job["group"]
    consumer = KafkaConsumer(**to_server(job), group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({partition: OffsetAndMetadata(job["offset"], None, -1)})
    finally:
        consumer.close()
    admin = KafkaAdminClient(**to_server(job), request_timeout_ms=CONSUME_SECONDS * 1000)
    try:
        def listed() -> bool:
            return group in {g["group_id"] for g in admin.list_groups()}
        result = {"listed": listed()}
        offsets = admin.list_group_offsets(group)[group]
        result["offset"] = known_offset(offsets[partition].offset if partition in offsets else None)
        admin.delete_groups([group])
        result["listed_after_delete"] = listed()
    finally:
        admin.close()
    return result
