"""The registry of mutation operators: each breaks one field of a valid frame, one way. Pure: no I/O.

Operators work over the spans of a frame (``strategies.binary.Span``: where each field sits and what kind it
is). Each takes a seeded ``random.Random``, the frame and one span, and returns new bytes; the protocol re-frames
the result (fixing the outer length unless the outer length is the lie being told) and states the reaction the
spec permits. The byte-level pieces come from ``strategies.binary`` (and ``strategies.mutations`` for JSON-level ones).

Protocols also register the operators only they can apply (a JSON field of the wrong type, an unknown message
type, a compression flag): every mutant names a registered operator, so reports and statistics speak one
vocabulary. ``FAMILIES`` is the list of defect kinds the registry covers.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass
from typing import Callable

from wirecheck.strategies import binary

FAMILIES = ("length-lie", "truncation", "boundary-int", "overlong-varint", "invalid-utf8", "bad-crc",
            "unknown-enum", "hostile-count", "duplicate-field", "drop-field", "swap-fields", "concatenation",
            "wrong-type", "nesting", "valid")

Apply = Callable[[random.Random, bytes, binary.Span], bytes]


@dataclass(frozen=True)
class Operator:
    name: str
    family: str
    kinds: tuple[str, ...]  # span kinds it applies to; () for a whole frame or a protocol-specific builder
    doc: str
    apply: Apply | None = None  # None: the protocol builds the mutant itself

    def applicable(self, spans) -> list[binary.Span]:
        return [s for s in spans if s.kind in self.kinds and s.end > s.start]


REGISTRY: dict[str, Operator] = {}


def register(name: str, family: str, doc: str, kinds: tuple[str, ...] = (), apply: Apply | None = None) -> Operator:
    if family not in FAMILIES:
        raise ValueError(f"operator {name!r}: unknown family {family!r}")
    existing = REGISTRY.get(name)
    if existing is not None and (existing.family, existing.kinds) != (family, kinds):
        raise ValueError(f"operator {name!r} registered twice, differently")
    REGISTRY[name] = op = Operator(name, family, kinds, doc, apply)
    return op


def get(name: str) -> Operator:
    """The operator a mutant names (``name`` may carry a ``:detail`` suffix)."""
    return REGISTRY[name.split(":", 1)[0]]


def apply(name: str, rng: random.Random, frame: bytes, span: binary.Span) -> bytes:
    op = get(name)
    if op.apply is None:
        raise ValueError(f"operator {name!r} is built by its protocol, not applied to a span")
    return op.apply(rng, frame, span)


# -- generic operators over spans -------------------------------------------------------------------------------


def _hostile_count(rng, frame, span):
    return binary.set_number(frame, span, rng.choice(binary.hostile_numbers(span.prefix)))


def _negative_length(rng, frame, span):
    # -1 is the null marker; -2 is never valid (compact: N+1 wraps to 2**32-1, Java's -1 - 1)
    return binary.set_number(frame, span, -2)


def _truncate(rng, frame, span):
    return frame[: rng.randint(span.start, max(span.start, span.end - 1))]


def _overlong_varint(rng, frame, span):
    from wirecheck.protocols.fields import read_uvarint

    value, _ = read_uvarint(frame, span.start)
    return binary.replace(frame, span, binary.overlong_uvarint(value, 6))


def _invalid_utf8(rng, frame, span):
    # the last two bytes become an invalid sequence; the length stays true, so the encoding is the only defect
    return binary.replace(frame, span, bytes(frame[span.start : span.end - 2]) + b"\xc3\x28")


def _boundary_int(rng, frame, span):
    size = span.size
    signed = isinstance(span.value, int) and span.value < 0
    low, high = (-(2 ** (8 * size - 1)), 2 ** (8 * size - 1) - 1) if signed else (0, 2 ** (8 * size) - 1)
    value = rng.choice([low, high, low + 1, high - 1, 0, 1])
    return binary.replace(frame, span, value.to_bytes(size, "big", signed=signed))


def _bad_crc(rng, frame, span):
    return binary.flip_bit(frame, rng.randrange(span.start, span.end), rng.randrange(8))


def _duplicate(rng, frame, span):
    return frame[: span.end] + frame[span.start : span.end] + frame[span.end :]


def _drop(rng, frame, span):
    return frame[: span.start] + frame[span.end :]


def _swap_next(rng, frame, span):
    """Swap the field with the bytes that follow it, up to the same length (the next field or part of it)."""
    following = frame[span.end : span.end + span.size]
    return frame[: span.start] + following + frame[span.start : span.end] + frame[span.end + len(following) :]


register("hostile-count", "hostile-count", "an array count or length claims far more than follows",
         ("count", "length"), _hostile_count)
register("negative-length", "hostile-count", "a count or length of -2 (below the null marker)",
         ("count", "length"), _negative_length)
register("truncate", "truncation", "the frame ends inside this field (its length prefix re-fixed)",
         ("fixed", "count", "length", "data", "tag-count", "tag-section"), _truncate)
register("overlong-varint", "overlong-varint", "a 6-byte varint (at most 5 are legal)",
         ("length", "count", "tag-count"), _overlong_varint)
register("invalid-utf8", "invalid-utf8", "an invalid UTF-8 sequence inside a string, its length true",
         ("data",), _invalid_utf8)
register("boundary-int", "boundary-int", "an integer field at its type's boundary", ("fixed",), _boundary_int)
register("bad-crc", "bad-crc", "one bit of a checksum flipped", ("crc",), _bad_crc)
register("duplicate-field", "duplicate-field", "a field's bytes repeated", ("fixed", "data"), _duplicate)
register("drop-field", "drop-field", "a field's bytes removed", ("fixed", "data"), _drop)
register("swap-fields", "swap-fields", "a field swapped with the bytes after it", ("fixed",), _swap_next)

# -- whole-frame operators (the protocol supplies the frame) ---------------------------------------------------

register("frame-length", "length-lie", "the outer length field lies (shorter, longer, negative, above the limit)")
register("length-lie", "length-lie", "the outer length field lies about the body it carries")
register("oversize", "length-lie", "the outer length claims more than the frame limit")
register("negative-size", "length-lie", "the outer (signed) length is negative")
register("zero-length", "length-lie", "the outer length is zero")
register("trailing-bytes", "concatenation", "bytes after the body, inside the frame")
register("concatenated", "concatenation", "two request bodies under one length prefix")
register("valid", "valid", "a valid request (the target must still answer it correctly)")


def concatenated(frame: bytes, other: bytes, header: int = 4, fmt: str = ">i") -> bytes:
    """Two frames' bodies under the first one's length prefix, re-fixed to cover both."""
    body = frame[header:] + other[header:]
    return struct.pack(fmt, len(body)) + body
