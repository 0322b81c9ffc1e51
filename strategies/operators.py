"""The registry of mutation operators: each breaks one field of a valid frame, one way. Pure: no I/O.

Operators work over the spans of a frame (``strategies.binary.Span``: where each field sits and what kind it
is). Each takes a seeded ``random.Random``, the frame, one span and the protocol's *choices* (the values to set,
the sizes to add, the bytes to insert; empty: the operator's own defaults), and returns new bytes; the protocol
re-frames the result (fixing the outer length unless the outer length is the lie being told) and states the
reaction the spec permits (``strategies.rules``). The byte-level pieces come from ``strategies.binary``. Spans
of binary fields come from the protocols' codecs, spans of JSON values from ``strategies.traced.trace_json``: the
same operators break both (``set_field`` writes an integer in a binary field's width, or replaces a JSON value by
the text given).

Protocols also register the operators only they need, under their own names (an unknown message type, a
compression flag), usually with one of the shared apply functions below: every mutant names a registered
operator, so reports and statistics speak one vocabulary. ``FAMILIES`` is the list of defect kinds the registry
covers. An operator registered with ``kinds=()`` applies to the span its protocol's rule names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from wirecheck.strategies import binary

FAMILIES = ("length-lie", "truncation", "boundary-int", "overlong-varint", "invalid-utf8", "bad-crc",
            "unknown-enum", "hostile-count", "duplicate-field", "drop-field", "swap-fields", "concatenation",
            "wrong-type", "nesting", "valid")

Apply = Callable[[random.Random, bytes, binary.Span, tuple], bytes]  # (rng, frame, span, choices) -> new frame


@dataclass(frozen=True)
class Operator:
    name: str
    family: str
    kinds: tuple[str, ...]  # span kinds it applies to; () for a whole frame or a protocol-specific builder
    doc: str
    apply: Apply  # (rng, frame, span, choices) -> the mutated frame

    def applicable(self, spans) -> list[binary.Span]:
        return [s for s in spans if s.kind in self.kinds and s.end > s.start]


REGISTRY: dict[str, Operator] = {}


def register(name: str, family: str, doc: str, kinds: tuple[str, ...] = (), apply: Apply | None = None) -> Operator:
    if family not in FAMILIES:
        raise ValueError(f"operator {name!r}: unknown family {family!r}")
    if apply is None:
        raise ValueError(f"operator {name!r}: every operator applies through its function; none given")
    existing = REGISTRY.get(name)
    if existing is not None and (existing.family, existing.kinds, existing.apply) != (family, kinds, apply):
        raise ValueError(f"operator {name!r} registered twice, differently")
    REGISTRY[name] = op = Operator(name, family, kinds, doc, apply)
    return op


def get(name: str) -> Operator:
    """The operator a mutant names (``name`` may carry a ``:detail`` suffix)."""
    return REGISTRY[name.split(":", 1)[0]]


def apply(name: str, rng: random.Random, frame: bytes, span: binary.Span, choices: tuple = ()) -> bytes:
    return get(name).apply(rng, frame, span, choices)


def pick(rng: random.Random, choices):
    """One of ``choices``; a ``range`` among them stands for any value in it (one draw more)."""
    chosen = rng.choice(choices)
    return rng.randrange(chosen.start, chosen.stop, chosen.step) if isinstance(chosen, range) else chosen


# -- generic operators over spans -------------------------------------------------------------------------------


def _hostile_count(rng, frame, span, choices=()):
    return binary.set_number(frame, span, pick(rng, choices or binary.hostile_numbers(span.prefix)))


def _negative_length(rng, frame, span, choices=()):
    # -1 is the null marker; -2 is never valid (compact: N+1 wraps to 2**32-1, Java's -1 - 1)
    return binary.set_number(frame, span, -2)


def _truncate(rng, frame, span, choices=()):
    return frame[: rng.randint(span.start, max(span.start, span.end - 1))]


def _overlong_varint(rng, frame, span, choices=()):
    from wirecheck.protocols.fields import read_uvarint

    value, _ = read_uvarint(frame, span.start)
    return binary.replace(frame, span, binary.overlong_uvarint(value, 6))


def _invalid_utf8(rng, frame, span, choices=()):
    """An invalid sequence written over bytes of the string; its length stays true, so the encoding is the only
    defect. Without choices: the last two bytes become C3 28. With choices (byte sequences): one that fits,
    written at a random place inside the string."""
    fitting = [bad for bad in choices if len(bad) <= span.size]
    if not fitting:
        return binary.replace(frame, span, bytes(frame[span.start : span.end - 2]) + b"\xc3\x28")
    bad = rng.choice(fitting)
    at = span.start + rng.randint(0, span.size - len(bad))
    return frame[:at] + bad + frame[at + len(bad) :]


def _boundary_int(rng, frame, span, choices=()):
    size = span.size
    signed = isinstance(span.value, int) and span.value < 0
    low, high = (-(2 ** (8 * size - 1)), 2 ** (8 * size - 1) - 1) if signed else (0, 2 ** (8 * size) - 1)
    value = rng.choice([low, high, low + 1, high - 1, 0, 1])
    return binary.replace(frame, span, value.to_bytes(size, "big", signed=signed))


def _bad_crc(rng, frame, span, choices=()):
    return binary.flip_bit(frame, rng.randrange(span.start, span.end), rng.randrange(8))


def _duplicate(rng, frame, span, choices=()):
    return frame[: span.end] + frame[span.start : span.end] + frame[span.end :]


def _drop(rng, frame, span, choices=()):
    return frame[: span.start] + frame[span.end :]


def _swap_next(rng, frame, span, choices=()):
    """Swap the field with the bytes that follow it, up to the same length (the next field or part of it)."""
    following = frame[span.end : span.end + span.size]
    return frame[: span.start] + following + frame[span.start : span.end] + frame[span.end + len(following) :]


def as_is(rng, frame, span, choices=()):
    """The frame unchanged: the seed itself is the case (a valid request, or one the protocol built odd)."""
    return frame


def set_field(rng, frame, span, choices=()):
    """The field set to one of ``choices``: an integer (a type code, a length, an enum value) is written in the
    field's width; bytes (a JSON value's text, say) replace the field's bytes, whatever their length. Without
    choices, a boundary of its width."""
    if not choices:
        return _boundary_int(rng, frame, span)
    value = pick(rng, choices)
    if isinstance(value, bytes):
        return frame[: span.start] + value + frame[span.end :]
    return binary.set_int(frame, span, value)


def append(rng, frame, span, choices=()):
    """Bytes right after the field: ``choices`` are counts of random bytes (default 1 to 8) or the byte strings
    themselves (a second request). The protocol's re-framing makes the enclosing length cover them."""
    extra = pick(rng, choices or (range(1, 9),))
    return binary.insert(frame, span.end, extra if isinstance(extra, bytes) else rng.randbytes(extra))


def insert(rng, frame, span, choices):
    """One of ``choices`` (whole byte strings: a frame, an empty item) inserted before the field."""
    return binary.insert(frame, span.start, rng.choice(choices))


def overrun(rng, frame, span, choices=()):
    """A length field claiming more bytes than the frame holds after it: by one of ``choices`` more than remain,
    or by anything up to the largest value the field can hold."""
    remaining = len(frame) - span.end
    largest = 2 ** (8 * span.size) - 1
    extra = pick(rng, choices) if choices else rng.randint(1, max(1, largest - remaining))
    return binary.set_int(frame, span, min(remaining + extra, largest))


def misstate(rng, frame, span, choices):
    """A length field stating another count than the bytes after it: ``choices`` are functions from the true
    count to the stated one (one less, half, double, the limit...)."""
    return binary.set_int(frame, span, rng.choice(choices)(len(frame) - span.end))


def replace_sized(rng, frame, span, choices):
    """A length-prefixed value (a ``sized`` span: its length field, then its bytes) replaced by one of
    ``choices``, the length re-encoded in the field's own width."""
    value = rng.choice(choices)
    width = span.value  # the width of its length field
    return binary.replace(frame, span, len(value).to_bytes(width, "big") + value)


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

# -- whole-frame operators (the span a protocol's rule names: the outer length, the body, the whole frame) -------

register("frame-length", "length-lie", "the outer length field lies (shorter, longer, negative, above the limit)",
         apply=misstate)
register("length-lie", "length-lie", "the outer length field lies about the body it carries", apply=misstate)
register("oversize", "length-lie", "the outer length claims more than the frame limit", apply=set_field)
register("negative-size", "length-lie", "the outer (signed) length is negative", apply=set_field)
register("zero-length", "length-lie", "the outer length is zero (the body dropped, the frame re-fixed)", apply=_drop)
register("trailing-bytes", "concatenation", "bytes after the body, inside the frame", apply=append)
register("concatenated", "concatenation", "two request bodies under one length prefix (choices: the second one)",
         apply=append)
register("valid", "valid", "a valid request (the target must still answer it correctly)", apply=as_is)

