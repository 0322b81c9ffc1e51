"""Protocol-agnostic mutation material: byte sequences that are never valid UTF-8.

Structure beats noise: random bytes almost never get past a length check (stack.md), so the operators
(``strategies.operators``) break one thing at a time in an otherwise valid frame; these are what the
invalid-UTF-8 operator writes inside a string.
"""

from __future__ import annotations

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
