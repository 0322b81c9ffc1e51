"""Glue between plain Python values and kio's typed, per-version Kafka schemas.

The handlers work with plain dicts (ints, strs, bytes, lists, dicts, UUIDs).
`decode_body` turns a request body into such a dict; `encode_body` turns a dict
into the response body of a given API version.  Fields that the target version
does not have are dropped, missing fields take the schema default, so one
handler serves every version of its API.

The request header is parsed by hand (it is four fixed fields plus, in header
v2, a tagged-field section), because the header version depends on the API
version and Kafka keeps ClientId a classic INT16 string even in header v2.
"""
from __future__ import annotations

import dataclasses
import datetime
import io
import struct
import types
import uuid
from functools import lru_cache
from typing import Any, Union, get_args, get_origin

from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.serial import entity_writer


class DecodeError(Exception):
    """The bytes do not form a valid message."""


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

# API keys whose ApiVersions/flexible rules are special are handled in server.py.
# key -> (first flexible version)
FLEXIBLE_FROM = {
    0: 9,    # Produce
    1: 12,   # Fetch
    2: 6,    # ListOffsets
    3: 9,    # Metadata
    8: 8,    # OffsetCommit
    9: 6,    # OffsetFetch
    10: 3,   # FindCoordinator
    11: 6,   # JoinGroup
    12: 4,   # Heartbeat
    13: 4,   # LeaveGroup
    14: 4,   # SyncGroup
    15: 5,   # DescribeGroups
    16: 3,   # ListGroups
    18: 3,   # ApiVersions
    19: 5,   # CreateTopics
}


def is_flexible(api_key: int, version: int) -> bool:
    return version >= FLEXIBLE_FROM.get(api_key, 1 << 30)


# --------------------------------------------------------------------------
# primitive readers used for the header and for record batches


def read_uvarint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Unsigned LEB128 varint (at most 5 bytes, i.e. 32 bits)."""
    result = 0
    shift = 0
    for _i in range(5):
        if pos >= len(buf):
            raise DecodeError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            if result > 0xFFFFFFFF:
                raise DecodeError("varint overflow")
            return result, pos
        shift += 7
    raise DecodeError("varint too long")


def skip_tagged_fields(buf: bytes | memoryview, pos: int) -> int:
    count, pos = read_uvarint(buf, pos)
    for _ in range(count):
        _tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        if pos + size > len(buf):
            raise DecodeError("truncated tagged field")
        pos += size
    return pos


@dataclasses.dataclass
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int  # where the body starts inside the frame


def parse_header_prefix(frame: bytes) -> tuple[int, int, int]:
    """api_key, api_version, correlation_id: readable for any request."""
    if len(frame) < 8:
        raise DecodeError("frame shorter than a request header")
    return struct.unpack_from(">hhi", frame, 0)


def parse_header(frame: bytes, flexible: bool) -> RequestHeader:
    api_key, api_version, correlation_id = parse_header_prefix(frame)
    pos = 8
    if pos + 2 > len(frame):
        raise DecodeError("truncated client id")
    (n,) = struct.unpack_from(">h", frame, pos)
    pos += 2
    client_id: str | None
    if n == -1:
        client_id = None
    elif n < -1:
        raise DecodeError("negative client id length")
    else:
        if pos + n > len(frame):
            raise DecodeError("truncated client id")
        try:
            client_id = frame[pos : pos + n].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError("client id is not UTF-8") from exc
        pos += n
    if flexible:
        pos = skip_tagged_fields(frame, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id, pos)


def response_header(correlation_id: int, flexible_header: bool) -> bytes:
    head = struct.pack(">i", correlation_id)
    if flexible_header:
        head += b"\x00"  # empty tagged-field section (response header v1)
    return head


# --------------------------------------------------------------------------
# entity <-> plain conversion


@lru_cache(maxsize=None)
def request_schema(api_key: int, version: int):
    return load_request_schema(api_key, version)


@lru_cache(maxsize=None)
def response_schema(api_key: int, version: int):
    return load_response_schema(api_key, version)


@lru_cache(maxsize=None)
def _writer(cls):
    return entity_writer(cls)


def to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, ErrorCode):
        return int(value)
    if isinstance(value, datetime.timedelta):
        return round(value.total_seconds() * 1000)
    if isinstance(value, datetime.datetime):
        return round((value - _EPOCH).total_seconds() * 1000)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return value


def _strip_optional(tp):
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        args = [a for a in get_args(tp) if a is not type(None)]
        return args[0]
    return tp


def _unwrap(tp):
    """(inner type, is_tuple) for `X`, `X | None`, `tuple[X, ...]`, `tuple[X, ...] | None`."""
    tp = _strip_optional(tp)
    is_tuple = False
    if get_origin(tp) is tuple:
        tp = get_args(tp)[0]
        is_tuple = True
    return _strip_optional(tp), is_tuple


def _from_plain_value(field: dataclasses.Field, value: Any) -> Any:
    if value is None:
        return None
    ktype = field.metadata.get("kafka_type")
    inner, is_tuple = _unwrap(field.type)
    if is_tuple:
        if dataclasses.is_dataclass(inner):
            return tuple(from_plain(inner, v) for v in value)
        return tuple(_convert_scalar(ktype, inner, v) for v in value)
    if dataclasses.is_dataclass(inner):
        return from_plain(inner, value)
    return _convert_scalar(ktype, inner, value)


def _convert_scalar(ktype: str | None, inner, value: Any) -> Any:
    if ktype == "error_code":
        return ErrorCode(value)
    if ktype in ("timedelta_i32", "timedelta_i64"):
        return datetime.timedelta(milliseconds=value)
    if ktype == "datetime_i64":
        if value is None or value == -1:
            return None
        return _EPOCH + datetime.timedelta(milliseconds=value)
    if ktype == "records":
        return bytes(value)
    return value


def from_plain(cls, data: dict) -> Any:
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            kwargs[f.name] = _from_plain_value(f, data[f.name])
    return cls(**kwargs)


# --------------------------------------------------------------------------
# body codec


def decode_body(api_key: int, version: int, frame: bytes, offset: int) -> dict:
    """Decode a request body into plain values.

    This is a small schema-driven reader over kio's dataclasses (field order,
    kafka_type, nullability, tags).  kio's own native reader is not used for
    untrusted input: it sizes arrays from the declared count before checking
    that the bytes exist, so a hostile count aborts the process.
    """
    cls = request_schema(api_key, version)
    reader = _Reader(memoryview(frame), offset, len(frame))
    try:
        return reader.entity(cls)
    except DecodeError:
        raise
    except (struct.error, UnicodeDecodeError, ValueError, OverflowError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from exc


class _Reader:
    def __init__(self, buf: memoryview, pos: int, end: int) -> None:
        self.buf = buf
        self.pos = pos
        self.end = end

    # primitives -----------------------------------------------------------
    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > self.end:
            raise DecodeError("buffer underflow")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def fixed(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size))[0]

    def uvarint(self) -> int:
        value, self.pos = read_uvarint(self.buf[: self.end], self.pos)
        return value

    def length(self, flexible: bool, wide: bool) -> int:
        """-1 for null, else the byte/element count."""
        if flexible:
            return self.uvarint() - 1
        return self.fixed(">i" if wide else ">h")

    def string(self, flexible: bool, nullable: bool) -> str | None:
        n = self.length(flexible, wide=False)
        if n < 0:
            if n == -1 and nullable:
                return None
            raise DecodeError("null or negative string length")
        return bytes(self.take(n)).decode("utf-8")

    def blob(self, flexible: bool, nullable: bool) -> bytes | None:
        n = self.length(flexible, wide=True)
        if n < 0:
            if n == -1 and nullable:
                return None
            raise DecodeError("null or negative bytes length")
        return bytes(self.take(n))

    def scalar(self, ktype: str, flexible: bool, nullable: bool) -> Any:
        fmt = _FIXED.get(ktype)
        if fmt is not None:
            value = self.fixed(fmt)
            return bool(value) if ktype == "bool" else value
        if ktype == "string":
            return self.string(flexible, nullable)
        if ktype in ("bytes", "records"):
            return self.blob(flexible, nullable)
        if ktype == "uuid":
            return uuid.UUID(bytes=bytes(self.take(16)))
        raise DecodeError(f"unsupported field type {ktype}")

    # structure ------------------------------------------------------------
    def array(self, flexible: bool, nullable: bool, item) -> list | None:
        n = self.length(flexible, wide=True)
        if n < 0:
            if n == -1 and nullable:
                return None
            raise DecodeError("null or negative array length")
        if n > self.end - self.pos:  # every element takes at least one byte
            raise DecodeError(f"array of {n} elements cannot fit in {self.end - self.pos} bytes")
        return [item() for _ in range(n)]

    def field(self, f: dataclasses.Field, flexible: bool, as_tag: bool) -> Any:
        ktype = f.metadata.get("kafka_type")
        inner, is_tuple = _unwrap(f.type)
        nullable = (not as_tag) and _is_nullable(f.type)
        if is_tuple:
            if dataclasses.is_dataclass(inner):
                return self.array(flexible, nullable, lambda: self.entity(inner))
            return self.array(flexible, nullable, lambda: self.scalar(ktype, flexible, False))
        if dataclasses.is_dataclass(inner):
            if nullable:
                marker = self.fixed(">b")
                if marker == -1:
                    return None
            return self.entity(inner)
        return self.scalar(ktype, flexible, nullable)

    def entity(self, cls) -> dict:
        flexible = bool(getattr(cls, "__flexible__", False))
        out: dict[str, Any] = {}
        tagged: dict[int, dataclasses.Field] = {}
        for f in dataclasses.fields(cls):
            tag = f.metadata.get("tag")
            if tag is not None:
                tagged[int(tag)] = f
                out[f.name] = _plain_default(f)
                continue
            out[f.name] = self.field(f, flexible, as_tag=False)
        if flexible:
            count = self.uvarint()
            last = -1
            for _ in range(count):
                tag = self.uvarint()
                size = self.uvarint()
                if tag <= last:
                    raise DecodeError("tagged fields out of order or repeated")
                last = tag
                data = self.take(size)
                f = tagged.get(tag)
                if f is None:
                    continue  # unknown tags are skipped
                sub = _Reader(self.buf, self.pos - size, self.pos)
                out[f.name] = sub.field(f, flexible, as_tag=True)
                if sub.pos != sub.end:
                    raise DecodeError(f"tagged field {tag} has trailing bytes")
                del data
        return out


_FIXED = {
    "int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q",
    "uint8": ">B", "uint16": ">H", "uint32": ">I", "uint64": ">Q",
    "float64": ">d", "bool": ">B", "error_code": ">h",
    "timedelta_i32": ">i", "timedelta_i64": ">q", "datetime_i64": ">q",
}


def _is_nullable(tp) -> bool:
    origin = get_origin(tp)
    return (origin is Union or origin is types.UnionType) and type(None) in get_args(tp)


def _plain_default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return to_plain(f.default)
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return to_plain(f.default_factory())  # type: ignore[misc]
    return None


def encode_body(api_key: int, version: int, data: dict) -> bytes:
    cls = response_schema(api_key, version)
    buf = io.BytesIO()
    _writer(cls)(buf, from_plain(cls, data))
    return buf.getvalue()


def encode_uuid(value: uuid.UUID | None) -> uuid.UUID:
    return value if value is not None else uuid.UUID(int=0)
