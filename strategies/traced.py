"""Traced seeds: a valid frame and, for each field, where its codec wrote it (a ``strategies.binary.Span``).

Mutations start from traced seeds so that no one counts offsets by hand: the encoder that builds the frame
records each field's position, kind and length as it writes it (``trace=`` of the protocols' codecs), and the
shared operators (``strategies.operators``) break the field a protocol's rule names.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from wirecheck.strategies.binary import Span


def spans_from_trace(trace) -> tuple[Span, ...]:
    """Spans from a codec's ``(path, kind, start, end, prefix)`` tuples."""
    return tuple(Span(path, kind, start, end, prefix) for path, kind, start, end, prefix in trace)


def sized(length: Span, data: Span) -> Span:
    """One ``sized`` span over a length field and the bytes it counts (``value``: the length field's width)."""
    return Span(data.path, "sized", length.start, data.end, length.prefix, length.size)


@dataclass
class TracedSeed:
    """A valid frame, its fields' spans and what the protocol needs to read the answer to it. Treat it as
    immutable (not frozen only because a frozen dataclass is slow to build, and one is built per mutant)."""

    name: str  # the request it is (a command or API name)
    frame: bytes
    spans: tuple[Span, ...]
    context: object = None  # protocol data: the request's id, the replies a success may have...

    @functools.cached_property
    def _by_path(self) -> dict[str, list[Span]]:
        index: dict[str, list[Span]] = {}
        for span in self.spans:
            index.setdefault(span.path, []).append(span)
        return index

    def field(self, path: str, kind: str | None = None) -> Span:
        """The span of the field at ``path`` (its first span, or the one of ``kind``)."""
        for span in self._by_path.get(path, ()):
            if kind is None or span.kind == kind:
                return span
        raise KeyError(f"{self.name}: no field {path!r}" + (f" of kind {kind!r}" if kind else ""))

    def has(self, path: str) -> bool:
        return path in self._by_path

    def of_kind(self, *kinds: str) -> list[Span]:
        return [s for s in self.spans if s.kind in kinds]

    def with_frame(self, frame: bytes, context: object = None) -> "TracedSeed":
        """The same layout with other bytes of the same length (a fresh request id, a field set in place)."""
        seed = TracedSeed(self.name, frame, self.spans, self.context if context is None else context)
        seed.__dict__["_by_path"] = self._by_path  # the layout is the same: share its index
        return seed
