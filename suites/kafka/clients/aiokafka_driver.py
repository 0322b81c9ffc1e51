"""aiokafka's part of the Python client driver (python_driver.py): each scenario as aiokafka runs it."""

from __future__ import annotations

import asyncio
import time

from wirecheck.suites.kafka.clients.python_common import (ALTERED, CONSUME_SECONDS, HEARTBEAT_MS, TRANSFORM, Waiting,
                                                          b64, consumed_record, known_offset, raw, settled_async,
                                                          to_server)


def aiokafka(job: dict) -> dict:
    return asyncio.run(_aiokafka(job))


async def _aiokafka(job: dict) -> dict:
    import aiokafka as library
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, codec

    offered = ["gzip"] + [c for c, has in (("snappy", codec.has_snappy()), ("lz4", codec.has_lz4()),
                                           ("zstd", codec.has_zstd())) if has]
    result = {"client": "aiokafka", "version": library.__version__, "codecs": offered}
    if job["action"] == "describe":
        return result
    producer = AIOKafkaProducer(**to_server(job),
                                compression_type=None if job["codec"] == "none" else job["codec"],
                                **({"enable_idempotence": True} if job.get("idempotent") else {}))
    await producer.start()
    try:
        sent = [await producer.send_and_wait(job["topic"], raw(r["value"]), key=raw(r["key"]), partition=r["partition"],
                                             timestamp_ms=r["timestamp"],
                                             headers=[(n, raw(v)) for n, v in r["headers"]])
                for r in job["records"]]
        result["produced"] = [[m.partition, m.offset] for m in sent]
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(job["topic"], **to_server(job), group_id=job["group"],
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    result["consumed"] = []
    end = time.monotonic() + CONSUME_SECONDS
    try:
        while len(result["consumed"]) < len(job["records"]):
            if time.monotonic() > end:
                raise Waiting(f"records ({len(result['consumed'])} of {len(job['records'])} consumed)")
            batches = await consumer.getmany(timeout_ms=500)
            for messages in batches.values():
                for m in messages:
                    result["consumed"].append(consumed_record(m.partition, m.offset, m.key, m.value, m.headers,
                                                              m.timestamp))
    finally:
        await consumer.stop()
    return result


class AiokafkaMember:
    """An aiokafka consumer on an event loop of its own (one per member thread)."""

    def __init__(self, job: dict):
        from aiokafka import AIOKafkaConsumer
        self.loop = asyncio.new_event_loop()
        self.topic = job["topic"]

        async def start():
            consumer = AIOKafkaConsumer(job["topic"], **to_server(job), group_id=job["group"],
                                        auto_offset_reset="earliest", enable_auto_commit=False,
                                        heartbeat_interval_ms=HEARTBEAT_MS)
            await consumer.start()
            return consumer
        self.consumer = self.loop.run_until_complete(start())

    def poll(self):
        batches = self.loop.run_until_complete(self.consumer.getmany(timeout_ms=100, max_records=1))
        return [(m.partition, m.offset, m.value) for messages in batches.values() for m in messages]

    def commit(self, partition: int, offset: int) -> bool:
        """False when the group refused the commit because it rebalanced under it: aiokafka's CommitFailedError
        (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or REBALANCE_IN_PROGRESS, group_coordinator.py commit_offsets), as
        Kafka's CommitFailedException, whose javadoc says the commit cannot be retried: the partition's next owner
        reads again from the last commit the group accepted, this record included. The member rejoins on its next
        poll. So too when the rebalance ran on this member's event loop before the commit was sent: aiokafka then
        refuses to commit a partition no longer assigned (IllegalStateError, consumer.py commit)."""
        from aiokafka import TopicPartition
        from aiokafka.errors import CommitFailedError, IllegalStateError
        try:
            self.loop.run_until_complete(self.consumer.commit({TopicPartition(self.topic, partition): offset}))
        except (CommitFailedError, IllegalStateError):
            return False
        return True

    def assignment(self) -> set:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        self.loop.run_until_complete(self.consumer.stop())
        self.loop.close()


def aiokafka_produce(job: dict):
    def produce(items):
        async def run():
            from aiokafka import AIOKafkaProducer
            producer = AIOKafkaProducer(**to_server(job))
            await producer.start()
            try:
                for partition, value in items:
                    await producer.send_and_wait(job["topic"], value, partition=partition)
            finally:
                await producer.stop()
        asyncio.run(run())
    return produce


def aiokafka_transactions(job: dict) -> dict:
    return asyncio.run(_aiokafka_transactions(job))


async def _aiokafka_transactions(job: dict) -> dict:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    values = [raw(v) for v in job["values"]]
    plain = AIOKafkaProducer(**to_server(job))
    await plain.start()
    try:
        for value in values:
            await plain.send_and_wait(job["source"], value, partition=0)
    finally:
        await plain.stop()
    source = TopicPartition(job["source"], 0)
    consumer = AIOKafkaConsumer(**to_server(job), group_id=job["group"],
                                auto_offset_reset="earliest", enable_auto_commit=False,
                                isolation_level="read_committed")
    await consumer.start()
    consumer.assign([source])
    read = []
    end = time.monotonic() + CONSUME_SECONDS
    while len(read) < len(values):
        if time.monotonic() > end:
            raise Waiting(f"source records ({len(read)} of {len(values)} read)")
        read += [m.value for ms in (await consumer.getmany(timeout_ms=200)).values() for m in ms]
    producer = AIOKafkaProducer(**to_server(job), transactional_id=job["transactional_id"])
    await producer.start()
    try:
        for commit in (False, True):
            await producer.begin_transaction()
            for value in read:
                await producer.send(job["dest"], TRANSFORM + value, partition=0)
            await producer.send_offsets_to_transaction({source: len(read)}, job["group"])
            await (producer.commit_transaction() if commit else producer.abort_transaction())
    finally:
        await producer.stop()
    # as kafka_python_transactions: without RequireStable the committed offset shows once the markers are written
    committed = await settled_async(lambda: consumer.committed(source), lambda offset: offset is not None)
    await consumer.stop()
    reader = AIOKafkaConsumer(**to_server(job), auto_offset_reset="earliest",
                              enable_auto_commit=False, isolation_level="read_committed")
    await reader.start()
    reader.assign([TopicPartition(job["dest"], 0)])
    seen, end = [], time.monotonic() + CONSUME_SECONDS
    try:
        while len(seen) < len(values):
            if time.monotonic() > end:
                raise Waiting(f"committed records ({len(seen)} of {len(values)} read)")
            seen += [m.value for ms in (await reader.getmany(timeout_ms=100)).values() for m in ms]
        settle = time.monotonic() + 0.5
        while time.monotonic() < settle:
            seen += [m.value for ms in (await reader.getmany(timeout_ms=100)).values() for m in ms]
    finally:
        await reader.stop()
    return {"dest": [b64(v) for v in seen], "committed": committed}


def aiokafka_admin(job: dict) -> dict:
    return asyncio.run(_aiokafka_admin(job))


async def _aiokafka_admin(job: dict) -> dict:
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

    admin = AIOKafkaAdminClient(**to_server(job), request_timeout_ms=CONSUME_SECONDS * 1000)
    await admin.start()
    topic, result = job["topic"], {}
    try:
        await admin.create_topics([NewTopic(topic, 2, 1)])
        # described once its broker knows it (as kafka_python_admin)
        [described] = await settled_async(lambda: admin.describe_topics([topic]),
                                          lambda found: found[0]["partitions"])
        result["partitions"] = len(described["partitions"])

        async def config() -> str | None:
            [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
            [(_, _, _, _, entries)] = response.resources
            return {entry[0]: entry[1] for entry in entries}.get(ALTERED[0])  # (name, value, read_only, ...)
        result["before"] = await settled_async(config, lambda value: value is not None)
        await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=dict([ALTERED]))])
        result["after"] = await settled_async(config, lambda value: value == ALTERED[1])
        await admin.delete_topics([topic])

        async def listed() -> bool:
            return topic in await admin.list_topics()
        result["listed_after_delete"] = await settled_async(listed, lambda still: not still)
    finally:
        await admin.close()
    return result


def aiokafka_cluster_admin(job: dict) -> dict:
    aiokafka_produce(job)([(0, raw(v)) for v in job["values"]])  # runs its own event loop
    return asyncio.run(_aiokafka_cluster_admin(job))


async def _aiokafka_cluster_admin(job: dict) -> dict:
    from aiokafka import TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, RecordsToDelete

    admin = AIOKafkaAdminClient(**to_server(job), request_timeout_ms=CONSUME_SECONDS * 1000)
    await admin.start()
    try:
        await admin.create_partitions({job["topic"]: NewPartitions(job["grow_to"])})
        [described] = await settled_async(lambda: admin.describe_topics([job["topic"]]),
                                          lambda found: len(found[0]["partitions"]) >= job["grow_to"])
        await admin.delete_records({TopicPartition(job["topic"], 0): RecordsToDelete(job["delete_below"])})
        cluster = await admin.describe_cluster()
    finally:
        await admin.close()
    return {"partitions": len(described["partitions"]),
            "brokers": [[b["node_id"], b["host"], b["port"]] for b in cluster["brokers"]]}


def aiokafka_group_admin(job: dict) -> dict:
    return asyncio.run(_aiokafka_group_admin(job))


async def _aiokafka_group_admin(job: dict) -> dict:
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.structs import OffsetAndMetadata

    partition, group = TopicPartition(job["topic"], 0), job["group"]
    consumer = AIOKafkaConsumer(**to_server(job), group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        consumer.assign([partition])
        await consumer.commit({partition: OffsetAndMetadata(job["offset"], "")})
    finally:
        await consumer.stop()
    admin = AIOKafkaAdminClient(**to_server(job), request_timeout_ms=CONSUME_SECONDS * 1000)
    await admin.start()
    try:
        result = {"listed": group in {g[0] for g in await admin.list_consumer_groups()}}  # (group, protocol type)
        offsets = await admin.list_consumer_group_offsets(group)
        result["offset"] = known_offset(offsets[partition].offset if partition in offsets else None)
        result["listed_after_delete"] = None  # aiokafka's admin client cannot delete groups
    finally:
        await admin.close()
    return result
