"""Primitive encodings (notes section 2): big-endian fixed-width numbers, Java
modified UTF-8 strings with a u16 byte count, UUIDs as two longs, blobs."""

from __future__ import annotations

import struct
import uuid

LONG_MIN = -(1 << 63)

_I8 = struct.Struct(">b")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U16 = struct.Struct(">H")


class DecodeError(Exception):
    """The payload cannot be parsed: the server closes the connection (notes 0, 8)."""


class EncodeError(Exception):
    """A reply cannot be encoded (a string longer than 65,535 encoded bytes)."""


# --------------------------------------------------------------------- modified UTF-8


def decode_modified_utf8(raw: bytes, *, strict_4byte: bool = True) -> str:
    """Decode like java.io.DataInputStream.readUTF.

    Accepts a raw 00 byte and overlong 2/3-byte forms; rejects lead bytes 10xxxxxx and
    1111xxxx (so every 4-byte UTF-8 sequence) and truncated or malformed sequences.
    Surrogate pairs (CESU style) are joined into one code point; lone surrogates stay.
    ``strict_4byte=False`` exists only for a deliberate defect.
    """
    units: list[int] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        top = c >> 4
        if top <= 7:
            units.append(c)
            i += 1
        elif top in (12, 13):
            if i + 2 > n or (raw[i + 1] & 0xC0) != 0x80:
                raise DecodeError("malformed 2-byte sequence")
            units.append(((c & 0x1F) << 6) | (raw[i + 1] & 0x3F))
            i += 2
        elif top == 14:
            if i + 3 > n or (raw[i + 1] & 0xC0) != 0x80 or (raw[i + 2] & 0xC0) != 0x80:
                raise DecodeError("malformed 3-byte sequence")
            units.append(((c & 0x0F) << 12) | ((raw[i + 1] & 0x3F) << 6) | (raw[i + 2] & 0x3F))
            i += 3
        elif not strict_4byte and 0xF0 <= c <= 0xF4 and i + 4 <= n:
            cp = ((c & 0x07) << 18) | ((raw[i + 1] & 0x3F) << 12) | ((raw[i + 2] & 0x3F) << 6) | (raw[i + 3] & 0x3F)
            cp = min(cp, 0x10FFFF)
            if cp >= 0x10000:
                cp -= 0x10000
                units.append(0xD800 | (cp >> 10))
                units.append(0xDC00 | (cp & 0x3FF))
            else:
                units.append(cp)
            i += 4
        else:
            raise DecodeError("malformed lead byte 0x%02x" % c)
    b = b"".join(u.to_bytes(2, "big") for u in units)
    return b.decode("utf-16-be", "surrogatepass")


def encode_modified_utf8(s: str) -> bytes:
    """Encode like java.io.DataOutputStream.writeUTF (without the length prefix)."""
    out = bytearray()
    units = s.encode("utf-16-be", "surrogatepass")
    for k in range(0, len(units), 2):
        u = (units[k] << 8) | units[k + 1]
        if 0x0001 <= u <= 0x007F:
            out.append(u)
        elif u <= 0x07FF:  # includes U+0000 -> C0 80
            out.append(0xC0 | (u >> 6))
            out.append(0x80 | (u & 0x3F))
        else:
            out.append(0xE0 | (u >> 12))
            out.append(0x80 | ((u >> 6) & 0x3F))
            out.append(0x80 | (u & 0x3F))
    return bytes(out)


# --------------------------------------------------------------------- reader


class Reader:
    """Reads fields from one frame's payload; running off the end is a DecodeError."""

    __slots__ = ("buf", "pos", "strict_utf8")

    def __init__(self, buf: bytes, strict_utf8: bool = True) -> None:
        self.buf = buf
        self.pos = 0
        self.strict_utf8 = strict_utf8

    def available(self) -> int:
        return len(self.buf) - self.pos

    def _take(self, n: int) -> bytes:
        if n < 0:
            raise DecodeError("negative length")
        if self.pos + n > len(self.buf):
            raise DecodeError("field runs past the end of the payload")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def i8(self) -> int:
        return _I8.unpack(self._take(1))[0]

    def bool(self) -> bool:
        return self._take(1)[0] != 0

    def i32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def i64(self) -> int:
        return _I64.unpack(self._take(8))[0]

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(bytes=self._take(16))

    def str(self) -> str:
        n = _U16.unpack(self._take(2))[0]
        return decode_modified_utf8(self._take(n), strict_4byte=self.strict_utf8)

    def raw(self, n: int) -> bytes:
        return self._take(n)

    def rest(self) -> bytes:
        return self._take(self.available())

    def opt_i64(self, default: int) -> int:
        return self.i64() if self.available() >= 8 else default


# --------------------------------------------------------------------- writer


class Writer:
    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def i8(self, v: int) -> "Writer":
        self.parts.append(_I8.pack(v))
        return self

    def bool(self, v: bool) -> "Writer":
        self.parts.append(b"\x01" if v else b"\x00")
        return self

    def i32(self, v: int) -> "Writer":
        self.parts.append(_I32.pack(v))
        return self

    def i64(self, v: int) -> "Writer":
        self.parts.append(_I64.pack(v))
        return self

    def uuid(self, v: uuid.UUID) -> "Writer":
        self.parts.append(v.bytes)
        return self

    def str(self, s: str) -> "Writer":
        b = encode_modified_utf8(s)
        if len(b) > 0xFFFF:
            raise EncodeError("string longer than 65535 encoded bytes")
        self.parts.append(_U16.pack(len(b)))
        self.parts.append(b)
        return self

    def blob(self, b: bytes) -> "Writer":
        self.parts.append(_I32.pack(len(b)))
        self.parts.append(bytes(b))
        return self

    def raw(self, b: bytes) -> "Writer":
        self.parts.append(bytes(b))
        return self

    def payload(self) -> bytes:
        return b"".join(self.parts)


def frame(type_code: int, payload: bytes) -> bytes:
    """Header (int32 type, int32 payload length) + payload (notes section 1)."""
    return _I32.pack(type_code) + _I32.pack(len(payload)) + payload
