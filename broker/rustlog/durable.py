"""One partition's durable log (``--data-dir``): Produce batches in shared batch-log files, read back through the
personality's bounded batch cache, so memory holds only the batch index and the cache, never the records.

Files (one directory per partition): ``<base_offset:020d>.batchlog``, each a :class:`BatchLog` (batchlog.py: CRC,
torn-tail truncation on open) holding one entry per Produce batch: its base offset, its record count as meta, and
the records in :mod:`rustlog.batch`'s encoding. A new file starts, at a batch boundary, once the active one holds
``file_bytes`` (128 MiB by default), so retention can delete whole files and a partition keeps few open files.

Segments and retention keep the in-memory log's meaning (log.py), independent of the files: segment k is offsets
[k*segment_records, (k+1)*segment_records), the segment count runs from the log start's segment to the one
holding the last record, and retention moves the log start to the base of the oldest segment that must stay. The
log start may fall inside a batch (reads start mid-batch); batches wholly below it leave the index, and a file
whose batches all lie below it is deleted. A restart replays the files and applies the same rule, which gives the
same log start, since it depends only on the high watermark.

Restart: files must follow each other without a gap (a file's first base is the previous file's end); a torn
tail is cut by BatchLog, and a file after a gap is deleted with every later one, as nothing after a hole in the
offsets can be served.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import threading
from pathlib import Path

from wirecheck.broker.batchlog import BatchCache, BatchLog, fsync_dir
from wirecheck.broker.rustlog.batch import decode_batch, encode_batch

log = logging.getLogger("wirecheck.broker.rustlog")

SUFFIX = ".batchlog"
FILE_BYTES = 128 << 20


class ThreadSafeCache(BatchCache):
    """A BatchCache that a worker thread's append and the event loop's reads may use at once."""

    def __init__(self, max_bytes: int):
        super().__init__(max_bytes)
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            return super().get(key)

    def put(self, key, data):
        with self._lock:
            super().put(key, data)

    def forget(self, log_id, positions=None):
        with self._lock:
            super().forget(log_id, positions)


class DurableLog:
    def __init__(self, directory: Path, cache: BatchCache, segment_records: int, retention_records: int | None,
                 fsync: bool, file_bytes: int | None = None, log_end_short: bool = False):
        self.directory = directory
        self.cache = cache
        self.segment_records = max(1, segment_records)
        self.retention_records = retention_records
        self.fsync = fsync
        self.file_bytes = file_bytes or FILE_BYTES  # looked up here, so that a test can shrink it
        self.files: list[BatchLog] = []  # oldest first, each non-empty but maybe the last
        self.starts: list[int] = []  # each file's first offset, for bisect
        self.high_watermark = 0
        self.log_start_offset = 0
        self.lock = asyncio.Lock()  # one batch at a time (H4: a batch's offsets are consecutive)
        if directory.is_dir():
            self._load()
            if log_end_short and self.high_watermark > self.log_start_offset:
                self.high_watermark -= 1  # fault rustlog.safety-log-end-reused (faults_safety.py)
            self._retain()

    @property
    def segment_count(self) -> int:
        last = max(0, self.high_watermark - 1) // self.segment_records
        return last - self.log_start_offset // self.segment_records + 1

    # -- read -------------------------------------------------------------------------------------------------
    def read(self, offset: int):
        """Yield (offset, timestamp, payload) from ``offset`` (>= log start) to the high watermark; each payload
        is a memoryview into its cached batch (batch.decode_batch)."""
        end = self.high_watermark  # a batch being appended in a worker thread is not visible yet
        if offset >= end or not self.files:
            return
        for file in self.files[max(0, bisect.bisect_right(self.starts, offset) - 1):]:
            index = file.find(offset)
            while index < len(file):
                entry = file.entries[index]
                if entry.base >= end:
                    return
                first = max(0, offset - entry.base)
                for position, timestamp, payload in decode_batch(file.read(index), first):
                    yield entry.base + position, timestamp, payload
                index += 1

    # -- append -----------------------------------------------------------------------------------------------
    async def append(self, payloads: list[bytes], timestamp: int) -> int:
        """Append a batch and return its base offset. The caller holds ``self.lock``.

        The batch is written (and, by policy, fsynced) in a worker thread before it becomes visible, so a reader
        never sees a record that is not yet acknowledged-durable. On an I/O error nothing is appended and the
        OSError propagates.
        """
        base = self.high_watermark
        if payloads:
            await asyncio.to_thread(self._write, base, encode_batch(timestamp, payloads), len(payloads))
            self.high_watermark = base + len(payloads)
            self._retain()
        return base

    def _write(self, base: int, batch: bytes, count: int) -> None:
        """Worker thread: appends to the active file, starting a new one when it is full."""
        active = self.files[-1] if self.files else None
        if active is not None and active.end < self.file_bytes:
            active.append(base, batch, count)
            return
        if not self.directory.is_dir():
            self.directory.mkdir(parents=True)
            if self.fsync:
                fsync_dir(self.directory.parent)
        file = BatchLog(self._path(base), self.cache, self.fsync)
        try:
            file.append(base, batch, count)
        except OSError:
            with contextlib.suppress(OSError):
                file.delete()  # no empty file left to look like a gap on restart
            raise
        self.files.append(file)
        self.starts.append(base)

    def _path(self, base: int) -> Path:
        return self.directory / f"{base:020d}{SUFFIX}"

    # -- retention --------------------------------------------------------------------------------------------
    def _retain(self) -> None:
        """Move the log start to the oldest segment whose successors hold fewer than ``retention_records``
        records; then forget the batches below it and delete files that hold nothing else."""
        if self.retention_records is None or not self.files:
            return
        size, last = self.segment_records, max(0, self.high_watermark - 1) // self.segment_records
        first = self.log_start_offset // size
        while first < last and self.high_watermark - (first + 1) * size >= self.retention_records:
            first += 1
        self.log_start_offset = max(self.log_start_offset, first * size)  # a restart may start mid-segment
        while len(self.files) > 1 and self.starts[1] <= self.log_start_offset:
            file = self.files.pop(0)
            self.starts.pop(0)
            try:
                file.delete()
            except OSError as exc:  # gone from the log either way; a restart retries
                log.warning("retention could not delete %s: %s", file.path, exc)
        file, drop = self.files[0], 0
        while drop + 1 < len(file) and file.entries[drop + 1].base <= self.log_start_offset:
            drop += 1
        if drop:
            file.drop_first(drop)
            self.starts[0] = file.entries[0].base

    # -- restart ----------------------------------------------------------------------------------------------
    def _load(self) -> None:
        paths = sorted(p for p in self.directory.iterdir()
                       if p.suffix == SUFFIX and len(p.stem) == 20 and p.stem.isdigit())
        for position, path in enumerate(paths):
            file = BatchLog(path, self.cache, self.fsync)
            if not len(file) and position + 1 < len(paths):
                file.delete()  # an empty file before others holds nothing (a crash right after creating it)
                continue
            start = file.entries[0].base if len(file) else int(path.stem)
            if self.files and start != self.high_watermark:
                log.warning("gap in %s before offset %d: dropping it and every later file", self.directory, start)
                file.delete()
                for later in paths[position + 1:]:
                    later.unlink(missing_ok=True)
                break
            if not self.files:
                self.log_start_offset = start  # retention's rule, applied next, moves it to a segment base
            self.files.append(file)
            self.starts.append(start)
            if len(file):
                last = file.entries[-1]
                self.high_watermark = last.base + last.meta
            else:
                self.high_watermark = start

    def close(self) -> None:
        for file in self.files:
            file.close()
