"""Structure-aware mutation operators over binary frames, for any length-prefixed protocol.

A frame is described by its *spans*: where each field sits, what kind of field it is (a fixed integer, a
length or count prefix and its encoding, a varint, a tagged-field section...). Operators rewrite one span and
return new bytes; the caller re-frames the result (fixing the outer length unless the outer length is the
lie being told). Raw random bytes almost never get past a length check; these operators aim at the checks.

Nothing here knows Kafka: Fluvio and the others describe their frames with the same ``Span``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from wirecheck.protocols.fields import uvarint_bytes

INT16_MAX, INT32_MAX = 2**15 - 1, 2**31 - 1


@dataclass(frozen=True)
class Span:
    """One field of a frame: bytes ``start:end``; ``kind`` says what the bytes mean.

    Kinds: ``fixed`` (a big-endian integer of ``size`` bytes, ``signed``), ``count`` and ``length`` (array
    count / string or bytes length, encoded as ``prefix``: "int16", "int32", "uvarint+1" or "varint"),
    ``data`` (the bytes a length covers), ``tag-count`` / ``tag-size`` (uvarints of a tagged-field section),
    ``tag-section`` (a whole section), ``crc`` (a checksum over other bytes).
    """

    path: str
    kind: str
    start: int
    end: int
    prefix: str = ""  # for count/length/tag-*: how the number is encoded
    value: object = None  # the decoded value, when known

    @property
    def size(self) -> int:
        return self.end - self.start


def replace(data: bytes, span: Span, new: bytes) -> bytes:
    return data[: span.start] + new + data[span.end :]


def encode_number(prefix: str, value: int) -> bytes:
    """Encode ``value`` as a ``prefix``-kind number; values out of range wrap as the wire would."""
    if prefix == "int16":
        return struct.pack(">h", ((value + 2**15) % 2**16) - 2**15)
    if prefix == "int32":
        return struct.pack(">i", ((value + 2**31) % 2**32) - 2**31)
    if prefix == "uvarint+1":
        return uvarint_bytes((value + 1) % 2**32)
    if prefix == "uvarint":
        return uvarint_bytes(value % 2**32)
    if prefix == "varint":
        zig = (value << 1) ^ (value >> 63) if value < 0 else value << 1
        return uvarint_bytes(zig % 2**64)
    raise ValueError(f"unknown number encoding {prefix!r}")


def hostile_numbers(prefix: str) -> list[int]:
    """Counts/lengths that lie: huge, negative (other than the null marker), off by one."""
    high = INT16_MAX if prefix == "int16" else INT32_MAX
    values = [high, high - 1, -2, -(2**15) if prefix == "int16" else -(2**31)]
    if prefix in ("uvarint+1", "uvarint"):
        values = [2**31 - 2, 2**32 - 2, 2**28]
    return values


def set_number(data: bytes, span: Span, value: int) -> bytes:
    return replace(data, span, encode_number(span.prefix, value))


def overlong_uvarint(value: int, total_bytes: int) -> bytes:
    """``value`` as an unsigned varint padded with continuation bytes to ``total_bytes`` (a non-canonical,
    and past 5 bytes an illegal, encoding)."""
    groups = []
    for _ in range(total_bytes):
        groups.append(value & 0x7F)
        value >>= 7
    return bytes([g | 0x80 for g in groups[:-1]] + [groups[-1]])


def set_int(data: bytes, span: Span, value: int) -> bytes:
    """``value`` written into the span: varint prefixes re-encode it, any other field keeps its width and takes
    the value modulo its size (so -1 in a u32 is 0xFFFFFFFF, as the wire would carry it)."""
    if "varint" in span.prefix:
        return set_number(data, span, value)
    return replace(data, span, (value % 2 ** (8 * span.size)).to_bytes(span.size, "big"))


def insert(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at:]


def flip_bit(data: bytes, position: int, bit: int = 0) -> bytes:
    return data[:position] + bytes([data[position] ^ (1 << bit)]) + data[position + 1 :]


def reframe_i32(body: bytes) -> bytes:
    """Prefix ``body`` with its true INT32 length (the frame stays honest; the lie is inside)."""
    return struct.pack(">i", len(body)) + body

