"""Chunks per reader (topic, token, range index, generation version), in memory or durable under --data-dir.

Each PRODUCE frame (each HTTP produce request) becomes one chunk: one zstd frame over its records. A reader's
offsets start at 0 and grow by each chunk's record count. Durable mode appends every chunk to
``<data-dir>/barco/<topic hex>/<token>/<range>/<version>/chunks.log`` behind a 21-byte header (flags u8,
compressed length u32, start offset i64, record count u32, CRC-32 of those 17 bytes; upstream FILE_FORMATS.md),
fsyncs before the acknowledgement with ``--fsync batch``, and keeps only the index in memory: three integers
per chunk in ``array('q')`` columns (start offset, file position, payload size; a chunk's record count is the
next chunk's start minus its own). On start each file's headers are read one by one (payloads are skipped, never
loaded) and a torn tail is truncated. A poll reads the payload back through a batch cache shared by every reader
(``--cache-bytes``, batchlog.BatchCache) or, on a miss, straight from the file.

Memory: in memory mode at most ``retention`` records per reader are kept (older chunks dropped) and the total
payload bytes are capped (a produce past the cap is refused). Durable mode keeps every chunk (no retention, no
cap: the disk is the limit); its memory is the index and the cache.
"""

from __future__ import annotations

import bisect
import itertools
import os
import struct
import zlib
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from wirecheck.broker.batchlog import DEFAULT_CACHE_BYTES, BatchCache, fsync_dir, write_all

CHUNK_HEAD = struct.Struct("!BIqI")
HEAD_SIZE = CHUNK_HEAD.size + 4  # the 17 bytes above and their CRC-32

_reader_ids = itertools.count(1)  # cache keys: never reused


@dataclass(frozen=True)
class Chunk:
    """One chunk as a poll sees it, made on demand from the reader's index."""

    start: int
    end: int  # the offset after its last record
    size: int
    position: int  # durable mode: where the payload starts in the file
    payload: bytes | None = None  # memory mode


@dataclass
class Reader:
    topic: bytes
    token: int
    range_index: int
    version: int
    starts: array = field(default_factory=lambda: array("q"))  # each kept chunk's start offset, ascending
    positions: array = field(default_factory=lambda: array("q"))  # durable: each payload's file position
    sizes: array = field(default_factory=lambda: array("q"))  # each payload's length
    payloads: list[bytes] = field(default_factory=list)  # memory mode only
    end: int = 0
    path: Path | None = None
    fd: int = -1  # durable mode: the open chunks.log
    file_end: int = 0  # durable mode: where the next chunk is written
    id: int = field(default_factory=lambda: next(_reader_ids))

    @property
    def key(self) -> tuple:
        return (self.topic, self.token, self.range_index, self.version)

    def chunk(self, index: int) -> Chunk:
        end = self.starts[index + 1] if index + 1 < len(self.starts) else self.end
        payload = self.payloads[index] if self.fd < 0 else None
        return Chunk(self.starts[index], end, self.sizes[index], self.positions[index], payload)

    def add(self, start: int, count: int, size: int, position: int) -> None:
        self.starts.append(start)
        self.positions.append(position)
        self.sizes.append(size)
        self.end = start + count

    def drop_first(self, count: int) -> None:
        del self.starts[:count], self.positions[:count], self.sizes[:count], self.payloads[:count]


class StoreFull(Exception):
    pass


class ChunkStore:
    def __init__(self, data_dir: Path | None, fsync: bool, retention: int | None, max_bytes: int,
                 cache_bytes: int = DEFAULT_CACHE_BYTES, lose_tail: bool = False):
        self.root = data_dir / "barco" if data_dir else None
        self.lose_tail = lose_tail  # fault barco.safety-unsynced-tail-lost (faults_safety.py)
        self.fsync = fsync
        self.retention = retention
        self.max_bytes = max_bytes
        self.bytes = 0  # memory mode: payload bytes held
        self.readers: dict[tuple, Reader] = {}
        self.cache = BatchCache(cache_bytes)  # durable mode's payload reads, shared by every reader
        if self.root is not None:
            self._load()

    def _dir(self, key: tuple) -> Path:
        topic, token, range_index, version = key
        return self.root / topic.hex() / str(token) / str(range_index) / str(version)

    def _load(self) -> None:
        for log in self.root.glob("*/*/*/*/chunks.log"):
            version, range_index, token, topic = log.parent.parts[-1:-5:-1]
            reader = Reader(bytes.fromhex(topic), int(token), int(range_index), int(version), path=log)
            reader.fd = os.open(log, os.O_RDWR)
            reader.file_end = _recover(reader)
            if self.lose_tail and len(reader.starts):
                _lose_last_chunk(reader)
            self.readers[reader.key] = reader

    def reader(self, key: tuple) -> Reader:
        found = self.readers.get(key)
        if found is None:
            found = self.readers[key] = Reader(*key)
            if self.root is not None:
                directory = self._dir(key)
                directory.mkdir(parents=True, exist_ok=True)
                found.path = directory / "chunks.log"
                found.fd = os.open(found.path, os.O_RDWR | os.O_CREAT, 0o644)
                if self.fsync:
                    fsync_dir(directory)  # the new file's name must survive a crash too
        return found

    def append(self, key: tuple, count: int, payload: bytes) -> Chunk:
        if self.root is None and self.bytes + len(payload) > self.max_bytes:
            raise StoreFull("storage full")
        # a compact copy to keep: zstd's result can pin an allocation sized for the uncompressed input (measured:
        # ~100 kB of RSS per kept 1 kB chunk of 1000 records)
        payload = bytes(memoryview(payload))
        reader = self.reader(key)
        start = reader.end
        if reader.fd >= 0:
            head = CHUNK_HEAD.pack(0, len(payload), start, count)
            position = reader.file_end + HEAD_SIZE
            try:
                write_all(reader.fd, head + zlib.crc32(head).to_bytes(4, "big") + payload, reader.file_end)
                if self.fsync:
                    os.fsync(reader.fd)
            except OSError:
                os.ftruncate(reader.fd, reader.file_end)  # no half chunk for the next one to follow
                raise
            reader.file_end = position + len(payload)
            reader.add(start, count, len(payload), position)
            self.cache.put((reader.id, position), payload)  # polls read the newest chunks next
        else:
            reader.add(start, count, len(payload), 0)
            reader.payloads.append(payload)
            self.bytes += len(payload)
            self._retain(reader)
        return reader.chunk(len(reader.starts) - 1)

    def _retain(self, reader: Reader) -> None:
        if self.retention is None:
            return
        drop = 0
        while len(reader.starts) - drop > 1 and reader.end - reader.starts[drop + 1] >= self.retention:
            drop += 1
        if drop:
            self.bytes -= sum(reader.sizes[:drop])
            reader.drop_first(drop)

    def chunk_at(self, reader: Reader, offset: int) -> Chunk | None:
        """The chunk holding ``offset``, or the first one after it (retention may have dropped older ones)."""
        index = bisect.bisect_right(reader.starts, offset) - 1
        if index >= 0 and reader.chunk(index).end > offset:
            return reader.chunk(index)
        return reader.chunk(index + 1) if index + 1 < len(reader.starts) else None

    def payload(self, reader: Reader, chunk: Chunk) -> bytes:
        if chunk.payload is not None:
            return chunk.payload
        key = (reader.id, chunk.position)
        data = self.cache.get(key)
        if data is None:
            data = os.pread(reader.fd, chunk.size, chunk.position)
            if len(data) != chunk.size:
                raise OSError(f"{reader.path}: short read at {chunk.position}")
            self.cache.put(key, data)
        return data

    def close(self) -> None:
        for reader in self.readers.values():
            if reader.fd >= 0:
                os.close(reader.fd)
                reader.fd = -1
        self.cache = BatchCache(self.cache.max_bytes)


def _lose_last_chunk(reader: Reader) -> None:
    """The fault barco.safety-unsynced-tail-lost: the last chunk is gone, as if never synced."""
    reader.file_end = reader.positions[-1] - HEAD_SIZE
    os.ftruncate(reader.fd, reader.file_end)
    reader.end = reader.starts[-1]
    del reader.starts[-1], reader.positions[-1], reader.sizes[-1]


def _recover(reader: Reader) -> int:
    """Index a chunks.log from its headers; truncate a torn or corrupt tail. Returns the end of the valid data."""
    file_size = os.fstat(reader.fd).st_size
    at = 0
    while at + HEAD_SIZE <= file_size:
        head = os.pread(reader.fd, HEAD_SIZE, at)
        _flags, size, start, count = CHUNK_HEAD.unpack_from(head)
        if zlib.crc32(head[:CHUNK_HEAD.size]) != int.from_bytes(head[CHUNK_HEAD.size :], "big") or \
                at + HEAD_SIZE + size > file_size:
            break  # a torn write at the end: everything before it stands
        reader.add(start, count, size, at + HEAD_SIZE)
        at += HEAD_SIZE + size
    if at != file_size:
        os.ftruncate(reader.fd, at)
    return at

