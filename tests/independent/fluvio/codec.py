"""Primitive encodings of the Fluvio wire protocol (spec §1).

Everything is big-endian.  There are no tagged fields.  A ``Reader`` raises
``DecodeError`` for anything the real decoder rejects (short read, bad bool or
option tag, invalid UTF-8, unknown enum tag); the connection layer answers a
``DecodeError`` by closing the connection without a response (spec §7).
"""

from __future__ import annotations

import struct


class DecodeError(Exception):
    """The request cannot be decoded; the connection must be closed (spec §7)."""


_I8 = struct.Struct(">b")
_U8 = struct.Struct(">B")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_U64 = struct.Struct(">Q")

# spec A11: a reference server should use 64-bit zigzag and cap varints at 10 bytes.
MAX_VARINT_BYTES = 10
# Hostile-input guard (implementation-defined): one request may decode at most this many Vec
# elements in total; more is treated as a decode error (the connection is closed).
MAX_VEC_ELEMENTS = 100_000


class Reader:
    """A cursor over one request body."""

    __slots__ = ("buf", "pos", "end", "elements")

    def __init__(self, buf: bytes | memoryview, pos: int = 0, end: int | None = None) -> None:
        self.buf = memoryview(buf)
        self.pos = pos
        self.end = len(self.buf) if end is None else end
        self.elements = 0

    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise DecodeError(f"unexpected EOF: wanted {n} bytes, {self.remaining()} left")
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def _fixed(self, st: struct.Struct):
        if self.pos + st.size > self.end:
            raise DecodeError("unexpected EOF in fixed-width integer")
        (v,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return v

    def i8(self) -> int:
        return self._fixed(_I8)

    def u8(self) -> int:
        return self._fixed(_U8)

    def i16(self) -> int:
        return self._fixed(_I16)

    def u16(self) -> int:
        return self._fixed(_U16)

    def i32(self) -> int:
        return self._fixed(_I32)

    def u32(self) -> int:
        return self._fixed(_U32)

    def i64(self) -> int:
        return self._fixed(_I64)

    def u64(self) -> int:
        return self._fixed(_U64)

    def bool(self) -> bool:
        b = self.u8()
        if b not in (0, 1):
            raise DecodeError(f"invalid bool byte {b}")
        return b == 1

    def string(self) -> str:
        # i16 length; a length <= 0 decodes as "" (no null string, spec §1 / A12).
        n = self.i16()
        if n <= 0:
            return ""
        raw = self.take(n)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError("invalid UTF-8 in string") from exc

    def option(self, read_inner):
        """Option<T>: bool tag then T."""
        if self.bool():
            return read_inner()
        return None

    def vec_count(self) -> int:
        """i32 element count; a count < 1 decodes as empty (spec §1 / A12)."""
        n = self.i32()
        return n if n > 0 else 0

    def vec(self, read_elem) -> list:
        n = self.vec_count()
        out = []
        for _ in range(n):
            # Every element consumes at least one byte, so a hostile count is bounded
            # by the frame size: the loop runs out of data and raises DecodeError.
            if self.remaining() <= 0:
                raise DecodeError("unexpected EOF in Vec")
            self.elements += 1
            if self.elements > MAX_VEC_ELEMENTS:
                raise DecodeError("too many Vec elements in one request")
            out.append(read_elem())
        return out

    def bytes_vec(self) -> bytes:
        """Vec<u8>: i32 count + raw bytes."""
        n = self.vec_count()
        return self.take(n)

    def varint(self) -> int:
        """zigzag + LEB128, 64-bit, capped at 10 bytes (spec A11)."""
        result = 0
        shift = 0
        for _ in range(MAX_VARINT_BYTES):
            b = self.u8()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                result &= (1 << 64) - 1
                return (result >> 1) ^ -(result & 1)
            shift += 7
        raise DecodeError("varint longer than 10 bytes")


class Writer:
    """Builds a response body."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def raw(self, b: bytes) -> "Writer":
        self.parts.append(bytes(b))
        return self

    def i8(self, v: int) -> "Writer":
        return self.raw(_I8.pack(v))

    def u8(self, v: int) -> "Writer":
        return self.raw(_U8.pack(v))

    def i16(self, v: int) -> "Writer":
        return self.raw(_I16.pack(v))

    def u16(self, v: int) -> "Writer":
        return self.raw(_U16.pack(v))

    def i32(self, v: int) -> "Writer":
        return self.raw(_I32.pack(v))

    def u32(self, v: int) -> "Writer":
        return self.raw(_U32.pack(v & 0xFFFFFFFF))

    def i64(self, v: int) -> "Writer":
        return self.raw(_I64.pack(v))

    def u64(self, v: int) -> "Writer":
        return self.raw(_U64.pack(v & 0xFFFFFFFFFFFFFFFF))

    def bool(self, v: bool) -> "Writer":
        return self.u8(1 if v else 0)

    def string(self, s: str) -> "Writer":
        b = s.encode("utf-8")
        # The encoder writes the length as u16 (spec §1).
        self.u16(len(b))
        return self.raw(b)

    def option_string(self, s: str | None) -> "Writer":
        if s is None:
            return self.u8(0)
        self.u8(1)
        return self.string(s)

    def vec_len(self, n: int) -> "Writer":
        return self.u32(n)

    def bytes_vec(self, b: bytes) -> "Writer":
        self.u32(len(b))
        return self.raw(b)

    def varint(self, v: int) -> "Writer":
        return self.raw(encode_varint(v))

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


def encode_varint(v: int) -> bytes:
    """64-bit zigzag + LEB128."""
    z = ((v << 1) ^ (v >> 63)) & ((1 << 64) - 1)
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)
