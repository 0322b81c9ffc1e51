"""The segment store's state: stream segments (bytes, start offset, seal, attributes) and table segments
(versioned keys), in memory, or durable under ``--data-dir``.

Durability (``data_dir`` set), under ``<data-dir>/pravega/``:

- ``segments/<n>.log`` and ``<n>.tail``: each stream segment's appended bytes (segment_log.py: each append is
  synced to the tail first, and a writer's consecutive appends are coalesced into data entries of about 64 KiB;
  the entries carry the writer's event number, so the segment logs are themselves the record of appends).
  ``n`` is a number the create journals, never reused, so a segment deleted and created again gets a new file.
- ``metadata.log``: every other mutation, appended before it is acknowledged, one record per operation:
  ``u32 body length | u32 CRC-32C of the body | body``: create (with the file number), seal, truncate, delete,
  merge, attribute updates and table updates and removals. With ``--fsync batch`` each data entry or record is
  fsynced before the reply is sent.

On start the metadata journal is replayed record by record (a torn or corrupt tail, a record whose CRC does not
match or that ends early, is truncated away); a create opens the segment's log, which recovers its own torn tail
and gives the segment's length; after the replay each writer's last event number comes from the logs. Replay is
deterministic: table versions are recomputed from the same operations in the same order. Files no live segment
owns (a delete or merge cut short by a crash) are removed.

(A data directory from before this layout, whose journal ``journal.log`` also held the appended bytes, is not
read.)

Merge: the journal records the target's length before the merge, then the source's bytes are copied through
into the target's log in pieces of at most 1 MiB, then the source's file is removed. A crash in between is
finished on replay: the bytes the target has beyond that length tell how far the copy got.

Table versions are positions in the table segment, as upstream (a key's version is the offset its entry was
written at): each update writes an entry of ``ENTRY_OVERHEAD + len(key) + len(value)`` bytes at the current
length, so versions strictly increase and ReadTableEntriesDelta can resume from any position.

Memory: in memory mode ``max_bytes`` bounds the bytes held by every segment and table together; an operation
that would exceed it is refused (:class:`StoreFull`), and the server closes that connection. In durable mode the
stream segments' bytes are on disk and memory holds their index and the shared batch cache (``cache_bytes``,
``--cache-bytes``); table segments stay in memory (they are metadata-sized: keys, versions and values) and
``max_bytes`` still bounds them, with segment names and attributes.
"""

from __future__ import annotations

import asyncio
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import crc32c
from wirecheck.broker.batchlog import DEFAULT_CACHE_BYTES, BatchCache, BatchLog, lose_last_entry
from wirecheck.broker.pravega.segment_log import SegmentLog, tail_path

NULL_VALUE = -(2**63)  # Long.MIN_VALUE: an attribute never set, a table key with no version condition
NOT_EXISTS = -1
#: bytes a table entry's header takes in the table segment besides its key and value: Pravega's (serialization
#: version, key length, value length, entry version; EntrySerializer.HEADER_LENGTH, segmentstore/server/src/main/
#: java/io/pravega/segmentstore/server/tables/EntrySerializer.java:49 at v0.13.0), so that a key's version, the
#: offset its entry was written at, is the one Pravega gives it
ENTRY_OVERHEAD = 17
_RECORD = struct.Struct(">II")


class StoreFull(Exception):
    pass


@dataclass
class Segment:
    name: str
    table: bool = False
    data: bytearray = field(default_factory=bytearray)  # memory mode: the bytes from ``start`` on
    log: SegmentLog | None = None  # durable mode: the bytes are here instead
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
        if self.log is not None:
            return self.log.length
        return self.start + len(self.data)

    def read(self, offset: int, size: int) -> bytes:
        if self.log is not None:
            return self.log.read(offset, size)
        begin = offset - self.start
        return bytes(self.data[begin : begin + size])

    def wake(self) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)
        self.waiters.clear()


class Store:
    def __init__(self, data_dir: Path | None, fsync: bool, max_bytes: int, cache_bytes: int = DEFAULT_CACHE_BYTES,
                 faults=None):
        """``faults``: the personality's PravegaFaults (the safety faults of recovery, faults_safety.py)."""
        self.segments: dict[str, Segment] = {}
        self.max_bytes = max_bytes
        self.held = 0
        self.fsync = fsync
        self.journal = None
        self.segment_dir: Path | None = None  # durable mode only
        self._next_file = 0
        if data_dir is not None:
            directory = Path(data_dir) / "pravega"
            self.segment_dir = directory / "segments"
            self.segment_dir.mkdir(parents=True, exist_ok=True)
            self.cache = BatchCache(cache_bytes)  # shared by every segment: the durable mode's memory bound
            path = directory / "metadata.log"
            if path.exists():
                self._replay(path)
            if faults is not None and faults.safety_unsynced_tail_lost:
                self._lose_tails()
            self._finish_recovery()
            self.journal = open(path, "ab")

    def close(self) -> None:
        if self.journal is not None:
            self.journal.flush()
            os.fsync(self.journal.fileno())
            self.journal.close()
            self.journal = None
        for segment in self.segments.values():
            if segment.log is not None:
                segment.log.close()

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
        good = 0
        with open(path, "r+b") as journal:  # record by record: the journal never sits in memory whole
            while True:
                head = journal.read(_RECORD.size)
                if len(head) < _RECORD.size:
                    break
                size, crc = _RECORD.unpack(head)
                body = journal.read(size)
                if len(body) < size or crc32c.crc32c(body) != crc:
                    break
                op, parts, at = chr(body[0]), [], 1
                while at < len(body):
                    (n,) = struct.unpack_from(">I", body, at)
                    parts.append(body[at + 4 : at + 4 + n])
                    at += 4 + n
                self._apply(op, parts)
                good += _RECORD.size + size
            if good < os.fstat(journal.fileno()).st_size:
                journal.truncate(good)

    def _finish_recovery(self) -> None:
        """After the replay: writers' positions from the logs, and files no live segment owns removed."""
        owned = set()
        for segment in self.segments.values():
            if segment.log is not None:
                segment.attributes.update(segment.log.writers)  # appends after any journaled update: they win
                segment.log.writers.clear()
                owned.update((segment.log.path.name, tail_path(segment.log.path).name))
        for file in [*self.segment_dir.glob("*.log"), *self.segment_dir.glob("*.tail")]:
            if file.name not in owned:
                file.unlink()

    def _lose_tails(self) -> None:
        """Fault safety-unsynced-tail-lost: each user stream segment's last entry never reached the disk, though it
        was acknowledged (before the writers' positions are read from the logs, so they forget it too)."""
        for segment in self.segments.values():
            if segment.log is None or not len(segment.log.log) or "/_" in f"/{segment.name}":
                continue
            path = segment.log.path
            segment.log.close()
            lose_last_entry(BatchLog(path, self.cache, self.fsync))
            segment.log = SegmentLog(path, self.cache, self.fsync)

    def _open_log(self, number: int, fresh: bool) -> SegmentLog:
        # fresh: stale files under a number whose create record was lost are removed
        return SegmentLog(self.segment_dir / f"{number}.log", self.cache, self.fsync, fresh=fresh)

    def _apply(self, op: str, p: list[bytes]) -> None:
        """Redo one journaled operation (same code paths as live, journal off)."""
        name = p[0].decode("utf-8", "surrogatepass")
        i64 = lambda b: struct.unpack(">q", b)[0]  # noqa: E731
        if op == "C":
            self.create(name, table=p[1] == b"t", key_length=i64(p[2]), log=False, file=i64(p[3]))
        elif op == "S":
            self.seal(self.segments[name], log=False)
        elif op == "T":
            self.truncate(self.segments[name], i64(p[1]), log=False)
        elif op == "D":
            self.delete(name, log=False)
        elif op == "M":
            self.merge(self.segments[name], self.segments[p[1].decode("utf-8", "surrogatepass")], log=False,
                       before=i64(p[2]))
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

    def create(self, name: str, table: bool = False, key_length: int = 0, log: bool = True,
               file: int = -1) -> Segment:
        """``file``: on replay, the number of the segment's log as journaled (-1: none, a table or memory)."""
        self._reserve(len(name) + 64)
        if log and self.segment_dir is not None and not table:
            file, self._next_file = self._next_file, self._next_file + 1
        self._next_file = max(self._next_file, file + 1)
        if log:  # journaled before the file exists: a crash between leaves a create that replays to an empty log
            self._log("C", self._name(name), b"t" if table else b"s", struct.pack(">q", key_length),
                      struct.pack(">q", file))
        segment = Segment(name, table=table, modified_ms=_now(), key_length=key_length)
        if file >= 0:
            segment.log = self._open_log(file, fresh=log)
        old = self.segments.get(name)
        if old is not None and old.log is not None:  # replaced (re-created in place): its file is not kept
            old.log.delete()
        self.segments[name] = segment
        return segment

    def append(self, segment: Segment, data: bytes, writer: bytes | None, event_number: int) -> int:
        """Durable: written (and synced) to the segment's log before this returns; the log is the record."""
        if segment.log is not None:
            segment.log.append(data, writer, event_number)
        else:
            self._reserve(len(data))
            segment.data += data
        if writer is not None:
            segment.attributes[writer] = event_number
        segment.modified_ms = _now()
        segment.wake()
        return segment.length

    def seal(self, segment: Segment, log: bool = True) -> None:
        segment.sealed = True
        if log:
            self._log("S", self._name(segment.name))
        segment.wake()

    def truncate(self, segment: Segment, offset: int, log: bool = True) -> None:
        if segment.log is not None:
            segment.log.truncate(offset)
        else:
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
        if segment.log is not None:
            segment.log.delete()
        segment.wake()

    def merge(self, target: Segment, source: Segment, log: bool = True, before: int | None = None) -> int:
        """Append ``source``'s bytes (from its start) to ``target`` and remove ``source``.

        Durable: journaled first with the target's length ``before`` the merge; on replay the target's log
        already holds the bytes copied before a crash (whatever it holds beyond ``before``), and the copy goes on
        from there (module docstring).
        """
        if before is None:
            before = target.length
        if log:
            self._log("M", self._name(target.name), self._name(source.name), struct.pack(">q", before))
        if target.log is not None and source.log is not None:
            copied = max(target.length - before, 0)
            target.log.copy_from(source.log, source.start + copied)
            source.log.delete()
        else:
            target.data += source.data
        target.modified_ms = _now()
        self.segments.pop(source.name, None)
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
            table.entries.pop(key, None)
            # a table of variable-length keys writes a removal (a header and the key) for every key it is asked to
            # remove, present or not; one of fixed-length keys only drops the key from its index and writes nothing
            # (v0.13.0 segmentstore/server/.../tables/HashTableSegmentLayout.java remove, 144-152, and
            # EntrySerializer.getRemovalLength; FixedKeyLengthTableSegmentLayout.java remove, 188-207)
            if table.key_length == 0:
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
