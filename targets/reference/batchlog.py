"""An append-only durable log of opaque batches for one partition, and the byte-bounded cache its reads share.

Shared by the personalities that persist a partition as a sequence of batches; it knows nothing of what a batch
holds. The caller gives each batch its base offset and one integer of metadata (e.g. its record count, so that
the next offset is known after a restart without decoding any batch).

File format (one file per partition): the 8-byte magic ``WCBLOG1\\n``, then entries, each a 24-byte header and
the batch's bytes::

    u32 length | u32 CRC-32C | i64 base_offset | i64 meta        (big-endian)  + ``length`` bytes of batch

The CRC-32C (Castagnoli, the ``crc32c`` package) covers base_offset, meta and the batch, so a torn or bit-flipped
header is caught as well as a damaged body. Base offsets never decrease.

Recovery (on open), as Kafka's log recovery does: entries are replayed from the start into an in-memory index
(base offset -> position, length, meta; no batch bytes are kept); the first entry that is incomplete (the file
ends inside it), fails its CRC, or goes back in offsets ends the log, and the file is truncated there. Everything
before it was written whole, and with fsync on, acknowledged.

Memory: reads go through :class:`BatchCache`, one per personality, holding at most ``max_bytes`` of batches over
all its partitions (least recently used first out); a miss reads the file with ``os.pread``. Appended batches
enter the cache, since streaming consumers read them next.

Retention (:meth:`BatchLog.drop_first`) drops whole batches from the start of the index only: the file keeps
their bytes (it is never rewritten), so a restart replays them and the caller applies its retention rule again.
"""

from __future__ import annotations

import bisect
import itertools
import os
import struct
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import crc32c

MAGIC = b"WCBLOG1\n"
HEADER = struct.Struct(">IIqq")  # length, CRC-32C, base_offset, meta
_CRC_FIELDS = struct.Struct(">qq")  # what the CRC covers before the batch
MAX_BATCH = (1 << 31) - 1  # a length field above it is damage, never a batch


class CorruptLog(Exception):
    """The file is not a batch log (wrong magic): refused rather than truncated to nothing."""


@dataclass(frozen=True)
class Entry:
    base: int  # the batch's base offset
    position: int  # file position of the batch's bytes (after its header)
    length: int
    meta: int  # the caller's number for this batch


class BatchCache:
    """Batches by (log, position), least recently used evicted first, at most ``max_bytes`` in all.

    One instance serves every partition of a personality, so its memory is bounded by this setting, not by the
    data stored. A batch larger than the whole budget is never cached.
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.size = 0
        self._items: OrderedDict[tuple[int, int], bytes] = OrderedDict()

    def get(self, key: tuple[int, int]) -> bytes | None:
        data = self._items.get(key)
        if data is not None:
            self._items.move_to_end(key)
        return data

    def put(self, key: tuple[int, int], data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        old = self._items.pop(key, None)
        if old is not None:
            self.size -= len(old)
        self._items[key] = data
        self.size += len(data)
        while self.size > self.max_bytes:
            _, evicted = self._items.popitem(last=False)
            self.size -= len(evicted)

    def forget(self, log_id: int, positions: list[int] | None = None) -> None:
        """Drop one log's batches: those at ``positions``, or all of them."""
        keys = [(log_id, p) for p in positions] if positions is not None else \
            [key for key in self._items if key[0] == log_id]
        for key in keys:
            data = self._items.pop(key, None)
            if data is not None:
                self.size -= len(data)

    def __len__(self) -> int:
        return len(self._items)


_log_ids = itertools.count(1)  # cache keys: never reused, unlike id()


class BatchLog:
    """One partition's batches in one file (format in the module docstring), with its index in memory."""

    def __init__(self, path: Path, cache: BatchCache, fsync: bool = True):
        self.path = Path(path)
        self.cache = cache
        self.fsync = fsync
        self.id = next(_log_ids)
        self.entries: list[Entry] = []  # kept batches, base offsets ascending
        self.bases: list[int] = []  # each kept entry's base, for bisect
        self.size = 0  # bytes of the kept batches (headers excluded)
        self.truncated = 0  # bytes of torn or corrupt tail removed on open
        created = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            self.end = self._recover()
        except BaseException:
            os.close(self._fd)
            raise
        if created and fsync:
            _fsync_dir(self.path.parent)  # the new file's name must survive a crash too

    def _recover(self) -> int:
        """Build the index from the file; truncate a torn or corrupt tail. Returns the end of the valid data."""
        file_size = os.fstat(self._fd).st_size
        magic = os.pread(self._fd, len(MAGIC), 0)
        if len(magic) < len(MAGIC) and MAGIC.startswith(magic):  # new, or torn while being created
            os.ftruncate(self._fd, 0)
            _write_all(self._fd, MAGIC, 0)
            self._sync()
            return len(MAGIC)
        if magic != MAGIC:
            raise CorruptLog(f"{self.path}: not a batch log (magic {magic!r})")
        position = len(MAGIC)
        with open(self._fd, "rb", closefd=False) as reader:
            reader.seek(position)
            while True:
                header = reader.read(HEADER.size)
                if len(header) < HEADER.size:
                    break
                length, crc, base, meta = HEADER.unpack(header)
                body_at = position + HEADER.size
                if length > MAX_BATCH or body_at + length > file_size:
                    break  # torn: the file ends inside this entry (checked before reading, so no huge buffer)
                data = reader.read(length)
                if crc32c.crc32c(data, crc32c.crc32c(_CRC_FIELDS.pack(base, meta))) != crc:
                    break
                if self.bases and base < self.bases[-1]:
                    break
                self._index(Entry(base, body_at, length, meta))
                position = body_at + length
        if position < file_size:
            self.truncated = file_size - position
            os.ftruncate(self._fd, position)
            self._sync()
        return position

    def _index(self, entry: Entry) -> None:
        self.entries.append(entry)
        self.bases.append(entry.base)
        self.size += entry.length

    def _sync(self) -> None:
        if self.fsync:
            os.fsync(self._fd)

    def append(self, base_offset: int, batch: bytes, meta: int = 0) -> Entry:
        """Write one batch; with fsync on it is on disk when this returns (acknowledge only after it).

        A failed write (e.g. a full disk) leaves the file as it was and raises OSError.
        """
        if self.bases and base_offset < self.bases[-1]:
            raise ValueError(f"base offset {base_offset} below the last one, {self.bases[-1]}")
        if len(batch) > MAX_BATCH:
            raise ValueError(f"batch of {len(batch)} bytes over {MAX_BATCH}")
        crc = crc32c.crc32c(batch, crc32c.crc32c(_CRC_FIELDS.pack(base_offset, meta)))
        try:
            _write_all(self._fd, HEADER.pack(len(batch), crc, base_offset, meta) + batch, self.end)
            self._sync()
        except OSError:
            os.ftruncate(self._fd, self.end)  # no half entry for the next append to follow
            raise
        entry = Entry(base_offset, self.end + HEADER.size, len(batch), meta)
        self.end = entry.position + entry.length
        self._index(entry)
        self.cache.put((self.id, entry.position), bytes(batch))
        return entry

    def find(self, offset: int) -> int:
        """Index (into ``entries``) of the batch holding ``offset``: the last one whose base is at most it (0 when
        ``offset`` is below the first base)."""
        return max(bisect.bisect_right(self.bases, offset) - 1, 0)

    def read(self, index: int) -> bytes:
        """The bytes of ``entries[index]``, from the cache or the file."""
        entry = self.entries[index]
        key = (self.id, entry.position)
        data = self.cache.get(key)
        if data is None:
            data = os.pread(self._fd, entry.length, entry.position)
            if len(data) != entry.length:
                raise OSError(f"{self.path}: short read at {entry.position}")
            self.cache.put(key, data)
        return data

    def drop_first(self, count: int) -> None:
        """Forget the first ``count`` batches (retention). The index only: the file keeps their bytes."""
        dropped = self.entries[:count]
        del self.entries[:count]
        del self.bases[:count]
        self.size -= sum(e.length for e in dropped)
        self.cache.forget(self.id, [e.position for e in dropped])

    def __len__(self) -> int:
        return len(self.entries)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self.cache.forget(self.id)

    def delete(self) -> None:
        """Close and remove the file (its partition is gone)."""
        self.close()
        self.path.unlink(missing_ok=True)
        if self.fsync:
            _fsync_dir(self.path.parent)


def _write_all(fd: int, data: bytes, position: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, position)
        view, position = view[written:], position + written


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old file or the new one, never a mix: a temporary
    file beside it, fsynced, renamed over it, and the directory fsynced (for small metadata files)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as out:
        out.write(data)
        out.flush()
        if fsync:
            os.fsync(out.fileno())
    os.replace(tmp, path)
    if fsync:
        _fsync_dir(path.parent)
