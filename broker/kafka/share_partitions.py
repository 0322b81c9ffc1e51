"""KIP-932 share-partition state: which offsets of one partition a share group has in flight, and their locks.

KIP-932 'Share-partition' and 'In-flight records': each record is Available, Acquired (by one member, until its
acquisition lock times out), Acknowledged or Archived. The share-partition start offset (SPSO) is the first
offset not yet Acknowledged/Archived; records from the SPSO up to the end offset (SPEO) are in flight, at most
``max_locks`` of them (group.share.partition.max.record.locks), so memory per share partition is bounded.

* acquisition takes Available records (and fresh ones past the SPEO) for a member, adds one to each record's
  delivery count and locks it for ``lock_ms`` (group.share.record.lock.duration.ms, Kafka: 30 s);
* ACCEPT (1) acknowledges, REJECT (3) archives, RELEASE (2) makes it Available again with its count kept, GAP (0)
  marks an offset with no record (archived); RENEW (4, ShareFetch/ShareAcknowledge v2) restarts the lock;
* a record whose lock expires, or that is released, is archived instead once its delivery count reached
  ``delivery_limit`` (group.share.delivery.count.limit, Kafka: 5);
* only the member holding a record's lock may acknowledge it: anything else is INVALID_RECORD_STATE (121).

Locks expire lazily: each access first expires what is due (:meth:`expire`), so no timer per record is kept.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass

from wirecheck.broker.kafka.faults import KafkaFaults, KafkaVariants
from wirecheck.broker.kafka.transitions import Transitions


class RecordState(enum.StrEnum):
    AVAILABLE = "available"
    ACQUIRED = "acquired"
    ACKNOWLEDGED = "acknowledged"
    ARCHIVED = "archived"


AVAILABLE, ACQUIRED = RecordState.AVAILABLE, RecordState.ACQUIRED
ACKNOWLEDGED, ARCHIVED = RecordState.ACKNOWLEDGED, RecordState.ARCHIVED

#: Kafka's record state moves (SharePartition.RecordState.validateTransition): Available only to Acquired, Acquired
#: back to Available or on to Acknowledged or Archived, those two final. Available to Archived is the other way in:
#: records the share-partition start offset moves past undelivered (SharePartition's archiving of available
#: records; here the offsets of a transaction marker, skip_control).
TRANSITIONS = Transitions("share record", {
    AVAILABLE: frozenset({ACQUIRED, ARCHIVED}),
    ACQUIRED: frozenset({AVAILABLE, ACKNOWLEDGED, ARCHIVED}),
    ACKNOWLEDGED: frozenset(),
    ARCHIVED: frozenset(),
})
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
#: share partitions kept before idle ones are dropped: a share partition with nothing in flight that has caught up
#: with its log is what a new one would be (started at latest), so dropping it loses nothing
MAX_SHARE_PARTITIONS = 10_000


@dataclass
class InFlight:
    state: RecordState = AVAILABLE
    delivery_count: int = 0
    member: str | None = None
    deadline: float = 0.0  # monotonic seconds, while Acquired

    def move(self, to: RecordState, faulted: bool = False) -> None:
        """To ``to``, where Kafka's record states lead (TRANSITIONS), or where a fault moves it regardless."""
        self.state = TRANSITIONS.moved(self.state, to, faulted)


class SharePartition:
    def __init__(self, start: int, lock_ms: int, delivery_limit: int, max_locks: int, faults: KafkaFaults):
        self.start = start  # SPSO
        self.end = start  # SPEO: offsets from here on were never acquired
        self.records: dict[int, InFlight] = {}  # every offset in [start, end)
        self.lock_ms, self.delivery_limit, self.max_locks = lock_ms, delivery_limit, max_locks
        self.faults = faults

    # ------------------------------------------------------------------------------------------ time

    def expire(self, now: float | None = None) -> None:
        """Locks past their deadline give their records back (or archive them at the delivery limit)."""
        if self.faults.share_lock_never_expires:
            return
        now = time.monotonic() if now is None else now
        for record in self.records.values():
            if record.state == ACQUIRED and record.deadline <= now:
                self._give_back(record)

    def next_deadline(self) -> float | None:
        deadlines = [r.deadline for r in self.records.values() if r.state == ACQUIRED]
        return min(deadlines) if deadlines else None

    # ------------------------------------------------------------------------------------------ acquisition

    def follow_log(self, log_start: int) -> None:
        """Records deleted from the log (retention, DeleteRecords) leave the share partition too."""
        while self.start < log_start:
            self.records.pop(self.start, None)
            self.start += 1
        self.end = max(self.end, self.start)

    def first_acquirable(self, high_watermark: int) -> int | None:
        """The first offset a member could acquire now (None: nothing is)."""
        self.expire()
        twice = self.faults.share_records_acquired_twice  # fault: a locked record is acquirable too
        for offset in range(self.start, self.end):
            if self.records[offset].state == AVAILABLE or (twice and self.records[offset].state == ACQUIRED):
                return offset
        if self.end < high_watermark and self.end - self.start < self.max_locks:
            return self.end
        return None

    def acquire(self, member: str, low: int, high: int, max_records: int) -> list[tuple[int, int, int]]:
        """Acquire for ``member`` up to ``max_records`` acquirable offsets in [low, high) (the offsets the batches
        read cover); returns the acquired ranges (first, last, delivery count)."""
        taken: list[int] = []
        for offset in range(max(low, self.start), high):
            if len(taken) >= max_records:
                break
            if offset >= self.end:
                if offset - self.start >= self.max_locks:
                    break  # the in-flight window is full
                while self.end <= offset:
                    self.records[self.end] = InFlight()
                    self.end += 1
            record = self.records[offset]
            if record.state != AVAILABLE and not (record.state == ACQUIRED
                                                  and self.faults.share_records_acquired_twice):
                continue
            if not self.faults.share_delivery_count_frozen or record.delivery_count == 0:
                record.delivery_count += 1
            record.move(ACQUIRED, faulted=self.faults.share_records_acquired_twice)
            record.member = member
            record.deadline = time.monotonic() + self.lock_ms / 1000
            taken.append(offset)
        ranges: list[tuple[int, int, int]] = []
        for offset in taken:  # contiguous offsets of one delivery count make one range
            count = self.records[offset].delivery_count
            if ranges and ranges[-1][1] == offset - 1 and ranges[-1][2] == count:
                ranges[-1] = (ranges[-1][0], offset, count)
            else:
                ranges.append((offset, offset, count))
        return ranges

    def skip_control(self, first: int, last: int) -> None:
        """A control batch (transaction marker) is no record to deliver: its offsets are archived undelivered, so
        the SPSO moves past them without a client ever acknowledging them (our reading; clients skip markers)."""
        for offset in range(max(first, self.start), last + 1):
            if offset >= self.end:
                if offset - self.start >= self.max_locks:
                    break
                while self.end <= offset:
                    self.records[self.end] = InFlight()
                    self.end += 1
            if self.records[offset].state == AVAILABLE and self.records[offset].delivery_count == 0:
                self.records[offset].move(ARCHIVED)
        self._advance()

    # ------------------------------------------------------------------------------------------ acknowledgement

    def check(self, member: str, first: int, last: int) -> bool:
        """May ``member`` acknowledge every offset in [first, last]? (Acquired by it, lock still held.)"""
        self.expire()
        if self.faults.share_ack_state_unchecked:
            return True
        if first < self.start or last >= self.end:
            return False  # never acquired (or long acknowledged): and the loop below stays within the window
        for offset in range(first, last + 1):
            record = self.records.get(offset)
            if record is None or record.state != ACQUIRED or record.member != member:
                return False
        return True

    def acknowledge(self, first: int, last: int, types: list[int]) -> None:
        """Apply checked acknowledgements: one type for the whole range, or one per offset."""
        for offset in range(max(first, self.start), min(last + 1, self.end)):  # the window bounds the work
            record = self.records.get(offset)
            if record is None or record.state in (ACKNOWLEDGED, ARCHIVED):
                continue  # only reachable under share-ack-state-unchecked
            kind = types[0] if len(types) == 1 else types[offset - first]
            if kind == ACCEPT and self.faults.share_accept_redelivers:
                kind = RELEASE  # fault: an accepted record becomes available again
            if kind == REJECT and self.faults.share_reject_redelivers:
                kind = RELEASE  # fault: a rejected record becomes available again
            if kind == RENEW:
                record.deadline = time.monotonic() + self.lock_ms / 1000
            elif kind == RELEASE:
                if not self.faults.share_release_ignored:
                    self._give_back(record, faulted=self.faults.share_ack_state_unchecked)
            else:
                record.move(ACKNOWLEDGED if kind == ACCEPT else ARCHIVED, faulted=self.faults.share_ack_state_unchecked)
                record.member = None
        self._advance()

    def release_member(self, member: str) -> None:
        """A member left: whatever it holds is released (KIP-932: its acquired records go back)."""
        for record in self.records.values():
            if record.state == ACQUIRED and record.member == member:
                self._give_back(record)
        self._advance()

    def _give_back(self, record: InFlight, faulted: bool = False) -> None:
        """An acquired record released or its lock expired (``faulted``: under a fault, one that was not acquired)."""
        limit_reached = record.delivery_count >= self.delivery_limit
        if limit_reached and not self.faults.share_delivery_limit_ignored:
            record.move(ARCHIVED, faulted)
        else:
            record.move(AVAILABLE, faulted)
        record.member = None

    def _advance(self) -> None:
        """The SPSO moves past records that are all acknowledged or archived."""
        while self.start < self.end and self.records[self.start].state in (ACKNOWLEDGED, ARCHIVED):
            del self.records[self.start]
            self.start += 1


class SharePartitions:
    """Every share partition of every share group: (group id, topic id, partition) -> SharePartition."""

    def __init__(self, storage, faults: KafkaFaults, variants: KafkaVariants, lock_ms: int,
                 delivery_limit: int, max_locks: int):
        self.storage, self.faults, self.variants = storage, faults, variants
        self.lock_ms, self.delivery_limit, self.max_locks = lock_ms, delivery_limit, max_locks
        self.partitions: dict[tuple[str, bytes, int], SharePartition] = {}

    def get(self, group_id: str, topic_id: bytes, index: int, partition) -> SharePartition:
        """The group's share partition, initialised on first use at the latest offset (share.auto.offset.reset
        latest, KIP-932's default) or, under the variant, at the log start."""
        key = (group_id, topic_id, index)
        share = self.partitions.get(key)
        if share is None:
            if len(self.partitions) >= MAX_SHARE_PARTITIONS:
                self._prune()
            earliest = self.variants.share_auto_offset_earliest
            start = partition.log_start if earliest else partition.high_watermark
            share = self.partitions[key] = SharePartition(start, self.lock_ms, self.delivery_limit,
                                                          self.max_locks, self.faults)
        share.follow_log(partition.log_start)
        return share

    def _prune(self) -> None:
        for key, share in list(self.partitions.items()):
            topic = self.storage.by_id.get(key[1])
            gone = topic is None or key[2] >= len(topic.partitions)
            if gone or (not share.records and share.start >= topic.partitions[key[2]].high_watermark):
                del self.partitions[key]

    def find(self, group_id: str, topic_id: bytes, index: int) -> SharePartition | None:
        return self.partitions.get((group_id, topic_id, index))

    def release_member(self, group_id: str, member: str) -> None:
        for (group, _, _), share in self.partitions.items():
            if group == group_id:
                share.release_member(member)

    def next_deadline(self) -> float | None:
        deadlines = [d for d in (s.next_deadline() for s in self.partitions.values()) if d is not None]
        return min(deadlines) if deadlines else None
