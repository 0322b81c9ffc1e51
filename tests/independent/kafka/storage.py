"""In-memory topics and partition logs."""
from __future__ import annotations

import asyncio
import bisect
import re
import uuid
from dataclasses import dataclass, field

from .records import Batch

MAX_MESSAGE_BYTES_DEFAULT = 1048588  # Kafka's message.max.bytes default
MAX_PARTITIONS = 1000                # our own bound, see README
TOPIC_NAME_RE = re.compile(r"^[a-zA-Z0-9._-]+$")
TOPIC_NAME_MAX = 249


def topic_name_problem(name: str | None) -> str | None:
    """None if the name is legal, else why not (Kafka's Topic.validate rules)."""
    if name is None or name == "":
        return "topic name is empty"
    if name in (".", ".."):
        return "topic name cannot be '.' or '..'"
    if len(name) > TOPIC_NAME_MAX:
        return f"topic name is longer than {TOPIC_NAME_MAX} characters"
    if not TOPIC_NAME_RE.match(name):
        return "topic name contains characters other than [a-zA-Z0-9._-]"
    return None


@dataclass
class PartitionLog:
    index: int
    batches: list[Batch] = field(default_factory=list)
    base_offsets: list[int] = field(default_factory=list)  # parallel to batches, for bisect
    log_start_offset: int = 0
    log_end_offset: int = 0
    leader_epoch: int = 0

    @property
    def high_watermark(self) -> int:
        # one broker, every replica in sync: everything appended is committed
        return self.log_end_offset

    def append(self, batch: Batch) -> int:
        base = self.log_end_offset
        self.batches.append(batch)
        self.base_offsets.append(base)
        self.log_end_offset = base + batch.record_count
        return base

    def batches_from(self, offset: int):
        """Batches whose last offset is >= offset, in order."""
        i = bisect.bisect_right(self.base_offsets, offset) - 1
        if i < 0:
            i = 0
        for j in range(i, len(self.batches)):
            b = self.batches[j]
            if self.base_offsets[j] + b.record_count - 1 >= offset:
                yield self.base_offsets[j], b

    def offset_for_timestamp(self, target: int) -> tuple[int, int]:
        """(timestamp, offset) of the first record with timestamp >= target, or (-1, -1)."""
        for base, b in zip(self.base_offsets, self.batches):
            for i, ts in enumerate(b.timestamps):
                if ts >= target:
                    return ts, base + i
        return -1, -1

    def max_timestamp(self) -> tuple[int, int]:
        best_ts, best_off = -1, -1
        for base, b in zip(self.base_offsets, self.batches):
            for i, ts in enumerate(b.timestamps):
                if ts > best_ts:
                    best_ts, best_off = ts, base + i
        return best_ts, best_off


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionLog]
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def max_message_bytes(self) -> int:
        try:
            return int(self.configs.get("max.message.bytes", MAX_MESSAGE_BYTES_DEFAULT))
        except ValueError:
            return MAX_MESSAGE_BYTES_DEFAULT

    @property
    def log_append_time(self) -> bool:
        return self.configs.get("message.timestamp.type") == "LogAppendTime"

    @property
    def min_insync_replicas(self) -> int:
        try:
            return int(self.configs.get("min.insync.replicas", "1"))
        except ValueError:
            return 1


class Storage:
    def __init__(self) -> None:
        self.topics: dict[str, Topic] = {}
        self.by_id: dict[uuid.UUID, Topic] = {}
        self._appended = asyncio.Event()

    def create(self, name: str, partitions: int, configs: dict[str, str] | None = None) -> Topic:
        topic = Topic(name, uuid.uuid4(), [PartitionLog(i) for i in range(partitions)], dict(configs or {}))
        self.topics[name] = topic
        self.by_id[topic.topic_id] = topic
        return topic

    def collides(self, name: str) -> str | None:
        """Kafka forbids topics that differ only by '.' vs '_' (metric names collide)."""
        key = name.replace(".", "_")
        for other in self.topics:
            if other != name and other.replace(".", "_") == key:
                return other
        return None

    def partition(self, topic: str, index: int) -> PartitionLog | None:
        t = self.topics.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            return None
        return t.partitions[index]

    # fetch waiters ---------------------------------------------------------
    def notify_append(self) -> None:
        self._appended.set()
        self._appended = asyncio.Event()

    async def wait_for_append(self, timeout: float) -> None:
        event = self._appended
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except asyncio.TimeoutError:
            pass
