"""The segment store's state: stream segments (bytes, start offset, seal, attributes) and table segments
(versioned keys), in memory, optionally journaled under ``--data-dir``.

Durability (``data_dir`` set): every mutation is appended to ``pravega/journal.log`` before it is acknowledged,
one record per operation: ``u32 body length | u32 CRC-32C of the body | body``; with ``--fsync batch`` the file
is fsynced before the reply is sent. On start the journal is replayed; a torn or corrupt tail (a record whose CRC
does not match, or that ends early) is truncated away. Replay is deterministic: table versions are recomputed
from the same operations in the same order.

Table versions are positions in the table segment, as upstream (a key's version is the offset its entry was
written at): each update writes an entry of ``ENTRY_OVERHEAD + len(key) + len(value)`` bytes at the current
length, so versions strictly increase and ReadTableEntriesDelta can resume from any position.

Memory: ``max_bytes`` bounds the bytes held by every segment and table together; an operation that would exceed
it is refused (:class:`StoreFull`), and the server closes that connection.
"""

from __future__ import annotations

import asyncio
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import crc32c

NULL_VALUE = -(2**63)  # Long.MIN_VALUE: an attribute never set, a table key with no version condition
NOT_EXISTS = -1
ENTRY_OVERHEAD = 29  # bytes a table entry costs in the table segment besides its key and value (our choice)
_RECORD = struct.Struct(">II")


class StoreFull(Exception):
    pass


@dataclass
class Segment:
    name: str
    table: bool = False
    data: bytearray = field(default_factory=bytearray)  # the bytes from ``start`` on
    start: int = 0
    sealed: bool = False
    attributes: dict[bytes, int] = field(default_factory=dict)
    modified_ms: int = 0
    rate: int = 0
    scale_type: int = 0
    waiters: set = field(default_factory=set)  # futures of reads parked at the tail
    # tables
    entries: dict[bytes, tuple[int, bytes]] = field(default_factory=dict)  # key -> (version, value)
    table_length: int = 0
    key_length: int = 0

    @property
    def length(self) -> int:
        return self.start + len(self.data)

    def read(self, offset: int, size: int) -> bytes:
        begin = offset - self.start
        return bytes(self.data[begin : begin + size])

    def wake(self) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)
        self.waiters.clear()


class Store:
    def __init__(self, data_dir: Path | None, fsync: bool, max_bytes: int):
        self.segments: dict[str, Segment] = {}
        self.max_bytes = max_bytes
        self.held = 0
        self.fsync = fsync
        self.journal = None
        if data_dir is not None:
            directory = Path(data_dir) / "pravega"
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / "journal.log"
            if path.exists():
                self._replay(path)
            self.journal = open(path, "ab")

    def close(self) -> None:
        if self.journal is not None:
            self.journal.flush()
            os.fsync(self.journal.fileno())
            self.journal.close()
            self.journal = None

    # -- journal --------------------------------------------------------------------------------------------

    def _log(self, op: str, *parts: bytes) -> None:
        if self.journal is None:
            return
        body = op.encode() + b"".join(struct.pack(">I", len(p)) + p for p in parts)
        self.journal.write(_RECORD.pack(len(body), crc32c.crc32c(body)) + body)
        self.journal.flush()
        if self.fsync:
            os.fsync(self.journal.fileno())

    def _replay(self, path: Path) -> None:
        data = path.read_bytes()
        pos = good = 0
        while pos + 8 <= len(data):
            size, crc = _RECORD.unpack_from(data, pos)
            body = data[pos + 8 : pos + 8 + size]
            if len(body) < size or crc32c.crc32c(body) != crc:
                break
            op, parts, at = chr(body[0]), [], 1
            while at < len(body):
                (n,) = struct.unpack_from(">I", body, at)
                parts.append(body[at + 4 : at + 4 + n])
                at += 4 + n
            self._apply(op, parts)
            pos = good = pos + 8 + size
        if good < len(data):
            with open(path, "r+b") as f:
                f.truncate(good)

    def _apply(self, op: str, p: list[bytes]) -> None:
        """Redo one journaled operation (same code paths as live, journal off)."""
        name = p[0].decode("utf-8", "surrogatepass")
        i64 = lambda b: struct.unpack(">q", b)[0]  # noqa: E731
        if op == "C":
            self.create(name, table=p[1] == b"t", key_length=i64(p[2]), log=False)
        elif op == "A":
            self.append(self.segments[name], p[1], p[2] or None, i64(p[3]), log=False)
        elif op == "S":
            self.seal(self.segments[name], log=False)
        elif op == "T":
            self.truncate(self.segments[name], i64(p[1]), log=False)
        elif op == "D":
            self.delete(name, log=False)
        elif op == "M":
            self.merge(self.segments[name], self.segments[p[1].decode("utf-8", "surrogatepass")], log=False)
        elif op == "U":
            self.set_attribute(self.segments[name], p[1], i64(p[2]), log=False)
        elif op == "P":
            self.put(self.segments[name], [(p[k], p[k + 1]) for k in range(1, len(p), 2)], log=False)
        elif op == "R":
            self.remove(self.segments[name], p[1:], log=False)

    @staticmethod
    def _name(name: str) -> bytes:
        return name.encode("utf-8", "surrogatepass")

    # -- memory ---------------------------------------------------------------------------------------------

    def _reserve(self, n: int) -> None:
        if self.held + n > self.max_bytes:
            raise StoreFull(f"store holds {self.held} bytes; {n} more exceed {self.max_bytes}")
        self.held += n

    # -- operations (each journaled before the caller replies) ----------------------------------------------

    def create(self, name: str, table: bool = False, key_length: int = 0, log: bool = True) -> Segment:
        self._reserve(len(name) + 64)
        segment = Segment(name, table=table, modified_ms=_now(), key_length=key_length)
        self.segments[name] = segment
        if log:
            self._log("C", self._name(name), b"t" if table else b"s", struct.pack(">q", key_length))
        return segment

    def append(self, segment: Segment, data: bytes, writer: bytes | None, event_number: int,
               log: bool = True) -> int:
        self._reserve(len(data))
        segment.data += data
        if writer is not None:
            segment.attributes[writer] = event_number
        segment.modified_ms = _now()
        if log:
            self._log("A", self._name(segment.name), data, writer or b"", struct.pack(">q", event_number))
        segment.wake()
        return segment.length

    def seal(self, segment: Segment, log: bool = True) -> None:
        segment.sealed = True
        if log:
            self._log("S", self._name(segment.name))
        segment.wake()

    def truncate(self, segment: Segment, offset: int, log: bool = True) -> None:
        drop = offset - segment.start
        del segment.data[:drop]
        self.held -= drop
        segment.start = offset
        if log:
            self._log("T", self._name(segment.name), struct.pack(">q", offset))
        segment.wake()

    def delete(self, name: str, log: bool = True) -> None:
        segment = self.segments.pop(name)
        self.held -= len(segment.data) + sum(len(k) + len(v) for k, (_, v) in segment.entries.items())
        if log:
            self._log("D", self._name(name))
        segment.wake()

    def merge(self, target: Segment, source: Segment, log: bool = True) -> int:
        target.data += source.data
        target.modified_ms = _now()
        self.segments.pop(source.name, None)
        if log:
            self._log("M", self._name(target.name), self._name(source.name))
        source.wake()
        target.wake()
        return target.length

    def set_attribute(self, segment: Segment, attribute: bytes, value: int, log: bool = True) -> None:
        if attribute not in segment.attributes:
            self._reserve(24)
        segment.attributes[attribute] = value
        if log:
            self._log("U", self._name(segment.name), attribute, struct.pack(">q", value))

    def put(self, table: Segment, entries: list[tuple[bytes, bytes]], log: bool = True,
            bump: bool = True) -> list[int]:
        self._reserve(sum(len(k) + len(v) for k, v in entries))
        versions = []
        for key, value in entries:
            old = table.entries.get(key)
            version = old[0] if (old is not None and not bump) else table.table_length
            table.entries[key] = (version, value)
            table.table_length += ENTRY_OVERHEAD + len(key) + len(value)
            versions.append(version)
        if log:
            self._log("P", self._name(table.name), *[part for kv in entries for part in kv])
        return versions

    def remove(self, table: Segment, keys: list[bytes], log: bool = True) -> None:
        for key in keys:
            if table.entries.pop(key, None) is not None:
                table.table_length += ENTRY_OVERHEAD + len(key)
        if log:
            self._log("R", self._name(table.name), *keys)


def _now() -> int:
    return int(time.time() * 1000)


async def wait_for_change(segment: Segment) -> None:
    """Park until the segment changes (append, seal, truncate, merge, delete)."""
    waiter = asyncio.get_running_loop().create_future()
    segment.waiters.add(waiter)
    try:
        await waiter
    finally:
        segment.waiters.discard(waiter)
