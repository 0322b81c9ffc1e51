"""Field types that binary wire protocols share, as fast codecs and as scapy fields.

Each codec is a small object with two methods:

* ``write(out: bytearray, value)`` appends the encoding of ``value``;
* ``read(buf: bytes, pos: int) -> (value, new_pos)`` decodes at ``pos`` and is strict: truncation,
  negative lengths other than the null marker, overlong varints and invalid UTF-8 raise :class:`DecodeError`
  naming the offset (composite codecs add the field path on the way out).

Kafka, Fluvio and the other length-prefixed protocols compose these; ``CodecField`` wraps any codec as a
scapy ``Field`` so the same definitions describe and display packets. The codecs are plain ``struct`` code
because scapy is about 100x slower (see the stack notes); scapy is for humans, the codecs for hot paths.

Sources: unsigned varints and zig-zag encoding are Protocol Buffers' (developers.google.com/protocol-buffers/
docs/encoding), which Kafka adopted in KIP-98 (record v2) and KIP-482 (compact types, tagged fields).
"""

from __future__ import annotations

import struct
import uuid
import zlib

import crc32c as _crc32c
from scapy.fields import Field


class DecodeError(ValueError):
    """A frame does not decode. ``path`` is the field path (outermost first), ``offset`` the byte offset."""

    def __init__(self, reason: str, offset: int, path: list[str] | None = None):
        self.reason = reason
        self.offset = offset
        self.path = list(path or [])
        super().__init__(reason)

    def within(self, name: str) -> "DecodeError":
        """Prefix the path with an enclosing field name (called while the error propagates outwards)."""
        self.path.insert(0, name)
        return self

    def __str__(self) -> str:
        where = ".".join(self.path) if self.path else "<frame>"
        return f"{where} at offset {self.offset}: {self.reason}"


def need(buf: bytes, pos: int, size: int, what: str) -> None:
    """Raise unless ``size`` bytes are available at ``pos``."""
    if pos + size > len(buf):
        raise DecodeError(f"truncated {what}: need {size} bytes, {len(buf) - pos} left", pos)


# ---------------------------------------------------------------------------------------------------------
# Fixed-width integers and floats (big-endian, network order)


class FixedCodec:
    """A fixed-size big-endian value (``struct`` format ``fmt``)."""

    __slots__ = ("name", "size", "_struct", "low", "high")

    def __init__(self, name: str, fmt: str, low: int | None = None, high: int | None = None):
        self.name = name
        self._struct = struct.Struct(">" + fmt)
        self.size = self._struct.size
        self.low, self.high = low, high

    def write(self, out: bytearray, value) -> None:
        out += self._struct.pack(value)

    def read(self, buf: bytes, pos: int):
        end = pos + self.size
        if end > len(buf):
            raise DecodeError(f"truncated {self.name}: need {self.size} bytes, {len(buf) - pos} left", pos)
        return self._struct.unpack_from(buf, pos)[0], end


class FixedRun:
    """Consecutive fixed-size fields of a struct, read with one ``struct`` call into the struct's dict.

    A buffer too short for the whole run is read field by field instead, so the error names the field that
    was cut, exactly as without the run."""

    __slots__ = ("names", "codecs", "_struct", "size")

    def __init__(self, fields: list[tuple[str, FixedCodec]]):
        self.names = tuple(name for name, _ in fields)
        self.codecs = tuple(codec for _, codec in fields)
        self._struct = struct.Struct(">" + "".join(codec._struct.format[1:] for codec in self.codecs))
        self.size = self._struct.size

    def read_into(self, value: dict, buf: bytes, pos: int) -> int:
        end = pos + self.size
        if end <= len(buf):
            value.update(zip(self.names, self._struct.unpack_from(buf, pos)))
            return end
        for name, codec in zip(self.names, self.codecs):
            try:
                value[name], pos = codec.read(buf, pos)
            except DecodeError as exc:
                raise exc.within(name) from None
        raise AssertionError("a run that does not fit must fail on one of its fields")


INT8 = FixedCodec("int8", "b", -(2**7), 2**7 - 1)
INT16 = FixedCodec("int16", "h", -(2**15), 2**15 - 1)
INT32 = FixedCodec("int32", "i", -(2**31), 2**31 - 1)
INT64 = FixedCodec("int64", "q", -(2**63), 2**63 - 1)
UINT8 = FixedCodec("uint8", "B", 0, 2**8 - 1)
UINT16 = FixedCodec("uint16", "H", 0, 2**16 - 1)
UINT32 = FixedCodec("uint32", "I", 0, 2**32 - 1)
UINT64 = FixedCodec("uint64", "Q", 0, 2**64 - 1)
FLOAT64 = FixedCodec("float64", "d")


class BoolCodec:
    """One byte. Decoding follows Kafka's readers (any non-zero byte is true); encoding writes 0 or 1."""

    name = "bool"
    size = 1

    def write(self, out: bytearray, value) -> None:
        out.append(1 if value else 0)

    def read(self, buf: bytes, pos: int):
        if pos >= len(buf):
            raise DecodeError("truncated bool: need 1 byte, 0 left", pos)
        return buf[pos] != 0, pos + 1


BOOL = BoolCodec()


class UuidCodec:
    """16 raw bytes, shown as :class:`uuid.UUID`."""

    name = "uuid"
    size = 16

    def write(self, out: bytearray, value) -> None:
        out += value.bytes if isinstance(value, uuid.UUID) else bytes(value)

    def read(self, buf: bytes, pos: int):
        need(buf, pos, 16, "uuid")
        return uuid.UUID(bytes=bytes(buf[pos : pos + 16])), pos + 16


UUID = UuidCodec()


# ---------------------------------------------------------------------------------------------------------
# Varints


def write_uvarint(out: bytearray, value: int) -> None:
    """Unsigned LEB128: 7 bits per byte, low group first, high bit set on every byte but the last."""
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def read_uvarint(buf: bytes, pos: int, max_bytes: int = 5, what: str = "unsigned varint"):
    """Decode an unsigned varint of at most ``max_bytes`` bytes (5 for 32-bit, 10 for 64-bit values)."""
    if pos < len(buf) and buf[pos] < 0x80:  # one byte: most lengths, counts and deltas
        return buf[pos], pos + 1
    result = shift = 0
    start = pos
    end = len(buf)
    for _ in range(max_bytes):
        if pos >= end:
            raise DecodeError(f"truncated {what}", start)
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if result >> (32 if max_bytes <= 5 else 64):
                bits = 32 if max_bytes <= 5 else 64
                raise DecodeError(f"{what} {result} does not fit in {bits} bits", start)
            return result, pos
        shift += 7
    raise DecodeError(f"overlong {what}: more than {max_bytes} bytes", start)


def zigzag(value: int) -> int:
    """Map signed to unsigned so small magnitudes stay small: 0,-1,1,-2 -> 0,1,2,3."""
    return (value << 1) ^ (value >> 63) if value < 0 else value << 1


def unzigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


class UVarIntCodec:
    __slots__ = ("name", "max_bytes")

    def __init__(self, name: str = "uvarint", max_bytes: int = 5):
        self.name, self.max_bytes = name, max_bytes

    def write(self, out: bytearray, value: int) -> None:
        write_uvarint(out, value)

    def read(self, buf: bytes, pos: int):
        return read_uvarint(buf, pos, self.max_bytes, self.name)


class VarIntCodec:
    """Zig-zag signed varint (``max_bytes`` 5: varint/int32, 10: varlong/int64)."""

    __slots__ = ("name", "max_bytes", "low", "high")

    def __init__(self, name: str = "varint", max_bytes: int = 5):
        self.name, self.max_bytes = name, max_bytes
        bits = 32 if max_bytes == 5 else 64
        self.low, self.high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def write(self, out: bytearray, value: int) -> None:
        if not self.low <= value <= self.high:
            raise ValueError(f"{self.name} cannot hold {value}")
        write_uvarint(out, zigzag(value) & ((1 << 64) - 1))

    def read(self, buf: bytes, pos: int):
        if pos < len(buf) and buf[pos] < 0x80:  # one byte, inlined: the common case in every record
            raw = buf[pos]
            return (raw >> 1) ^ -(raw & 1), pos + 1
        raw, pos = read_uvarint(buf, pos, self.max_bytes, self.name)
        return unzigzag(raw), pos


UVARINT = UVarIntCodec("uvarint", 5)
UVARLONG = UVarIntCodec("uvarlong", 10)
VARINT = VarIntCodec("varint", 5)
VARLONG = VarIntCodec("varlong", 10)


def uvarint_bytes(value: int) -> bytes:
    out = bytearray()
    write_uvarint(out, value)
    return bytes(out)


def varint_bytes(value: int) -> bytes:
    out = bytearray()
    VARLONG.write(out, value)
    return bytes(out)


# ---------------------------------------------------------------------------------------------------------
# Length-prefixed strings and bytes


class LengthPrefixed:
    """Bytes or a UTF-8 string behind a length prefix.

    ``prefix`` is a fixed codec (classic: INT16 for strings, INT32 for bytes; -1 is null) or ``"compact"``
    (an unsigned varint holding N+1, 0 is null). A null for a non-nullable field is a decode error, as is
    any other negative length.
    """

    __slots__ = ("name", "prefix", "text", "nullable")

    def __init__(self, name: str, prefix, text: bool, nullable: bool):
        self.name, self.prefix, self.text, self.nullable = name, prefix, text, nullable

    def write(self, out: bytearray, value) -> None:
        if value is None:
            if not self.nullable:
                raise ValueError(f"{self.name} is not nullable")
            if self.prefix == "compact":
                out.append(0)
            else:
                self.prefix.write(out, -1)
            return
        data = value.encode("utf-8") if self.text and isinstance(value, str) else bytes(value)
        if self.prefix == "compact":
            write_uvarint(out, len(data) + 1)
        else:
            self.prefix.write(out, len(data))
        out += data

    def read(self, buf: bytes, pos: int):
        start = pos
        if self.prefix == "compact":
            raw, pos = read_uvarint(buf, pos, 5, f"{self.name} length")
            length = raw - 1
        else:
            length, pos = self.prefix.read(buf, pos)
        if length < 0:
            if length == -1 and self.nullable:
                return None, pos
            marker = "null marker" if length == -1 else "negative length"
            raise DecodeError(f"{marker} {length} for non-nullable {self.name}"
                              if length == -1 else f"{marker} {length} for {self.name}", start)
        end = pos + length
        if end > len(buf):
            raise DecodeError(f"{self.name} claims {length} bytes, {len(buf) - pos} left", start)
        data = bytes(buf[pos:end])
        if self.text:
            try:
                return data.decode("utf-8"), end
            except UnicodeDecodeError as exc:
                raise DecodeError(f"invalid UTF-8 in {self.name}: {exc.reason} at byte {exc.start}", pos) from None
        return data, end


def string_codec(compact: bool, nullable: bool) -> LengthPrefixed:
    return LengthPrefixed("compact string" if compact else "string", "compact" if compact else INT16, True, nullable)


def bytes_codec(compact: bool, nullable: bool) -> LengthPrefixed:
    return LengthPrefixed("compact bytes" if compact else "bytes", "compact" if compact else INT32, False, nullable)


class VarBytes:
    """Bytes behind a zig-zag varint length, -1 null (record v2 keys, values and headers)."""

    __slots__ = ("name", "text")

    def __init__(self, name: str = "varbytes", text: bool = False):
        self.name, self.text = name, text

    def write(self, out: bytearray, value) -> None:
        if value is None:
            out.append(1)  # zig-zag(-1)
            return
        data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        VARINT.write(out, len(data))
        out += data

    def read(self, buf: bytes, pos: int):
        start = pos
        length, pos = VARINT.read(buf, pos)
        if length == -1:
            return None, pos
        if length < 0:
            raise DecodeError(f"negative length {length} for {self.name}", start)
        end = pos + length
        if end > len(buf):
            raise DecodeError(f"{self.name} claims {length} bytes, {len(buf) - pos} left", start)
        data = bytes(buf[pos:end])
        if self.text:
            try:
                return data.decode("utf-8"), end
            except UnicodeDecodeError as exc:
                raise DecodeError(f"invalid UTF-8 in {self.name}: {exc.reason}", pos) from None
        return data, end


# ---------------------------------------------------------------------------------------------------------
# Arrays


class ArrayCodec:
    """A counted sequence of ``item`` values.

    ``prefix``: INT32 (classic, -1 null), ``"compact"`` (uvarint N+1, 0 null) or VARINT (record v2 headers).
    A count larger than the bytes left could possibly hold (``item_min_size`` bytes each) is rejected before
    anything is allocated, so a lying count costs nothing.
    """

    __slots__ = ("name", "item", "prefix", "nullable", "item_min_size", "min_size")

    def __init__(self, name: str, item, prefix, nullable: bool, item_min_size: int = 1):
        self.name, self.item, self.prefix, self.nullable = name, item, prefix, nullable
        self.item_min_size = item_min_size
        self.min_size = 1 if prefix == "compact" else getattr(prefix, "size", 1)  # the shortest encoding

    def write(self, out: bytearray, value) -> None:
        if value is None:
            if not self.nullable:
                raise ValueError(f"{self.name} is not nullable")
            if self.prefix == "compact":
                out.append(0)
            else:
                self.prefix.write(out, -1)
            return
        if self.prefix == "compact":
            write_uvarint(out, len(value) + 1)
        else:
            self.prefix.write(out, len(value))
        write = self.item.write
        for element in value:
            write(out, element)

    def read(self, buf: bytes, pos: int):
        start = pos
        if self.prefix == "compact":
            raw, pos = read_uvarint(buf, pos, 5, f"{self.name} count")
            count = raw - 1
        else:
            count, pos = self.prefix.read(buf, pos)
        if count < 0:
            if count == -1 and self.nullable:
                return None, pos
            what = "null marker -1 for non-nullable" if count == -1 else f"negative count {count} for"
            raise DecodeError(f"{what} {self.name}", start)
        left = len(buf) - pos
        if count * self.item_min_size > left or (self.item_min_size == 0 and count > 1_000_000):
            raise DecodeError(f"{self.name} claims {count} elements, only {left} bytes left", start)
        items = []
        read = self.item.read
        for index in range(count):
            try:
                element, pos = read(buf, pos)
            except DecodeError as exc:
                raise exc.within(f"[{index}]") from None
            items.append(element)
        return items, pos


# ---------------------------------------------------------------------------------------------------------
# Tagged-field sections (KIP-482): uvarint count, then (uvarint tag, uvarint size, size bytes) each


def write_tagged_section(out: bytearray, fields: list[tuple[int, bytes]]) -> None:
    """Write ``fields`` (already sorted by tag, payloads already encoded)."""
    write_uvarint(out, len(fields))
    for tag, payload in fields:
        write_uvarint(out, tag)
        write_uvarint(out, len(payload))
        out += payload


def read_tagged_section(buf: bytes, pos: int, strict_order: bool = True):
    """Read a tagged-field section into [(tag, payload bytes, payload offset)].

    KIP-482 requires tags in strictly ascending order; ``strict_order`` makes a repeat or a descent an error.
    """
    start = pos
    count, pos = read_uvarint(buf, pos, 5, "tagged field count")
    if count > len(buf) - pos:
        raise DecodeError(f"tagged field count {count} exceeds the {len(buf) - pos} bytes left", start)
    fields, last = [], -1
    for _ in range(count):
        tag_pos = pos
        tag, pos = read_uvarint(buf, pos, 5, "tag")
        if strict_order and tag <= last:
            raise DecodeError(f"tag {tag} after tag {last}: tags must be strictly ascending", tag_pos)
        last = tag
        size, pos = read_uvarint(buf, pos, 5, f"size of tag {tag}")
        end = pos + size
        if end > len(buf):
            raise DecodeError(f"tag {tag} claims {size} bytes, {len(buf) - pos} left", tag_pos)
        fields.append((tag, bytes(buf[pos:end]), pos))
        pos = end
    return fields, pos


# ---------------------------------------------------------------------------------------------------------
# Checksums


def crc32c(data: bytes, value: int = 0) -> int:
    """CRC-32C (Castagnoli), as Kafka record batches v2 use."""
    return _crc32c.crc32c(data, value=value)


def crc32(data: bytes, value: int = 0) -> int:
    """CRC-32 (IEEE), as Kafka's legacy message format v0/v1 uses."""
    return zlib.crc32(data, value) & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------------------
# Scapy adapter


class CodecField(Field):
    """A scapy field whose wire format is one of the codecs above (or any object with write/read).

    The internal value is the codec's Python value (str, bytes, int, list of dicts...), so scapy shows the
    decoded field and ``bytes(pkt)`` emits exactly what the codec emits.
    """

    __slots__ = ["codec"]
    islist = 1  # the value is one value even when it is a Python list (scapy would otherwise iterate over it)

    def __init__(self, name: str, default, codec):
        self.codec = codec
        Field.__init__(self, name, default, fmt="!B")  # fmt is unused: addfield/getfield are overridden

    def addfield(self, pkt, s, val):
        out = bytearray()
        self.codec.write(out, val)
        return s + bytes(out)

    def getfield(self, pkt, s):
        value, pos = self.codec.read(s, 0)
        return s[pos:], value

    def i2len(self, pkt, x):
        out = bytearray()
        self.codec.write(out, x)
        return len(out)

    def randval(self):
        return self.default

    def i2repr(self, pkt, x):
        return repr(x)
