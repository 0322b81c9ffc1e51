"""The shared batch log (broker/batchlog.py): what survives a reopen, what recovery truncates, and
that the cache stays within its bound whatever the log holds."""

from __future__ import annotations

import bisect
import json
import os
import subprocess
import sys

import crc32c
import pytest
from wirecheck.broker.batchlog import (
    HEADER,
    MAGIC,
    BatchCache,
    BatchLog,
    CorruptLog,
    Entry,
    fsync_dir,
    write_atomically,
)


def batch(n: int, size: int = 100) -> bytes:
    return bytes([n % 256]) * size


def fill(path, count: int, cache: BatchCache | None = None) -> BatchLog:
    log = BatchLog(path, BatchCache(1 << 20) if cache is None else cache)
    for i in range(count):
        log.append(i * 10, batch(i), meta=10)
    return log


def test_appended_batches_replay_into_the_same_index(tmp_path):
    log = fill(tmp_path / "p.log", 5)
    before = list(log.entries)
    log.close()
    again = BatchLog(tmp_path / "p.log", BatchCache(1 << 20))
    assert again.entries == before and again.truncated == 0
    assert [again.read(i) for i in range(5)] == [batch(i) for i in range(5)]  # from the file: the cache is new
    assert again.find(0) == 0 and again.find(19) == 1 and again.find(49) == 4 and again.find(10_000) == 4
    assert again.entries[-1].base + again.entries[-1].meta == 50  # the caller's next offset
    again.append(50, batch(5), 10)  # appends continue after the replayed data
    again.close()
    assert len(BatchLog(tmp_path / "p.log", BatchCache(1 << 20))) == 6


@pytest.mark.parametrize("cut", [1, HEADER.size - 1, HEADER.size + 1, HEADER.size + 99])
def test_a_torn_last_entry_is_truncated(tmp_path, cut):
    path = tmp_path / "p.log"
    fill(path, 3).close()
    whole = path.stat().st_size
    entry = HEADER.size + 100
    with open(path, "r+b") as f:
        f.truncate(whole - entry + cut)  # the third entry only partly written
    log = BatchLog(path, BatchCache(1 << 20))
    assert len(log) == 2 and log.truncated == cut
    assert path.stat().st_size == whole - entry
    log.append(20, batch(9), 10)  # the next entry follows the last whole one
    log.close()
    assert [e.base for e in BatchLog(path, BatchCache(1 << 20)).entries] == [0, 10, 20]


@pytest.mark.parametrize("where", ["body", "header"])
def test_a_crc_mismatch_truncates_from_that_entry_on(tmp_path, where):
    path = tmp_path / "p.log"
    fill(path, 4).close()
    second = len(MAGIC) + HEADER.size + 100
    flip = second + (HEADER.size + 50 if where == "body" else 12)  # a body byte, or a base_offset byte
    with open(path, "r+b") as f:
        f.seek(flip)
        byte = f.read(1)
        f.seek(flip)
        f.write(bytes([byte[0] ^ 0x01]))
    log = BatchLog(path, BatchCache(1 << 20))
    assert [e.base for e in log.entries] == [0]  # Kafka's recovery: nothing after the first bad entry is kept
    assert path.stat().st_size == second


def test_a_file_that_is_not_a_batch_log_is_refused_not_emptied(tmp_path):
    path = tmp_path / "p.log"
    path.write_bytes(b"something else entirely")
    with pytest.raises(CorruptLog):
        BatchLog(path, BatchCache(1 << 20))
    assert path.read_bytes() == b"something else entirely"


def test_the_cache_stays_within_its_bound_shared_by_every_log(tmp_path):
    cache = BatchCache(1_000)
    logs = [fill(tmp_path / f"p{i}.log", 30, cache) for i in range(3)]  # 9,000 bytes of batches
    assert cache.size <= 1_000 and len(cache) == 10
    for log in logs:
        for i in range(len(log)):
            assert log.read(i) == batch(i)  # misses come from the file
            assert cache.size <= 1_000
    hit = logs[2].read(29)
    assert logs[2].read(29) is hit  # the most recent stays cached
    big = BatchLog(tmp_path / "big.log", cache)
    big.append(0, b"x" * 5_000)
    assert cache.size <= 1_000 and big.read(0) == b"x" * 5_000  # larger than the budget: never cached


def test_retention_drops_whole_batches_from_the_index_and_the_file_keeps_them(tmp_path):
    path = tmp_path / "p.log"
    log = fill(path, 5)
    size = path.stat().st_size
    log.drop_first(2)
    assert [e.base for e in log.entries] == [20, 30, 40] and log.size == 300
    assert log.find(0) == 0 and log.read(0) == batch(2)
    assert path.stat().st_size == size
    log.close()
    assert len(BatchLog(path, BatchCache(1 << 20))) == 5  # the caller applies retention again after a reopen


def test_delete_removes_the_file_and_its_cached_batches(tmp_path):
    cache = BatchCache(1 << 20)
    log = fill(tmp_path / "p.log", 3, cache)
    assert len(cache) == 3
    log.delete()
    assert not (tmp_path / "p.log").exists() and len(cache) == 0 and cache.size == 0


def test_offsets_may_not_go_back(tmp_path):
    log = fill(tmp_path / "p.log", 2)
    with pytest.raises(ValueError):
        log.append(5, b"x")


def test_fsync_off_still_writes(tmp_path, monkeypatch):
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    log = BatchLog(tmp_path / "p.log", BatchCache(100), fsync=False)
    log.append(0, b"abc")
    assert not synced
    log.close()
    assert BatchLog(tmp_path / "p.log", BatchCache(100), fsync=False).read(0) == b"abc"
    with_sync = BatchLog(tmp_path / "q.log", BatchCache(100))
    with_sync.append(0, b"abc")
    assert synced  # fsync on: synced before append returns


def test_write_atomically_replaces_the_whole_file(tmp_path):
    path = tmp_path / "topics.json"
    write_atomically(path, b"one")
    write_atomically(path, b"two")
    assert path.read_bytes() == b"two" and not (tmp_path / "topics.json.tmp").exists()


def test_retention_in_a_loop_keeps_the_views_right_across_compactions(tmp_path):
    log = fill(tmp_path / "p.log", 5_000)
    dropped = 0
    for step in (1, 7, 1_000, 1, 2_000, 500):  # crosses the compaction threshold more than once
        log.drop_first(step)
        dropped += step
        assert len(log) == len(log.entries) == len(log.bases) == 5_000 - dropped
        assert log.bases[0] == dropped * 10 and log.entries[-1].base == 49_990
        assert log.read(0) == batch(dropped) and log.find(dropped * 10 + 5) == 0
        assert bisect.bisect_right(log.bases, dropped * 10 + 15) - 1 == 1  # bisect works over the view
        assert log.size == 100 * (5_000 - dropped)
    assert log.entries[0] == Entry(dropped * 10, log.entries[0].position, 100, 10)
    assert log.bases[:3] == [dropped * 10, dropped * 10 + 10, dropped * 10 + 20]
    with pytest.raises(IndexError):
        log.entries[len(log)]
    log.drop_first(10_000)  # more than there is: empties the index
    assert len(log) == 0 and not log.entries and log.find(0) == 0 and log.size == 0
    log.append(50_000, batch(1), 10)
    assert log.bases[:] == [50_000] and log.read(0) == batch(1)


def write_log_directly(path, count: int) -> None:
    """A valid batch log of ``count`` 8-byte batches, written without BatchLog (building it by appends is slower)."""
    parts = [MAGIC]
    for i in range(count):
        body = i.to_bytes(8, "big")
        crc = crc32c.crc32c(body, crc32c.crc32c(i.to_bytes(8, "big", signed=True) + (1).to_bytes(8, "big")))
        parts.append(HEADER.pack(8, crc, i, 1) + body)
    path.write_bytes(b"".join(parts))


_OPEN_AND_REPORT_MEMORY = """
import json, sys
from wirecheck.broker.batchlog import BatchCache, BatchLog

def status():
    fields = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return {k: int(fields[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM")}

before = status()
log = BatchLog(sys.argv[1], BatchCache(1 << 16), fsync=False)
print(json.dumps({"before": before, "after": status(), "batches": len(log)}))
"""


def test_an_index_of_a_million_batches_is_compact_and_reopens_right(tmp_path):
    # Measured by the kernel in a fresh process: tracemalloc slows the million-entry replay about tenfold.
    count = 1_000_000
    path = tmp_path / "p.log"
    write_log_directly(path, count)
    report = json.loads(subprocess.run([sys.executable, "-c", _OPEN_AND_REPORT_MEMORY, str(path)], check=True,
                                       capture_output=True, text=True).stdout)
    grown = report["after"]["VmHWM"] - report["before"]["VmRSS"]
    assert report["batches"] == count and grown < 64 << 20, report  # 32 bytes a batch, not a ~150-byte object
    log = BatchLog(path, BatchCache(1 << 16), fsync=False)
    assert len(log) == count and log.truncated == 0 and log.end == path.stat().st_size
    assert log.entries[-1] == Entry(count - 1, path.stat().st_size - 8, 8, 1)
    assert log.find(123_456) == 123_456 and log.read(123_456) == (123_456).to_bytes(8, "big")
    log.drop_first(count // 2)  # one big drop compacts the columns once
    assert log.bases[0] == count // 2 and log.read(0) == (count // 2).to_bytes(8, "big")
    log.close()


def test_fsync_dir_is_public(tmp_path):
    fsync_dir(tmp_path)  # RustLog and others use it after creating or removing files
