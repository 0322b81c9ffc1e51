"""Kafka personality with --data-dir: topics, batches, committed offsets and transaction state survive a restart;
a torn tail is cut off."""

from __future__ import annotations

from kafka.protocol.admin.topics import DeleteTopicsRequest, DeleteTopicsResponse
from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, \
    OffsetFetchResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from wirecheck.broker.batchlog import BatchCache, BatchLog

from tests.broker.test_kafka_data import batches_in, fetch, new_topic, produce
from tests.interop.kafka_support import InProcessBroker, record_batch


def test_batches_and_topics_survive_a_restart(tmp_path):
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w, partitions=2)
        produce(w, topic, record_batch([b"a", b"b"]))
        produce(w, topic, record_batch([b"c"]), partition=1)
        before = fetch(w, topic, 0).records
        topic_id = w.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": topic}]).topics[0].topic_id
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert fetch(w, topic, 0).records == before
        assert fetch(w, topic, 0, partition=1).high_watermark == 1
        assert produce(w, topic, record_batch([b"d"])).base_offset == 2
        meta = w.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": topic}])
        assert meta.topics[0].topic_id == topic_id and len(meta.topics[0].partitions) == 2


def test_torn_tail_is_truncated_on_recovery(tmp_path):
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w)
        produce(w, topic, record_batch([b"kept"]))
        produce(w, topic, record_batch([b"torn"]))
    (log_file,) = (tmp_path / "kafka" / "partitions").iterdir()
    data = log_file.read_bytes()
    log_file.write_bytes(data[:-5])  # a crash in the middle of the second batch
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        part = fetch(w, topic, 0)
        assert part.high_watermark == 1 and len(batches_in(part.records)) == 1
        assert produce(w, topic, record_batch([b"next"])).base_offset == 1
    reopened = BatchLog(log_file, BatchCache(1 << 20), fsync=False)
    assert list(reopened.bases) == [0, 1] and reopened.truncated == 0  # torn bytes gone from the file
    reopened.close()


def test_deleted_topics_stay_deleted(tmp_path):
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w)
        produce(w, topic, record_batch([b"a"]))
        w.call(DeleteTopicsRequest, DeleteTopicsResponse, 5, topic_names=[topic], timeout_ms=1000)
    assert list((tmp_path / "kafka" / "partitions").iterdir()) == []
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert produce(w, topic, record_batch([b"a"])).error_code == 3


# -- coordinator state (coordinator_state.py): offsets, transactions, producer ids -------------------------------


def test_committed_offsets_survive_a_restart(tmp_path):
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w)
        r = w.call(OffsetCommitRequest, OffsetCommitResponse, 3, group_id="durable", generation_id_or_member_epoch=-1,
                   member_id="", topics=[{"name": topic, "partitions": [
                       {"partition_index": 0, "committed_offset": 7, "committed_metadata": "m"}]}])
        assert r.topics[0].partitions[0].error_code == 0
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        got = w.call(OffsetFetchRequest, OffsetFetchResponse, 3, group_id="durable",
                     topics=[{"name": topic, "partition_indexes": [0]}]).topics[0].partitions[0]
        assert (got.committed_offset, got.metadata) == (7, "m")


def test_an_open_transaction_survives_a_restart_and_commits(tmp_path):
    from tests.broker.test_kafka_transactions import end, fetch as fetch_txn, open_txn, produce as produce_txn

    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w)
        txn_id, pid, epoch = open_txn(w, topic)
        assert produce_txn(w, topic, pid, epoch, 0, [b"a"]) == (0, 0)
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert fetch_txn(w, topic).last_stable_offset == 0  # still open
        assert produce_txn(w, topic, pid, epoch, 0, [b"a"]) == (0, 0)  # a retry: the sequence was rebuilt
        assert produce_txn(w, topic, pid, epoch, 1, [b"b"]) == (0, 1)
        assert end(w, txn_id, pid, epoch, commit=True) == 0
        assert fetch_txn(w, topic).last_stable_offset == 3


def test_reinitialising_after_a_restart_aborts_and_fences(tmp_path):
    from tests.broker.test_kafka_transactions import (PRODUCER_FENCED, end, fetch as fetch_txn, init, open_txn,
                                                      produce as produce_txn)

    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w)
        txn_id, pid, epoch = open_txn(w, topic)
        produce_txn(w, topic, pid, epoch, 0, [b"lost"])
        error, other_pid, _ = init(w, f"other-{topic}")
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert init(w, txn_id) == (51, -1, -1)  # CONCURRENT_TRANSACTIONS: the restored transaction is aborted
        assert init(w, txn_id) == (0, pid, epoch + 2)
        seen = fetch_txn(w, topic)
        assert seen.last_stable_offset == 2 and [a.producer_id for a in seen.aborted_transactions] == [pid]
        assert end(w, txn_id, pid, epoch, commit=True) == PRODUCER_FENCED
        assert init(w, f"new-{topic}")[1] > other_pid  # producer ids are never handed out twice
