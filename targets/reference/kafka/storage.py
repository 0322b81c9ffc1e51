"""In-memory topics and partitions: batches kept as the bytes received, with broker-assigned offsets.

Everything is served from memory; with ``--data-dir`` a durable log (durable.py) also keeps every batch and
topic, replayed on start. ``--retention-records N`` bounds each partition to about N records by dropping whole batches
from the front (the log start offset moves; older offsets become OFFSET_OUT_OF_RANGE). Appends wake
long-polling fetches through one broker-wide event.
"""

from __future__ import annotations

import asyncio
import bisect
import re
import uuid
from dataclasses import dataclass, field

from wirecheck.targets.reference.kafka import records

# Topic.java: legal characters, at most 249, not "." or ".."
_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


def valid_topic_name(name: str | None) -> bool:
    return bool(name) and name not in (".", "..") and bool(_LEGAL_TOPIC.match(name))


@dataclass
class Partition:
    index: int
    bases: list[int] = field(default_factory=list)  # base offset of each stored batch, ascending
    lasts: list[int] = field(default_factory=list)  # last offset of each batch
    batches: list[bytes] = field(default_factory=list)
    max_timestamps: list[int] = field(default_factory=list)
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

    def _track_transactions(self, data: bytes, batch: records.Batch, base: int) -> None:
        """Keep the LSO and the aborted-transaction index up to date: a transactional batch opens its producer's
        transaction here (if not open yet), a marker closes it, and an abort marker is indexed."""
        if not batch.is_transactional:
            return
        if not batch.is_control:
            self.open_transactions.setdefault(batch.producer_id, base)
            return
        first = self.open_transactions.pop(batch.producer_id, None)
        if first is not None and records.control_type(data) == records.ABORT_MARKER:
            self.aborted.append((batch.producer_id, first, base))

    def aborted_between(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of aborted transactions with records in [start, end) (FetchResponse)."""
        return [(pid, first) for pid, first, marker in self.aborted if first < end and marker >= start]

    def append(self, data: bytes, batch: records.Batch, append_time_ms: int | None = None) -> int:
        """Store a validated batch at the log end; append_time_ms: the topic uses LogAppendTime."""
        base = self.next_offset
        self.batches.append(records.assign(data, base, append_time_ms=append_time_ms))
        self.bases.append(base)
        self.lasts.append(base + batch.last_offset_delta)
        self.max_timestamps.append(batch.max_timestamp if append_time_ms is None else append_time_ms)
        self.next_offset = base + batch.last_offset_delta + 1
        self._track_transactions(data, batch, base)
        return base

    def restore(self, stored: bytes, batch: records.Batch) -> None:
        """Replay a batch from the durable log: it already carries its offsets."""
        self.batches.append(stored)
        self.bases.append(batch.base_offset)
        self.lasts.append(batch.base_offset + batch.last_offset_delta)
        self.max_timestamps.append(batch.max_timestamp)
        self.next_offset = batch.base_offset + batch.last_offset_delta + 1
        self._track_transactions(stored, batch, batch.base_offset)

    def trim(self, keep_records: int) -> None:
        """Drop whole batches from the front while at least ``keep_records`` records would remain."""
        drop = 0
        while drop < len(self.lasts) - 1 and self.next_offset - (self.lasts[drop] + 1) >= keep_records:
            drop += 1
        if drop:
            self._drop_front(drop)
            self.log_start = self.bases[0]

    def _drop_front(self, drop: int) -> None:
        for column in (self.bases, self.lasts, self.batches, self.max_timestamps):
            del column[:drop]

    def expire(self, before_ms: int) -> None:
        """retention.ms: drop whole batches whose newest timestamp is older than ``before_ms``; like Kafka's active
        segment, the newest batch stays."""
        drop = 0
        while drop < len(self.lasts) - 1 and self.max_timestamps[drop] < before_ms:
            drop += 1
        if drop:
            self._drop_front(drop)
            self.log_start = max(self.log_start, self.bases[0])

    def delete_before(self, offset: int) -> None:
        """DeleteRecords: the log start offset moves to ``offset``; batches wholly below it are dropped."""
        drop = 0
        while drop < len(self.lasts) and self.lasts[drop] < offset:
            drop += 1
        self._drop_front(drop)
        self.log_start = max(self.log_start, offset)

    def read(self, offset: int, max_bytes: int, at_least_one: bool, end: int | None = None) -> list[bytes]:
        """Whole batches from the one holding ``offset`` on, within max_bytes (KIP-74: the first may exceed);
        with ``end`` (read_committed: the LSO) only batches that start below it."""
        i = bisect.bisect_left(self.lasts, offset)
        out, size = [], 0
        while i < len(self.batches) and (end is None or self.bases[i] < end):
            batch = self.batches[i]
            if size + len(batch) > max_bytes and (out or not at_least_one):
                break
            out.append(batch)
            size += len(batch)
            i += 1
        return out

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int]:
        """(offset, timestamp) of the first record whose timestamp >= ``timestamp``; (-1, -1) if none."""
        for i, max_ts in enumerate(self.max_timestamps):
            if max_ts < timestamp:
                continue
            stamps = records.record_timestamps(self.batches[i])
            for delta, ts in enumerate(stamps):
                if ts >= timestamp:
                    return self.bases[i] + delta, ts
        return -1, -1

    def max_timestamp_offset(self) -> tuple[int, int]:
        """(offset, timestamp) of the record with the largest timestamp (ListOffsets -3, KIP-734)."""
        best = (-1, -1)
        for i, max_ts in enumerate(self.max_timestamps):
            if max_ts > best[1]:
                stamps = records.record_timestamps(self.batches[i])
                best = (self.bases[i] + stamps.index(max(stamps)), max_ts)
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
    def __init__(self, journal=None):
        """``journal``: a :class:`~targets.reference.kafka.durable.DurableLog`, or None for memory only."""
        self.topics: dict[str, Topic] = {}
        self.by_id: dict[bytes, Topic] = {}
        self.partition_count = 0
        self.journal = journal
        self._appended = asyncio.Event()
        if journal is not None:
            journal.load(self)

    def has_room(self, partitions: int) -> bool:
        return self.partition_count + partitions <= MAX_TOTAL_PARTITIONS

    def create(self, name: str, partitions: int, log_append_time: bool = False, topic_id: bytes | None = None,
               persist: bool = True, configs: dict[str, str] | None = None) -> Topic:
        topic = Topic(name, [Partition(i) for i in range(partitions)], log_append_time=log_append_time,
                      configs=dict(configs or {}))
        if topic_id is not None:
            topic.topic_id = topic_id
        self.partition_count += partitions
        self.topics[name] = topic
        self.by_id[topic.topic_id] = topic
        if persist and self.journal is not None:
            self.journal.save_topics(self.topics.values())
        return topic

    def save(self) -> None:
        """Persist topic-level changes (configs, partition counts) to the durable log, if any."""
        if self.journal is not None:
            self.journal.save_topics(self.topics.values())

    def add_partitions(self, topic: Topic, count: int) -> None:
        """Grow ``topic`` to ``count`` partitions (CreatePartitions); existing ones keep their data."""
        added = count - len(topic.partitions)
        topic.partitions.extend(Partition(i) for i in range(len(topic.partitions), count))
        self.partition_count += added
        self.save()

    def delete(self, name: str) -> None:
        topic = self.topics.pop(name)
        self.by_id.pop(topic.topic_id, None)
        self.partition_count -= len(topic.partitions)
        if self.journal is not None:
            self.journal.save_topics(self.topics.values())
            self.journal.drop(topic.topic_id, len(topic.partitions))

    def append(self, topic: Topic, partition: Partition, data: bytes, batch: records.Batch,
               append_time_ms: int | None) -> int:
        """Append at the log end (and to the durable log, before the produce is acknowledged)."""
        base = partition.append(data, batch, append_time_ms)
        if self.journal is not None:
            self.journal.append(topic.topic_id, partition.index, partition.batches[-1])
        return base

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()

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
