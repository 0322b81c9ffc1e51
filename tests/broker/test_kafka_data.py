"""Kafka personality: topics, produce/fetch round trips, validation errors, long polling, idempotent producers."""

from __future__ import annotations

import itertools
import struct
import time

import crc32c
import pytest
from kafka.protocol.admin.topics import (CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest,
                                         DeleteTopicsResponse)
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import InitProducerIdRequest, InitProducerIdResponse

from tests.interop.kafka_support import InProcessBroker, Wire, record_batch

_names = itertools.count()


@pytest.fixture(scope="module")
def broker():
    with InProcessBroker(max_message_bytes=64 * 1024) as b:
        yield b


@pytest.fixture
def wire(broker):
    with broker.wire() as w:
        yield w


def new_topic(w: Wire, partitions: int = 1) -> str:
    name = f"t{next(_names)}"
    resp = w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name, "num_partitions": partitions, "replication_factor": 1}], timeout_ms=1000)
    assert resp.topics[0].error_code == 0
    return name


def produce(w: Wire, topic: str, records: bytes, partition: int = 0, acks: int = -1, version: int = 9):
    resp = w.call(ProduceRequest, ProduceResponse, version, acks=acks, timeout_ms=1000, topic_data=[
        {"name": topic, "partition_data": [{"index": partition, "records": records}]}])
    return resp.responses[0].partition_responses[0]


def fetch(w: Wire, topic: str, offset: int, partition: int = 0, version: int = 12, max_wait_ms: int = 0,
          min_bytes: int = 1, max_bytes: int = 1 << 20, partition_max_bytes: int = 1 << 20):
    resp = w.call(FetchRequest, FetchResponse, version, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                  max_bytes=max_bytes, topics=[{"topic": topic, "partitions": [
                      {"partition": partition, "fetch_offset": offset, "partition_max_bytes": partition_max_bytes}]}])
    return resp.responses[0].partitions[0]


def batches_in(data: bytes) -> list[tuple[int, bytes]]:
    """(base offset, batch bytes) of each whole batch in a fetched records blob."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        out.append((base, data[pos:pos + 12 + length]))
        pos += 12 + length
    assert pos == len(data), "partial batch in a fetch response"
    return out


def test_produce_fetch_round_trip_keeps_batches_as_sent(wire):
    topic = new_topic(wire)
    first, second = record_batch([b"a", b"b", b"c"]), record_batch([b"d", b"e"])
    assert (produce(wire, topic, first).error_code, produce(wire, topic, first).base_offset) == (0, 3)
    assert produce(wire, topic, second).base_offset == 6
    part = fetch(wire, topic, 0)
    assert part.error_code == 0 and part.high_watermark == 8 and part.last_stable_offset == 8
    stored = batches_in(part.records)
    assert [base for base, _ in stored] == [0, 3, 6]
    for (base, got), sent in zip(stored, [first, first, second]):
        assert got[:8] == struct.pack(">q", base)
        assert got[12:16] == struct.pack(">i", 0)  # partitionLeaderEpoch
        assert got[16:] == sent[16:]  # magic, CRC and records untouched
        assert crc32c.crc32c(got[21:]) == struct.unpack_from(">I", got, 17)[0]


def test_fetch_from_the_middle_of_a_batch_returns_that_whole_batch(wire):
    topic = new_topic(wire)
    produce(wire, topic, record_batch([b"a", b"b", b"c"]))
    produce(wire, topic, record_batch([b"d"]))
    assert [b for b, _ in batches_in(fetch(wire, topic, 1).records)] == [0, 3]
    assert [b for b, _ in batches_in(fetch(wire, topic, 3).records)] == [3]


def test_fetch_at_hw_is_empty_and_beyond_is_out_of_range(wire):
    topic = new_topic(wire)
    produce(wire, topic, record_batch([b"a"]))
    at_hw = fetch(wire, topic, 1)
    assert (at_hw.error_code, at_hw.records) == (0, b"")
    assert fetch(wire, topic, 2).error_code == 1
    assert fetch(wire, topic, -1).error_code == 1


def test_unknown_topic_and_partition_are_error_3(wire):
    topic = new_topic(wire)
    assert produce(wire, topic, record_batch([b"a"]), partition=1).error_code == 3
    assert produce(wire, "no-such-topic", record_batch([b"a"])).error_code == 3
    assert fetch(wire, topic, 0, partition=5).error_code == 3
    assert fetch(wire, "no-such-topic", 0).error_code == 3
    meta = wire.call(MetadataRequest, MetadataResponse, 1, topics=[])
    assert "no-such-topic" not in {t.name for t in meta.topics}  # produce never auto-creates


def test_fetch_by_topic_id(wire):
    topic = new_topic(wire)
    produce(wire, topic, record_batch([b"a"]))
    meta = wire.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": topic}])
    topic_id = meta.topics[0].topic_id
    resp = wire.call(FetchRequest, FetchResponse, 13, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, topics=[
        {"topic_id": topic_id, "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}])
    assert resp.responses[0].partitions[0].high_watermark == 1
    import uuid
    resp = wire.call(FetchRequest, FetchResponse, 13, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, topics=[
        {"topic_id": uuid.uuid4(), "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1}]}])
    assert resp.responses[0].partitions[0].error_code == 100


def test_bad_crc_is_corrupt_message_and_nothing_is_stored(wire):
    topic = new_topic(wire)
    batch = bytearray(record_batch([b"payload"]))
    batch[-3] ^= 0xFF
    assert produce(wire, topic, bytes(batch)).error_code == 2
    assert fetch(wire, topic, 0).high_watermark == 0


def test_too_large_invalid_and_bad_acks(wire):
    topic = new_topic(wire)
    assert produce(wire, topic, record_batch([b"x" * 70_000])).error_code == 10
    old_magic = bytearray(record_batch([b"a"]))
    old_magic[16] = 1
    assert produce(wire, topic, bytes(old_magic)).error_code == 87
    assert produce(wire, topic, record_batch([b"a"]) + record_batch([b"b"])).error_code == 87
    assert produce(wire, topic, record_batch([b"a"]), acks=5).error_code == 21
    assert fetch(wire, topic, 0).high_watermark == 0


def test_produce_v0_to_v2_answer_in_their_own_layout(wire):
    topic = new_topic(wire)
    for version in (0, 1, 2):
        assert produce(wire, topic, record_batch([b"a"]), version=version).error_code == 0
    assert fetch(wire, topic, 0).high_watermark == 3


def test_acks_zero_gets_no_response_and_errors_close(broker):
    with broker.wire() as w:
        topic = new_topic(w)
        req = ProduceRequest(version=9, acks=0, timeout_ms=100, topic_data=[
            ProduceRequest.TopicProduceData(name=topic, partition_data=[
                ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=record_batch([b"a"]))])])
        w.send(req)
        w.expect_silence(0.3)
        assert fetch(w, topic, 0).high_watermark == 1
        bad = ProduceRequest(version=9, acks=0, timeout_ms=100, topic_data=[
            ProduceRequest.TopicProduceData(name="missing-topic", partition_data=[
                ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=record_batch([b"a"]))])])
        w.send(bad)
        w.expect_closed()


def test_long_poll_waits_for_max_wait_and_wakes_on_produce(broker):
    with broker.wire() as w, broker.wire() as producer:
        topic = new_topic(w)
        start = time.monotonic()
        assert fetch(w, topic, 0, max_wait_ms=400).records == b""
        assert time.monotonic() - start >= 0.35
        w.send(FetchRequest(version=12, max_wait_ms=4000, min_bytes=1, max_bytes=1 << 20, topics=[
            FetchRequest.FetchTopic(topic=topic, partitions=[FetchRequest.FetchTopic.FetchPartition(
                partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]))
        time.sleep(0.2)
        start = time.monotonic()
        produce(producer, topic, record_batch([b"wake"]))
        resp = w.recv(FetchResponse, 12)
        assert time.monotonic() - start < 2.0
        assert len(batches_in(resp.responses[0].partitions[0].records)) == 1


def test_max_bytes_returns_whole_batches_and_at_least_one(wire):
    topic = new_topic(wire)
    for _ in range(3):
        produce(wire, topic, record_batch([b"x" * 1000]))
    one = fetch(wire, topic, 0, max_bytes=10, partition_max_bytes=10)
    assert len(batches_in(one.records)) == 1  # KIP-74: the first batch even if larger than the limit
    two = fetch(wire, topic, 0, max_bytes=2500)
    assert len(batches_in(two.records)) == 2


def test_list_offsets_earliest_latest_and_by_timestamp(wire):
    topic = new_topic(wire)
    produce(wire, topic, record_batch([b"a", b"b"], timestamps=[1000, 2000]))
    produce(wire, topic, record_batch([b"c"], timestamps=[3000]))

    def lookup(ts, version=7):
        resp = wire.call(ListOffsetsRequest, ListOffsetsResponse, version, replica_id=-1, topics=[
            {"name": topic, "partitions": [{"partition_index": 0, "timestamp": ts}]}])
        p = resp.topics[0].partitions[0]
        return p.error_code, p.offset

    assert lookup(-1) == (0, 3)
    assert lookup(-2) == (0, 0)
    assert lookup(1500) == (0, 1)
    assert lookup(2500) == (0, 2)
    assert lookup(9999) == (0, -1)
    assert lookup(-3) == (0, 2)
    assert lookup(-1, version=1) == (0, 3)


def test_create_topic_errors(wire):
    def create(name, partitions=1, rf=1, version=7):
        resp = wire.call(CreateTopicsRequest, CreateTopicsResponse, version, topics=[
            {"name": name, "num_partitions": partitions, "replication_factor": rf}], timeout_ms=1000)
        return resp.topics[0].error_code

    topic = new_topic(wire)
    assert create(topic) == 36
    assert create("bad name!") == 17
    assert create("x" * 250) == 17
    assert create("zero-partitions", partitions=0) == 37
    assert create("three-replicas", rf=3) == 38
    assert create("defaults", partitions=-1, rf=-1) == 0


def test_delete_topic(wire):
    topic = new_topic(wire)
    resp = wire.call(DeleteTopicsRequest, DeleteTopicsResponse, 5, topic_names=[topic, "never-there"],
                     timeout_ms=1000)
    assert [r.error_code for r in resp.responses] == [0, 3]
    assert produce(wire, topic, record_batch([b"a"])).error_code == 3


def test_metadata_topic_selection_and_auto_create(wire):
    topic = new_topic(wire, partitions=4)
    none = wire.call(MetadataRequest, MetadataResponse, 1, topics=[])
    assert none.topics == []
    everything = wire.call(MetadataRequest, MetadataResponse, 1, topics=None)
    assert topic in {t.name for t in everything.topics}
    one = wire.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": topic}])
    assert [len(t.partitions) for t in one.topics] == [4]
    fresh = f"auto{next(_names)}"
    no_create = wire.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": fresh}],
                          allow_auto_topic_creation=False)
    assert no_create.topics[0].error_code == 3
    created = wire.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": fresh}])
    # UNKNOWN_TOPIC_OR_PARTITION while the auto-created topic is being created, as Kafka 4 answers
    # (DefaultAutoTopicCreationManager; variant metadata-auto-create-leader-not-available: Kafka 3's 5)
    assert created.topics[0].error_code == 3
    again = wire.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": fresh}])
    assert again.topics[0].error_code == 0 and len(again.topics[0].partitions) == 1
    invalid = wire.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": "no/slashes"}])
    assert invalid.topics[0].error_code == 17


def init_producer(w: Wire, producer_id: int = -1, epoch: int = -1, transactional_id: str | None = None):
    resp = w.call(InitProducerIdRequest, InitProducerIdResponse, 4, transactional_id=transactional_id,
                  transaction_timeout_ms=60000, producer_id=producer_id, producer_epoch=epoch)
    return resp.error_code, resp.producer_id, resp.producer_epoch


def test_init_producer_id(wire):
    error, pid, epoch = init_producer(wire)
    assert error == 0 and pid >= 0 and epoch == 0
    assert init_producer(wire, pid, epoch)[1:] != (pid, epoch)  # no transactional id: always a fresh id
    assert init_producer(wire, pid, -1)[0] == 42
    assert init_producer(wire, transactional_id="")[0] == 42
    txn = f"tx{next(_names)}"
    _, tpid, tepoch = init_producer(wire, transactional_id=txn)
    assert init_producer(wire, transactional_id=txn) == (0, tpid, tepoch + 1)
    assert init_producer(wire, tpid, tepoch + 1, transactional_id=txn) == (0, tpid, tepoch + 2)
    assert init_producer(wire, tpid, tepoch, transactional_id=txn)[0] == 90
    assert init_producer(wire, tpid + 1, tepoch + 2, transactional_id=txn)[0] == 49


def test_idempotent_sequences(wire):
    topic = new_topic(wire)
    error, pid, epoch = init_producer(wire)
    assert error == 0
    first = record_batch([b"a", b"b"], producer_id=pid, producer_epoch=epoch, base_sequence=0)
    assert (produce(wire, topic, first).error_code, produce(wire, topic, first).base_offset) == (0, 0)
    assert fetch(wire, topic, 0).high_watermark == 2  # the retry was recognised, not appended
    gap = record_batch([b"c"], producer_id=pid, producer_epoch=epoch, base_sequence=5)
    assert produce(wire, topic, gap).error_code == 45
    nxt = record_batch([b"c"], producer_id=pid, producer_epoch=epoch, base_sequence=2)
    assert (produce(wire, topic, nxt).error_code, fetch(wire, topic, 0).high_watermark) == (0, 3)
    assert produce(wire, topic, record_batch([b"x"], producer_id=pid + 999, producer_epoch=0,
                                             base_sequence=0)).error_code == 59


def test_producer_epochs(wire):
    topic = new_topic(wire)
    txn = f"tx{next(_names)}"
    _, pid, epoch = init_producer(wire, transactional_id=txn)
    assert produce(wire, topic, record_batch([b"a"], producer_id=pid, producer_epoch=epoch,
                                             base_sequence=0)).error_code == 0
    _, _, bumped = init_producer(wire, transactional_id=txn)
    stale = record_batch([b"b"], producer_id=pid, producer_epoch=epoch, base_sequence=1)
    assert produce(wire, topic, stale).error_code == 47
    new_epoch_gap = record_batch([b"b"], producer_id=pid, producer_epoch=bumped, base_sequence=3)
    assert produce(wire, topic, new_epoch_gap).error_code == 45
    new_epoch = record_batch([b"b"], producer_id=pid, producer_epoch=bumped, base_sequence=0)
    assert produce(wire, topic, new_epoch).error_code == 0


def test_retention_drops_whole_batches_and_moves_the_log_start():
    with InProcessBroker(retention_records=3) as b, b.wire() as w:
        topic = new_topic(w)
        for _ in range(4):
            produce(w, topic, record_batch([b"a", b"b"]))
        part = fetch(w, topic, 6)
        assert (part.log_start_offset, part.high_watermark) == (4, 8)  # 4 records kept: batches at 4 and 6
        assert fetch(w, topic, 1).error_code == 1
        assert [base for base, _ in batches_in(fetch(w, topic, 4).records)] == [4, 6]


@pytest.mark.parametrize("codec", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches_are_stored_as_sent_and_indexed_by_timestamp(wire, codec):
    topic = new_topic(wire)
    sent = record_batch([b"a" * 100, b"b" * 100, b"c" * 100], compression=codec, timestamps=[10, 20, 30])
    assert produce(wire, topic, sent).error_code == 0
    (base, got), = batches_in(fetch(wire, topic, 0).records)
    assert got[16:] == sent[16:]
    resp = wire.call(ListOffsetsRequest, ListOffsetsResponse, 7, replica_id=-1, topics=[
        {"name": topic, "partitions": [{"partition_index": 0, "timestamp": 15}]}])
    assert resp.topics[0].partitions[0].offset == 1


def test_zstd_needs_produce_v7_and_transactions_are_refused(wire):
    topic = new_topic(wire)
    assert produce(wire, topic, record_batch([b"a" * 1000], compression=4), version=6).error_code == 76
    txn = bytearray(record_batch([b"a"]))
    txn[22] |= 0x10  # attributes: transactional (the CRC covers it: recompute)
    txn[17:21] = struct.pack(">I", crc32c.crc32c(bytes(txn[21:])))
    assert produce(wire, topic, bytes(txn)).error_code == 48


def test_record_blob_framing_follows_kafkas_batch_iterator(wire):
    topic = new_topic(wire)
    good = record_batch([b"a"])
    assert produce(wire, topic, b"").error_code == 87  # no batch
    assert produce(wire, topic, good[:-1]).error_code == 87  # incomplete: not a batch
    assert produce(wire, topic, good[:8] + struct.pack(">i", 5) + good[12:]).error_code == 2  # size < 14
    assert produce(wire, topic, good + good[:20]).error_code == 0  # a partial trailing batch is trimmed
    assert batches_in(fetch(wire, topic, 0).records)[0][1][16:] == good[16:]


def test_many_partitions(wire):
    topic = new_topic(wire, partitions=500)
    meta = wire.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": topic}])
    assert [p.partition_index for p in meta.topics[0].partitions] == list(range(500))
    assert produce(wire, topic, record_batch([b"last"]), partition=499).error_code == 0
    assert fetch(wire, topic, 0, partition=499).high_watermark == 1
    assert fetch(wire, topic, 0, partition=498).high_watermark == 0
    resp = wire.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": topic + "-huge", "num_partitions": 2_000_000_000, "replication_factor": 1}], timeout_ms=1000)
    assert resp.topics[0].error_code == 37  # refused, not allocated


def test_log_append_time_topic_stamps_batches_and_recomputes_the_crc(wire):
    name = f"lat{next(_names)}"
    resp = wire.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name, "num_partitions": 1, "replication_factor": 1,
         "configs": [{"name": "message.timestamp.type", "value": "LogAppendTime"}]}], timeout_ms=1000)
    assert resp.topics[0].error_code == 0
    before = int(time.time() * 1000)
    sent = record_batch([b"a", b"b"], timestamps=[5, 6])
    result = produce(wire, name, sent)
    assert result.error_code == 0 and result.log_append_time_ms >= before
    (_, stored), = batches_in(fetch(wire, name, 0).records)
    attributes, = struct.unpack_from(">h", stored, 21)
    assert attributes & 0x08 and struct.unpack_from(">q", stored, 35)[0] == result.log_append_time_ms
    stored_crc, sent_crc = struct.unpack_from(">I", stored, 17)[0], struct.unpack_from(">I", sent, 17)[0]
    assert stored_crc == crc32c.crc32c(stored[21:]) != sent_crc
    bad = wire.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name + "x", "num_partitions": 1, "replication_factor": 1,
         "configs": [{"name": "message.timestamp.type", "value": "Sometimes"}]}], timeout_ms=1000)
    assert bad.topics[0].error_code == 40


def test_partition_budget_bounds_create_and_auto_create(monkeypatch):
    from wirecheck.broker.kafka import storage

    monkeypatch.setattr(storage, "MAX_TOTAL_PARTITIONS", 10)
    with InProcessBroker() as b, b.wire() as w:
        new_topic(w, partitions=9)
        resp = w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
            {"name": "two-more", "num_partitions": 2, "replication_factor": 1}], timeout_ms=1000)
        assert resp.topics[0].error_code == 37
        assert w.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": "auto-one"}]).topics[0].error_code == 3
        assert w.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": "auto-one"}]).topics[0].error_code == 0
        assert w.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": "auto-two"}]).topics[0].error_code == 3


def test_an_operators_topics_exist_and_topic_administration_can_be_denied():
    """--kafka-topics provisions topics at start; --no-kafka-topic-admin answers CreateTopics, DeleteTopics and
    CreatePartitions with TOPIC_AUTHORIZATION_FAILED (29), as ACLs would, and changes nothing."""
    from kafka.protocol.admin import CreatePartitionsRequest, CreatePartitionsResponse

    with InProcessBroker(topics={"orders": 3, "events": 1}, topic_admin=False, auto_create=False) as broker:
        with broker.wire() as w:
            meta = w.call(MetadataRequest, MetadataResponse, 1, topics=None)
            assert {t.name: len(t.partitions) for t in meta.topics} == {"orders": 3, "events": 1}
            created = w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
                {"name": "mine", "num_partitions": 1, "replication_factor": 1}], timeout_ms=1000)
            assert created.topics[0].error_code == 29
            deleted = w.call(DeleteTopicsRequest, DeleteTopicsResponse, 5, topic_names=["orders"], timeout_ms=1000)
            assert [r.error_code for r in deleted.responses] == [29]
            grown = w.call(CreatePartitionsRequest, CreatePartitionsResponse, 1, topics=[
                {"name": "events", "count": 2, "assignments": None}], timeout_ms=1000, validate_only=False)
            assert grown.results[0].error_code == 29
            after = w.call(MetadataRequest, MetadataResponse, 1, topics=None)
            assert {t.name: len(t.partitions) for t in after.topics} == {"orders": 3, "events": 1}
            assert produce(w, "orders", record_batch([b"a"]), partition=2).error_code == 0
