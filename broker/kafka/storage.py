"""Topics and partitions: batches kept as the bytes received, with broker-assigned offsets.

Without ``--data-dir`` every batch is held in memory (MemoryBatches); with it each partition's batches live in a
file and only an index and the shared, bounded batch cache (``--cache-bytes``) are in memory (durable.PartitionLog),
and topics are saved (durable.DurableLog). ``--retention-records N`` bounds each partition to about N records by
dropping whole batches from the front (the log start offset moves; older offsets become OFFSET_OUT_OF_RANGE).
Appends wake long-polling fetches through one broker-wide event.
"""

from __future__ import annotations

import asyncio
import bisect
import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from wirecheck.broker.kafka import records
from wirecheck.broker.kafka.durable import DurableLog, PartitionLog

# Topic.java: legal characters, at most 249, not "." or ".."
_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


def valid_topic_name(name: str | None) -> bool:
    return bool(name) and name not in (".", "..") and bool(_LEGAL_TOPIC.match(name))


SEGMENT_MS = 7 * 24 * 3600 * 1000  # segment.ms default (log.roll.hours = 168)
SEGMENT_BYTES = 1 << 30  # segment.bytes default


class MemoryBatches:
    """A partition's batches in memory, as columns; durable.PartitionLog has the same interface over a file."""

    def __init__(self):
        self.bases: list[int] = []  # base offset of each stored batch, ascending
        self.lasts: list[int] = []  # last offset of each batch
        self.max_timestamps: list[int] = []
        self.batches: list[bytes] = []

    def __len__(self) -> int:
        return len(self.bases)

    def batch(self, index: int) -> bytes:
        return self.batches[index]

    def length(self, index: int) -> int:
        return len(self.batches[index])

    def headers(self) -> Iterator[records.Batch]:
        return map(records.parse_header, self.batches)

    def append(self, base: int, stored: bytes, last: int, max_timestamp: int) -> None:
        self.batches.append(stored)
        self.bases.append(base)
        self.lasts.append(last)
        self.max_timestamps.append(max_timestamp)

    def drop_first(self, count: int) -> None:
        for column in (self.bases, self.lasts, self.batches, self.max_timestamps):
            del column[:count]

    def replace_front(self, count: int, cleaned: Iterable[bytes]) -> None:
        stored = list(cleaned)
        headers = [records.parse_header(b) for b in stored]
        self.batches[:count] = stored
        self.bases[:count] = [h.base_offset for h in headers]
        self.lasts[:count] = [h.base_offset + h.last_offset_delta for h in headers]
        self.max_timestamps[:count] = [h.max_timestamp for h in headers]

    def close(self) -> None:
        pass


@dataclass
class Partition:
    index: int
    log: MemoryBatches | PartitionLog = field(default_factory=MemoryBatches)
    log_start: int = 0
    next_offset: int = 0  # log end offset == high watermark on a single replica
    open_transactions: dict[int, int] = field(default_factory=dict)  # producer id -> first offset of its txn
    aborted: list[tuple[int, int, int]] = field(default_factory=list)  # (producer id, first offset, marker offset)

    @property
    def high_watermark(self) -> int:
        return self.next_offset

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the oldest open transaction, or the high watermark (KIP-98 LSO)."""
        return min(self.open_transactions.values(), default=self.next_offset)

    def _track_transactions(self, data: bytes | Callable[[], bytes], batch: records.Batch, base: int) -> None:
        """Keep the LSO and the aborted-transaction index up to date: a transactional batch opens its producer's
        transaction here (if not open yet), a marker closes it, and an abort marker is indexed. ``data``: the
        batch, or how to read it (recovery reads only the markers' bodies)."""
        if not batch.is_transactional:
            return
        if not batch.is_control:
            self.open_transactions.setdefault(batch.producer_id, base)
            return
        first = self.open_transactions.pop(batch.producer_id, None)
        if first is not None and records.control_type(data if isinstance(data, bytes) else data()) \
                == records.ABORT_MARKER:
            self.aborted.append((batch.producer_id, first, base))

    def aborted_between(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of aborted transactions with records in [start, end) (FetchResponse)."""
        return [(pid, first) for pid, first, marker in self.aborted if first < end and marker >= start]

    def append(self, data: bytes, batch: records.Batch, append_time_ms: int | None = None) -> int:
        """Store a validated batch at the log end; append_time_ms: the topic uses LogAppendTime."""
        base = self.next_offset
        stored = records.assign(data, base, append_time_ms=append_time_ms)
        # durable: written (and synced) before anything here changes, so a failed write leaves the partition as it was
        self.log.append(base, stored, base + batch.last_offset_delta,
                        batch.max_timestamp if append_time_ms is None else append_time_ms)
        self.next_offset = base + batch.last_offset_delta + 1
        self._track_transactions(data, batch, base)
        return base

    def recover(self) -> None:
        """After a durable log was opened: the log end and transaction state from its batch headers. The log start
        stays 0 unless retention moves it again (a DeleteRecords log start is not kept; durable.py)."""
        log = self.log
        if not len(log):
            return
        self.next_offset = log.lasts[-1] + 1
        for index, header in enumerate(log.headers()):
            self._track_transactions(lambda i=index: log.batch(i), header, header.base_offset)

    def trim(self, keep_records: int) -> None:
        """Drop whole batches from the front while at least ``keep_records`` records would remain."""
        drop = 0
        lasts = self.log.lasts
        while drop < len(lasts) - 1 and self.next_offset - (lasts[drop] + 1) >= keep_records:
            drop += 1
        if drop:
            self.log.drop_first(drop)
            self.log_start = self.log.bases[0]

    def expire(self, before_ms: int) -> None:
        """retention.ms: drop whole batches whose newest timestamp is older than ``before_ms``; like Kafka's active
        segment, the newest batch stays."""
        drop, max_timestamps = 0, self.log.max_timestamps
        while drop < len(max_timestamps) - 1 and max_timestamps[drop] < before_ms:
            drop += 1
        if drop:
            self.log.drop_first(drop)
            self.log_start = max(self.log_start, self.log.bases[0])

    def segment_starts(self, segment_ms: int = SEGMENT_MS, segment_bytes: int = SEGMENT_BYTES) -> list[int]:
        """Index of the first batch of each segment, the last one being the active segment.

        Decision: segments are not stored; they are the ones Kafka would have rolled from the current log start
        (LogSegment.shouldRoll: a batch whose newest timestamp is more than segment.ms past the segment's first,
        or one that would take the segment past segment.bytes, starts a new one)."""
        starts, size, max_timestamps = [0], 0, self.log.max_timestamps
        for i in range(len(self.log)):
            first, length = starts[-1], self.log.length(i)
            if i > first and (max_timestamps[i] - max_timestamps[first] > segment_ms
                              or size + length > segment_bytes):
                starts.append(i)
                size = 0
            size += length
        return starts

    def expire_segments(self, before_ms: int, segment_ms: int = SEGMENT_MS, segment_bytes: int = SEGMENT_BYTES) -> int:
        """The broker-wide retention run (Kafka's deleteRetentionMsBreachedSegments): drop the leading closed
        segments whose newest timestamp is older than ``before_ms``; the active segment always stays. Returns the
        batches dropped."""
        starts = self.segment_starts(segment_ms, segment_bytes)
        drop = 0
        for start, end in zip(starts, starts[1:]):
            if max(self.log.max_timestamps[start:end]) >= before_ms:
                break  # retention stops at the first segment it must keep
            drop = end
        if drop:
            self.log.drop_first(drop)
            self.log_start = max(self.log_start, self.log.bases[0])
        return drop

    def replace_front(self, count: int, cleaned: Iterable[bytes]) -> None:
        """The log cleaner's output: the first ``count`` batches become ``cleaned`` (offsets kept, holes allowed)."""
        self.log.replace_front(count, cleaned)

    def delete_before(self, offset: int) -> None:
        """DeleteRecords: the log start offset moves to ``offset``; batches wholly below it are dropped."""
        drop, lasts = 0, self.log.lasts
        while drop < len(lasts) and lasts[drop] < offset:
            drop += 1
        if drop:
            self.log.drop_first(drop)
        self.log_start = max(self.log_start, offset)

    def read(self, offset: int, max_bytes: int, at_least_one: bool, end: int | None = None) -> list[bytes]:
        """Whole batches from the one holding ``offset`` on, within max_bytes (KIP-74: the first may exceed);
        with ``end`` (read_committed: the LSO) only batches that start below it."""
        log = self.log
        i = bisect.bisect_left(log.lasts, offset)
        out, size, count, bases, batch_at = [], 0, len(log), log.bases, log.batch
        while i < count and (end is None or bases[i] < end):
            batch = batch_at(i)
            if size + len(batch) > max_bytes and (out or not at_least_one):
                break
            out.append(batch)
            size += len(batch)
            i += 1
        return out

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int]:
        """(offset, timestamp) of the first record whose timestamp >= ``timestamp``; (-1, -1) if none."""
        for i, max_ts in enumerate(self.log.max_timestamps):
            if max_ts < timestamp:
                continue
            stamps = records.record_timestamps(self.log.batch(i))
            for delta, ts in enumerate(stamps):
                if ts >= timestamp:
                    return self.log.bases[i] + delta, ts
        return -1, -1

    def max_timestamp_offset(self) -> tuple[int, int]:
        """(offset, timestamp) of the record with the largest timestamp (ListOffsets -3, KIP-734)."""
        best = (-1, -1)
        for i, max_ts in enumerate(self.log.max_timestamps):
            if max_ts > best[1]:
                stamps = records.record_timestamps(self.log.batch(i))
                best = (self.log.bases[i] + stamps.index(max(stamps)), max_ts)
        return best


@dataclass
class Topic:
    name: str
    partitions: list[Partition]
    topic_id: bytes = field(default_factory=lambda: uuid.uuid4().bytes)
    log_append_time: bool = False  # message.timestamp.type=LogAppendTime
    configs: dict[str, str] = field(default_factory=dict)  # topic config overrides (configs.py)


# Decision: Kafka's limits here are operational, not protocol; a broker whose topics are created from the wire
# must bound them. Past this many partitions in total, CreateTopics answers INVALID_PARTITIONS (37) and Metadata
# does not auto-create (UNKNOWN_TOPIC_OR_PARTITION, 3).
MAX_TOTAL_PARTITIONS = 100_000


class Storage:
    def __init__(self, journal: DurableLog | None = None):
        """``journal``: the durable log (topics and partition files are recovered from it), or None for memory."""
        self.topics: dict[str, Topic] = {}
        self.by_id: dict[bytes, Topic] = {}
        self.partition_count = 0
        self.journal = journal
        self._appended = asyncio.Event()
        if journal is not None:
            journal.load(self)

    def has_room(self, partitions: int) -> bool:
        limit = MAX_TOTAL_PARTITIONS if self.journal is None else min(MAX_TOTAL_PARTITIONS, self.journal.max_partitions)
        return self.partition_count + partitions <= limit

    def create(self, name: str, partitions: int, log_append_time: bool = False, topic_id: bytes | None = None,
               persist: bool = True, configs: dict[str, str] | None = None) -> Topic:
        topic_id = topic_id or uuid.uuid4().bytes
        topic = Topic(name, [self._new_partition(topic_id, i) for i in range(partitions)], topic_id=topic_id,
                      log_append_time=log_append_time, configs=dict(configs or {}))
        self.partition_count += partitions
        self.topics[name] = topic
        self.by_id[topic.topic_id] = topic
        if persist and self.journal is not None:
            self.journal.save_topics(self.topics.values())
        return topic

    def _new_partition(self, topic_id: bytes, index: int) -> Partition:
        if self.journal is None:
            return Partition(index)
        partition = Partition(index, self.journal.open_partition(topic_id, index))
        partition.recover()
        faults = self.journal.faults
        if faults is not None and faults.safety_log_end_reused and len(partition.log):
            partition.next_offset -= 1  # fault: the last stored offset is handed out again
        if faults is not None and faults.safety_aborted_index_lost:
            partition.aborted.clear()  # fault: aborted transactions forgotten, their records read as committed
        return partition

    def save(self) -> None:
        """Persist topic-level changes (configs, partition counts) to the durable log, if any."""
        if self.journal is not None:
            self.journal.save_topics(self.topics.values())

    def add_partitions(self, topic: Topic, count: int) -> None:
        """Grow ``topic`` to ``count`` partitions (CreatePartitions); existing ones keep their data."""
        added = count - len(topic.partitions)
        topic.partitions.extend(self._new_partition(topic.topic_id, i) for i in range(len(topic.partitions), count))
        self.partition_count += added
        self.save()

    def delete(self, name: str) -> None:
        topic = self.topics.pop(name)
        self.by_id.pop(topic.topic_id, None)
        self.partition_count -= len(topic.partitions)
        if self.journal is not None:
            self.journal.save_topics(self.topics.values())  # first: a crash before the files go leaves orphans,
            for partition in topic.partitions:  # which the next start removes
                partition.log.delete()

    def append(self, topic: Topic, partition: Partition, data: bytes, batch: records.Batch,
               append_time_ms: int | None) -> int:
        """Append at the log end (durable: written, and with fsync on synced, before the produce is acknowledged)."""
        return partition.append(data, batch, append_time_ms)

    def close(self) -> None:
        for topic in self.topics.values():
            for partition in topic.partitions:
                partition.log.close()

    def partition(self, topic: str, index: int) -> Partition | None:
        t = self.topics.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            return None
        return t.partitions[index]

    def notify_append(self) -> None:
        """Wake every waiting fetch; each re-checks its own partitions."""
        self._appended.set()
        self._appended = asyncio.Event()

    async def wait_for_append(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self._appended.wait(), timeout)
        except asyncio.TimeoutError:
            pass
