"""The controller's metadata: scopes, streams, their segments by epoch, and reader groups. Pure, no I/O.

A segment id is ``epoch << 32 | number`` and its segment-store name is ``scope/stream/<number>.#epoch.<epoch>``,
the name the clients compute from the id, so a segment the controller creates is the one a client appends to.
Numbers are never reused within a stream: a scale gives the new segments the next numbers and the next epoch.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def segment_id(number: int, epoch: int) -> int:
    return (epoch << 32) | number


def segment_name(scope: str, stream: str, segment: int) -> str:
    number, epoch = segment & 0xFFFFFFFF, segment >> 32
    return f"{scope}/{stream}/{number}.#epoch.{epoch}"


def table_segment_name(scope: str, table: str, segment: int) -> str:
    """A key-value table's partition as the clients name it: the table's name with "_kvtable" appended stands for
    the stream's (shared/protocol/.../NameUtils.java getQualifiedTableSegmentName, KVTABLE_SUFFIX, at v0.13.0)."""
    return segment_name(scope, table + "_kvtable", segment)


def valid_name(name: str) -> bool:
    """Scope and stream names: non-empty, and no '/' (it separates scope, stream and segment)."""
    return bool(name) and "/" not in name and len(name) <= 255


@dataclass
class Segment:
    id: int
    low: float  # key range [low, high)
    high: float
    predecessors: tuple[int, ...] = ()


@dataclass
class Stream:
    scope: str
    name: str
    config: bytes  # the StreamConfig as the client sent it (serialized), answered back verbatim
    tags: tuple[str, ...]
    segments: dict[int, Segment] = field(default_factory=dict)  # every segment ever, by id
    epochs: list[list[int]] = field(default_factory=list)  # the segment ids of each epoch, by key range
    next_number: int = 0
    sealed: bool = False
    head: dict[int, int] = field(default_factory=dict)  # the last truncation's cut (segment -> offset)

    @property
    def epoch(self) -> int:
        return len(self.epochs) - 1

    def active(self) -> list[Segment]:
        return [self.segments[s] for s in self.epochs[-1]]

    def add_epoch(self, kept: list[Segment], ranges: list[tuple[float, float]], predecessors_of) -> list[Segment]:
        """A new epoch of ``kept`` plus new segments over ``ranges``; returns the new segments."""
        epoch = len(self.epochs)
        created = []
        for low, high in ranges:
            new = Segment(segment_id(self.next_number, epoch), low, high, tuple(predecessors_of(low, high)))
            self.next_number += 1
            self.segments[new.id] = new
            created.append(new)
        self.epochs.append([s.id for s in sorted(kept + created, key=lambda s: s.low)])
        return created

    def successors(self, segment: int) -> list[Segment]:
        return sorted((s for s in self.segments.values() if segment in s.predecessors), key=lambda s: s.low)


class ScaleError(ValueError):
    """A scale request whose sealed segments or new ranges do not describe a valid split or merge."""


@dataclass
class ReaderGroup:
    scope: str
    name: str
    config: bytes  # the ReaderGroupConfiguration (serialized), with the generation and id the controller set


@dataclass
class KeyValueTable:
    """A key-value table: ``partitions`` table segments of epoch 0 (ids 0..n-1) over equal key-hash ranges."""

    scope: str
    name: str
    config: bytes  # the KeyValueTableConfig as the client sent it (serialized), answered back verbatim
    partitions: int

    def segments(self) -> list[Segment]:
        count = self.partitions
        return [Segment(segment_id(i, 0), i / count, (i + 1) / count) for i in range(count)]


class Metadata:
    def __init__(self):
        self.scopes: set[str] = set()
        self.streams: dict[tuple[str, str], Stream] = {}
        self.reader_groups: dict[tuple[str, str], ReaderGroup] = {}
        self.kv_tables: dict[tuple[str, str], KeyValueTable] = {}

    def tables_in(self, scope: str) -> list[KeyValueTable]:
        return [t for (sc, _), t in sorted(self.kv_tables.items()) if sc == scope]

    def streams_in(self, scope: str) -> list[Stream]:
        return [s for (sc, _), s in sorted(self.streams.items()) if sc == scope]

    def create_stream(self, scope: str, name: str, segment_count: int, config: bytes,
                      tags: tuple[str, ...]) -> Stream:
        stream = Stream(scope, name, config, tags)
        count = max(1, segment_count)
        stream.add_epoch([], [(i / count, (i + 1) / count) for i in range(count)], lambda low, high: ())
        self.streams[(scope, name)] = stream
        return stream

    def add_reader_group(self, scope: str, name: str, config: bytes) -> ReaderGroup:
        group = self.reader_groups[(scope, name)] = ReaderGroup(scope, name, config)
        return group

    @staticmethod
    def scale(stream: Stream, sealed: list[int], ranges: list[tuple[float, float]]) -> list[Segment]:
        """Replace ``sealed`` (active segments) with new segments over ``ranges``, which must cover exactly the
        same keys, in the next epoch. Returns the new segments; sealing the old ones is the caller's I/O."""
        active = {s.id: s for s in stream.active()}
        if stream.sealed or not sealed or not ranges or any(s not in active for s in sealed):
            raise ScaleError("sealed segments must be active segments of an open stream")
        if any(not 0.0 <= low < high <= 1.0 for low, high in ranges):
            raise ScaleError("key ranges must be non-empty and within [0, 1]")
        old = sorted((active[s].low, active[s].high) for s in set(sealed))
        new = sorted(ranges)
        if not (_contiguous(old) and _contiguous(new) and old[0][0] == new[0][0] and old[-1][1] == new[-1][1]):
            raise ScaleError("the new key ranges must cover exactly the sealed segments' ranges")
        # The segments not sealed stay, under their ids, in the new epoch: a segment id names one segment for
        # its whole life (Pravega renumbers nothing either; ids carry the epoch that created them).
        kept = [s for s in active.values() if s.id not in set(sealed)]
        overlaps = [(active[s].low, active[s].high, s) for s in set(sealed)]
        return stream.add_epoch(kept, new, lambda low, high: sorted(s for lo, hi, s in overlaps
                                                                     if lo < high and low < hi))


def _contiguous(ranges: list[tuple[float, float]]) -> bool:
    return all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
