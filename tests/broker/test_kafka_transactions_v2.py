"""Transaction protocol version 2 (KIP-890 part 2) on the reference broker: Produce v12 and TxnOffsetCommit v5 add
to the transaction themselves, EndTxn v5 bumps the epoch (answering it) and the markers carry it; older versions
keep version-1 rules. Requests are encoded by kafka-python."""

from __future__ import annotations

from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import (EndTxnRequest, EndTxnResponse, TxnOffsetCommitRequest,
                                                 TxnOffsetCommitResponse)
from kafka.record.default_records import DefaultRecordBatch

from tests.broker.test_kafka_data import batches_in
from tests.broker.test_kafka_transactions import (INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, NONE, PRODUCER_FENCED,
                                                  add_partitions, broker, end, fetch, init, topic, values, w)
from tests.interop.kafka_support import Wire, record_batch
from wirecheck.protocols.kafka import errors
from wirecheck.broker.kafka import transactions_v2

__all__ = ["broker", "w"]  # the fixtures, shared with the version-1 tests


def produce(w: Wire, name: str, pid: int, epoch: int, seq: int, data: list[bytes], version: int = 12) -> int:
    batch = record_batch(data, producer_id=pid, producer_epoch=epoch, base_sequence=seq, transactional=True)
    r = w.call(ProduceRequest, ProduceResponse, version, transactional_id=None, acks=-1, timeout_ms=1000,
               topic_data=[{"name": name, "partition_data": [{"index": 0, "records": batch}]}])
    return r.responses[0].partition_responses[0].error_code


def end_v5(w: Wire, txn_id: str, pid: int, epoch: int, commit: bool) -> tuple[int, int, int]:
    r = w.call(EndTxnRequest, EndTxnResponse, 5, transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
               committed=commit)
    return r.error_code, r.producer_id, r.producer_epoch


def offsets_v5(w: Wire, txn_id: str, group: str, pid: int, epoch: int, name: str, offset: int = 7) -> int:
    """TxnOffsetCommit v5 of ``offset`` for partition 0 of ``name``; its error code."""
    r = w.call(TxnOffsetCommitRequest, TxnOffsetCommitResponse, 5, transactional_id=txn_id, group_id=group,
               producer_id=pid, producer_epoch=epoch, generation_id=-1, member_id="", group_instance_id=None,
               topics=[{"name": name, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                      "committed_leader_epoch": -1, "committed_metadata": ""}]}])
    return r.topics[0].partitions[0].error_code


def markers(w: Wire, name: str) -> list[tuple[int, int]]:
    """(producer id, epoch) of each control batch of partition 0."""
    out = []
    for _, data in batches_in(fetch(w, name, isolation=0).records):
        batch = DefaultRecordBatch(data)
        if batch.is_control_batch:
            out.append((batch.producer_id, batch.producer_epoch))
    return out


def test_produce_v12_adds_the_partition_and_end_v5_bumps_the_epoch(w):
    name = topic(w)
    txn_id = f"t-{name}"
    _, pid, epoch = init(w, txn_id)
    assert produce(w, name, pid, epoch, 0, [b"a", b"b"]) == NONE  # no AddPartitionsToTxn
    assert fetch(w, name).last_stable_offset == 0  # open
    assert end_v5(w, txn_id, pid, epoch, commit=True) == (NONE, pid, epoch + 1)
    assert markers(w, name) == [(pid, epoch + 1)]  # written at the new epoch
    assert values(fetch(w, name).records) == [b"a", b"b"] and fetch(w, name).last_stable_offset == 3
    assert produce(w, name, pid, epoch, 2, [b"late"]) == INVALID_PRODUCER_EPOCH  # the old epoch is fenced
    assert produce(w, name, pid, epoch + 1, 0, [b"next"]) == NONE  # the next transaction, sequence 0
    assert end_v5(w, txn_id, pid, epoch + 1, commit=False) == (NONE, pid, epoch + 2)
    assert markers(w, name) == [(pid, epoch + 1), (pid, epoch + 2)]
    assert [a.producer_id for a in fetch(w, name).aborted_transactions] == [pid]


def test_end_v5_retry_is_answered_again_and_the_other_outcome_refused(w):
    name = topic(w)
    txn_id = f"t-{name}"
    _, pid, epoch = init(w, txn_id)
    assert produce(w, name, pid, epoch, 0, [b"x"]) == NONE
    assert end_v5(w, txn_id, pid, epoch, commit=True) == (NONE, pid, epoch + 1)
    assert end_v5(w, txn_id, pid, epoch, commit=True) == (NONE, pid, epoch + 1)  # the lost answer, again
    assert end_v5(w, txn_id, pid, epoch, commit=False)[0] == INVALID_TXN_STATE
    assert end_v5(w, txn_id, pid, epoch + 1, commit=True)[0] == INVALID_TXN_STATE  # nothing ongoing
    assert produce(w, name, pid, epoch + 1, 0, [b"y"]) == NONE
    assert end_v5(w, txn_id, pid, epoch, commit=True)[0] == PRODUCER_FENCED  # a transaction is ongoing again


def test_older_versions_keep_version_1_rules(w):
    name = topic(w)
    txn_id = f"t-{name}"
    _, pid, epoch = init(w, txn_id)
    assert produce(w, name, pid, epoch, 0, [b"a"], version=10) == INVALID_TXN_STATE  # KIP-890 part 1
    # v11 adds TRANSACTION_ABORTABLE (ProduceRequest.json), which Kafka answers there (KafkaApis.handleProduceRequest)
    assert produce(w, name, pid, epoch, 0, [b"a"], version=11) == errors.TRANSACTION_ABORTABLE
    assert add_partitions(w, txn_id, pid, epoch, [(name, 0)]) == {(name, 0): NONE}
    assert produce(w, name, pid, epoch, 0, [b"a"], version=11) == NONE
    assert end(w, txn_id, pid, epoch, commit=True, version=4) == NONE
    assert add_partitions(w, txn_id, pid, epoch, [(name, 0)]) == {(name, 0): NONE}  # same epoch goes on


def test_txn_offset_commit_v5_adds_the_group(w):
    name = topic(w)
    txn_id, group = f"t-{name}", f"g-{name}"
    _, pid, epoch = init(w, txn_id)
    assert offsets_v5(w, txn_id, group, pid, epoch, name) == NONE  # no AddOffsetsToTxn
    assert end_v5(w, txn_id, pid, epoch, commit=True) == (NONE, pid, epoch + 1)
    r = w.call(OffsetFetchRequest, OffsetFetchResponse, 5, group_id=group,
               topics=[{"name": name, "partition_indexes": [0]}])
    assert r.topics[0].partitions[0].committed_offset == 7


def test_an_exhausted_epoch_rotates_the_producer_id(w, broker):
    name = topic(w)
    txn_id = f"t-{name}"
    pid = init(w, txn_id)[1]
    txns = broker.personality.broker.transactions  # 32766 bumps on the wire would take minutes
    txn = txns.by_id[txn_id]
    txn.epoch = txns.producers.epochs[pid] = transactions_v2.EXHAUSTED_EPOCH
    assert produce(w, name, pid, txn.epoch, 0, [b"z"]) == NONE
    error, new_pid, new_epoch = end_v5(w, txn_id, pid, transactions_v2.EXHAUSTED_EPOCH, commit=True)
    assert (error, new_epoch) == (NONE, 0) and new_pid != pid
    assert markers(w, name) == [(pid, 0x7FFF)]
    assert produce(w, name, new_pid, 0, 0, [b"after"]) == NONE


def test_an_implicit_add_and_the_bumped_epoch_survive_a_restart(tmp_path):
    from tests.interop.kafka_support import InProcessBroker

    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        name = topic(w)
        txn_id = f"t-{name}"
        _, pid, epoch = init(w, txn_id)
        assert produce(w, name, pid, epoch, 0, [b"a"]) == NONE  # the partition added by the Produce
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert fetch(w, name).last_stable_offset == 0  # still open, the partition still in the transaction
        assert end_v5(w, txn_id, pid, epoch, commit=True) == (NONE, pid, epoch + 1)
        assert fetch(w, name).last_stable_offset == 2
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert produce(w, name, pid, epoch, 1, [b"late"]) == INVALID_PRODUCER_EPOCH  # the bump was saved
        assert produce(w, name, pid, epoch + 1, 0, [b"next"]) == NONE
