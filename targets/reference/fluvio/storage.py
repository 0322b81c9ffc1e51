"""Topics and partitions in memory, with offsets assigned the way the SPU assigns them.

Offsets (notes §4.4 steps 7-8, §12 "mirror"): a batch's base_offset is the partition's LEO before the write, and
the LEO then advances by last_offset_delta + 1, whatever the records inside say (A14). One replica, so the high
watermark moves with the LEO at write time (§4.4 step 9) and ReadCommitted never waits.

Retention (``--retention-records``, as the other personalities): each partition keeps at least that many
records, dropping whole batches from its start, and the log start offset moves up to the first kept batch, as
the SPU's segment retention does; reads below it get OffsetEvicted (71) (notes §5.2). Memory (decision): all
partitions together hold at most ``max_bytes`` of batches; a produce that would pass it gets PartitionFull
(72), the SPU's "storage full" answer (§4.4 step 7), so that no producer can exhaust the broker's memory.

Topics (the SPU has no CreateTopic API; decision, written down in ``__init__``): a Produce to a topic the
broker does not know creates it with ``default_partitions`` partitions when auto-creation is on and the name is
a valid Fluvio topic name; any other miss is "no leader here" (error 6 / 3001).
"""

from __future__ import annotations

import asyncio
import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

#: Fluvio's topic name rule (``valid_topic_name`` / ``validate_resource_name`` in fluvio-sc-schema and
#: fluvio-controlplane-metadata): lowercase ASCII letters, digits and '-', starting and ending with a letter or
#: digit. Length: FLUVIO_MAX_SIZE_TOPIC_NAME = 255 (notes §8; newer upstream caps resource names at 63, which
#: this broker does not enforce, so that the suite's generated names fit).
TOPIC_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,253}[a-z0-9])?")


def valid_topic_name(name: str) -> bool:
    return TOPIC_NAME.fullmatch(name) is not None


@dataclass
class Partition:
    batches: list[bytes] = field(default_factory=list)  # stored copies, base offsets ascending
    bases: list[int] = field(default_factory=list)  # each stored batch's base_offset, for bisect
    leo: int = 0
    log_start: int = 0
    size: int = 0  # bytes held
    short_circuited: bool = False  # only under the negative-delta-short-circuits fault (A14)
    listeners: set[asyncio.Event] = field(default_factory=set)  # stream fetches waiting for new data

    @property
    def hw(self) -> int:
        return self.leo  # a single in-sync replica: HW moves to LEO at write time (§4.4 step 9)

    def append(self, stored: bytes, records: int, retention: int | None = None) -> int:
        """Keep one batch already rewritten to base_offset = self.leo; advance the LEO by its record total.

        Returns the change in bytes held (the new batch minus any batches retention dropped).
        """
        self.bases.append(self.leo)
        self.batches.append(stored)
        self.leo += records
        change = len(stored)
        if retention is not None:
            while len(self.bases) > 1 and self.leo - self.bases[1] >= retention:
                del self.bases[0]
                change -= len(self.batches.pop(0))
            self.log_start = self.bases[0]
        self.size += change
        for event in self.listeners:
            event.set()
        return change

    def read(self, offset: int, max_bytes: int, end: int) -> bytes:
        """Stored bytes from the batch containing ``offset`` up to ``end``, cut to ``max_bytes`` (§5.2).

        The cut ignores batch boundaries, as the SPU's file slice does; clients drop a truncated last batch.
        The caller has checked log_start <= offset < end.
        """
        if max_bytes <= 0:
            return b""
        index = max(bisect.bisect_right(self.bases, offset) - 1, 0)
        out = bytearray()
        while index < len(self.batches) and self.bases[index] < end and len(out) < max_bytes:
            out += self.batches[index]
            index += 1
        return bytes(out[:max_bytes])


@dataclass
class Topic:
    partitions: list[Partition]


class Storage:
    def __init__(self, default_partitions: int = 1, auto_create: bool = True,
                 topics: dict[str, int] | None = None, retention_records: int | None = None,
                 max_bytes: int = 1 << 30):
        self.default_partitions = default_partitions
        self.auto_create = auto_create
        self.retention_records = retention_records
        self.max_bytes = max_bytes
        self.size = 0  # bytes held by all partitions
        self.topics: dict[str, Topic] = {}
        self.watchers: list[Callable[[str, Topic, bool], None]] = []  # (name, topic, deleted): the SC's epochs
        #: (topic, partition, consumer_id) -> (offset, modified time in ms): UpdateConsumerOffset's store (§5.6)
        self.consumer_offsets: dict[tuple[str, int, str], tuple[int, int]] = {}
        for name, count in (topics or {}).items():
            self.create(name, count)

    def create(self, name: str, partitions: int) -> Topic:
        topic = Topic([Partition() for _ in range(partitions)])
        self.topics[name] = topic
        for watcher in self.watchers:
            watcher(name, topic, False)
        return topic

    def delete(self, name: str) -> Topic | None:
        topic = self.topics.pop(name, None)
        if topic is not None:
            for partition in topic.partitions:
                self.size -= partition.size
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
        return self.size + size <= self.max_bytes

    def append(self, partition: Partition, stored: bytes, records: int) -> None:
        self.size += partition.append(stored, records, self.retention_records)
