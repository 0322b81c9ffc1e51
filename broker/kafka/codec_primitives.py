"""The primitive types of Kafka's message bodies (protocol guide 'Protocol Primitive Types', KIP-482): fixed-size
integers, unsigned varints, and length-prefixed strings, bytes and records, read without trusting a length beyond
the frame."""

from __future__ import annotations

import struct


class MalformedBody(ValueError):
    """The bytes do not decode as the message they claim to be (truncated, lying length, bad count)."""


I8, I16, I32, I64, U16, F64 = (struct.Struct(f) for f in (">b", ">h", ">i", ">q", ">H", ">d"))
FIXED = {"int8": I8, "int16": I16, "int32": I32, "int64": I64, "uint16": U16, "float64": F64}


def read_uvarint(buf, pos: int) -> tuple[int, int]:
    """An unsigned 32-bit varint (compact lengths, tags): at most 5 bytes, as Kafka's
    ByteUtils.readUnsignedVarint; a longer one is a malformed body (the connection closes)."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise MalformedBody("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 28:
            raise MalformedBody("unsigned varint longer than 5 bytes")


def write_uvarint(value: int, out: bytearray) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def fixed_reader(st: struct.Struct):
    size, unpack = st.size, st.unpack_from

    def read(buf, pos):
        if pos + size > len(buf):
            raise MalformedBody("truncated")
        return unpack(buf, pos)[0], pos + size

    return read


def read_bool(buf, pos):
    if pos >= len(buf):
        raise MalformedBody("truncated")
    return buf[pos] != 0, pos + 1


def read_uuid(buf, pos):
    if pos + 16 > len(buf):
        raise MalformedBody("truncated uuid")
    return bytes(buf[pos:pos + 16]), pos + 16


def length_reader(compact: bool, as_int32: bool = False):
    """Returns a reader of a length prefix giving -1 for null. ``as_int32``: a compact length computed as Java's
    ``readUnsignedVarint() - 1`` is, in 32-bit ints (a varint of 2**31 or more is negative)."""
    if compact:
        def read(buf, pos):
            n, pos = read_uvarint(buf, pos)
            if as_int32:
                n = (n + 2**31) % 2**32 - 2**31
            return n - 1, pos
        return read
    unpack = I16.unpack_from

    def read16(buf, pos):
        if pos + 2 > len(buf):
            raise MalformedBody("truncated")
        return unpack(buf, pos)[0], pos + 2

    return read16


def read_len32(buf, pos):
    if pos + 4 > len(buf):
        raise MalformedBody("truncated")
    return I32.unpack_from(buf, pos)[0], pos + 4


def blob_reader(kind: str, compact: bool, nullable: bool, short_varint: bool = False, negative_null: bool = False):
    """string/bytes/records: a length then that many bytes (never trusting the length beyond the buffer).
    ``negative_null``: any negative length of a nullable field is null, not only -1."""
    read_len = (length_reader(True, negative_null) if compact
                else (length_reader(False) if kind == "string" else read_len32))
    null_below = -(2**31) if negative_null else -1
    if compact and kind == "string" and short_varint:
        def read_len(buf, pos):  # fault compact-string-length-two-bytes: a varint of at most two bytes
            if pos + 2 > len(buf):  # the string's bytes (or a tagged-field section) always follow
                raise MalformedBody("truncated")
            n, pos = buf[pos] & 0x7F, pos + 1
            if buf[pos - 1] & 0x80:
                n, pos = n | (buf[pos] & 0x7F) << 7, pos + 1
            return n - 1, pos

    def read(buf, pos):
        n, pos = read_len(buf, pos)
        if n < 0:
            if n >= null_below and nullable:
                return None, pos
            raise MalformedBody(f"null or negative length {n} for a non-nullable {kind}")
        end = pos + n
        if end > len(buf):
            raise MalformedBody(f"{kind} length {n} beyond the frame")
        raw = bytes(buf[pos:end])
        if kind == "string":
            # Java's String(bytes, UTF_8) replaces malformed input rather than failing; so do we.
            return raw.decode("utf-8", "replace"), end
        return raw, end

    return read


def write_blob(kind: str, compact: bool):
    def write(value, out):
        if value is None:
            if compact:
                out.append(0)
            else:
                out += b"\xff\xff" if kind == "string" else b"\xff\xff\xff\xff"
            return
        raw = value.encode("utf-8") if isinstance(value, str) else value
        if compact:
            write_uvarint(len(raw) + 1, out)
        elif kind == "string":
            out += I16.pack(len(raw))
        else:
            out += I32.pack(len(raw))
        out += raw

    return write

