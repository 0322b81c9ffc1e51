"""The segment store's own reading and writing of wire fields (independent of protocols/pravega by design).

Java's DataInput/DataOutput over a frame payload: big-endian fixed-width integers, one-byte booleans (any
non-zero byte is true), UUIDs as 16 bytes, strings as a u16 byte count plus modified UTF-8 (readUTF accepts a raw
00 and overlong forms, rejects F0-FF and stray continuation leads). A reader that runs out of bytes raises
:class:`Truncated`, any other undecodable field :class:`Malformed`; either way the server closes the connection
(SCIH:74-77).
"""

from __future__ import annotations

import struct

_I32, _I64, _I8, _U16 = struct.Struct(">i"), struct.Struct(">q"), struct.Struct(">b"), struct.Struct(">H")


class Malformed(Exception):
    """The payload does not hold the command's fields: the connection is closed without a reply."""


class Truncated(Malformed):
    """A field, length or count runs past the end of the payload (only the truncated-answered fault tells the two
    apart)."""


class Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes, pos: int = 0):
        self.buf, self.pos = buf, pos

    def left(self) -> int:
        return len(self.buf) - self.pos

    def _take(self, n: int) -> bytes:
        if n < 0:
            raise Malformed(f"negative length {n}")
        if self.pos + n > len(self.buf):
            raise Truncated(f"need {n} bytes at {self.pos}, {len(self.buf) - self.pos} left")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def i8(self) -> int:
        return _I8.unpack(self._take(1))[0]

    def boolean(self) -> bool:
        return self._take(1) != b"\x00"

    def i32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def i64(self) -> int:
        return _I64.unpack(self._take(8))[0]

    def uuid(self) -> bytes:
        return bytes(self._take(16))

    def utf(self) -> str:
        return java_utf_decode(self._take(_U16.unpack(self._take(2))[0]))

    def blob(self, lenient: bool = False) -> bytes:
        n = self.i32()
        if n <= 0:
            if n < 0 and not lenient:
                raise Malformed(f"negative length {n}")
            return b""
        return bytes(self._take(n))

    def rest(self) -> bytes:
        return bytes(self._take(self.left()))

    def count(self, min_item: int) -> int:
        """A list count, checked against what the payload can hold before anything is allocated."""
        n = self.i32()
        if n < 0 or n * min_item > self.left():
            raise Truncated(f"count {n} cannot fit in {self.left()} bytes")
        return n

    # optional trailing fields: read when the payload still holds them (the Java readers' available() tests)
    def opt_i64(self, default: int) -> int:
        return self.i64() if self.left() >= 8 else default

    def opt_i32(self, default: int) -> int:
        return self.i32() if self.left() >= 4 else default

    def opt_bool(self, default: bool = False) -> bool:
        return self.boolean() if self.left() >= 1 else default


def java_utf_decode(data: bytes) -> str:
    if data.isascii():
        return data.decode("ascii")
    chars, i, n = [], 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            chars.append(b)
            i += 1
        elif 0xC0 <= b < 0xE0 and i + 1 < n and data[i + 1] & 0xC0 == 0x80:
            chars.append(((b & 0x1F) << 6) | (data[i + 1] & 0x3F))
            i += 2
        elif 0xE0 <= b < 0xF0 and i + 2 < n and data[i + 1] & 0xC0 == 0x80 and data[i + 2] & 0xC0 == 0x80:
            chars.append(((b & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F))
            i += 3
        else:
            raise Malformed(f"malformed modified UTF-8 at byte {i}")
    return b"".join(c.to_bytes(2, "big") for c in chars).decode("utf-16-be", "surrogatepass")


def java_utf_encode(text: str, standard: bool = False) -> bytes:
    """Modified UTF-8 (``standard``: plain UTF-8, only under the standard-utf8-replies fault)."""
    if standard:
        data = text.encode("utf-8", "surrogatepass")
    elif text.isascii() and "\x00" not in text:
        data = text.encode("ascii")
    else:
        out = bytearray()
        raw = text.encode("utf-16-be", "surrogatepass")
        for k in range(0, len(raw), 2):
            c = (raw[k] << 8) | raw[k + 1]
            if 0 < c < 0x80:
                out.append(c)
            elif c < 0x800:
                out += bytes((0xC0 | (c >> 6), 0x80 | (c & 0x3F)))
            else:
                out += bytes((0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)))
        data = bytes(out)
    return _U16.pack(len(data)) + data


class Writer:
    """Builds one reply payload; ``frame(type)`` adds the header."""

    __slots__ = ("out", "standard_utf8")

    def __init__(self, standard_utf8: bool = False):
        self.out = bytearray()
        self.standard_utf8 = standard_utf8

    def i8(self, v: int) -> "Writer":
        self.out += _I8.pack(v)
        return self

    def boolean(self, v: bool) -> "Writer":
        self.out.append(1 if v else 0)
        return self

    def i32(self, v: int) -> "Writer":
        self.out += _I32.pack(v)
        return self

    def i64(self, v: int) -> "Writer":
        self.out += _I64.pack(v)
        return self

    def uuid(self, v: bytes) -> "Writer":
        self.out += v
        return self

    def utf(self, v: str) -> "Writer":
        self.out += java_utf_encode(v, self.standard_utf8)
        return self

    def blob(self, v: bytes) -> "Writer":
        self.out += _I32.pack(len(v))
        self.out += v
        return self

    def raw(self, v: bytes) -> "Writer":
        self.out += v
        return self

    def frame(self, code: int) -> bytes:
        return struct.pack(">ii", code, len(self.out)) + bytes(self.out)


class LenientReader(Reader):
    """Fault invalid-utf8-accepted: a string readUTF rejects is decoded anyway (U+FFFD for the bad bytes)."""

    __slots__ = ()

    def utf(self) -> str:
        data = self._take(_U16.unpack(self._take(2))[0])
        try:
            return java_utf_decode(data)
        except Malformed:
            return bytes(data).decode("utf-8", "replace")
