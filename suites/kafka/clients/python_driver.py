"""A real Python Kafka client, driven by a job on stdin: ``python -m wirecheck.suites.kafka.clients.python_driver
CLIENT`` with CLIENT one of kafka-python, confluent-kafka, aiokafka. Output: one JSON line (``{"waiting_for": ...}``
when the driver's own limit passed). Keys, values and header values are base64 (null allowed for a key).

Jobs (``action``), each with ``bootstrap``, optionally ``client_id`` (every client the job makes sends it) and
optionally ``sasl`` ({"mechanism", "username", "password"}: every client the job makes logs in with it):

- ``describe``: the client's name, version and the codecs it offers.
- ``produce-consume``: ``topic``, ``group``, ``codec``, ``idempotent`` (optional), ``records`` ([{"partition",
  "key", "value", "headers": [[name, value]], "timestamp" (ms)}]) produced in ``rounds`` (each flushed before the
  next, so that later batches start at offsets above 0); then consumed from the earliest offset, committing
  nothing. Gives ``produced`` ([partition, offset] per record, in job order) and ``consumed`` (in the order read).
- ``group-rebalance``: ``topic`` (``partitions`` of them), ``group``, ``values``: two members consume, committing
  each record; one leaves after the first half. Gives ``consumed`` ([member, partition, offset, value]) and
  ``refused_commits`` ([member, partition, offset] of each record whose commit the group refused, having rebalanced,
  or the member could no longer make, its partition revoked).
- ``mixed-group``: the same, the member that leaves being of another client library, ``partner``.
- ``cluster-admin``: ``topic`` (one partition), ``values`` produced to it, ``grow_to``, ``delete_below``: the topic
  grown to ``grow_to`` partitions and described, partition 0's records below ``delete_below`` deleted, the cluster
  described. Gives ``partitions`` and ``brokers`` ([id, host, port]).
- ``group-admin``: ``topic``, ``group``, ``offset``: the offset committed for partition 0, the groups listed, the
  group's offsets read, the group deleted and the groups listed again. Gives ``listed``, ``offset`` (null: none)
  and ``listed_after_delete`` (null where the client cannot delete groups).
- ``consumer-group-protocol``: as ``group-rebalance``, with the KIP-848 protocol (``group.protocol=consumer``) and
  three members: two consume the first third of the records, a third joins, the second third is consumed across
  the three, one of the first two leaves, the last third is consumed by the other two. Gives ``consumed``.
- ``transactions``: ``source``, ``dest`` (one partition each), ``group``, ``transactional_id``, ``values``:
  consume-transform-produce, aborted then committed. Gives ``dest`` (what read_committed reads) and ``committed``.
- ``admin``: ``topic``: created, described, a config altered, deleted. Gives ``partitions``, ``before``, ``after``,
  ``listed_after_delete``.
- ``share-group`` (confluent-kafka): ``topic``, ``group``, ``values``: two ShareConsumer members of a KIP-932 share
  group accept every record; see confluent_share.py. Gives ``consumed`` and ``ack_errors``.
- ``telemetry`` (confluent-kafka): as ``produce-consume`` with KIP-714 metrics push on, then ``wait`` seconds at most
  for each client's first push; see confluent_telemetry.py.

The client's defaults apply except where the scenario is about a setting.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import threading
import time

CONSUME_SECONDS = 20  # the case's own limit is longer: a driver that gives up says what it waited for
PRODUCE_SECONDS = 10  # for the delivery reports of a few records (each takes milliseconds)
CODECS = ("gzip", "snappy", "lz4", "zstd")


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def raw(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def consumed_record(partition: int, offset: int, key, value, headers, timestamp: int) -> dict:
    return {"partition": partition, "offset": offset, "key": b64(key), "value": b64(value),
            "headers": [[name, b64(data)] for name, data in headers or []], "timestamp": timestamp}


def rounds(job: dict) -> list[list[dict]]:
    """The job's records split into its rounds, in order."""
    count, records = job.get("rounds", 1), job["records"]
    size = -(-len(records) // count)
    return [records[i:i + size] for i in range(0, len(records), size)]


class Waiting(Exception):
    """The driver's own limit passed: says what it was waiting for."""


def sasl_options(job: dict, names: tuple[str, str, str, str]) -> dict:
    """The client's settings for the job's SASL login (none without one); ``names`` are the client's names for
    the security protocol, the mechanism, the user name and the password."""
    login = job.get("sasl")
    if not login:
        return {}
    return dict(zip(names, ("SASL_PLAINTEXT", login["mechanism"], login["username"], login["password"])))


KAFKA_PYTHON_SASL = ("security_protocol", "sasl_mechanism", "sasl_plain_username", "sasl_plain_password")
CONFLUENT_SASL = ("security.protocol", "sasl.mechanism", "sasl.username", "sasl.password")


def to_server(job: dict) -> dict:
    """kafka-python's and aiokafka's settings (the same names) for reaching the server: where, how to log in, and
    the job's client id (the suite keeps the connections that carry it in the scenario's capture)."""
    named = {"client_id": job["client_id"]} if job.get("client_id") else {}
    return {"bootstrap_servers": job["bootstrap"], **named, **sasl_options(job, KAFKA_PYTHON_SASL)}


def confluent_to_server(job: dict) -> dict:
    named = {"client.id": job["client_id"]} if job.get("client_id") else {}
    return {"bootstrap.servers": job["bootstrap"], **named, **sasl_options(job, CONFLUENT_SASL)}


# -- kafka-python ----------------------------------------------------------------------------------------------


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


# -- confluent-kafka (librdkafka) ------------------------------------------------------------------------------


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


# -- aiokafka --------------------------------------------------------------------------------------------------


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


# -- group-rebalance: two members of one group, one leaving mid-way --------------------------------------------
# Each member runs in its own thread (a member blocks in its own join while the other must rejoin), consumes and
# commits each record before taking the next, so a member that takes over a partition resumes where the last
# owner committed. The heartbeat interval is short only so that a member notices a rebalance in well under a
# second (the scenario is about the rebalance; the clients' 3 s default only slows it down).

HEARTBEAT_MS = 300
KAFKA_PYTHON_POLL_MS = 1000


class Group:
    """The records consumed by a group's members ([member, partition, offset, value]), shared by their threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.consumed: list[list] = []
        self.assigned: dict[str, set] = {}
        self.errors: list[str] = []
        self.refused: list[list] = []  # [member, partition, offset] of each record whose commit the group refused

    def count(self) -> int:
        with self.lock:
            return len(self.consumed)

    def distinct(self) -> int:
        """The records consumed at least once (a record whose commit was refused comes again)."""
        with self.lock:
            return len({value for *_, value in self.consumed})


def member_thread(group: Group, name: str, make_member, stop: threading.Event) -> threading.Thread:
    """Run one member: poll, note and commit each record, until ``stop``; then close (leaving the group)."""
    def run():
        try:
            member = make_member()
            try:
                while not stop.is_set():
                    for partition, offset, value in member.poll():
                        with group.lock:
                            group.consumed.append([name, partition, offset, b64(value)])
                        if member.commit(partition, offset + 1) is False:
                            with group.lock:
                                group.refused.append([name, partition, offset])
                    with group.lock:
                        group.assigned[name] = member.assignment()
            finally:
                member.close()
        except Exception as exc:  # noqa: BLE001 - any failure of a member is reported for the case to judge
            group.errors.append(f"{name}: {type(exc).__name__}: {exc}")
    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def wait_until(condition, what: str, seconds: float = CONSUME_SECONDS, group: Group | None = None) -> None:
    end = time.monotonic() + seconds
    while not condition():
        if group is not None and group.errors:
            raise RuntimeError("; ".join(group.errors))
        if time.monotonic() > end:
            raise Waiting(what)
        time.sleep(0.05)


def group_rebalance(job: dict, produce, make_member, make_leaver=None) -> dict:
    """Both members join; the first half of the records is consumed across them; one member (``make_leaver``'s,
    by default another of ``make_member``'s) leaves; the second half is produced and the remaining member consumes
    it (and whatever the leaver had not)."""
    values, partitions = [raw(v) for v in job["values"]], job["partitions"]
    half = len(values) // 2
    group, stops = Group(), {"a": threading.Event(), "b": threading.Event()}
    produce([(i % partitions, v) for i, v in enumerate(values[:half])])
    makers = {"a": make_member, "b": make_leaver or make_member}
    threads = {name: member_thread(group, name, makers[name], stop) for name, stop in stops.items()}
    wait_until(lambda: group.count() >= half and all(group.assigned.get(n) for n in stops),
               f"both members assigned and {half} records consumed", group=group)
    stops["b"].set()
    threads["b"].join(CONSUME_SECONDS)
    produce([(i % partitions, v) for i, v in enumerate(values[half:], half)])
    wait_until(lambda: group.distinct() >= len(values), f"all {len(values)} records consumed", group=group)
    time.sleep(0.5)  # a record consumed twice may still come
    stops["a"].set()
    threads["a"].join(CONSUME_SECONDS)
    if group.errors:
        raise RuntimeError("; ".join(group.errors))
    with group.lock:
        return {"consumed": list(group.consumed), "refused_commits": list(group.refused)}


def consumer_group_protocol(job: dict, produce, make_member) -> dict:
    """Three members of a KIP-848 group: one joins late and one leaves, each between thirds of the records."""
    values, partitions = [raw(v) for v in job["values"]], job["partitions"]
    thirds = [len(values) // 3, 2 * len(values) // 3, len(values)]
    group, stops = Group(), {name: threading.Event() for name in ("a", "b", "c")}
    threads = {}

    def stage(start: int, end: int, members: tuple[str, ...]) -> None:
        produce([(i % partitions, v) for i, v in enumerate(values[start:end], start)])
        wait_until(lambda: group.count() >= end and all(group.assigned.get(n) for n in members),
                   f"members {', '.join(members)} assigned and {end} records consumed", group=group)

    threads.update({name: member_thread(group, name, make_member, stops[name]) for name in ("a", "b")})
    stage(0, thirds[0], ("a", "b"))
    threads["c"] = member_thread(group, "c", make_member, stops["c"])  # joins late: the group rebalances
    # the late member's partitions come from the others, which revoke them first (KIP-848 reconciliation)
    wait_until(lambda: group.assigned.get("c"), "the late member assigned partitions", group=group)
    stage(thirds[0], thirds[1], ("a", "b", "c"))
    stops["b"].set()  # leaves: its partitions go to the others, which resume at the offsets it committed
    threads["b"].join(CONSUME_SECONDS)
    stage(thirds[1], thirds[2], ("a", "c"))
    time.sleep(0.5)  # a record consumed twice may still come
    for name in ("a", "c"):
        stops[name].set()
        threads[name].join(CONSUME_SECONDS)
    if group.errors:
        raise RuntimeError("; ".join(group.errors))
    with group.lock:
        return {"consumed": list(group.consumed)}


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


def confluent_produce(job: dict):
    from confluent_kafka import Producer

    def produce(items):
        producer = Producer({**confluent_to_server(job)})
        for partition, value in items:
            producer.produce(job["topic"], value=value, partition=partition)
        if producer.flush(PRODUCE_SECONDS):
            raise Waiting("delivery reports of the produced records")
    return produce


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


# -- transactions: consume-transform-produce ---------------------------------------------------------------------
# The source records are read by a read_committed consumer of the group; a transactional producer writes each
# transformed (TRANSFORM + value) to the destination with the source offsets, first in a transaction it aborts,
# then in one it commits. A fresh read_committed consumer then reads the destination; the group's committed
# source offset comes back too.

TRANSFORM = b"t:"


def read_destination(job: dict, read_batch, close) -> list:
    """The destination's values as a read_committed reader sees them: until as many as the source has, then a
    little longer (a record of the aborted transaction must not come)."""
    seen, end = [], time.monotonic() + CONSUME_SECONDS
    try:
        while len(seen) < len(job["values"]):
            if time.monotonic() > end:
                raise Waiting(f"committed records ({len(seen)} of {len(job['values'])} read)")
            seen += read_batch()
        settle = time.monotonic() + 0.5
        while time.monotonic() < settle:
            seen += read_batch()
    finally:
        close()
    return [b64(v) for v in seen]


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


# -- admin: create, describe, alter a config, describe again, delete -------------------------------------------
# A broker answers an admin change once its controller committed it and learns of it a moment later (KRaft, KIP-631;
# Admin.java: "It may take several seconds after the DeleteTopicsResult returns success for all the brokers to become
# aware that the topics are gone"), so the application asks again until it shows, for up to SETTLE_SECONDS, and
# reports what it saw last.

ALTERED = ("retention.ms", "3600000")
SETTLE_SECONDS = 15


def settled(ask, done):
    """``ask()`` until ``done(answer)`` or SETTLE_SECONDS passed; the last answer."""
    end = time.monotonic() + SETTLE_SECONDS
    while True:
        answer = ask()
        if done(answer) or time.monotonic() > end:
            return answer
        time.sleep(0.2)


async def settled_async(ask, done):
    end = time.monotonic() + SETTLE_SECONDS
    while True:
        answer = await ask()
        if done(answer) or time.monotonic() > end:
            return answer
        await asyncio.sleep(0.2)


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


# -- cluster-admin: partitions added, records deleted, the cluster described -------------------------------------
# The suite reads the log start the deletion left with its own ListOffsets; the client reports what it describes.


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


# -- group-admin: an offset committed, the group listed with it, the group deleted ------------------------------


def known_offset(offset: int | None) -> int | None:
    return None if offset is None or offset < 0 else offset  # -1: nothing committed


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


# -- mixed-group: group-rebalance with the leaving member of another library ------------------------------------
# The libraries' default assignors differ (aiokafka offers roundrobin only, the others range first): the broker
# picks one that every member offers.

MEMBERS = {"kafka-python": KafkaPythonMember, "confluent-kafka": ConfluentMember, "aiokafka": AiokafkaMember}
PRODUCERS = {"kafka-python": kafka_python_produce, "confluent-kafka": confluent_produce, "aiokafka": aiokafka_produce}


def mixed_group(job: dict, client: str) -> dict:
    return group_rebalance(job, PRODUCERS[client](job), lambda: MEMBERS[client](job),
                           lambda: MEMBERS[job["partner"]](job))


DRIVERS = {"kafka-python": kafka_python, "confluent-kafka": confluent_kafka, "aiokafka": aiokafka}
SCENARIOS = {
    "group-rebalance": {"kafka-python": lambda job: group_rebalance(job, kafka_python_produce(job),
                                                                    lambda: KafkaPythonMember(job)),
                        "confluent-kafka": lambda job: group_rebalance(job, confluent_produce(job),
                                                                       lambda: ConfluentMember(job)),
                        "aiokafka": lambda job: group_rebalance(job, aiokafka_produce(job),
                                                                lambda: AiokafkaMember(job))},
    "consumer-group-protocol": {"confluent-kafka": lambda job: consumer_group_protocol(
        job, confluent_produce(job), lambda: ConfluentConsumerProtocolMember(job))},
    "transactions": {"kafka-python": kafka_python_transactions, "confluent-kafka": confluent_transactions,
                     "aiokafka": aiokafka_transactions},
    "admin": {"kafka-python": kafka_python_admin, "confluent-kafka": confluent_admin, "aiokafka": aiokafka_admin},
    "mixed-group": {client: (lambda job, client=client: mixed_group(job, client)) for client in MEMBERS},
    "cluster-admin": {"kafka-python": kafka_python_cluster_admin, "confluent-kafka": confluent_cluster_admin,
                      "aiokafka": aiokafka_cluster_admin},
    "group-admin": {"kafka-python": kafka_python_group_admin, "confluent-kafka": confluent_group_admin,
                    "aiokafka": aiokafka_group_admin},
    # KIP-932 share groups: librdkafka's ShareConsumer alone of the Python clients (its own module imports this one)
    "share-group": {"confluent-kafka": lambda job: __import__(
        "wirecheck.suites.kafka.clients.confluent_share", fromlist=["share_group"]).share_group(job)},
    # KIP-714 metrics push: librdkafka's alone of the Python clients (its own module imports this one)
    "telemetry": {"confluent-kafka": lambda job: __import__(
        "wirecheck.suites.kafka.clients.confluent_telemetry", fromlist=["telemetry"]).telemetry(job)},
}


def main() -> int:
    job = json.loads(sys.stdin.read())
    try:
        action = SCENARIOS.get(job["action"], {}).get(sys.argv[1], DRIVERS[sys.argv[1]])
        result = action(job)
    except Waiting as waiting:
        print(json.dumps({"waiting_for": str(waiting)}))
        return 3
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
