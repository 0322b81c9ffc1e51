"""One partition's log in memory (no ``--data-dir``): a list of segments holding every retained record.

Segments hold ``segment_records`` records; a new one starts when an append finds the active one full, so a
partition always has at least one (possibly empty) segment and segment k holds offsets [k*segment_records,
(k+1)*segment_records). Retention (``retention_records``) drops whole oldest segments after an append while the
records left after dropping still number >= retention_records; the active segment is never dropped.
``log_start_offset`` is the first remaining segment's base offset. The durable log (durable.py) keeps the same
segment and retention arithmetic over its files.
"""

from __future__ import annotations

import asyncio
import bisect
from dataclasses import dataclass, field


@dataclass
class Segment:
    base_offset: int
    records: list[tuple[int, bytes]] = field(default_factory=list)  # (timestamp µs, payload)

    @property
    def end_offset(self) -> int:
        return self.base_offset + len(self.records)


class PartitionLog:
    def __init__(self, segment_records: int, retention_records: int | None):
        self.segment_records = max(1, segment_records)
        self.retention_records = retention_records
        self.segments: list[Segment] = [Segment(0)]
        self.lock = asyncio.Lock()  # one batch at a time (H4: a batch's offsets are consecutive)

    # -- state ------------------------------------------------------------------------------------------------
    @property
    def high_watermark(self) -> int:
        return self.segments[-1].end_offset

    @property
    def log_start_offset(self) -> int:
        return self.segments[0].base_offset

    @property
    def segment_count(self) -> int:
        return len(self.segments)

    def read(self, offset: int):
        """Yield (offset, timestamp, payload) from ``offset`` (>= log start) to the high watermark."""
        bases = [segment.base_offset for segment in self.segments]
        index = max(0, bisect.bisect_right(bases, offset) - 1)
        for segment in self.segments[index:]:
            start = max(0, offset - segment.base_offset)
            for i in range(start, len(segment.records)):
                timestamp, payload = segment.records[i]
                yield segment.base_offset + i, timestamp, payload

    # -- append -----------------------------------------------------------------------------------------------
    async def append(self, payloads: list[bytes], timestamp: int) -> int:
        """Append a batch and return its base offset. The caller holds ``self.lock`` (async like the durable
        log's append, which waits for the disk)."""
        base = self.high_watermark
        plan = self._plan(len(payloads))
        index = 0
        for segment_base, n in plan:
            if segment_base != self.segments[-1].base_offset:
                self.segments.append(Segment(segment_base))
            self.segments[-1].records.extend((timestamp, payload) for payload in payloads[index:index + n])
            index += n
        self._retain()
        return base

    def _plan(self, count: int) -> list[tuple[int, int]]:
        """How the next ``count`` records spread over segments: [(segment base offset, records), ...]."""
        active = self.segments[-1]
        base, room, offset, plan = active.base_offset, self.segment_records - len(active.records), active.end_offset, []
        while count > 0:
            if room <= 0:
                base, room = offset, self.segment_records
            n = min(room, count)
            plan.append((base, n))
            offset, count, room = offset + n, count - n, room - n
        return plan

    def _retain(self) -> None:
        """Drop whole oldest segments while the records left after dropping still number >= retention."""
        if self.retention_records is None:
            return
        while len(self.segments) > 1 and self.high_watermark - self.segments[1].base_offset >= self.retention_records:
            self.segments.pop(0)
