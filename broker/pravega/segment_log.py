"""One durable stream segment's bytes, on disk in batch logs (batchlog.py), read back through the shared cache.

Two batch logs per segment, their entries alike: base offset = the segment offset the entry starts at, meta = the
writer's (last) event number (0 when no writer), bytes = ``u8 writer length | writer id | the appended data``:

- ``<n>.log``, the data: each entry holds one writer's consecutive appends, coalesced up to ``COALESCE_BYTES``.
- ``<n>.tail``, the appends not yet in the data log, one entry each; their bytes are also held in memory. An
  append is written (and with fsync on, synced) to the tail before it is acknowledged, so it is durable at once.
  When another writer appends, or the tail and the next append would reach ``COALESCE_BYTES`` (or the tail holds
  ``MAX_TAIL_APPENDS``), the tail and that append go to the data log as one entry and the tail is cleared. An
  append that reaches the bound alone goes to the data log directly.

Why: the data log's index costs 32 bytes per entry and pravega-client sends each event as its own append, so one
entry per append made memory grow with the events stored (1M events: 219 MB peak). Coalesced, the index is 32
bytes per ~``COALESCE_BYTES`` of data, and the tail costs at most ``COALESCE_BYTES`` per segment.

Crash safety: the data entry is written before the tail is cleared. On open the data log recovers first (a torn
entry is cut off); then the tail's entries below the data log's end (flushed, but the clear was cut short) are
skipped, and the rest, contiguous from that end, are moved into the data log (one entry per writer run) and the
tail cleared. The entries are thus the record of appends: the segment's length and each writer's last event
number come back from them (reading only each data entry's small prefix), so an acknowledged append and the
writer position that deduplicates its resend are on disk together, in one write.

Memory: the data log's index, the tail (bytes and index), the writers' last event numbers; the data's bytes live
in the file and in the personality's :class:`BatchCache`.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from wirecheck.broker.batchlog import BatchCache, BatchLog

COPY_CHUNK = 1 << 20  # a merge copies the source through in appends of at most this many bytes
COALESCE_BYTES = 64 << 10  # a data entry's target size: the index is 32 bytes per this much data
MAX_TAIL_APPENDS = 1024  # tiny appends: the tail's own index stays small too
_WRITER_LENGTH = struct.Struct(">B")


def tail_path(path: Path) -> Path:
    return Path(path).with_suffix(".tail")


class SegmentLog:
    def __init__(self, path: Path, cache: BatchCache, fsync: bool, fresh: bool = False):
        """``fresh``: remove files left under this name first (a new segment)."""
        self.path = Path(path)
        if fresh:
            self.path.unlink(missing_ok=True)
            tail_path(self.path).unlink(missing_ok=True)
        self.cache, self.fsync = cache, fsync
        self.log = BatchLog(self.path, cache, fsync)
        self.tail: BatchLog | None = None  # opened at the first append that goes through it
        self.writers: dict[bytes, int] = {}  # as recovered on open: writer id -> last event number appended
        self.flushed = 0  # the data log's end (segment offset); kept when truncation drops entries
        self.pending = bytearray()  # the tail's bytes, from ``flushed`` on
        self.pending_writer = b""
        self.pending_event = 0
        self._recover()
        if tail_path(self.path).exists():
            self._recover_tail()

    @property
    def length(self) -> int:
        return self.flushed + len(self.pending)

    def _recover(self) -> None:
        if not len(self.log):
            return
        fd = os.open(self.path, os.O_RDONLY)  # only the prefixes are read: the data stays out of memory
        try:
            for index in range(len(self.log)):
                entry = self.log.entries[index]
                head = os.pread(fd, 256, entry.position)
                writer_length = head[0]
                if writer_length:
                    self.writers[bytes(head[1 : 1 + writer_length])] = entry.meta
                if index == len(self.log) - 1:
                    self.flushed = entry.base + entry.length - 1 - writer_length
        finally:
            os.close(fd)

    def _recover_tail(self) -> None:
        """Move the tail's appends beyond the data log's end into it (module docstring), then clear the tail."""
        tail = self._open_tail()
        for index in range(len(tail)):
            base = tail.entries[index].base
            if base < self.flushed:
                continue  # in the data log already
            if base != self.length:
                break  # not contiguous: nothing after it can be
            raw = tail.read(index)
            writer = bytes(raw[1 : 1 + raw[0]])
            if self.pending and writer != self.pending_writer:
                self._to_data(b"", self.pending_writer, self.pending_event)  # the tail is cleared last
            self._hold(raw[1 + raw[0] :], writer, tail.entries[index].meta)
            if writer:
                self.writers[writer] = tail.entries[index].meta
        self._to_data(b"", self.pending_writer, self.pending_event)
        if len(tail):
            tail.clear()

    def _open_tail(self) -> BatchLog:
        if self.tail is None:
            self.tail = BatchLog(tail_path(self.path), self.cache, self.fsync)
        return self.tail

    def append(self, data: bytes, writer: bytes | None, event_number: int) -> None:
        """Write (and with fsync on, sync) one append; the caller acknowledges after this returns."""
        writer = writer or b""
        if len(writer) > 255:
            raise ValueError(f"writer id of {len(writer)} bytes does not fit the entry prefix")
        meta = event_number if writer else 0
        if self.pending and writer != self.pending_writer:
            self._write_data(b"", self.pending_writer, self.pending_event)  # a data entry holds one writer
        if len(self.pending) + len(data) >= COALESCE_BYTES or (
                self.tail is not None and len(self.tail) >= MAX_TAIL_APPENDS):
            self._write_data(data, writer, meta)  # the tail so far and this append, as one entry
            return
        self._open_tail().append(self.length, _WRITER_LENGTH.pack(len(writer)) + writer + data, meta)
        self._hold(data, writer, meta)

    def _hold(self, data: bytes, writer: bytes, meta: int) -> None:
        self.pending += data
        self.pending_writer, self.pending_event = writer, meta

    def _write_data(self, data: bytes, writer: bytes, meta: int) -> None:
        """The tail and ``data`` as one data entry, then the tail cleared: only once the entry is on disk."""
        self._to_data(data, writer, meta)
        if self.tail is not None and len(self.tail):
            self.tail.clear()

    def _to_data(self, data: bytes, writer: bytes, meta: int) -> None:
        """One data entry: the held tail bytes then ``data`` (all ``writer``'s, ``meta`` its last event number)."""
        if not self.pending and not data:
            return
        self.log.append(self.flushed, _WRITER_LENGTH.pack(len(writer)) + writer + self.pending + data, meta)
        self.flushed += len(self.pending) + len(data)
        self.pending = bytearray()

    def read(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset`` (the caller keeps ``offset`` at or above the segment's start)."""
        out = bytearray()
        if offset < self.flushed:
            index = self.log.find(offset)
            while index < len(self.log) and len(out) < size:
                base = self.log.entries[index].base
                raw = memoryview(self.log.read(index))
                data = raw[1 + raw[0] :]
                begin = max(offset - base, 0)
                out += data[begin : begin + size - len(out)]
                index += 1
        at = offset + len(out)
        if len(out) < size and at >= self.flushed:
            begin = at - self.flushed
            out += self.pending[begin : begin + size - len(out)]
        return bytes(out)

    def truncate(self, offset: int) -> None:
        """Forget the data entries wholly below ``offset`` (the one holding it stays)."""
        count = self.log.find(offset)
        if count:
            self.log.drop_first(count)

    def copy_from(self, source: SegmentLog, offset: int) -> None:
        """Append ``source``'s bytes from ``offset`` to its end, a bounded piece at a time (a merge)."""
        while offset < source.length:
            piece = source.read(offset, COPY_CHUNK)
            if not piece:
                break
            self.append(piece, None, 0)
            offset += len(piece)

    def close(self) -> None:
        self.log.close()
        if self.tail is not None:
            self.tail.close()

    def delete(self) -> None:
        self.log.delete()
        if self.tail is not None:
            self.tail.delete()
        else:
            tail_path(self.path).unlink(missing_ok=True)
