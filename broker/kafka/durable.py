"""The optional durable log of the Kafka personality (``--data-dir``): stored batches and coordinator state survive
a restart, and memory stays bounded by settings, not by the data stored.

Layout under ``<data-dir>/kafka/``:
    topics.json                    every topic: name, partition count, topic id (hex), timestamp type, configs;
                                   rewritten atomically (write + rename) on create, alter and delete
    partitions/<topic-id>-<n>.log  partition n's batches as served (offsets assigned), in the shared batch log
                                   format (batchlog.py); each entry's metadata is the batch's lastOffsetDelta
    coordinator.json               committed offsets and transaction state (coordinator_state.py), rewritten
                                   atomically after every request that changes them

Memory: a partition keeps only its index (the batch log's, plus two ``array('q')`` columns here: each batch's
last offset and max timestamp); batch bytes come from the personality's one BatchCache (``--cache-bytes``) or
the file. Recovery reads each batch's 61-byte header once (for those columns, the transaction state and the
producer sequences) and keeps none of it.

fsync policy (``--fsync``): ``batch`` fsyncs the partition file before the produce is acknowledged; ``none``
leaves flushing to the OS. On start a torn tail (an incomplete last entry, or one whose CRC-32C does not match)
is cut off, as Kafka's log recovery truncates an unflushed segment.

Each partition keeps its file open, so in this mode the partition budget (storage.MAX_TOTAL_PARTITIONS) is also
capped at half the open-file limit (RLIMIT_NOFILE), beyond which CreateTopics answers INVALID_PARTITIONS.

What is not kept: group membership (members rejoin). Retention (``--retention-records``, retention.ms,
DeleteRecords) drops batches from the index only: the file keeps them until the topic is deleted or compacted, and
after a restart the record and time rules drop them again (a DeleteRecords log start is not kept). Compaction
rewrites the file: the cleaned batches and the rest are written to ``<n>.log.cleaning``, which then replaces the
log by rename, so a crash leaves the old log or the cleaned one. Producer sequences are rebuilt from the batches.

Decision: the layout before batch logs (``logs/<topic-id>-<n>.log`` holding bare Kafka batches) is not upgraded;
a data directory holding it is refused at start with one line saying so.
"""

from __future__ import annotations

import json
import os
import resource
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path

from wirecheck.broker.batchlog import HEADER, BatchCache, BatchLog, fsync_dir, write_atomically
from wirecheck.broker.kafka import records

PARTITIONS_DIR = "partitions"
CLEANING_SUFFIX = ".cleaning"


class PartitionLog:
    """One partition's batches on disk, with the columns :class:`storage.Partition` reads: ``bases``, ``lasts``,
    ``max_timestamps`` (same interface as ``storage.MemoryBatches``)."""

    def __init__(self, path: Path, cache: BatchCache, fsync: bool):
        self.path, self.cache, self.fsync = Path(path), cache, fsync
        self._open()

    def _open(self) -> None:
        self.log = BatchLog(self.path, self.cache, self.fsync)
        self.lasts, self.max_timestamps = array("q"), array("q")
        for header in self.headers():
            self.lasts.append(header.base_offset + header.last_offset_delta)
            self.max_timestamps.append(header.max_timestamp)

    @property
    def bases(self):
        return self.log.bases

    def __len__(self) -> int:
        return len(self.log)

    def batch(self, index: int) -> bytes:
        return self.log.read(index)

    def length(self, index: int) -> int:
        return self.log.entries[index].length

    def headers(self) -> Iterator[records.Batch]:
        """Each kept batch's header, read from the file (recovery: the cache is left alone)."""
        with open(self.path, "rb") as f:
            for index in range(len(self.log)):
                yield records.parse_header(os.pread(f.fileno(), records.HEADER_SIZE, self.log.entries[index].position))

    def append(self, base: int, stored: bytes, last: int, max_timestamp: int) -> None:
        self.log.append(base, stored, last - base)  # written (and synced) first: an OSError changes nothing here
        self.lasts.append(last)
        self.max_timestamps.append(max_timestamp)

    def drop_first(self, count: int) -> None:
        self.log.drop_first(count)
        del self.lasts[:count], self.max_timestamps[:count]

    def replace_front(self, count: int, cleaned: Iterable[bytes]) -> None:
        """The log cleaner's output: the first ``count`` batches become ``cleaned``. A new file holds the cleaned
        batches and the rest, then replaces this one by rename (a crash leaves one or the other whole)."""
        tmp = self.path.with_name(self.path.name + CLEANING_SUFFIX)
        tmp.unlink(missing_ok=True)
        out = BatchLog(tmp, self.cache, fsync=False)  # synced once, below, before the rename
        try:
            for stored in cleaned:
                header = records.parse_header(stored)
                out.append(header.base_offset, stored, header.last_offset_delta)
            for index in range(count, len(self.log)):
                entry = self.log.entries[index]
                out.append(entry.base, self.log.read(index), entry.meta)
        except BaseException:
            out.delete()
            raise
        out.close()
        if self.fsync:
            fsync_dir(tmp)  # any path: opened read-only and fsynced
        self.log.close()
        os.replace(tmp, self.path)
        if self.fsync:
            fsync_dir(self.path.parent)
        self._open()

    def close(self) -> None:
        self.log.close()

    def delete(self) -> None:
        self.log.delete()


class DurableLog:
    def __init__(self, data_dir: Path, fsync: bool, cache_bytes: int, faults=None):
        self.root = Path(data_dir) / "kafka"
        self.faults = faults  # the personality's KafkaFaults: the safety faults of recovery (faults_safety.py)
        old = self.root / "logs"
        if old.is_dir() and any(old.iterdir()):
            raise SystemExit(f"{old}: Kafka data in the layout before batch logs, which this broker does not read; "
                             f"move it away or start with an empty --data-dir")
        self.partitions = self.root / PARTITIONS_DIR
        self.partitions.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.cache = BatchCache(cache_bytes)  # shared by every partition: the durable mode's memory bound
        # each partition keeps its file open: half the descriptor limit for partitions, the rest for connections
        open_files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self.max_partitions = open_files // 2 if open_files != resource.RLIM_INFINITY else 1 << 62

    def open_partition(self, topic_id: bytes, partition: int) -> PartitionLog:
        path = self.partitions / f"{topic_id.hex()}-{partition}.log"
        log = PartitionLog(path, self.cache, self.fsync)
        if self.faults is not None and self.faults.safety_unsynced_tail_lost and len(log):
            # fault: the last batch never reached the disk, though it was acknowledged
            log.close()
            os.truncate(path, log.log.entries[-1].position - HEADER.size)
            log = PartitionLog(path, self.cache, self.fsync)
        return log

    def save_topics(self, topics) -> None:
        doc = [{"name": t.name, "partitions": len(t.partitions), "topic_id": t.topic_id.hex(),
                "log_append_time": t.log_append_time, "configs": t.configs} for t in topics]
        write_atomically(self.root / "topics.json", json.dumps(doc).encode(), self.fsync)

    def save_coordinator(self, doc: dict) -> None:
        write_atomically(self.root / "coordinator.json", json.dumps(doc).encode(), self.fsync)

    def load_coordinator(self) -> dict | None:
        path = self.root / "coordinator.json"
        return json.loads(path.read_text()) if path.exists() else None

    def load(self, storage) -> None:
        """Recreate every saved topic in ``storage`` (its partitions recover from their logs); remove the files no
        saved topic owns (a crash between the topics file and the logs, or during a compaction)."""
        index = self.root / "topics.json"
        saved = json.loads(index.read_text()) if index.exists() else []
        for entry in saved:
            storage.create(entry["name"], entry["partitions"], log_append_time=entry["log_append_time"],
                           topic_id=bytes.fromhex(entry["topic_id"]), persist=False, configs=entry.get("configs"))
        owned = {f"{t.topic_id.hex()}-{p.index}.log" for t in storage.topics.values() for p in t.partitions}
        for file in self.partitions.iterdir():
            if file.name not in owned:
                file.unlink()
