"""In-memory segment store: stream segments, table segments and parked reads."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

from .codec import LONG_MIN


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class ParkedRead:
    """A ReadSegment at or beyond the tail of an unsealed segment (notes 7.4)."""
    owner: object  # the connection, so its reads can be dropped when it closes
    request_id: int
    segment: str
    offset: int
    read_size: int
    on_data: Callable[["ParkedRead", "Segment"], None]
    on_sealed: Callable[["ParkedRead", "Segment"], None]
    on_cancel: Callable[["ParkedRead", "Segment"], None]


@dataclass
class TableEntry:
    version: int
    value: bytes


@dataclass
class Segment:
    name: str
    is_table: bool = False
    # stream content: buf holds the bytes [start, length)
    buf: bytearray = field(default_factory=bytearray)
    start: int = 0
    sealed: bool = False
    attributes: dict[uuid.UUID, int] = field(default_factory=dict)
    last_modified: int = field(default_factory=now_ms)
    target_rate: int = 0
    scale_type: int = 0
    rollover: int = 0
    parked: list[ParkedRead] = field(default_factory=list)
    # tables: `length` counts the bytes of every update/removal ever written
    key_length: int = 0
    entries: dict[bytes, TableEntry] = field(default_factory=dict)
    table_length: int = 0

    @property
    def length(self) -> int:
        return self.table_length if self.is_table else self.start + len(self.buf)

    def read(self, offset: int, size: int) -> bytes:
        lo = offset - self.start
        return bytes(self.buf[lo:lo + size])

    def attr(self, a: uuid.UUID) -> int:
        """An absent attribute equals Long.MIN_VALUE for every comparison (7.2)."""
        return self.attributes.get(a, LONG_MIN)

    def set_attr(self, a: uuid.UUID, v: int) -> None:
        if v == LONG_MIN:
            self.attributes.pop(a, None)
        else:
            self.attributes[a] = v
        self.last_modified = now_ms()


class StoreFull(Exception):
    pass


class Store:
    def __init__(self, max_bytes: int = 1 << 30) -> None:
        self.segments: dict[str, Segment] = {}
        self.merged_into: dict[str, str] = {}  # source -> target, for repeated MergeSegments
        self.max_bytes = max_bytes
        self.total_bytes = 0

    def get(self, name: str) -> Segment | None:
        return self.segments.get(name)

    def create(self, name: str, **kw) -> Segment:
        seg = Segment(name, **kw)
        self.segments[name] = seg
        self.merged_into.pop(name, None)
        return seg

    # ----------------------------------------------------------------- stream data

    def append(self, seg: Segment, data: bytes) -> None:
        if self.total_bytes + len(data) > self.max_bytes:
            raise StoreFull()
        seg.buf += data
        self.total_bytes += len(data)
        seg.last_modified = now_ms()
        self._wake_data(seg)

    def truncate(self, seg: Segment, offset: int) -> None:
        drop = offset - seg.start
        if drop > 0:
            del seg.buf[:drop]
            self.total_bytes -= drop
        seg.start = offset
        seg.last_modified = now_ms()

    def seal(self, seg: Segment, *, wake: bool = True) -> None:
        seg.sealed = True
        seg.last_modified = now_ms()
        if wake:
            parked, seg.parked = seg.parked, []
            for p in parked:
                p.on_sealed(p, seg)

    def delete(self, seg: Segment) -> None:
        self.segments.pop(seg.name, None)
        self.total_bytes -= len(seg.buf) + sum(len(k) + len(e.value) for k, e in seg.entries.items())
        seg.buf = bytearray()
        seg.entries = {}
        parked, seg.parked = seg.parked, []
        for p in parked:
            p.on_cancel(p, seg)

    def _wake_data(self, seg: Segment) -> None:
        if not seg.parked:
            return
        still = []
        for p in seg.parked:
            if p.offset < seg.length:
                p.on_data(p, seg)
            else:
                still.append(p)
        seg.parked = still

    def drop_parked(self, owner: object) -> None:
        for seg in self.segments.values():
            if seg.parked:
                seg.parked = [p for p in seg.parked if p.owner is not owner]

    # ----------------------------------------------------------------- tables

    @staticmethod
    def entry_size(key: bytes, value: bytes) -> int:
        """Bytes one update occupies in the table segment (our own layout: a 20-byte
        header, then key and value).  Versions are the offsets of these records."""
        return 20 + len(key) + len(value)
