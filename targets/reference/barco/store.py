"""Chunks per reader (topic, token, range index, generation version), in memory or durable under --data-dir.

Each PRODUCE frame (each HTTP produce request) becomes one chunk: one zstd frame over its records. A reader's
offsets start at 0 and grow by each chunk's record count. Durable mode appends every chunk to
``<data-dir>/barco/<topic hex>/<token>/<range>/<version>/chunks.log`` behind a 21-byte header (flags u8,
compressed length u32, start offset i64, record count u32, CRC-32 of those 17 bytes; upstream FILE_FORMATS.md),
fsyncs before the acknowledgement with ``--fsync batch``, and keeps only the index in memory; the payload is read
back for a poll. Memory: at most ``retention`` records per reader are kept in memory mode (older chunks dropped)
and the total payload bytes are capped (a produce past the cap is refused).
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

CHUNK_HEAD = struct.Struct("!BIqI")


@dataclass
class Chunk:
    start: int
    count: int
    size: int
    payload: bytes | None = None  # memory mode
    position: int = 0  # durable mode: where the payload starts in the file

    @property
    def end(self) -> int:
        return self.start + self.count


@dataclass
class Reader:
    topic: bytes
    token: int
    range_index: int
    version: int
    chunks: list[Chunk] = field(default_factory=list)
    end: int = 0
    path: Path | None = None

    @property
    def key(self) -> tuple:
        return (self.topic, self.token, self.range_index, self.version)


class StoreFull(Exception):
    pass


class ChunkStore:
    def __init__(self, data_dir: Path | None, fsync: bool, retention: int | None, max_bytes: int):
        self.root = data_dir / "barco" if data_dir else None
        self.fsync = fsync
        self.retention = retention
        self.max_bytes = max_bytes
        self.bytes = 0
        self.readers: dict[tuple, Reader] = {}
        if self.root is not None:
            self._load()

    def _dir(self, key: tuple) -> Path:
        topic, token, range_index, version = key
        return self.root / topic.hex() / str(token) / str(range_index) / str(version)

    def _load(self) -> None:
        for log in self.root.glob("*/*/*/*/chunks.log"):
            version, range_index, token, topic = log.parent.parts[-1:-5:-1]
            reader = Reader(bytes.fromhex(topic), int(token), int(range_index), int(version), path=log)
            data = log.read_bytes()
            at = 0
            while at + 21 <= len(data):
                flags, size, start, count = CHUNK_HEAD.unpack_from(data, at)
                if zlib.crc32(data[at : at + 17]) != int.from_bytes(data[at + 17 : at + 21], "big") or \
                        at + 21 + size > len(data):
                    break  # a torn write at the end: everything before it stands
                reader.chunks.append(Chunk(start, count, size, position=at + 21))
                reader.end = start + count
                at += 21 + size
            if at != len(data):
                with open(log, "r+b") as f:
                    f.truncate(at)
            self.readers[reader.key] = reader

    def reader(self, key: tuple) -> Reader:
        found = self.readers.get(key)
        if found is None:
            found = self.readers[key] = Reader(*key)
            if self.root is not None:
                directory = self._dir(key)
                directory.mkdir(parents=True, exist_ok=True)
                found.path = directory / "chunks.log"
        return found

    def append(self, key: tuple, count: int, payload: bytes) -> Chunk:
        if self.bytes + len(payload) > self.max_bytes:
            raise StoreFull("storage full")
        reader = self.reader(key)
        chunk = Chunk(reader.end, count, len(payload))
        if reader.path is not None:
            head = CHUNK_HEAD.pack(0, len(payload), chunk.start, count)
            with open(reader.path, "ab") as f:
                chunk.position = f.tell() + 21
                f.write(head + (zlib.crc32(head) & 0xFFFFFFFF).to_bytes(4, "big") + payload)
                if self.fsync:
                    f.flush()
                    os.fsync(f.fileno())
        else:
            chunk.payload = payload
            self.bytes += len(payload)
        reader.chunks.append(chunk)
        reader.end = chunk.end
        self._retain(reader)
        return chunk

    def _retain(self, reader: Reader) -> None:
        if self.retention is None or reader.path is not None:
            return
        while len(reader.chunks) > 1 and reader.end - reader.chunks[1].start >= self.retention:
            self.bytes -= reader.chunks.pop(0).size

    def chunk_at(self, reader: Reader, offset: int) -> Chunk | None:
        """The chunk holding ``offset``, or the first one after it (retention may have dropped older ones)."""
        for chunk in reader.chunks:
            if chunk.end > offset:
                return chunk
        return None

    def payload(self, reader: Reader, chunk: Chunk) -> bytes:
        if chunk.payload is not None:
            return chunk.payload
        with open(reader.path, "rb") as f:
            f.seek(chunk.position)
            return f.read(chunk.size)
