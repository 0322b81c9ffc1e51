"""Kafka transactions on the reference broker (KIP-98): the coordinator's state machine, markers in the log,
and what read_committed consumers see (LSO, aborted transactions). Requests are encoded by kafka-python."""

from __future__ import annotations

import itertools
import time

import pytest
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import (AddOffsetsToTxnRequest, AddOffsetsToTxnResponse,
                                                 AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, EndTxnRequest,
                                                 EndTxnResponse, InitProducerIdRequest, InitProducerIdResponse,
                                                 TxnOffsetCommitRequest, TxnOffsetCommitResponse)
from kafka.record.default_records import DefaultRecordBatch

from tests.broker.test_kafka_data import batches_in
from tests.interop.kafka_support import InProcessBroker, Wire, record_batch

NONE, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING = 0, 47, 48, 49
INVALID_TRANSACTION_TIMEOUT = 50
UNKNOWN_TOPIC_OR_PARTITION, CONCURRENT_TRANSACTIONS, OPERATION_NOT_ATTEMPTED, PRODUCER_FENCED = 3, 51, 55, 90
_names = itertools.count()


@pytest.fixture(scope="module")
def broker():
    with InProcessBroker() as b:
        yield b


@pytest.fixture
def w(broker):
    with broker.wire() as wire:
        yield wire


def topic(w: Wire, partitions: int = 1) -> str:
    name = f"txn{next(_names)}"
    w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name, "num_partitions": partitions, "replication_factor": 1}], timeout_ms=1000)
    return name


def init(w: Wire, txn_id: str, producer_id: int = -1, epoch: int = -1, timeout_ms: int = 60000):
    r = w.call(InitProducerIdRequest, InitProducerIdResponse, 4, transactional_id=txn_id,
               transaction_timeout_ms=timeout_ms, producer_id=producer_id, producer_epoch=epoch)
    return r.error_code, r.producer_id, r.producer_epoch


def add_partitions(w: Wire, txn_id: str, pid: int, epoch: int, partitions: list[tuple[str, int]], version: int = 3):
    by_topic: dict[str, list[int]] = {}
    for name, index in partitions:
        by_topic.setdefault(name, []).append(index)
    r = w.call(AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, version, v3_and_below_transactional_id=txn_id,
               v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
               v3_and_below_topics=[{"name": n, "partitions": p} for n, p in by_topic.items()])
    return {(t.name, p.partition_index): p.partition_error_code
            for t in r.results_by_topic_v3_and_below for p in t.results_by_partition}


def end(w: Wire, txn_id: str, pid: int, epoch: int, commit: bool, version: int = 3) -> int:
    return w.call(EndTxnRequest, EndTxnResponse, version, transactional_id=txn_id, producer_id=pid,
                  producer_epoch=epoch, committed=commit).error_code


def produce(w: Wire, name: str, pid: int, epoch: int, seq: int, values: list[bytes], transactional: bool = True):
    data = record_batch(values, producer_id=pid, producer_epoch=epoch, base_sequence=seq, transactional=transactional)
    r = w.call(ProduceRequest, ProduceResponse, 9, transactional_id=None, acks=-1, timeout_ms=1000, topic_data=[
        {"name": name, "partition_data": [{"index": 0, "records": data}]}])
    p = r.responses[0].partition_responses[0]
    return p.error_code, p.base_offset


def fetch(w: Wire, name: str, offset: int = 0, isolation: int = 1):
    r = w.call(FetchRequest, FetchResponse, 12, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
               isolation_level=isolation, topics=[{"topic": name, "partitions": [
                   {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}]}])
    return r.responses[0].partitions[0]


def values(records: bytes) -> list[bytes]:
    """Data record values in order, control batches left out (what a read_uncommitted consumer keeps)."""
    out = []
    for _, data in batches_in(records):
        batch = DefaultRecordBatch(data)
        if not batch.is_control_batch:
            out += [record.value for record in batch]
    return out


def open_txn(w: Wire, name: str):
    txn_id = f"t-{name}"
    error, pid, epoch = init(w, txn_id)
    assert error == NONE
    assert add_partitions(w, txn_id, pid, epoch, [(name, 0)]) == {(name, 0): NONE}
    return txn_id, pid, epoch


def test_commit_makes_records_visible_to_read_committed_and_writes_a_commit_marker(w):
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    assert produce(w, name, pid, epoch, 0, [b"a", b"b"]) == (NONE, 0)
    pending = fetch(w, name)
    assert (pending.high_watermark, pending.last_stable_offset, pending.records or b"") == (2, 0, b"")
    assert values(fetch(w, name, isolation=0).records) == [b"a", b"b"]  # read_uncommitted sees them already
    assert end(w, txn_id, pid, epoch, commit=True) == NONE
    done = fetch(w, name)
    assert (done.high_watermark, done.last_stable_offset) == (3, 3)  # the marker takes offset 2
    assert values(done.records) == [b"a", b"b"] and done.aborted_transactions == []
    marker = DefaultRecordBatch(batches_in(done.records)[-1][1])
    assert marker.is_control_batch and marker.is_transactional and marker.producer_id == pid
    assert [r.key for r in marker] == [b"\x00\x00\x00\x01"]  # version 0, type 1: commit
    assert end(w, txn_id, pid, epoch, commit=True) == NONE  # a retried EndTxn of the same outcome
    assert end(w, txn_id, pid, epoch, commit=False) == INVALID_TXN_STATE


def test_abort_is_reported_in_aborted_transactions_and_the_lso_moves(w):
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    assert produce(w, name, pid, epoch, 0, [b"x"]) == (NONE, 0)
    assert end(w, txn_id, pid, epoch, commit=False) == NONE
    seen = fetch(w, name)
    assert seen.last_stable_offset == 2
    assert [(a.producer_id, a.first_offset) for a in seen.aborted_transactions] == [(pid, 0)]
    marker = DefaultRecordBatch(batches_in(seen.records)[-1][1])
    assert [r.key for r in marker] == [b"\x00\x00\x00\x00"]  # type 0: abort
    assert not fetch(w, name, isolation=0).aborted_transactions  # read_uncommitted: null (decoded as [])


def test_list_offsets_read_committed_answers_the_lso(w):
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    produce(w, name, pid, epoch, 0, [b"x", b"y"])

    def latest(isolation: int) -> int:
        r = w.call(ListOffsetsRequest, ListOffsetsResponse, 5, replica_id=-1, isolation_level=isolation, topics=[
            {"name": name, "partitions": [{"partition_index": 0, "timestamp": -1}]}])
        return r.topics[0].partitions[0].offset

    assert (latest(0), latest(1)) == (2, 0)
    end(w, txn_id, pid, epoch, commit=True)
    assert (latest(0), latest(1)) == (3, 3)


def test_new_epoch_fences_the_old_producer_and_aborts_its_transaction(w):
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    produce(w, name, pid, epoch, 0, [b"old"])
    assert init(w, txn_id) == (CONCURRENT_TRANSACTIONS, -1, -1)  # fenced and aborted: ask again
    assert init(w, txn_id) == (NONE, pid, epoch + 2)  # the fence bumped the epoch, the retry once more
    seen = fetch(w, name)
    assert [(a.producer_id, a.first_offset) for a in seen.aborted_transactions] == [(pid, 0)]
    assert end(w, txn_id, pid, epoch, commit=True) == PRODUCER_FENCED
    assert end(w, txn_id, pid, epoch, commit=True, version=1) == INVALID_PRODUCER_EPOCH  # older clients
    assert add_partitions(w, txn_id, pid, epoch, [(name, 0)]) == {(name, 0): PRODUCER_FENCED}
    assert produce(w, name, pid, epoch, 1, [b"zombie"])[0] == INVALID_PRODUCER_EPOCH
    assert init(w, txn_id, pid, epoch)[0] == PRODUCER_FENCED  # KIP-360: the old epoch named explicitly


def test_kip360_init_naming_the_current_epoch_aborts_and_answers_at_once(w):
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    produce(w, name, pid, epoch, 0, [b"old"])
    assert init(w, txn_id, pid, epoch) == (NONE, pid, epoch + 1)
    assert fetch(w, name).last_stable_offset == 2


def test_transaction_past_its_timeout_is_aborted_and_its_producer_fenced(w):
    name = topic(w)
    txn_id = f"t-{name}"
    error, pid, epoch = init(w, txn_id, timeout_ms=100)
    assert add_partitions(w, txn_id, pid, epoch, [(name, 0)]) == {(name, 0): NONE}
    assert produce(w, name, pid, epoch, 0, [b"late"]) == (NONE, 0)
    deadline = time.monotonic() + 5
    while fetch(w, name).last_stable_offset != 2:  # the abort marker takes offset 1
        assert time.monotonic() < deadline, "the timed-out transaction was never aborted"
        time.sleep(0.05)
    assert [(a.producer_id, a.first_offset) for a in fetch(w, name).aborted_transactions] == [(pid, 0)]
    assert end(w, txn_id, pid, epoch, commit=True) == PRODUCER_FENCED  # the abort bumped the epoch
    assert init(w, txn_id)[1:] == (pid, epoch + 2)


@pytest.mark.parametrize("timeout_ms", [0, -5, 900_001])
def test_a_transaction_timeout_out_of_range_is_refused(w, timeout_ms):
    assert init(w, f"bad-timeout-{timeout_ms}", timeout_ms=timeout_ms) == (INVALID_TRANSACTION_TIMEOUT, -1, -1)


def test_a_committed_transaction_is_not_timed_out(w):
    name = topic(w)
    txn_id = f"t-{name}"
    error, pid, epoch = init(w, txn_id, timeout_ms=100)
    assert add_partitions(w, txn_id, pid, epoch, [(name, 0)]) == {(name, 0): NONE}
    produce(w, name, pid, epoch, 0, [b"kept"])
    assert end(w, txn_id, pid, epoch, commit=True) == NONE
    time.sleep(0.3)  # past the timeout: nothing more may be written
    assert fetch(w, name).high_watermark == 2 and end(w, txn_id, pid, epoch, commit=True) == NONE


def test_out_of_order_calls_are_refused(w):
    name = topic(w)
    error, pid, epoch = init(w, f"t-{name}")
    assert end(w, f"t-{name}", pid, epoch, commit=True) == INVALID_TXN_STATE  # nothing begun
    assert produce(w, name, pid, epoch, 0, [b"a"])[0] == INVALID_TXN_STATE  # partition never added
    assert end(w, f"t-{name}", pid + 1, epoch, commit=True) == INVALID_PRODUCER_ID_MAPPING
    assert end(w, "never-initialised", pid, epoch, commit=True) == INVALID_PRODUCER_ID_MAPPING
    results = add_partitions(w, f"t-{name}", pid, epoch, [(name, 0), ("no-such-topic", 0)])
    assert results == {(name, 0): OPERATION_NOT_ATTEMPTED, ("no-such-topic", 0): UNKNOWN_TOPIC_OR_PARTITION}


def test_txn_offset_commit_is_applied_on_commit_only(w):
    name = topic(w)

    def committed(group: str) -> int:
        r = w.call(OffsetFetchRequest, OffsetFetchResponse, 5, group_id=group,
                   topics=[{"name": name, "partition_indexes": [0]}])
        return r.topics[0].partitions[0].committed_offset

    for commit in (True, False):
        group = f"g-{name}-{commit}"
        txn_id = f"t-{name}-{commit}"
        error, pid, epoch = init(w, txn_id)
        offsets = [{"name": name, "partitions": [{"partition_index": 0, "committed_offset": 42,
                                                   "committed_metadata": ""}]}]
        r = w.call(TxnOffsetCommitRequest, TxnOffsetCommitResponse, 2, transactional_id=txn_id, group_id=group,
                   producer_id=pid, producer_epoch=epoch, topics=offsets)
        assert r.topics[0].partitions[0].error_code == INVALID_TXN_STATE  # the group was not added yet
        r = w.call(AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, 2, transactional_id=txn_id, producer_id=pid,
                   producer_epoch=epoch, group_id=group)
        assert r.error_code == NONE
        r = w.call(TxnOffsetCommitRequest, TxnOffsetCommitResponse, 2, transactional_id=txn_id, group_id=group,
                   producer_id=pid, producer_epoch=epoch, topics=offsets)
        assert r.topics[0].partitions[0].error_code == NONE
        assert committed(group) == -1  # pending until EndTxn
        assert end(w, txn_id, pid, epoch, commit=commit) == NONE
        assert committed(group) == (42 if commit else -1)


def test_transaction_coordinator_is_found_with_key_type_1(w):
    r = w.call(FindCoordinatorRequest, FindCoordinatorResponse, 4, key_type=1, coordinator_keys=["some-txn"])
    assert [(c.key, c.error_code) for c in r.coordinators] == [("some-txn", NONE)]
