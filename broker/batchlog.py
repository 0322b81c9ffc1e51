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

Memory: the index is four ``array('q')`` columns (base, position, length, meta), 32 bytes per batch and no Python
object per batch; ``entries`` and ``bases`` are read-only views over them (``entries[i]`` builds an :class:`Entry`).
Reads go through :class:`BatchCache`, one per personality, holding at most ``max_bytes`` of batches over
all its partitions (least recently used first out); a miss reads the file with ``os.pread``. Appended batches
enter the cache, since streaming consumers read them next.

Retention (:meth:`BatchLog.drop_first`) drops whole batches from the start of the index only: the file keeps
their bytes (it is never rewritten), so a restart replays them and the caller applies its retention rule again.
Dropping moves a start index; the columns are compacted once the dropped part is at least half of them, so a loop
of small drops costs amortised O(1) per batch, not O(n) per call.
"""

from __future__ import annotations

import bisect
import itertools
import os
import struct
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import crc32c

MAGIC = b"WCBLOG1\n"
HEADER = struct.Struct(">IIqq")  # length, CRC-32C, base_offset, meta
_CRC_FIELDS = struct.Struct(">qq")  # what the CRC covers before the batch
MAX_BATCH = (1 << 31) - 1  # a length field above it is damage, never a batch
#: --cache-bytes' default: an idle broker is about 50 MB, so a full cache keeps it under 100 MB settled
DEFAULT_CACHE_BYTES = 32 << 20
_COMPACT_AFTER = 1024  # dropped index rows kept before compacting (and then only when they are half the columns)


class CorruptLog(Exception):
    """The file is not a batch log (wrong magic): refused rather than truncated to nothing."""


@dataclass(frozen=True, slots=True)
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


class _View(Sequence):
    """Read-only sequence over the kept rows of a :class:`BatchLog`'s columns; subclasses say what a row is."""

    __slots__ = ("_log",)
    __hash__ = None

    def __init__(self, log: BatchLog):
        self._log = log

    def __len__(self) -> int:
        return len(self._log._bases) - self._log._start

    def _row(self, index: int) -> int:
        """Column index of kept row ``index`` (negative counts from the end)."""
        start, stop = self._log._start, len(self._log._bases)
        row = index + (stop if index < 0 else start)
        if not start <= row < stop:
            raise IndexError("batch log index out of range")
        return row

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._at(self._log._start + i) for i in range(*index.indices(len(self)))]
        return self._at(self._row(index))

    def __eq__(self, other) -> bool:
        if isinstance(other, (_View, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class _Entries(_View):
    __slots__ = ()

    def _at(self, row: int) -> Entry:
        log = self._log
        return Entry(log._bases[row], log._positions[row], log._lengths[row], log._metas[row])


class _Bases(_View):
    __slots__ = ()

    def _at(self, row: int) -> int:
        return self._log._bases[row]

    def __getitem__(self, index):
        # the common case inline: bisect over this view calls it log2(n) times per lookup
        if type(index) is int and index >= 0:
            log = self._log
            row = index + log._start
            if row < len(log._bases):
                return log._bases[row]
        return super().__getitem__(index)


class BatchLog:
    """One partition's batches in one file (format in the module docstring), with its index in memory."""

    def __init__(self, path: Path, cache: BatchCache, fsync: bool = True):
        self.path = Path(path)
        self.cache = cache
        self.fsync = fsync
        self.id = next(_log_ids)
        # the index: one row per batch in four columns; rows before _start are dropped (retention), not yet compacted
        self._bases, self._positions, self._lengths, self._metas = array("q"), array("q"), array("q"), array("q")
        self._start = 0
        self.entries: Sequence[Entry] = _Entries(self)  # kept batches, base offsets ascending
        self.bases: Sequence[int] = _Bases(self)  # each kept batch's base, for bisect
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
            fsync_dir(self.path.parent)  # the new file's name must survive a crash too

    def _recover(self) -> int:
        """Build the index from the file; truncate a torn or corrupt tail. Returns the end of the valid data."""
        file_size = os.fstat(self._fd).st_size
        magic = os.pread(self._fd, len(MAGIC), 0)
        if len(magic) < len(MAGIC) and MAGIC.startswith(magic):  # new, or torn while being created
            os.ftruncate(self._fd, 0)
            write_all(self._fd, MAGIC, 0)
            self._sync()
            return len(MAGIC)
        if magic != MAGIC:
            raise CorruptLog(f"{self.path}: not a batch log (magic {magic!r})")
        position = len(MAGIC)
        last_base = -(1 << 63)
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
                if base < last_base:
                    break
                last_base = base
                self._index(base, body_at, length, meta)
                position = body_at + length
        if position < file_size:
            self.truncated = file_size - position
            os.ftruncate(self._fd, position)
            self._sync()
        return position

    def _index(self, base: int, position: int, length: int, meta: int) -> None:
        # ``bases`` last: its length is the index's, so a reader on another thread (RustLog appends in a worker
        # thread) never sees a row whose other columns are not there yet
        self._positions.append(position)
        self._lengths.append(length)
        self._metas.append(meta)
        self._bases.append(base)
        self.size += length

    def _sync(self) -> None:
        if self.fsync:
            os.fsync(self._fd)

    def append(self, base_offset: int, batch: bytes, meta: int = 0) -> Entry:
        """Write one batch; with fsync on it is on disk when this returns (acknowledge only after it).

        A failed write (e.g. a full disk) leaves the file as it was and raises OSError.
        """
        if len(self) and base_offset < self._bases[-1]:
            raise ValueError(f"base offset {base_offset} below the last one, {self._bases[-1]}")
        if len(batch) > MAX_BATCH:
            raise ValueError(f"batch of {len(batch)} bytes over {MAX_BATCH}")
        crc = crc32c.crc32c(batch, crc32c.crc32c(_CRC_FIELDS.pack(base_offset, meta)))
        try:
            write_all(self._fd, HEADER.pack(len(batch), crc, base_offset, meta) + batch, self.end)
            self._sync()
        except OSError:
            os.ftruncate(self._fd, self.end)  # no half entry for the next append to follow
            raise
        position = self.end + HEADER.size
        self.end = position + len(batch)
        self._index(base_offset, position, len(batch), meta)
        self.cache.put((self.id, position), bytes(batch))
        return Entry(base_offset, position, len(batch), meta)

    def find(self, offset: int) -> int:
        """Index (into ``entries``) of the batch holding ``offset``: the last one whose base is at most it (0 when
        ``offset`` is below the first base)."""
        return max(bisect.bisect_right(self._bases, offset, self._start) - 1 - self._start, 0)

    def read(self, index: int) -> bytes:
        """The bytes of ``entries[index]``, from the cache or the file."""
        row = self.entries._row(index)
        position = self._positions[row]
        key = (self.id, position)
        data = self.cache.get(key)
        if data is None:
            length = self._lengths[row]
            data = os.pread(self._fd, length, position)
            if len(data) != length:
                raise OSError(f"{self.path}: short read at {position}")
            self.cache.put(key, data)
        return data

    def drop_first(self, count: int) -> None:
        """Forget the first ``count`` batches (retention). The index only: the file keeps their bytes."""
        start = self._start
        stop = min(start + max(count, 0), len(self._bases))
        self.size -= sum(self._lengths[start:stop])
        self.cache.forget(self.id, self._positions[start:stop].tolist())
        self._start = stop
        if stop >= _COMPACT_AFTER and 2 * stop >= len(self._bases):
            for column in (self._bases, self._positions, self._lengths, self._metas):
                del column[:stop]
            self._start = 0

    def __len__(self) -> int:
        return len(self._bases) - self._start

    def clear(self) -> None:
        """Forget every batch and cut the file back to its magic (its batches are durable elsewhere: the caller's
        to ensure). A crash part way leaves the old batches or none, never a torn entry."""
        os.ftruncate(self._fd, len(MAGIC))
        self._sync()
        self.cache.forget(self.id, self._positions.tolist())
        for column in (self._bases, self._positions, self._lengths, self._metas):
            del column[:]
        self._start, self.size, self.end = 0, 0, len(MAGIC)

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
            fsync_dir(self.path.parent)


def lose_last_entry(log: BatchLog) -> None:
    """Close ``log`` and cut its last entry from the file: what a crash loses of a batch acknowledged from the page
    cache (the safety faults ``<personality>.safety-unsynced-tail-lost``; the caller opens the log again)."""
    cut = log.entries[-1].position - HEADER.size
    log.close()
    os.truncate(log.path, cut)


def write_all(fd: int, data: bytes, position: int) -> None:
    """``data`` written at ``position`` whole (pwrite may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, position)
        view, position = view[written:], position + written


def fsync_dir(path: Path) -> None:
    """Make the directory's entries (a created, renamed or removed file's name) survive a crash."""
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
        fsync_dir(path.parent)
