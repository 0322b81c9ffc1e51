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
