"""Traced seeds: a valid frame and, for each field, where its codec wrote it (a ``strategies.binary.Span``).

Mutations start from traced seeds so that no one counts offsets by hand: the encoder that builds the frame
records each field's position, kind and length as it writes it (``trace=`` of the protocols' codecs), and the
shared operators (``strategies.operators``) break the field a protocol's rule names.
"""

from __future__ import annotations

import functools
import json
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


# -- JSON values ----------------------------------------------------------------------------------------------

#: the span kind of each JSON value, by its Python type (bool before int: a bool is an int in Python)
_JSON_KINDS = ((bool, "bool"), (int, "integer"), (float, "number"), (str, "string"), (type(None), "null"))


def trace_json(value, path: str, at: int = 0) -> tuple[bytes, list[Span]]:
    """``value`` as compact JSON (the bytes ``json.dumps(value, separators=(",", ":"))`` gives) and where each
    JSON value sits, ``at`` being the offset of the text in its frame.

    Each value has a span of its JSON type ("object", "array", "string", "integer", "number", "bool", "null"),
    first among its path's spans (a scalar's ``value``: the Python value); a string also has a "data" span over
    the text between its quotes; an object member a "member" span over its key, its value and one comma beside
    it, so that dropping the member leaves valid JSON. Paths: ``path`` for the value itself, ``path.key`` for a
    member's value, ``path[i]`` for an item.
    """
    out = bytearray()
    spans: list[Span] = []
    _trace_value(value, path, out, spans, at)
    return bytes(out), spans


def _trace_value(value, path: str, out: bytearray, spans: list, at: int) -> None:
    start = at + len(out)
    if isinstance(value, dict):
        slot = len(spans)
        spans.append(None)  # the object's own span comes first: filled in once its end is known
        out += b"{"
        members = []
        for index, (key, item) in enumerate(value.items()):
            begin = at + len(out)  # a member after the first starts with its comma
            if index:
                out += b","
            out += json.dumps(key).encode() + b":"
            _trace_value(item, f"{path}.{key}", out, spans, at)
            members.append((f"{path}.{key}", begin, at + len(out)))
        if len(members) > 1:  # the first member takes the comma after it
            first_path, first_start, first_end = members[0]
            members[0] = (first_path, first_start, first_end + 1)
        spans.extend(Span(member, "member", begin, end) for member, begin, end in members)
        out += b"}"
        spans[slot] = Span(path, "object", start, at + len(out))
        return
    if isinstance(value, list):
        slot = len(spans)
        spans.append(None)
        out += b"["
        for index, item in enumerate(value):
            if index:
                out += b","
            _trace_value(item, f"{path}[{index}]", out, spans, at)
        out += b"]"
        spans[slot] = Span(path, "array", start, at + len(out))
        return
    kind = next(name for cls, name in _JSON_KINDS if isinstance(value, cls))
    out += json.dumps(value).encode()
    spans.append(Span(path, kind, start, at + len(out), value=value))
    if kind == "string":
        spans.append(Span(path, "data", start + 1, at + len(out) - 1))
