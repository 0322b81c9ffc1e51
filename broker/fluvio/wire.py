"""Fluvio's primitive encodings and its ErrorCode enum, read from and written to plain bytes.

Notes §1 (the primitives), §6 (ErrorCode). What this reader does where the notes leave a choice:
- Strings: i16 length, then UTF-8. A length <= 0 is the empty string (§1, A12: mirrored, no bytes consumed);
  invalid UTF-8 or a length beyond the frame is malformed.
- Vec: i32 count. A count < 1 is empty (§1, A12: mirrored). A count larger than the bytes left is malformed
  before any element is read (every element here takes at least one byte), and a request may hold at most
  MAX_ELEMENTS elements in all (decision: Fluvio has no such limit; this broker builds Python objects per
  element, so the budget bounds memory whatever the counts claim).
- bool and Option tags: only 0 and 1 (§1); anything else is malformed.
Malformed input raises :class:`Malformed`; the connection is then closed without a response (§7).
"""

from __future__ import annotations

import struct

from wirecheck.broker.framed import FrameShape

MIN_FRAME = 10  # api_key u16 + api_version i16 + correlation_id i32 + client_id length i16


def frame_shape(max_frame: int) -> FrameShape:
    """Fluvio's framing, the SPU's and the SC's alike: an i32 size before each request, at least its header."""
    return FrameShape(header_size=4, length_at=0, length_format=">i", min_length=MIN_FRAME, max_length=max_frame)


MAX_ELEMENTS = 200_000

_I8, _U8, _I16, _U16, _I32, _U32, _I64, _U64 = (struct.Struct(f) for f in (">b", ">B", ">h", ">H", ">i", ">I",
                                                                            ">q", ">Q"))


class Malformed(ValueError):
    """The bytes do not decode as the message they claim to be (§7: the SPU ends the connection)."""


class Reader:
    """A cursor over one frame; every read is bounded by the frame's own length."""

    __slots__ = ("buf", "pos", "elements")

    def __init__(self, buf: bytes, pos: int = 0):
        self.buf = buf
        self.pos = pos
        self.elements = 0

    @property
    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def _fixed(self, st: struct.Struct, what: str):
        end = self.pos + st.size
        if end > len(self.buf):
            raise Malformed(f"truncated {what} at byte {self.pos}")
        (value,) = st.unpack_from(self.buf, self.pos)
        self.pos = end
        return value

    def i8(self) -> int:
        return self._fixed(_I8, "i8")

    def u8(self) -> int:
        return self._fixed(_U8, "u8")

    def i16(self) -> int:
        return self._fixed(_I16, "i16")

    def u16(self) -> int:
        return self._fixed(_U16, "u16")

    def i32(self) -> int:
        return self._fixed(_I32, "i32")

    def u32(self) -> int:
        return self._fixed(_U32, "u32")

    def i64(self) -> int:
        return self._fixed(_I64, "i64")

    def u64(self) -> int:
        return self._fixed(_U64, "u64")

    def raw(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise Malformed(f"{n} bytes wanted at byte {self.pos}, {self.remaining} left")
        data = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return data

    def flag(self, what: str = "bool") -> bool:
        """bool, and the tag of an Option: 0 or 1 only (§1)."""
        value = self.u8()
        if value > 1:
            raise Malformed(f"{what} byte {value} is neither 0 nor 1")
        return value == 1

    def string(self) -> str:
        n = self.i16()
        if n <= 0:
            return ""  # §1: no null string; a length <= 0 is ""
        try:
            return self.raw(n).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Malformed(f"invalid UTF-8 in a string: {exc}") from None

    def option_string(self) -> str | None:
        return self.string() if self.flag("Option tag") else None

    def count(self, min_element_size: int = 1) -> int:
        """A Vec's element count, checked against the bytes left and the request's element budget."""
        n = self.i32()
        if n < 1:
            return 0  # §1: a count < 1 decodes as empty
        if n * min_element_size > self.remaining:
            raise Malformed(f"count {n} exceeds the {self.remaining} bytes left")
        self.elements += n
        if self.elements > MAX_ELEMENTS:
            raise Malformed(f"more than {MAX_ELEMENTS} elements in one request")
        return n

    def byte_vec(self) -> bytes:
        """Vec<u8>: i32 count then raw bytes."""
        n = self.i32()
        return self.raw(n) if n > 0 else b""


class LossyReader(Reader):
    """Fault utf8-lossy: invalid UTF-8 in a string is decoded with replacement characters, not refused."""

    __slots__ = ()

    def string(self) -> str:
        n = self.i16()
        return self.raw(n).decode("utf-8", "replace") if n > 0 else ""


# ------------------------------------------------------------------------------------------------ writing

def i8(v: int) -> bytes:
    return _I8.pack(v)


def u8(v: int) -> bytes:
    return _U8.pack(v)


def i16(v: int) -> bytes:
    return _I16.pack(v)


def u16(v: int) -> bytes:
    return _U16.pack(v)


def i32(v: int) -> bytes:
    return _I32.pack(v)


def u32(v: int) -> bytes:
    return _U32.pack(v & 0xFFFFFFFF)


def i64(v: int) -> bytes:
    return _I64.pack(v)


def u64(v: int) -> bytes:
    return _U64.pack(v)


def string(s: str) -> bytes:
    raw = s.encode("utf-8")[:32767]  # i16 length: longer strings cannot be decoded (A12)
    return _I16.pack(len(raw)) + raw


def option_string(s: str | None) -> bytes:
    return b"\x00" if s is None else b"\x01" + string(s)


def vec(items: list[bytes]) -> bytes:
    return _I32.pack(len(items)) + b"".join(items)


# ------------------------------------------------------------------------------------------------ ErrorCode

class ErrorCode:
    """An ErrorCode on the wire: i16 tag, then the variant's payload (§6; A9: not a bare i16)."""

    NONE = 0
    OTHER = 2
    NOT_LEADER_FOR_PARTITION = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    STORAGE_ERROR = 56
    OFFSET_EVICTED = 71
    PARTITION_FULL = 72
    PARTITION_SHORT_CIRCUITED = 73
    TOPIC_NOT_FOUND = 2001
    PARTITION_NOT_LEADER = 3001
    FETCH_SESSION_NOT_FOUND = 3002
    SMARTMODULE_NOT_FOUND = 6001
    SMARTMODULE_INVALID = 6002
    DERIVED_STREAM_NOT_FOUND = 8001
    COMPRESSION_ERROR = 9000

    @staticmethod
    def plain(code: int) -> bytes:
        """A variant without a payload."""
        return _I16.pack(code)

    @staticmethod
    def other(message: str) -> bytes:
        return _I16.pack(ErrorCode.OTHER) + string(message)

    @staticmethod
    def offset_evicted(offset: int, next_available: int) -> bytes:
        return _I16.pack(ErrorCode.OFFSET_EVICTED) + i64(offset) + i64(next_available)

    @staticmethod
    def partition_full(topic: str, partition: int) -> bytes:
        """PartitionFull { replica_key: { topic String, partition u32 } }."""
        return _I16.pack(ErrorCode.PARTITION_FULL) + string(topic) + u32(partition)

    @staticmethod
    def smartmodule_not_found(name: str) -> bytes:
        return _I16.pack(ErrorCode.SMARTMODULE_NOT_FOUND) + string(name)

    @staticmethod
    def smartmodule_invalid(error: str, name: str | None) -> bytes:
        return _I16.pack(ErrorCode.SMARTMODULE_INVALID) + string(error) + option_string(name)

    @staticmethod
    def derived_stream_not_found(name: str) -> bytes:
        return _I16.pack(ErrorCode.DERIVED_STREAM_NOT_FOUND) + string(name)


OK = ErrorCode.plain(ErrorCode.NONE)
