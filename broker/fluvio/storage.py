"""Topics and partitions, in memory or under --data-dir, with offsets assigned the way the SPU assigns them.

Offsets (notes §4.4 steps 7-8, §12 "mirror"): a batch's base_offset is the partition's LEO before the write, and
the LEO then advances by last_offset_delta + 1, whatever the records inside say (A14). One replica, so the high
watermark moves with the LEO at write time (§4.4 step 9) and ReadCommitted never waits.

Retention (``--retention-records``, as the other personalities): each partition keeps at least that many
records, dropping whole batches from its start, and the log start offset moves up to the first kept batch, as
the SPU's segment retention does; reads below it get OffsetEvicted (71) (notes §5.2).

Two modes. In memory (no ``--data-dir``): all partitions together hold at most ``max_bytes`` of batches; a
produce that would pass it gets PartitionFull (72), the SPU's "storage full" answer (§4.4 step 7), so that no
producer can exhaust the broker's memory. Durable (``--data-dir``), under ``<data-dir>/fluvio/``:
``topics.json`` (topic names and partition counts) and ``consumer-offsets.json``, each rewritten atomically
after every change, and one batch log per partition, ``partitions/<topic>/<index>.log`` (batchlog.py; the
record count of each batch is its metadata, so the LEO is known after a replay). Decision: in durable mode
there is no PartitionFull; memory is bounded by the batch cache (``--cache-bytes``, shared by all partitions)
and the index, and the disk is the limit, as on the SPU. With ``--fsync batch`` (the default) every batch is
synced before Produce answers. Retention drops batches from the index only; after a restart the same rule
drops them again. Not persisted: the SC's per-topic settings other than the partition count (replication,
compression type), which come back as defaults.

Topics (the SPU has no CreateTopic API; decision, written down in ``__init__``): a Produce to a topic the
broker does not know creates it with ``default_partitions`` partitions when auto-creation is on and the name is
a valid Fluvio topic name; any other miss is "no leader here" (error 6 / 3001).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wirecheck.broker.batchlog import DEFAULT_CACHE_BYTES, BatchCache, BatchLog, lose_last_entry, write_atomically

#: Fluvio's topic name rule (``valid_topic_name`` / ``validate_resource_name`` in fluvio-sc-schema and
#: fluvio-controlplane-metadata): lowercase ASCII letters, digits and '-', starting and ending with a letter or
#: digit. Length: FLUVIO_MAX_SIZE_TOPIC_NAME = 255 (notes §8; newer upstream caps resource names at 63, which
#: this broker does not enforce, so that the suite's generated names fit).
TOPIC_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,253}[a-z0-9])?")


TOPICS_FILE, OFFSETS_FILE, PARTITIONS_DIR = "topics.json", "consumer-offsets.json", "partitions"


def valid_topic_name(name: str) -> bool:
    return TOPIC_NAME.fullmatch(name) is not None


def _dir_name(topic: str) -> str:
    """A topic's directory: its name when valid (no '/', '.', '_'), else '_' + hex, which no valid name can be."""
    return topic if valid_topic_name(topic) else "_" + topic.encode().hex()


@dataclass
class Partition:
    batches: list[bytes] = field(default_factory=list)  # stored copies, base offsets ascending
    bases: list[int] = field(default_factory=list)  # each stored batch's base_offset, for bisect
    leo: int = 0
    log_start: int = 0
    size: int = 0  # bytes held
    short_circuited: bool = False  # only under the negative-delta-short-circuits fault (A14)
    listeners: set[asyncio.Event] = field(default_factory=set)  # stream fetches waiting for new data
    log: BatchLog | None = None  # durable mode: the batches live here, not in ``batches`` / ``bases``

    @classmethod
    def durable(cls, log: BatchLog, retention: int | None) -> Partition:
        """A partition over a replayed batch log: the LEO is the last batch's base plus its record count."""
        partition = cls(log=log, size=log.size)
        if log.entries:
            last = log.entries[-1]
            partition.leo = last.base + last.meta
            partition.log_start = log.bases[0]
        if retention is not None:
            partition._retain(retention)  # the file still holds what retention dropped before the restart
        return partition

    @property
    def hw(self) -> int:
        return self.leo  # a single in-sync replica: HW moves to LEO at write time (§4.4 step 9)

    def append(self, stored: bytes, records: int, retention: int | None = None) -> int:
        """Keep one batch already rewritten to base_offset = self.leo; advance the LEO by its record total.

        Returns the change in bytes held (the new batch minus any batches retention dropped). Durable: the batch
        is written (and synced, with fsync on) first; an OSError leaves the partition unchanged.
        """
        before = self.size
        if self.log is not None:
            self.log.append(self.leo, stored, records)
        else:
            self.bases.append(self.leo)
            self.batches.append(stored)
        self.leo += records
        self.size += len(stored)
        if retention is not None:
            self._retain(retention)
        for event in self.listeners:
            event.set()
        return self.size - before

    def _retain(self, retention: int) -> None:
        """Drop whole batches from the start while the ones after them still hold ``retention`` records."""
        bases = self.log.bases if self.log is not None else self.bases
        drop = 0
        while len(bases) - drop > 1 and self.leo - bases[drop + 1] >= retention:
            drop += 1
        if drop and self.log is not None:
            self.log.drop_first(drop)
            self.size = self.log.size
        elif drop:
            self.size -= sum(len(b) for b in self.batches[:drop])
            del self.batches[:drop], self.bases[:drop]
        if bases:
            self.log_start = bases[0]

    def read(self, offset: int, max_bytes: int, end: int) -> bytes:
        """Stored bytes from the batch containing ``offset`` up to ``end``, cut to ``max_bytes`` (§5.2).

        The cut ignores batch boundaries, as the SPU's file slice does; clients drop a truncated last batch.
        The caller has checked log_start <= offset < end.
        """
        if max_bytes <= 0:
            return b""
        # durable: the index in memory, the bytes from the shared cache or the file
        bases = self.log.bases if self.log is not None else self.bases
        batch_at = self.log.read if self.log is not None else self.batches.__getitem__
        index = self.log.find(offset) if self.log is not None else max(bisect.bisect_right(bases, offset) - 1, 0)
        out = bytearray()
        while index < len(bases) and bases[index] < end and len(out) < max_bytes:
            out += batch_at(index)
            index += 1
        return bytes(out[:max_bytes])


@dataclass
class Topic:
    partitions: list[Partition]


class Storage:
    def __init__(self, default_partitions: int = 1, auto_create: bool = True,
                 topics: dict[str, int] | None = None, retention_records: int | None = None,
                 max_bytes: int = 1 << 30, data_dir: Path | None = None, fsync: bool = True,
                 cache_bytes: int = DEFAULT_CACHE_BYTES, faults=None):
        self.faults = faults  # the personality's FluvioFaults: the safety faults of recovery (faults_safety.py)
        self.default_partitions = default_partitions
        self.auto_create = auto_create
        self.retention_records = retention_records
        self.max_bytes = max_bytes
        self.size = 0  # bytes held by all partitions
        self.topics: dict[str, Topic] = {}
        self.watchers: list[Callable[[str, Topic, bool], None]] = []  # (name, topic, deleted): the SC's epochs
        #: (topic, partition, consumer_id) -> (offset, modified time in ms): UpdateConsumerOffset's store (§5.6)
        self.consumer_offsets: dict[tuple[str, int, str], tuple[int, int]] = {}
        self.root = None if data_dir is None else Path(data_dir) / "fluvio"  # None: in memory
        self.fsync = fsync
        if self.root is not None:
            self.cache = BatchCache(cache_bytes)  # shared by every partition: the durable mode's memory bound
            self._load()
        for name, count in (topics or {}).items():
            if self.root is None or name not in self.topics:  # durable: a restart keeps the stored topic
                self.create(name, count)

    # -------------------------------------------------------------------------------- durable mode

    def _load(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        topics_file, offsets_file = self.root / TOPICS_FILE, self.root / OFFSETS_FILE
        stored = json.loads(topics_file.read_text()) if topics_file.exists() else {}
        for name, count in stored.items():
            self.topics[name] = Topic([self._open(name, index) for index in range(count)])
            self.size += sum(p.size for p in self.topics[name].partitions)
        if offsets_file.exists():
            for topic, index, consumer, offset, modified in json.loads(offsets_file.read_text()):
                self.consumer_offsets[(topic, index, consumer)] = (offset, modified)
        # a crash between the topics file and the logs (create writes the file first, delete removes logs after)
        known = {_dir_name(name) for name in self.topics}
        partitions = self.root / PARTITIONS_DIR
        for orphan in (d for d in (partitions.iterdir() if partitions.exists() else []) if d.name not in known):
            for file in orphan.iterdir():
                file.unlink()
            orphan.rmdir()

    def _open(self, name: str, index: int) -> Partition:
        path = self.root / PARTITIONS_DIR / _dir_name(name) / f"{index}.log"
        log = BatchLog(path, self.cache, self.fsync)
        if self.faults is not None and self.faults.safety_unsynced_tail_lost and len(log):
            lose_last_entry(log)  # fault: the last batch never reached the disk, though it was acknowledged
            log = BatchLog(path, self.cache, self.fsync)
        return Partition.durable(log, self.retention_records)

    def _save_topics(self, adding: dict[str, int] | None = None) -> None:
        counts = {name: len(topic.partitions) for name, topic in self.topics.items()}
        write_atomically(self.root / TOPICS_FILE, json.dumps({**counts, **(adding or {})}).encode(), self.fsync)

    def _save_offsets(self) -> None:
        write_atomically(self.root / OFFSETS_FILE, json.dumps(
            [[*key, *value] for key, value in self.consumer_offsets.items()]).encode(), self.fsync)

    def _remove_logs(self, name: str, topic: Topic) -> None:
        for partition in topic.partitions:
            partition.log.delete()
        with contextlib.suppress(OSError):
            (self.root / PARTITIONS_DIR / _dir_name(name)).rmdir()

    def set_consumer_offset(self, key: tuple[str, int, str], offset: int, modified: int) -> None:
        self.consumer_offsets[key] = (offset, modified)
        if self.root is not None:
            self._save_offsets()

    def delete_consumer_offset(self, key: tuple[str, int, str]) -> None:
        if self.consumer_offsets.pop(key, None) is not None and self.root is not None:
            self._save_offsets()

    def close(self) -> None:
        for topic in self.topics.values():
            for partition in topic.partitions:
                if partition.log is not None:
                    partition.log.close()

    # -------------------------------------------------------------------------------- topics

    def create(self, name: str, partitions: int) -> Topic:
        if self.root is None:
            topic = Topic([Partition() for _ in range(partitions)])
        else:
            old = self.topics.pop(name, None)  # replaced, as in memory (only start-up topics can be)
            if old is not None:
                self.size -= sum(p.size for p in old.partitions)
                self._remove_logs(name, old)
            self._save_topics({name: partitions})  # listed before its logs exist: a crash between leaves no orphan
            topic = Topic([self._open(name, index) for index in range(partitions)])
        self.topics[name] = topic
        for watcher in self.watchers:
            watcher(name, topic, False)
        return topic

    def delete(self, name: str) -> Topic | None:
        topic = self.topics.pop(name, None)
        if topic is not None:
            for partition in topic.partitions:
                self.size -= partition.size
            if self.root is not None:
                self._save_topics()
                self._remove_logs(name, topic)
            for watcher in self.watchers:
                watcher(name, topic, True)
        return topic

    def partition(self, name: str, index: int) -> Partition | None:
        topic = self.topics.get(name)
        if topic is None or not 0 <= index < len(topic.partitions):
            return None
        return topic.partitions[index]

    def partition_for_produce(self, name: str, index: int) -> Partition | None:
        """Like ``partition``, but first creates an unknown, validly named topic when auto-creation is on."""
        if name not in self.topics and self.auto_create and valid_topic_name(name):
            self.create(name, self.default_partitions)
        return self.partition(name, index)

    def has_room(self, size: int) -> bool:
        # durable: no memory budget to pass (the batch cache bounds memory, module docstring)
        return self.root is not None or self.size + size <= self.max_bytes

    def append(self, partition: Partition, stored: bytes, records: int) -> None:
        self.size += partition.append(stored, records, self.retention_records)
