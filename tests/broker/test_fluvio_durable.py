"""The Fluvio personality with ``--data-dir``: topics, batches and consumer offsets survive a restart; retention
and the memory bound (the batch cache, not PartitionFull) in durable mode."""

from __future__ import annotations

import json

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.fluvio.storage import Storage

from tests.broker.fluvio_support import Client, ThreadBroker, batch, batches_of


class DurableBroker(ThreadBroker):
    def __init__(self, data_dir, cache_bytes: int = 1 << 20, **options):
        self.data_dir, self.cache_bytes = data_dir, cache_bytes
        super().__init__(**options)

    def create_personality(self, config: BrokerConfig):
        config.data_dir, config.cache_bytes = self.data_dir, self.cache_bytes
        return super().create_personality(config)


def test_batches_and_offsets_survive_a_restart(tmp_path):
    broker = DurableBroker(tmp_path)
    try:
        with Client(broker.port) as c:
            assert c.produce("kept", batch([b"a", b"b"])) == (0, 0)
            assert c.produce("kept", batch([b"c"])) == (0, 2)
            before = c.fetch("kept", 0)["records"]
    finally:
        broker.stop()
    assert json.loads((tmp_path / "fluvio" / "topics.json").read_text()) == {"consumer-offset": 1, "kept": 1}
    broker = DurableBroker(tmp_path)
    try:
        with Client(broker.port) as c:
            assert c.fetch_offsets("kept") == (0, 0, 0, 3)
            assert c.fetch("kept", 0)["records"] == before
            assert [b["base"] for b in batches_of(c.fetch("kept", 2)["records"])] == [2]
            assert c.produce("kept", batch([b"d"])) == (0, 3)  # the LEO came back from the log
    finally:
        broker.stop()


def test_durable_mode_has_no_memory_budget_the_cache_bounds_memory(tmp_path):
    broker = DurableBroker(tmp_path, cache_bytes=1_000, max_store_bytes=500)
    try:
        with Client(broker.port) as c:
            for i in range(20):
                assert c.produce("big", batch([bytes([i]) * 200])) == (0, i)  # in memory: 72 after 500 bytes
            assert len(batches_of(c.fetch("big", 0, max_bytes=1 << 20)["records"])) == 20
        assert broker.personality.storage.cache.size <= 1_000
    finally:
        broker.stop()


def test_retention_is_applied_again_after_a_restart(tmp_path):
    storage = Storage(data_dir=tmp_path, retention_records=3)
    partition = storage.partition_for_produce("ret", 0)
    for i in range(5):
        storage.append(partition, bytes([i]) * 10, 2)
    assert (partition.log_start, partition.leo) == (6, 10)
    storage.close()
    again = Storage(data_dir=tmp_path, retention_records=3).partition("ret", 0)
    assert (again.log_start, again.leo, again.size) == (6, 10, 20)
    assert again.read(6, 1 << 20, again.hw) == bytes([3]) * 10 + bytes([4]) * 10


def test_consumer_offsets_and_deleted_topics_persist(tmp_path):
    storage = Storage(data_dir=tmp_path)
    storage.create("gone", 2)
    storage.create("stays", 1)
    storage.set_consumer_offset(("stays", 0, "c1"), 7, 1234)
    storage.set_consumer_offset(("stays", 0, "c2"), 9, 1235)
    storage.delete_consumer_offset(("stays", 0, "c2"))
    storage.delete("gone")
    assert not (tmp_path / "fluvio" / "partitions" / "gone").exists()
    storage.close()
    again = Storage(data_dir=tmp_path)
    assert list(again.topics) == ["stays"]
    assert again.consumer_offsets == {("stays", 0, "c1"): (7, 1234)}


def test_log_files_of_a_topic_the_topics_file_lacks_are_removed(tmp_path):
    storage = Storage(data_dir=tmp_path)
    storage.create("orphan", 1)
    storage.close()
    (tmp_path / "fluvio" / "topics.json").write_text("{}")  # as if killed between the two writes of a delete
    assert Storage(data_dir=tmp_path).topics == {}
    assert not (tmp_path / "fluvio" / "partitions" / "orphan").exists()
