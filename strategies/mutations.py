"""Protocol-agnostic mutation operators over bytes and length-prefixed frames.

Structure beats noise: random bytes almost never get past a length check (stack.md), so these operators break
one thing at a time in an otherwise valid frame: the length field, the text encoding, the end of the frame.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

#: Byte sequences that are never valid UTF-8, each for a different reason.
INVALID_UTF8 = [
    b"\xff",  # never a UTF-8 byte
    b"\xc3\x28",  # lead byte followed by a non-continuation byte
    b"\x80",  # a lone continuation byte
    b"\xed\xa0\x80",  # an encoded UTF-16 surrogate
    b"\xc0\xaf",  # an overlong encoding of '/'
    b"\xf0\x9f\x98",  # a 4-byte sequence cut short
    b"\xf4\x90\x80\x80",  # above U+10FFFF
]


def invalid_utf8_variants(payload: bytes) -> list[bytes]:
    """Copies of ``payload`` with an invalid UTF-8 sequence placed inside its first JSON string value.

    Inside a string, so that the only defect is the encoding (the JSON structure stays intact).
    """
    quote = payload.find(b'"', payload.find(b":") + 1) if b":" in payload else -1
    at = quote + 1 if quote >= 0 else len(payload) // 2
    return [payload[:at] + bad + payload[at:] for bad in INVALID_UTF8]


@dataclass(frozen=True)
class LengthLie:
    name: str
    data: bytes
    shorter: bool  # True: the claimed body is shorter than what follows (the receiver frames a prefix)


def length_lies(frame: bytes, header: int, fmt: str, max_body: int, offset: int = 0) -> list[LengthLie]:
    """The frame with its length field rewritten to lie (the body bytes stay as they are)."""
    body_len = len(frame) - header
    lies = []
    for name, value, shorter in (
        ("minus-one", body_len - 1, True),
        ("half", body_len // 2, True),
        ("plus-one", body_len + 1, False),
        ("double", body_len * 2, False),
        ("max", max_body, False),
    ):
        if value <= 0:
            continue
        lies.append(LengthLie(name, frame[:offset] + struct.pack(fmt, value) + frame[offset + struct.calcsize(fmt):],
                              shorter))
    return lies


def truncations(frame: bytes, points: int = 4) -> list[bytes]:
    """Prefixes of ``frame``: inside the header, just after it, inside the body, one byte short."""
    cuts = sorted({1, 3, 4, 5, len(frame) // 2, len(frame) - 1} | set(range(0, len(frame), max(1, len(frame) // points))))
    return [frame[:c] for c in cuts if 0 < c < len(frame)]


BOUNDARY_INTS = {
    "u8": [0, 1, 0x7F, 0x80, 0xFF],
    "u16": [0, 1, 0x7FFF, 0x8000, 0xFFFF],
    "u32": [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF],
    "i32": [-(2**31), -2, -1, 0, 1, 2**31 - 1],
    "u64": [0, 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1],
    "i64": [-(2**63), -1, 0, 1, 2**63 - 1],
}
