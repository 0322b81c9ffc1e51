"""Pravega's durable store (broker/pravega/store.py, segment_log.py): segment bytes on disk, read back
through a small cache after a restart; merges, truncation, deletes and writer positions across restarts and
crashes; tables bounded by ``max_bytes``."""

from __future__ import annotations

import struct
import uuid

import pytest
from wirecheck.broker.pravega.store import Store, StoreFull

CACHE = 4096  # far below what the tests store: most reads must come from the files


def open_store(path, max_bytes=1 << 30, cache=CACHE) -> Store:
    return Store(path, fsync=False, max_bytes=max_bytes, cache_bytes=cache)


def record(i: int) -> bytes:
    return struct.pack(">q", i) + b"x" * 92  # 100 bytes, numbered


def test_reads_beyond_the_cache_after_a_restart_return_the_right_bytes(tmp_path):
    store, writer = open_store(tmp_path), uuid.uuid4().bytes
    segment = store.create("s/stream/0")
    for block in range(200):  # 200 appends of 10 records: 200 kB, fifty times the cache
        store.append(segment, b"".join(record(block * 10 + i) for i in range(10)), writer, block + 1)
    store.close()

    store = open_store(tmp_path)
    segment = store.segments["s/stream/0"]
    assert segment.length == 2000 * 100 and segment.log is not None and not segment.data
    assert segment.attributes[writer] == 200  # the writer's position comes back from the log
    data = b"".join(segment.read(offset, 3333) for offset in range(0, segment.length, 3333))  # across entries
    assert data == b"".join(record(i) for i in range(2000))
    assert segment.read(150, 100) == record(1)[50:] + record(2)[:50]
    assert store.cache.size <= CACHE and store.held < 1000  # names and attributes only
    store.close()


def test_truncate_and_seal_survive_a_restart(tmp_path):
    store = open_store(tmp_path)
    segment = store.create("s/t/0")
    for i in range(10):
        store.append(segment, record(i), None, 0)
    store.truncate(segment, 450)
    store.seal(segment)
    assert segment.read(450, 100) == record(4)[50:] + record(5)[:50]
    store.close()

    store = open_store(tmp_path)
    segment = store.segments["s/t/0"]
    assert (segment.start, segment.length, segment.sealed) == (450, 1000, True)
    assert segment.read(450, 1000) == record(4)[50:] + b"".join(record(i) for i in range(5, 10))
    store.close()


def test_a_merge_copies_the_source_and_removes_its_file(tmp_path):
    store = open_store(tmp_path)
    target, source = store.create("s/m/target"), store.create("s/m/source")
    store.append(target, record(0), None, 0)
    for i in range(1, 6):
        store.append(source, record(i), None, 0)
    store.truncate(source, 150)  # the merge takes the source from its start offset on
    store.seal(source)
    assert store.merge(target, source) == 100 + 350
    store.append(target, record(9), None, 0)
    store.close()
    assert len(list((tmp_path / "pravega" / "segments").glob("*.log"))) == 1
    assert len(list((tmp_path / "pravega" / "segments").glob("*.tail"))) == 1  # the source's tail went with it

    store = open_store(tmp_path)
    assert set(store.segments) == {"s/m/target"}
    target = store.segments["s/m/target"]
    assert target.read(0, 10_000) == record(0) + record(2)[50:] + b"".join(record(i) for i in (3, 4, 5, 9))
    store.close()


def test_a_merge_cut_short_by_a_crash_is_finished_on_replay(tmp_path, monkeypatch):
    from wirecheck.broker.pravega import segment_log

    store = open_store(tmp_path)
    target, source = store.create("s/c/target"), store.create("s/c/source")
    store.append(target, b"T" * 10, None, 0)
    store.append(source, bytes(range(200)) * 50, None, 0)  # 10 000 bytes, copied in pieces of 1 000
    store.seal(source)
    monkeypatch.setattr(segment_log, "COPY_CHUNK", 1000)
    copied = []
    real_append = segment_log.SegmentLog.append

    def crash_after_three(self, data, writer, event_number):
        if len(copied) == 3:
            raise KeyboardInterrupt("killed mid-merge")
        copied.append(len(data))
        real_append(self, data, writer, event_number)

    monkeypatch.setattr(segment_log.SegmentLog, "append", crash_after_three)
    with pytest.raises(KeyboardInterrupt):
        store.merge(target, source)
    monkeypatch.setattr(segment_log.SegmentLog, "append", real_append)
    store.journal.flush()  # what the killed process had written

    store = open_store(tmp_path)
    assert set(store.segments) == {"s/c/target"}
    assert store.segments["s/c/target"].read(0, 20_000) == b"T" * 10 + bytes(range(200)) * 50
    assert len(list((tmp_path / "pravega" / "segments").glob("*.log"))) == 1
    store.close()


def test_a_deleted_and_recreated_segment_starts_empty_after_a_restart(tmp_path):
    store = open_store(tmp_path)
    store.append(store.create("s/d/0"), b"old", None, 0)
    store.delete("s/d/0")
    store.append(store.create("s/d/0"), b"new", None, 0)
    store.close()

    store = open_store(tmp_path)
    assert store.segments["s/d/0"].read(0, 100) == b"new"
    store.close()


def test_a_torn_append_is_dropped_and_the_writer_position_stays_with_the_last_whole_one(tmp_path):
    store, writer = open_store(tmp_path), uuid.uuid4().bytes
    segment = store.create("s/torn/0")
    store.append(segment, b"a" * 100, writer, 1)
    store.append(segment, b"b" * 100, writer, 2)
    path = segment.log.tail.path  # small appends are synced to the segment's tail first
    store.close()
    with open(path, "r+b") as f:  # the second append's last bytes never reached the disk
        f.truncate(path.stat().st_size - 10)

    store = open_store(tmp_path)
    segment = store.segments["s/torn/0"]
    assert (segment.length, segment.attributes[writer]) == (100, 1)
    store.append(segment, b"c" * 5, writer, 2)  # the writer resends event 2
    assert segment.read(0, 1000) == b"a" * 100 + b"c" * 5
    store.close()


def test_tables_stay_in_memory_bounded_by_max_bytes(tmp_path):
    store = open_store(tmp_path, max_bytes=2000)
    table = store.create("s/_tables/t", table=True)
    assert table.log is None
    store.put(table, [(b"k", b"v" * 500)])
    with pytest.raises(StoreFull):
        store.put(table, [(b"k2", b"v" * 2000)])
    store.close()
    store = open_store(tmp_path, max_bytes=2000)
    assert store.segments["s/_tables/t"].entries[b"k"][1] == b"v" * 500
    store.close()


def test_the_memory_mode_keeps_bytes_in_memory_and_bounds_them(tmp_path):
    store = Store(None, fsync=False, max_bytes=1000)
    segment = store.create("s/mem/0")
    store.append(segment, b"z" * 500, None, 0)
    assert segment.log is None and segment.read(100, 10) == b"z" * 10
    with pytest.raises(StoreFull):
        store.append(segment, b"z" * 500, None, 0)
    assert not (tmp_path / "pravega").exists()


def test_events_come_back_through_a_small_cache_after_a_restart(tmp_path):
    from wirecheck.protocols.pravega import commands as cmd
    from wirecheck.targets.launcher import launch

    from tests.broker.test_pravega_process import Client

    data_dir, writer, name = ["--data-dir", str(tmp_path / "data"), "--cache-bytes", "1024"], uuid.uuid4(), "s/c/0"
    blocks = [b"".join(cmd.event(record(block * 5 + i)) for i in range(5)) for block in range(40)]  # 540 B each
    broker = launch(["pravega"], extra_args=data_dir, workdir=tmp_path / "one")
    try:
        c = Client(broker.address("pravega"))
        c.call("CreateSegment", request_id=1, segment=name, target_rate=0, scale_type=0, delegation_token="")
        c.call("SetupAppend", request_id=2, writer_id=writer, segment=name, delegation_token="")
        for n, block in enumerate(blocks, 1):
            c.call("AppendBlockEnd", writer_id=writer, size_of_whole_events=len(block), data=block, num_events=5,
                   last_event_number=n * 5, request_id=2 + n)
    finally:
        broker.stop()
    broker = launch(["pravega"], extra_args=data_dir, workdir=tmp_path / "two")
    try:
        c, got = Client(broker.address("pravega")), b""
        assert c.call("SetupAppend", request_id=1, writer_id=writer, segment=name,
                      delegation_token="")["last_event_number"] == 200
        while len(got) < sum(map(len, blocks)):
            got += c.call("ReadSegment", segment=name, offset=len(got), suggested_length=700, delegation_token="",
                          request_id=2)["data"]
        assert got == b"".join(blocks)
    finally:
        broker.stop()


def test_one_writers_small_appends_share_data_entries_and_reads_start_anywhere(tmp_path):
    from wirecheck.broker.pravega.segment_log import COALESCE_BYTES

    store, writer = open_store(tmp_path), uuid.uuid4().bytes
    segment = store.create("s/co/0")
    for i in range(5000):  # 500 kB in appends of one record each, as pravega-client sends them
        store.append(segment, record(i), writer, i + 1)
    expected = b"".join(record(i) for i in range(5000))
    log = segment.log
    assert len(log.log) <= 500_000 // (COALESCE_BYTES - 100) + 1  # entries of ~64 KiB, not one per append
    assert len(log.pending) < COALESCE_BYTES and len(log.tail) * 100 == len(log.pending)
    for offset, size in [(0, 1), (99, 2), (COALESCE_BYTES - 7, 300), (log.flushed - 50, 120), (499_950, 500)]:
        assert segment.read(offset, size) == expected[offset : offset + size]  # mid-entry, across the tail
    store.close()

    store = open_store(tmp_path)
    segment = store.segments["s/co/0"]
    assert segment.length == 500_000 and segment.attributes[writer] == 5000
    assert not len(segment.log.tail) and not segment.log.pending  # the tail moved into the data log on open
    assert b"".join(segment.read(o, 7777) for o in range(0, 500_000, 7777)) == expected
    store.close()


def test_another_writer_ends_the_data_entry_and_each_keeps_its_event_number(tmp_path):
    store, a, b = open_store(tmp_path), uuid.uuid4().bytes, uuid.uuid4().bytes
    segment = store.create("s/two/0")
    for i in range(30):
        store.append(segment, record(i), a if i % 10 < 5 else b, i + 1)
    store.close()

    store = open_store(tmp_path)
    segment = store.segments["s/two/0"]
    assert (segment.attributes[a], segment.attributes[b]) == (25, 30)
    assert segment.read(0, 3000) == b"".join(record(i) for i in range(30))
    assert len(segment.log.log) == 6  # one entry per run of one writer
    store.close()


def test_a_crash_between_the_data_entry_and_the_tail_clear_keeps_each_append_once(tmp_path, monkeypatch):
    from wirecheck.broker.batchlog import BatchLog
    from wirecheck.broker.pravega import segment_log

    monkeypatch.setattr(segment_log, "COALESCE_BYTES", 1000)
    store, writer = open_store(tmp_path), uuid.uuid4().bytes
    segment = store.create("s/cut/0")
    for i in range(9):
        store.append(segment, record(i), writer, i + 1)
    def killed(self):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(BatchLog, "clear", killed)
    with pytest.raises(KeyboardInterrupt):
        store.append(segment, record(9), writer, 10)  # the data entry is written; the kill comes before the clear
    monkeypatch.undo()

    store = open_store(tmp_path)
    segment = store.segments["s/cut/0"]
    assert (segment.length, segment.attributes[writer]) == (1000, 10)
    assert segment.read(0, 2000) == b"".join(record(i) for i in range(10))
    store.append(segment, record(10), writer, 11)
    store.close()
    store = open_store(tmp_path)
    assert store.segments["s/cut/0"].read(0, 2000) == b"".join(record(i) for i in range(11))
    store.close()


def test_table_versions_are_the_offsets_pravega_writes_its_entries_at(tmp_path):
    """Pravega 0.13.0's layout (EntrySerializer.HEADER_LENGTH 17): an entry takes 17 bytes besides its key and value;
    a table of variable-length keys writes a removal (17 bytes and the key) for every key asked for, present or not,
    one of fixed-length keys writes nothing; the versions come back the same after a restart."""
    store = open_store(tmp_path)
    table = store.create("sc/t", table=True)
    assert store.put(table, [(b"key-0", b"value-0"), (b"key-1", b"value-1")]) == [0, 29]
    store.remove(table, [b"key-0", b"missing"])
    assert store.put(table, [(b"k", b"v")]) == [58 + 22 + 24]
    fixed = store.create("sc/f", table=True, key_length=4)
    assert store.put(fixed, [(b"abcd", b"1")]) == [0]
    store.remove(fixed, [b"abcd", b"none"])
    assert store.put(fixed, [(b"efgh", b"2")]) == [22]
    again = open_store(tmp_path)
    assert again.segments["sc/t"].entries == {b"key-1": (29, b"value-1"), b"k": (104, b"v")}
    assert again.segments["sc/f"].table_length == 44
