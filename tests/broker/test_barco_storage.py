"""Barco's chunk store (broker/barco/store.py): in durable mode a compact index, payloads read back
through a small cache after a restart, a torn tail dropped; memory mode still bounded by retention and its cap."""

from __future__ import annotations

import random
from array import array

import pytest
from wirecheck.targets.launcher import launch
from wirecheck.broker.barco.store import ChunkStore, StoreFull

from tests.broker.test_barco_broker import Producer, consume

KEY = (b"topic", 0, 1, 0)
CACHE = 4096


def payload(i: int) -> bytes:
    return b"%06d" % i * 50  # 300 bytes, numbered


def test_reads_beyond_the_cache_after_a_restart_return_the_right_chunks(tmp_path):
    store = ChunkStore(tmp_path, fsync=False, retention=5, max_bytes=1, cache_bytes=CACHE)  # neither limits it
    for i in range(500):  # 150 kB of payload, 36 times the cache
        store.append(KEY, 10, payload(i))
    store.close()

    store = ChunkStore(tmp_path, fsync=False, retention=5, max_bytes=1, cache_bytes=CACHE)
    reader = store.readers[KEY]
    assert reader.end == 5000 and isinstance(reader.starts, array) and not reader.payloads
    for i in range(500):
        chunk = store.chunk_at(reader, i * 10 + 7)
        assert (chunk.start, chunk.end, store.payload(reader, chunk)) == (i * 10, i * 10 + 10, payload(i))
    assert store.chunk_at(reader, 5000) is None
    assert store.cache.size <= CACHE
    store.append(KEY, 3, b"after")  # new chunks follow the recovered offsets
    assert store.chunk_at(reader, 5001).start == 5000
    store.close()


def test_a_torn_chunk_is_dropped_on_start(tmp_path):
    store = ChunkStore(tmp_path, fsync=False, retention=None, max_bytes=1 << 20)
    store.append(KEY, 2, b"whole")
    store.append(KEY, 2, b"torn away")
    path = store.readers[KEY].path
    store.close()
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 3)

    store = ChunkStore(tmp_path, fsync=False, retention=None, max_bytes=1 << 20)
    reader = store.readers[KEY]
    assert (reader.end, len(reader.starts), path.stat().st_size) == (2, 1, 21 + 5)
    assert store.payload(reader, store.chunk_at(reader, 0)) == b"whole"
    store.close()


def test_memory_mode_keeps_payloads_bounded_by_retention_and_the_cap():
    store = ChunkStore(None, fsync=False, retention=20, max_bytes=3000)
    for i in range(9):
        store.append(KEY, 10, payload(i))
    reader = store.readers[KEY]
    assert [reader.chunk(i).start for i in range(len(reader.starts))] == [70, 80]  # 20 records kept
    assert store.bytes == 600 and store.payload(reader, store.chunk_at(reader, 0)) == payload(7)  # the first kept
    with pytest.raises(StoreFull):
        store.append(KEY, 1, b"x" * 2500)


def test_records_come_back_through_a_small_cache_after_a_restart(tmp_path):
    data_dir = ["--data-dir", str(tmp_path / "data"), "--cache-bytes", "1024"]
    bodies = [b"record-%04d" % i + random.Random(i).randbytes(200) for i in range(60)]  # zstd cannot shrink
    broker = launch(["barco"], extra_args=data_dir, workdir=tmp_path / "one")
    try:
        producer = Producer(broker)
        for start in range(0, 60, 6):  # ten chunks of ~1.2 kB each: none fits beside another in the cache
            producer.produce("cached", bodies[start : start + 6])
        producer.close()
    finally:
        broker.stop()
    broker = launch(["barco"], extra_args=data_dir, workdir=tmp_path / "two")
    try:
        assert [b for _, _, b in consume(broker, "c", "g", "cached", 60)] == bodies
    finally:
        broker.stop()
