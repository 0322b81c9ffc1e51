"""Kafka personality with --data-dir and a small --cache-bytes (issue 31): memory holds an index and a bounded
cache, reads beyond the cache come from the files, after a restart too; retention and compaction still work;
the layout before batch logs is refused."""

from __future__ import annotations

import pytest
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.record.default_records import DefaultRecordBatch
from wirecheck.broker.kafka.durable import PartitionLog

from tests.broker.kafka_admin_probes import set_config
from tests.broker.test_kafka_compaction import DAY, OLD, compacted, keyed_batch, log
from tests.broker.test_kafka_data import batches_in, fetch, new_topic, produce
from tests.interop.kafka_support import InProcessBroker, record_batch

CACHE = 4096  # a few batches: most reads below miss it
BATCHES, PER_BATCH = 60, 5


def values(batch: int) -> list[bytes]:
    return [f"b{batch}-r{i}-".encode() + b"x" * 200 for i in range(PER_BATCH)]


def read_all(w, topic: str) -> list[tuple[int, bytes]]:
    """(offset, value) of every record, fetched in small steps so each read starts beyond the cached tail."""
    out, offset = [], 0
    while True:
        part = fetch(w, topic, offset, partition_max_bytes=1)  # KIP-74: one whole batch per fetch
        found = [(record.offset, record.value) for _, data in batches_in(part.records)
                 for record in DefaultRecordBatch(data)]
        if not found:
            return out
        out += found
        offset = found[-1][0] + 1


def read_from(w, topic: str, offset: int) -> list[tuple[int, bytes]]:
    """(offset, value) of the records one fetch at ``offset`` returns."""
    return [(record.offset, record.value) for _, data in batches_in(fetch(w, topic, offset).records)
            for record in DefaultRecordBatch(data)]


def expected() -> list[tuple[int, bytes]]:
    return [(b * PER_BATCH + i, v) for b in range(BATCHES) for i, v in enumerate(values(b))]


def cache_of(broker):
    return broker.personality.journal.cache


def test_reads_beyond_the_cache_come_from_the_files_after_a_restart(tmp_path):
    with InProcessBroker(data_dir=tmp_path, cache_bytes=CACHE) as b, b.wire() as w:
        topic = new_topic(w, partitions=2)
        for n in range(BATCHES):
            assert produce(w, topic, record_batch(values(n))).base_offset == n * PER_BATCH
        assert read_all(w, topic) == expected()
        assert cache_of(b).size <= CACHE
    with InProcessBroker(data_dir=tmp_path, cache_bytes=CACHE) as b, b.wire() as w:
        partition = b.personality.broker.storage.partition(topic, 0)
        assert isinstance(partition.log, PartitionLog) and len(partition.log) == BATCHES  # an index, no batches
        assert len(cache_of(b)) == 0  # recovery read headers only
        assert read_all(w, topic) == expected()
        assert cache_of(b).size <= CACHE
        assert fetch(w, topic, 0).high_watermark == BATCHES * PER_BATCH
        assert produce(w, topic, record_batch([b"next"])).base_offset == BATCHES * PER_BATCH
        assert fetch(w, topic, 0, partition=1).high_watermark == 0


def test_retention_applies_again_after_a_restart(tmp_path):
    with InProcessBroker(data_dir=tmp_path, cache_bytes=CACHE, retention_records=10) as b, b.wire() as w:
        topic = new_topic(w)
        for n in range(BATCHES):
            produce(w, topic, record_batch(values(n)))
        start = fetch(w, topic, BATCHES * PER_BATCH - 1).log_start_offset
        assert 0 < start <= BATCHES * PER_BATCH - 10
    with InProcessBroker(data_dir=tmp_path, cache_bytes=CACHE, retention_records=10) as b, b.wire() as w:
        part = fetch(w, topic, start)
        assert part.log_start_offset == start and part.high_watermark == BATCHES * PER_BATCH
        assert read_from(w, topic, start) == expected()[start:]


def test_compaction_rewrites_the_file_and_survives_a_restart(tmp_path):
    with InProcessBroker(data_dir=tmp_path, cache_bytes=CACHE, retention_check_ms=50) as b, b.wire() as w:
        topic = new_topic(w)
        assert set_config(w, topic, "cleanup.policy", "compact") == 0
        for pairs in ([(b"k1", b"a"), (b"k2", b"b")], [(b"k1", b"c")], [(b"k2", b"d")]):
            produce(w, topic, keyed_batch(pairs, OLD))
        produce(w, topic, keyed_batch([(b"k1", b"active")], OLD + 8 * DAY))  # a new (active) segment
        want = [(2, b"k1", b"c"), (3, b"k2", b"d"), (4, b"k1", b"active")]
        assert compacted(w, topic, want) == want
    (file,) = (tmp_path / "kafka" / "partitions").iterdir()  # the cleaned log replaced the old one
    with InProcessBroker(data_dir=tmp_path, cache_bytes=CACHE) as b, b.wire() as w:
        assert log(w, topic) == want
        assert fetch(w, topic, 0).high_watermark == 5
        assert produce(w, topic, keyed_batch([(b"k3", b"new")], OLD + 8 * DAY)).base_offset == 5
    assert file.exists()


def test_the_layout_before_batch_logs_is_refused(tmp_path):
    old = tmp_path / "kafka" / "logs"
    old.mkdir(parents=True)
    (old / "00-0.log").write_bytes(record_batch([b"old"]))
    with pytest.raises(SystemExit, match="layout before batch logs"):
        InProcessBroker(data_dir=tmp_path)


def test_a_failed_write_is_a_storage_error_and_changes_nothing(tmp_path, monkeypatch):
    from wirecheck.broker.batchlog import BatchLog

    def disk_full(*_):
        raise OSError(28, "No space left on device")

    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w)
        assert produce(w, topic, record_batch([b"kept"])).base_offset == 0
        with monkeypatch.context() as patch:
            patch.setattr(BatchLog, "append", disk_full)
            assert produce(w, topic, record_batch([b"lost"])).error_code == 56  # KAFKA_STORAGE_ERROR
        assert fetch(w, topic, 0).high_watermark == 1
        assert produce(w, topic, record_batch([b"next"])).base_offset == 1
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert read_from(w, topic, 0) == [(0, b"kept"), (1, b"next")]


def test_the_partition_budget_leaves_file_descriptors_for_connections(tmp_path, monkeypatch):
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda _: (20, 20))  # room for 10 open partition files
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        new_topic(w, partitions=10)
        r = w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
            {"name": "one-more", "num_partitions": 1, "replication_factor": 1}], timeout_ms=1000)
        assert r.topics[0].error_code == 37  # INVALID_PARTITIONS
