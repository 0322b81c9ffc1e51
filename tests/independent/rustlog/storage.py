"""In-memory state of the broker: topics, partition logs, committed offsets
and a few counters.  Nothing survives a restart (the document says commits
are in-memory only; this server keeps the logs in memory as well)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

# DECISION: total bytes of record payload the broker keeps before it answers
# 507 InsufficientSpace.  Bounds memory under fuzzing.
DEFAULT_STORAGE_LIMIT = 512 * 1024 * 1024


def now_micros() -> int:
    return time.time_ns() // 1000


@dataclass(slots=True)
class Record:
    offset: int
    timestamp: int  # microseconds since the UNIX epoch, taken at append time
    payload: bytes
    b64: str  # cached base64 form, used when the record is fetched


@dataclass
class Partition:
    index: int
    log_start_offset: int = 0  # no retention: always 0
    records: list[Record] = field(default_factory=list)

    @property
    def high_watermark(self) -> int:
        """Next offset that would be assigned."""
        return self.log_start_offset + len(self.records)

    # Only one in-memory "segment" per partition; reported as 1.
    segment_count: int = 1

    def append(self, payload: bytes, b64: str, timestamp: int) -> int:
        offset = self.high_watermark
        self.records.append(Record(offset, timestamp, payload, b64))
        return offset

    def read_from(self, offset: int):
        """Records with offset >= `offset`, in offset order."""
        records = self.records
        for i in range(max(offset - self.log_start_offset, 0), len(records)):
            yield records[i]


@dataclass
class Topic:
    name: str
    partitions: list[Partition]


@dataclass
class Metrics:
    requests_total: int = 0
    errors_total: int = 0
    messages_produced_total: int = 0
    messages_fetched_total: int = 0
    bytes_in_total: int = 0
    bytes_out_total: int = 0
    active_connections: int = 0
    topics: int = 0

    def snapshot(self) -> dict:
        return dict(vars(self))


class Store:
    def __init__(self, storage_limit: int = DEFAULT_STORAGE_LIMIT):
        self.topics: dict[str, Topic] = {}
        # (group, topic, partition) -> committed offset
        self.commits: dict[tuple[str, str, int], int] = {}
        self.stored_bytes = 0
        self.storage_limit = storage_limit
        self.metrics = Metrics()

    def create_topic(self, name: str, partition_count: int) -> Topic:
        topic = Topic(name, [Partition(i) for i in range(partition_count)])
        self.topics[name] = topic
        self.metrics.topics = len(self.topics)
        return topic

    def partition(self, topic: str, index: int) -> Partition | None:
        t = self.topics.get(topic)
        if t is None or index >= len(t.partitions):
            return None
        return t.partitions[index]
