"""One durable stream segment's bytes, on disk in a batch log (batchlog.py), read back through the shared cache.

Each append is one log entry: base offset = the segment offset the append starts at, meta = the writer's event
number (0 when no writer), and the entry's bytes are ``u8 writer length | writer id | the appended data``. The
entries are thus the record of appends: a restart rebuilds the segment's length and each writer's last event
number from them (reading only each entry's small prefix), so an acknowledged append and the writer position
that deduplicates its resend are on disk together, in one write.

Memory: the batch log's index (a few integers per append) and the writers' last event numbers; the bytes live in
the file and in the personality's :class:`BatchCache`.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from wirecheck.targets.reference.batchlog import BatchCache, BatchLog

COPY_CHUNK = 1 << 20  # a merge copies the source through in appends of at most this many bytes
_WRITER_LENGTH = struct.Struct(">B")


class SegmentLog:
    def __init__(self, path: Path, cache: BatchCache, fsync: bool):
        self.path = Path(path)
        self.log = BatchLog(self.path, cache, fsync)
        self.writers: dict[bytes, int] = {}  # as recovered on open: writer id -> last event number appended
        self.length = 0  # the segment's length (offset after its last byte); kept when truncation drops entries
        self._recover()

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
                    self.length = entry.base + entry.length - 1 - writer_length
        finally:
            os.close(fd)

    def append(self, data: bytes, writer: bytes | None, event_number: int) -> None:
        """Write (and with fsync on, sync) one append; the caller acknowledges after this returns."""
        writer = writer or b""
        if len(writer) > 255:
            raise ValueError(f"writer id of {len(writer)} bytes does not fit the entry prefix")
        self.log.append(self.length, _WRITER_LENGTH.pack(len(writer)) + writer + data,
                        event_number if writer else 0)
        self.length += len(data)

    def read(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset`` (the caller keeps ``offset`` at or above the segment's start)."""
        out = bytearray()
        index = self.log.find(offset)
        while index < len(self.log) and len(out) < size:
            base = self.log.entries[index].base
            raw = memoryview(self.log.read(index))
            data = raw[1 + raw[0] :]
            begin = max(offset - base, 0)
            out += data[begin : begin + size - len(out)]
            index += 1
        return bytes(out)

    def truncate(self, offset: int) -> None:
        """Forget the entries wholly below ``offset`` (the one holding it stays)."""
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

    def delete(self) -> None:
        self.log.delete()
