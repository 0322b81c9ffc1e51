"""One partition's log: a list of segments, in memory or mirrored to segment files.

Both modes keep every retained record in memory (reads never touch the disk); the durable mode also appends
each batch to segment files so that acknowledged records survive a restart.

File layout (one directory per partition): ``<base_offset:020d>.log``, a sequence of records, each
``u32 payload length | u64 offset | u64 timestamp (µs) | u32 CRC32C | payload``. The CRC32C covers the three
fields before it and the payload, so a torn or corrupted tail is found on restart and truncated away (with
every later segment, which could otherwise leave a gap in the offsets).

Segments hold ``segment_records`` records; a new one starts when an append finds the active one full, so a
partition always has at least one (possibly empty) segment. Retention (``retention_records``) drops whole
oldest segments after an append while the records left after dropping still number >= retention_records;
the active segment is never dropped. ``log_start_offset`` is the first remaining segment's base offset.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import crc32c

log = logging.getLogger("wirecheck.broker.rustlog")

RECORD_HEADER = struct.Struct(">IQQI")  # payload length, offset, timestamp µs, crc32c
_CRC_FIELDS = struct.Struct(">IQQ")
SUFFIX = ".log"


def encode_record(offset: int, timestamp: int, payload: bytes) -> bytes:
    fields = _CRC_FIELDS.pack(len(payload), offset, timestamp)
    crc = crc32c.crc32c(payload, crc32c.crc32c(fields))
    return fields + struct.pack(">I", crc) + payload


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class Segment:
    base_offset: int
    records: list[tuple[int, bytes]] = field(default_factory=list)  # (timestamp µs, payload)

    @property
    def end_offset(self) -> int:
        return self.base_offset + len(self.records)


class PartitionLog:
    def __init__(self, directory: Path | None, segment_records: int, retention_records: int | None,
                 fsync: bool):
        self.directory = directory
        self.segment_records = max(1, segment_records)
        self.retention_records = retention_records
        self.fsync = fsync
        self.segments: list[Segment] = [Segment(0)]
        self.lock = asyncio.Lock()  # one batch at a time (H4: a batch's offsets are consecutive)
        if directory is not None and directory.is_dir():
            self._load()
            self._retain()

    # -- state ------------------------------------------------------------------------------------------------
    @property
    def high_watermark(self) -> int:
        return self.segments[-1].end_offset

    @property
    def log_start_offset(self) -> int:
        return self.segments[0].base_offset

    @property
    def segment_count(self) -> int:
        return len(self.segments)

    def read(self, offset: int):
        """Yield (offset, timestamp, payload) from ``offset`` (>= log start) to the high watermark."""
        bases = [segment.base_offset for segment in self.segments]
        index = max(0, bisect.bisect_right(bases, offset) - 1)
        for segment in self.segments[index:]:
            start = max(0, offset - segment.base_offset)
            for i in range(start, len(segment.records)):
                timestamp, payload = segment.records[i]
                yield segment.base_offset + i, timestamp, payload

    # -- append -----------------------------------------------------------------------------------------------
    async def append(self, payloads: list[bytes], timestamp: int) -> int:
        """Append a batch and return its base offset. The caller holds ``self.lock``.

        Durable mode: the batch is written (and, by policy, fsynced) in a worker thread before it becomes
        visible in memory, so a reader never sees a record that is not yet acknowledged-durable. On an I/O
        error the files are rolled back, nothing is appended and the OSError propagates.
        """
        base = self.high_watermark
        plan = self._plan(len(payloads))
        if self.directory is not None and payloads:
            await asyncio.to_thread(self._write_batch, plan, payloads, base, timestamp)
        index = 0
        for segment_base, n in plan:
            if segment_base != self.segments[-1].base_offset:
                self.segments.append(Segment(segment_base))
            self.segments[-1].records.extend((timestamp, payload) for payload in payloads[index:index + n])
            index += n
        self._retain()
        return base

    def _plan(self, count: int) -> list[tuple[int, int]]:
        """How the next ``count`` records spread over segments: [(segment base offset, records), ...]."""
        active = self.segments[-1]
        base, room, offset, plan = active.base_offset, self.segment_records - len(active.records), active.end_offset, []
        while count > 0:
            if room <= 0:
                base, room = offset, self.segment_records
            n = min(room, count)
            plan.append((base, n))
            offset, count, room = offset + n, count - n, room - n
        return plan

    def _segment_path(self, base_offset: int) -> Path:
        return self.directory / f"{base_offset:020d}{SUFFIX}"

    def _write_batch(self, plan: list[tuple[int, int]], payloads: list[bytes], base: int, timestamp: int) -> None:
        """Worker thread: touches only files, never the in-memory state."""
        created: list[Path] = []
        grown: list[tuple[Path, int]] = []  # (file, size before) for the roll-back
        index = 0
        try:
            if not self.directory.is_dir():
                self.directory.mkdir(parents=True)
                if self.fsync:
                    fsync_dir(self.directory.parent)
            for segment_base, n in plan:
                path = self._segment_path(segment_base)
                if not path.exists():
                    created.append(path)
                with open(path, "ab") as handle:
                    grown.append((path, handle.tell()))
                    for i in range(index, index + n):
                        handle.write(encode_record(base + i, timestamp, payloads[i]))
                    handle.flush()
                    if self.fsync:
                        os.fsync(handle.fileno())
                index += n
            if created and self.fsync:
                fsync_dir(self.directory)
        except OSError:
            for path, size in grown:
                if path not in created:
                    try:
                        os.truncate(path, size)
                    except OSError:
                        pass
            for path in created:
                try:
                    path.unlink()
                except OSError:
                    pass
            raise

    def _retain(self) -> None:
        """Drop whole oldest segments while the records left after dropping still number >= retention."""
        if self.retention_records is None:
            return
        while len(self.segments) > 1 and self.high_watermark - self.segments[1].base_offset >= self.retention_records:
            dropped = self.segments.pop(0)
            if self.directory is not None:
                try:
                    self._segment_path(dropped.base_offset).unlink(missing_ok=True)
                except OSError as exc:  # the record is gone from the log either way; a restart retries
                    log.warning("retention could not delete segment %s: %s", dropped.base_offset, exc)

    # -- restart ----------------------------------------------------------------------------------------------
    def _load(self) -> None:
        paths = sorted(p for p in self.directory.iterdir()
                       if p.suffix == SUFFIX and len(p.stem) == 20 and p.stem.isdigit())
        segments: list[Segment] = []
        for position, path in enumerate(paths):
            base = int(path.stem)
            intact = not segments or base == segments[-1].end_offset
            if intact:
                segment = Segment(base)
                intact = self._read_segment(path, segment)
                segments.append(segment)
            if not intact:  # a gap or a torn record: nothing after it can be trusted
                for later in paths[position + 1:]:
                    log.warning("dropping segment %s after a damaged one", later)
                    later.unlink(missing_ok=True)
                if segments and segments[-1].base_offset != base:
                    path.unlink(missing_ok=True)
                break
        if segments:
            self.segments = segments

    @staticmethod
    def _read_segment(path: Path, segment: Segment) -> bool:
        """Load a segment's records; truncate the file at the first torn or corrupt record (False then)."""
        data = path.read_bytes()
        pos, expected, size = 0, segment.base_offset, RECORD_HEADER.size
        while pos < len(data):
            if len(data) - pos < size:
                break
            length, offset, timestamp, crc = RECORD_HEADER.unpack_from(data, pos)
            end = pos + size + length
            if end > len(data) or offset != expected:
                break
            payload = data[pos + size:end]
            if crc32c.crc32c(payload, crc32c.crc32c(data[pos:pos + 20])) != crc:
                break
            segment.records.append((timestamp, payload))
            pos, expected = end, expected + 1
        if pos == len(data):
            return True
        log.warning("%s: torn or corrupt record at byte %d, truncating %d bytes", path, pos, len(data) - pos)
        os.truncate(path, pos)
        return False
