"""In-memory partition logs and consumer offsets.

One replica per partition, so the high watermark moves to the log end offset
(LEO) at write time (spec §4.4 step 9).  Nothing is ever evicted, so the log
start offset is always 0.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from dataclasses import dataclass, field

from . import errors
from .errors import ErrorCode

MAX_TOPIC_NAME = 255            # FLUVIO_MAX_SIZE_TOPIC_NAME (spec §8)
MAX_RESOURCE_NAME = 63          # fluvio-sc-schema MAX_RESOURCE_NAME_LEN (docs.rs, README: topics)
MAX_TOPICS = 10_000             # bound on auto-created topics (hostile input)
MAX_PARTITIONS_PER_TOPIC = 1_000
DEFAULT_STORAGE_LIMIT = 256 * 1024 * 1024   # total stored bytes before PartitionFull (72)


def valid_topic_name(name: str) -> bool:
    """A name an SC would accept: lowercase ASCII letters, digits and '-', not starting or
    ending with '-', at most 63 characters (fluvio-sc-schema ``valid_topic_name``, docs.rs).
    Only such names are auto-created; any other name can never be led by an SPU."""
    return (
        0 < len(name) <= min(MAX_RESOURCE_NAME, MAX_TOPIC_NAME)
        and all(c.isascii() and (c.islower() or c.isdigit() or c == "-") for c in name)
        and not name.startswith("-")
        and not name.endswith("-")
    )


class Partition:
    def __init__(self, topic: str, index: int) -> None:
        self.topic = topic
        self.index = index
        self.data = bytearray()      # stored batches, back to back
        self.bases: list[int] = []   # base_offset of each stored batch
        self.positions: list[int] = []  # byte position of each stored batch in ``data``
        self.leo = 0
        self.log_start = 0
        self._changed = asyncio.Event()

    @property
    def hw(self) -> int:
        return self.leo

    def append(self, encoded: bytes, advance: int) -> None:
        self.bases.append(self.leo)
        self.positions.append(len(self.data))
        self.data += encoded
        self.leo += advance
        ev, self._changed = self._changed, asyncio.Event()
        ev.set()

    async def wait_beyond(self, offset: int) -> None:
        """Return once the LEO is above ``offset``."""
        while self.leo <= offset:
            ev = self._changed
            await ev.wait()

    def read(self, fetch_offset: int, max_bytes: int, *, skip_containing: bool = False) -> tuple[ErrorCode, bytes]:
        """The raw slice a fetch returns (spec §5.2).

        It starts at the batch that contains ``fetch_offset`` and ends at the HW
        (= LEO here), cut to ``max_bytes`` with no regard to batch boundaries.
        """
        if fetch_offset < self.log_start:
            return errors.offset_evicted(fetch_offset, self.log_start), b""
        if fetch_offset > self.leo:
            return errors.other(f"start offset: {fetch_offset} is greater than leo: {self.leo}"), b""
        if fetch_offset == self.leo or not self.bases:
            return errors.OK, b""
        if skip_containing:
            # DEFECT fetch-skips-containing-batch: start at the first batch at/after the offset.
            i = bisect.bisect_left(self.bases, fetch_offset)
            if i >= len(self.bases):
                return errors.OK, b""
        else:
            i = max(bisect.bisect_right(self.bases, fetch_offset) - 1, 0)
        start = self.positions[i]
        limit = max(max_bytes, 0)
        return errors.OK, bytes(self.data[start:start + limit])


@dataclass
class Topic:
    name: str
    partitions: list[Partition]


@dataclass
class ConsumerOffset:
    offset: int
    modified_time: int


@dataclass
class Storage:
    auto_create: bool = True
    limit_bytes: int = DEFAULT_STORAGE_LIMIT
    topics: dict[str, Topic] = field(default_factory=dict)
    # (consumer_id, topic, partition) -> ConsumerOffset
    consumer_offsets: dict[tuple[str, str, int], ConsumerOffset] = field(default_factory=dict)
    stored_bytes: int = 0

    def create_topic(self, name: str, partitions: int) -> Topic:
        partitions = max(1, min(partitions, MAX_PARTITIONS_PER_TOPIC))
        t = Topic(name, [Partition(name, i) for i in range(partitions)])
        self.topics[name] = t
        return t

    def lookup(self, topic: str, partition: int) -> Partition | None:
        t = self.topics.get(topic)
        if t is None or not 0 <= partition < len(t.partitions):
            return None
        return t.partitions[partition]

    def lookup_for_produce(self, topic: str, partition: int) -> Partition | None:
        """Like lookup, but creates an unknown topic with one partition first (README: topics)."""
        if (
            topic not in self.topics
            and self.auto_create
            and valid_topic_name(topic)
            and len(self.topics) < MAX_TOPICS
        ):
            self.create_topic(topic, 1)
        return self.lookup(topic, partition)

    def has_room(self, nbytes: int) -> bool:
        return self.stored_bytes + nbytes <= self.limit_bytes

    def set_consumer_offset(self, consumer_id: str, topic: str, partition: int, offset: int) -> None:
        self.consumer_offsets[(consumer_id, topic, partition)] = ConsumerOffset(
            offset, int(time.time() * 1000)
        )
