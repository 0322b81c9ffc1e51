"""Produce, Fetch and ListOffsets: offsets, record content, CRC checking, error codes.

Cases whose checks are exact about a partition's offsets (consecutive base offsets, high watermark, earliest and
latest, long poll on an empty partition) use a fresh topic; the others take ``shared_path``: a topic the user named
when there is one, other cases writing to it at the same time, every offset checked relative to the case's own
writes."""

from __future__ import annotations

import time

import pytest

from wirecheck.protocols import compression
from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.strategies import kafka as kafka_strategies
from wirecheck.suites.kafka.client import (NAMED_FETCH_MAX, NAMED_PRODUCE_MAX, C, DataPath, expect, expect_produced,
                                           short, RECORD_TIME_MS)

case = pytest.mark.case
TIMESTAMP = RECORD_TIME_MS


def batch_of(values, codec=compression.NONE, **options) -> bytes:
    return records.build_batch(values, keys=[b"k%d" % i for i in range(len(values))], compression_codec=codec,
                               base_timestamp=TIMESTAMP, **options)


def expect_code(partition: dict, clause_id: str, *codes: int) -> None:
    expect(clause_id, partition["ErrorCode"], *codes)


@pytest.fixture
def data_path(target):
    client = DataPath(target)
    return client, client.topic()


@pytest.fixture
def shared_path(target):
    client = DataPath(target)
    return client, client.topic(shared=True)


def one_partition_topic(target) -> tuple[DataPath, str]:
    """A topic with exactly one partition: the cases that ask for partition 1 need it not to exist."""
    client = DataPath(target)
    return client, client.topic(shared=True, fewer_than=2)


@case("kafka.produce.base-offset")
def test_consecutive_produces_get_consecutive_offsets(target, data_path):
    client, topic = data_path
    first = expect_produced(client.produce(topic, batch_of([b"a", b"b", b"c"])), "kafka.produce.base-offset")
    second = expect_produced(client.produce(topic, batch_of([b"d", b"e"])), "kafka.produce.base-offset")
    if (first["BaseOffset"], second["BaseOffset"]) != (0, 3):
        raise Divergence(C["kafka.produce.base-offset"], "base offsets 0 then 3 on a fresh partition",
                         f"{first['BaseOffset']} then {second['BaseOffset']}")


@case("kafka.fetch.records")
@pytest.mark.parametrize("codec", sorted(compression.NAMES), ids=lambda c: compression.NAMES[c])
def test_fetch_returns_what_was_produced(target, shared_path, codec):
    client, topic = shared_path
    values = [b"v0", b"", b"v2" * 100]
    base = client.append(topic, batch_of(values, codec))
    _, found = client.records_from(topic, base)
    found = found[:len(values)]  # later records are other writers'
    expected = [(base + i, b"k%d" % i, v) for i, v in enumerate(values)]
    if found != expected:
        raise Divergence(C["kafka.fetch.records"], short(expected), short(found))


@case("kafka.fetch.records")
def test_fetch_from_the_middle_starts_there(target, shared_path):
    client, topic = shared_path
    first = client.append(topic, batch_of([b"a", b"b"]))
    second = client.append(topic, batch_of([b"c", b"d"]))
    if second < first + 2:  # others may write in between, never below: the offsets this case reads from are wrong
        raise Divergence(C["kafka.produce.base-offset"], f"a base offset of {first + 2} or more after a 2-record "
                         f"batch at {first}", f"BaseOffset {second}")
    middle = second + 1
    _, found = client.records_from(topic, middle)
    if [(offset, value) for offset, _, value in found][:1] != [(middle, b"d")]:
        raise Divergence(C["kafka.fetch.records"], f"records from offset {middle} (d)", short(found))


@case("kafka.fetch.high-watermark")
def test_high_watermark_is_the_next_offset(target, data_path):
    client, topic = data_path
    client.append(topic, batch_of([b"a", b"b", b"c"]))
    partition, _ = client.records_from(topic, 0, "kafka.fetch.high-watermark")
    if partition["HighWatermark"] != 3:
        raise Divergence(C["kafka.fetch.high-watermark"], "HighWatermark 3 after 3 records",
                         f"HighWatermark {partition['HighWatermark']}")


@case("kafka.fetch.log-start-offset")
def test_produce_and_fetch_report_the_log_start(target, data_path):
    clause = "kafka.fetch.log-start-offset"
    client, topic = data_path
    client.version(1, NAMED_FETCH_MAX, low=5)  # the field is v5+: an older Fetch leaves the clause UNIMPLEMENTED
    produced = expect_produced(client.produce(topic, batch_of([b"a", b"b"]), clause_id=clause,
                                              version=client.version(0, NAMED_PRODUCE_MAX, low=5)), clause)
    # the log start as ListOffsets earliest reports it (0 for a fresh topic unless records were deleted)
    earliest = client.list_offset(topic, -2)["Offset"]
    fetched = client.fetch(topic, 0, clause_id=clause)
    expect_code(fetched, clause, errors.NONE)
    for api, answer in (("Produce", produced), ("Fetch", fetched)):
        if answer["LogStartOffset"] != earliest:
            raise Divergence(C[clause], f"{api} LogStartOffset {earliest} (ListOffsets earliest)",
                             f"LogStartOffset {answer['LogStartOffset']}")


@case("kafka.fetch.out-of-range")
def test_fetch_beyond_the_end_is_out_of_range(target, shared_path):
    client, topic = shared_path
    beyond = client.append(topic, batch_of([b"a"])) + 1_000_000  # far past anything other writers add meanwhile
    expect_code(client.fetch(topic, beyond, clause_id="kafka.fetch.out-of-range"), "kafka.fetch.out-of-range",
                errors.OFFSET_OUT_OF_RANGE)


@case("kafka.list-offsets.earliest-latest")
def test_list_offsets_earliest_and_latest(target, data_path):
    client, topic = data_path
    client.append(topic, batch_of([b"a", b"b", b"c", b"d"]))
    earliest, latest = client.list_offset(topic, -2), client.list_offset(topic, -1)
    for partition in (earliest, latest):
        expect_code(partition, "kafka.list-offsets.earliest-latest", errors.NONE)
    if (earliest["Offset"], latest["Offset"]) != (0, 4):
        raise Divergence(C["kafka.list-offsets.earliest-latest"], "earliest 0, latest 4",
                         f"earliest {earliest['Offset']}, latest {latest['Offset']}")


@case("kafka.produce.crc-mismatch")
@pytest.mark.parametrize("how", ["crc-field", "payload"])
def test_corrupt_batch_gets_corrupt_message(target, data_path, how):
    client, topic = data_path
    good = batch_of([b"x", b"y"])
    mutation = kafka_strategies.corrupt_crc(good) if how == "crc-field" else kafka_strategies.corrupt_payload(good)
    expect_code(client.produce(topic, mutation.batch, clause_id="kafka.produce.crc-mismatch"),
                "kafka.produce.crc-mismatch", errors.CORRUPT_MESSAGE)
    # nothing stored, and the connection still works
    expect_produced(client.produce(topic, good, clause_id="kafka.produce.crc-mismatch"), "kafka.produce.crc-mismatch")
    _, found = client.records_from(topic, 0, "kafka.produce.crc-mismatch")
    if [value for _, _, value in found] != [b"x", b"y"]:
        raise Divergence(C["kafka.produce.crc-mismatch"], "only the good batch stored", short(found))


@case("kafka.produce.invalid-record")
@pytest.mark.parametrize("magic", [0, 1, 3])
def test_wrong_magic_is_an_invalid_record(target, shared_path, magic):
    client, topic = shared_path
    mutation = kafka_strategies.wrong_magic(batch_of([b"x"]), magic)
    expect_code(client.produce(topic, mutation.batch, clause_id="kafka.produce.invalid-record"),
                "kafka.produce.invalid-record", errors.INVALID_RECORD, errors.CORRUPT_MESSAGE)


@case("kafka.produce.invalid-record")
def test_two_batches_in_one_partition_are_an_invalid_record(target, shared_path):
    client, topic = shared_path
    # two well-formed batches back to back: each alone would be stored
    two = batch_of([b"first"]) + batch_of([b"second"])
    expect_code(client.produce(topic, two, clause_id="kafka.produce.invalid-record"),
                "kafka.produce.invalid-record", errors.INVALID_RECORD, errors.CORRUPT_MESSAGE)


@case("kafka.produce.batch-length")
@pytest.mark.parametrize("delta", [-1, 1, 1000], ids=["short-by-1", "long-by-1", "long-by-1000"])
def test_lying_batch_length_is_rejected(target, shared_path, delta):
    clause = "kafka.produce.batch-length"
    client, topic = shared_path
    mutation = kafka_strategies.lying_batch_length(batch_of([b"x", b"y"]), delta)
    version = client.version(0, NAMED_PRODUCE_MAX, low=3)
    correlation_id = client.send(0, version, {"TransactionalId": None, "Acks": -1, "TimeoutMs": 5000, "TopicData": [
        {"Name": topic, "PartitionData": [{"Index": 0, "Records": mutation.batch}]}]})
    reply = client.session.recv()
    if reply.ended:
        return  # closing the connection is a permitted rejection
    answer = client.answer_of(client.frame_of(reply, clause, "a Produce response"), 0, version, correlation_id,
                              clause)
    expect_code(answer["Responses"][0]["PartitionResponses"][0], clause, errors.CORRUPT_MESSAGE,
                errors.INVALID_RECORD)


@case("kafka.fetch.unknown-topic")
@pytest.mark.parametrize("partition", [None, 1, 7, -1], ids=["unknown-topic", "partition-1", "partition-7", "-1"])
def test_fetch_of_unknown_topic_or_partition(target, partition):
    if partition is None:
        client, topic, partition = DataPath(target), target.unique("absent"), 0
    else:
        client, topic = one_partition_topic(target)
    expect_code(client.fetch(topic, 0, partition=partition, clause_id="kafka.fetch.unknown-topic"),
                "kafka.fetch.unknown-topic", errors.UNKNOWN_TOPIC_OR_PARTITION)


@case("kafka.list-offsets.unknown-topic")
@pytest.mark.parametrize("partition", [None, 1, 7, -1], ids=["unknown-topic", "partition-1", "partition-7", "-1"])
def test_list_offsets_of_unknown_topic_or_partition(target, partition):
    if partition is None:
        client, topic, partition = DataPath(target), target.unique("absent"), 0
    else:
        client, topic = one_partition_topic(target)
    expect_code(client.list_offset(topic, -1, partition=partition, clause_id="kafka.list-offsets.unknown-topic"),
                "kafka.list-offsets.unknown-topic", errors.UNKNOWN_TOPIC_OR_PARTITION)


@case("kafka.produce.unknown-topic")
def test_produce_to_unknown_topic(target):
    client = DataPath(target)
    expect_produced(client.produce(target.unique("absent"), batch_of([b"x"]), clause_id="kafka.produce.unknown-topic"),
                    "kafka.produce.unknown-topic", errors.UNKNOWN_TOPIC_OR_PARTITION)


@case("kafka.produce.invalid-acks")
@pytest.mark.parametrize("acks", [2, -2, 100])
def test_invalid_acks(target, shared_path, acks):
    client, topic = shared_path
    expect_produced(client.produce(topic, batch_of([b"x"]), acks=acks, clause_id="kafka.produce.invalid-acks"),
                    "kafka.produce.invalid-acks", errors.INVALID_REQUIRED_ACKS)


@case("kafka.produce.acks-zero")
def test_acks_zero_gets_no_response(target, shared_path):
    client, topic = shared_path
    value = target.unique("acks0").encode()
    # an acks=-1 batch first: the topic takes one (else BLOCKED), and the acks=0 record comes after its offset
    start = client.append(topic, batch_of([b"before-acks0"]))
    version = client.version(0, 12, low=3)
    produce_id = client.send(0, version, {"TransactionalId": None, "Acks": 0, "TimeoutMs": 5000, "TopicData": [
        {"Name": topic, "PartitionData": [{"Index": 0, "Records": batch_of([value])}]}]})
    probe_id = client.send(18, 0, {})
    reply = client.session.recv()
    if reply.is_frame and len(reply.frame) >= 8 and int.from_bytes(reply.frame[4:8], "big", signed=True) == produce_id:
        raise Divergence(C["kafka.produce.acks-zero"], "no response to the acks=0 Produce",
                         f"a response with its correlation id {produce_id}")
    if not reply.is_frame:
        raise Divergence(C["kafka.produce.acks-zero"], f"the ApiVersions answer ({probe_id})", str(reply))
    _, found = client.records_from(topic, start, "kafka.produce.acks-zero")
    if [stored for _, _, stored in found].count(value) != 1:
        raise Divergence(C["kafka.produce.acks-zero"], f"the acks=0 record ({value.decode()}) stored once",
                         short(found))


@case("kafka.produce.unknown-topic")
@pytest.mark.parametrize("partition", [1, 7, -1])
def test_produce_to_missing_partition(target, partition):
    client, topic = one_partition_topic(target)
    expect_produced(client.produce(topic, batch_of([b"x"]), partition=partition,
                                   clause_id="kafka.produce.unknown-topic"),
                    "kafka.produce.unknown-topic", errors.UNKNOWN_TOPIC_OR_PARTITION)


@case("kafka.produce.message-too-large")
def test_batch_above_max_message_bytes(target, data_path):
    # Kafka's default max.message.bytes is 1,048,588; a 1.5 MB batch is above it on a default topic (a fresh one:
    # an operator's topic may allow more).
    client, topic = data_path
    client.session.deadline = max(client.session.deadline, 10.0)
    big = batch_of([bytes(1_500_000)])
    expect_produced(client.produce(topic, big, clause_id="kafka.produce.message-too-large"),
                    "kafka.produce.message-too-large", errors.MESSAGE_TOO_LARGE, errors.RECORD_LIST_TOO_LARGE)


@case("kafka.fetch.immediate")
def test_fetch_without_waiting_returns_what_is_there(target, data_path):
    client, topic = data_path
    values = [b"now-%d" % i for i in range(3)]
    with target.precondition(f"3 records produced to {topic}"):
        base = client.append(topic, batch_of(values))
    answer = client.fetch(topic, base, clause_id="kafka.fetch.immediate", wait_ms=0)
    got = [value for _, _, value in client.records_in(answer, base, "kafka.fetch.immediate")]
    if got[:3] != values:
        raise Divergence(C["kafka.fetch.immediate"], f"the 3 records at once ({values})", short(got))


@case("kafka.fetch.unknown-session")
@pytest.mark.parametrize("session_id", [123456, -(2**31)], ids=["positive", "int32-min"])
def test_fetch_in_an_unknown_session(target, data_path, session_id):
    """An incremental fetch (epoch 1) in a session no broker handed out: the id is any int32 the client sent."""
    client, topic = data_path
    version = client.version(1, NAMED_FETCH_MAX, low=7)
    body = {"ReplicaId": -1, "MaxWaitMs": 0, "MinBytes": 0, "MaxBytes": 65536, "IsolationLevel": 0,
            "SessionId": session_id, "SessionEpoch": 1,
            "Topics": [{"Topic": topic, "Partitions": [{"Partition": 0, "FetchOffset": 0,
                                                        "PartitionMaxBytes": 65536}]}],
            "ForgottenTopicsData": []}
    answer = client.call(1, version, body, "kafka.fetch.unknown-session")
    expect("kafka.fetch.unknown-session", answer["ErrorCode"], errors.FETCH_SESSION_ID_NOT_FOUND)


@case("kafka.fetch.long-poll")
def test_fetch_waits_for_min_bytes(target, data_path):
    client, topic = data_path
    version = client.version(1, 12, low=4)
    wait_ms = 600
    body = {"ReplicaId": -1, "MaxWaitMs": wait_ms, "MinBytes": 1, "MaxBytes": 65536, "IsolationLevel": 0,
            "SessionId": 0, "SessionEpoch": -1,
            "Topics": [{"Topic": topic, "Partitions": [{"Partition": 0, "FetchOffset": 0,
                                                        "PartitionMaxBytes": 65536}]}]}
    started = time.monotonic()
    correlation_id = client.send(1, version, body)
    # The target is asked to wait wait_ms: give it that on top of the run's deadline.
    client.receive(1, version, correlation_id, "kafka.fetch.long-poll", deadline=target.deadline + wait_ms / 1000)
    waited = time.monotonic() - started
    if waited < wait_ms / 1000 * 0.8:
        raise Divergence(C["kafka.fetch.long-poll"], f"an answer after about {wait_ms} ms (nothing to read)",
                         f"an answer after {waited * 1000:.0f} ms")


@case("kafka.produce.zstd-version")
@pytest.mark.parametrize("version", [3, 4, 5, 6])
def test_zstd_below_produce_v7(target, shared_path, version):
    client, topic = shared_path
    client.require(0, version)
    partition = client.produce(topic, batch_of([b"z"], compression.ZSTD), version=version,
                               clause_id="kafka.produce.zstd-version")
    expect_produced(partition, "kafka.produce.zstd-version", errors.UNSUPPORTED_COMPRESSION_TYPE)
