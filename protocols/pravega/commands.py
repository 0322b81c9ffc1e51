"""Every wire command of the Pravega segment store, wire version 17 (oldest compatible 5), as a struct codec.

Frame (specs/pravega.md §1): ``i32 type | i32 length | payload``, big-endian. Payload fields (§2, §4) are
fixed-width integers (no varints anywhere, whatever the published doc says), booleans, UUIDs as two longs,
Java modified UTF-8 strings with a u16 length, ``i32 length`` blobs and a few nested structures (table keys,
values and entries, conditional attribute updates). Fields marked optional are read only when enough payload is
left (the Java readers test ``available()``), else they take their default; bytes after the last known field are
skipped (forward compatibility, CD:62).

This module is the hot-path codec (suite, strategies, capture checks); ``layers`` builds the scapy layers from the
same table. ``encode(code, values)`` -> frame bytes, ``decode(frame)`` -> :class:`Decoded`; both strict.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from typing import NamedTuple

from wirecheck.protocols.fields import BOOL, INT8, INT32, INT64, UUID, DecodeError
from wirecheck.protocols.pravega.mutf8 import JAVA_UTF

WIRE_VERSION, OLDEST_COMPATIBLE_VERSION = 17, 5
HEADER = struct.Struct(">ii")
HEADER_SIZE = 8
#: the server's frame decoder caps header + payload at 0xFFFFFF (PCL:180): the largest request payload
MAX_PAYLOAD = 0xFFFFFF - HEADER_SIZE  # 16,777,207
#: the clients cap the payload alone at 0xFFFFFF (TcpClientConnection:166): the largest reply payload
MAX_REPLY_PAYLOAD = 0xFFFFFF
NULL_ATTRIBUTE_VALUE = -(2**63)  # Long.MIN_VALUE: "not set" (WC:72)
NO_VERSION, NOT_EXISTS = -(2**63), -1  # table key versions: unconditional, must not exist
MAX_READ_SIZE = 2 * 1024 * 1024  # suggestedLength is clamped to [8, 2 MiB] (PRP:160, 232)


# -- nested codecs --------------------------------------------------------------------------------------------


class Blob:
    """``i32 length | bytes``. ``lenient``: a length <= 0 reads as empty (AppendBlockEnd, ConditionalBlockEnd,
    WC:611-617, 2824-2830); otherwise a negative length is an error (SegmentRead)."""

    def __init__(self, lenient: bool = False):
        self.lenient = lenient
        self.name = "blob"

    def write(self, out: bytearray, value) -> None:
        out += struct.pack(">i", len(value)) + bytes(value)

    def read(self, buf: bytes, pos: int):
        size, pos = INT32.read(buf, pos)
        if size <= 0:
            if size < 0 and not self.lenient:
                raise DecodeError(f"negative blob length {size}", pos - 4)
            return b"", pos
        if pos + size > len(buf):
            raise DecodeError(f"blob length {size} runs past the payload ({len(buf) - pos} bytes left)", pos - 4)
        return bytes(buf[pos : pos + size]), pos + size


class Rest:
    """The payload's remaining bytes (AppendBlock data, PartialEvent, Padding, a top-level Event)."""

    name = "rest"

    def write(self, out: bytearray, value) -> None:
        out += bytes(value)

    def read(self, buf: bytes, pos: int):
        return bytes(buf[pos:]), len(buf)


class NestedEvent:
    """An Event frame inside ConditionalAppend: ``i32 0 | i32 n | n bytes``; a type other than 0 is an error."""

    name = "event"

    def write(self, out: bytearray, value) -> None:
        out += struct.pack(">ii", 0, len(value)) + bytes(value)

    def read(self, buf: bytes, pos: int):
        kind, pos = INT32.read(buf, pos)
        if kind != 0:
            raise DecodeError(f"nested event type {kind}, not 0 (Event)", pos - 4)
        size, pos = INT32.read(buf, pos)
        if size < 0 or pos + size > len(buf):
            raise DecodeError(f"nested event length {size} does not fit the payload", pos - 4)
        return bytes(buf[pos : pos + size]), pos + size


class ListOf:
    """``i32 count | count x item``; a count the remaining bytes cannot hold is an error before any allocation."""

    def __init__(self, item, min_item: int, name: str):
        self.item, self.min_item, self.name = item, min_item, name

    def write(self, out: bytearray, value) -> None:
        out += struct.pack(">i", len(value))
        for element in value:
            self.item.write(out, element)

    def read(self, buf: bytes, pos: int):
        count, pos = INT32.read(buf, pos)
        if count < 0 or count * self.min_item > len(buf) - pos:
            raise DecodeError(f"{self.name} count {count} cannot fit in {len(buf) - pos} bytes", pos - 4)
        items = []
        for i in range(count):
            try:
                value, pos = self.item.read(buf, pos)
            except DecodeError as exc:
                raise exc.within(f"[{i}]") from None
            items.append(value)
        return items, pos


class Record:
    """Named fields one after another, as a dict."""

    def __init__(self, name: str, fields: list[tuple[str, object]]):
        self.name, self.fields = name, fields

    def write(self, out: bytearray, value) -> None:
        for field_name, codec in self.fields:
            codec.write(out, value[field_name])

    def read(self, buf: bytes, pos: int):
        out = {}
        for field_name, codec in self.fields:
            out[field_name], pos = codec.read(buf, pos)
        return out, pos


class TableKeyCodec:
    """``i32 payloadSize | i32 len | data | i64 version`` (WC:2530-2641). An empty key is written without its
    version although payloadSize still claims 12; the reader then reads no version (ambiguity 18)."""

    name = "table-key"

    def write(self, out: bytearray, value) -> None:
        data, version = value
        out += struct.pack(">ii", 4 + len(data) + 8, len(data))
        if data:
            out += bytes(data) + struct.pack(">q", version)

    def read(self, buf: bytes, pos: int):
        _payload, pos = INT32.read(buf, pos)
        size, pos = INT32.read(buf, pos)
        if size == 0:
            return (b"", NO_VERSION), pos
        if size < 0 or pos + size + 8 > len(buf):
            raise DecodeError(f"table key length {size} does not fit the payload", pos - 4)
        data = bytes(buf[pos : pos + size])
        version, pos = INT64.read(buf, pos + size)
        return (data, version), pos


class TableValueCodec:
    """``i32 payloadSize (4 + len) | i32 len | data``."""

    name = "table-value"

    def write(self, out: bytearray, value) -> None:
        out += struct.pack(">ii", 4 + len(value), len(value)) + bytes(value)

    def read(self, buf: bytes, pos: int):
        _payload, pos = INT32.read(buf, pos)
        size, pos = INT32.read(buf, pos)
        if size <= 0:
            if size < 0:
                raise DecodeError(f"negative table value length {size}", pos - 4)
            return b"", pos
        if pos + size > len(buf):
            raise DecodeError(f"table value length {size} runs past the payload", pos - 4)
        return bytes(buf[pos : pos + size]), pos + size


class EntryCodec:
    """One table entry: (key bytes, key version, value bytes)."""

    name = "table-entry"

    def write(self, out: bytearray, value) -> None:
        key, version, data = value
        TABLE_KEY.write(out, (key, version))
        TABLE_VALUE.write(out, data)

    def read(self, buf: bytes, pos: int):
        (key, version), pos = TABLE_KEY.read(buf, pos)
        data, pos = TABLE_VALUE.read(buf, pos)
        return (key, version, data), pos


class IteratorArgs:
    """TableIteratorArgs: four blobs (continuationToken, prefixFilter, fromKey, toKey), each optional on read."""

    name = "iterator-args"
    PARTS = ("continuation_token", "prefix_filter", "from_key", "to_key")

    def write(self, out: bytearray, value) -> None:
        for part in self.PARTS:
            BLOB.write(out, value.get(part, b""))

    def read(self, buf: bytes, pos: int):
        out = {}
        for part in self.PARTS:
            if len(buf) - pos >= 4:
                out[part], pos = BLOB.read(buf, pos)
            else:
                out[part] = b""
        return out, pos


BLOB, LENIENT_BLOB, REST, EVENT = Blob(), Blob(lenient=True), Rest(), NestedEvent()
TABLE_KEY, TABLE_VALUE, ENTRY = TableKeyCodec(), TableValueCodec(), EntryCodec()
TABLE_ENTRIES = ListOf(ENTRY, 16, "table entries")
TABLE_KEYS = ListOf(TABLE_KEY, 8, "table keys")
VERSIONS = ListOf(INT64, 8, "versions")
STRINGS = ListOf(JAVA_UTF, 2, "segment names")
ATTRIBUTE_UPDATES = ListOf(Record("ConditionalAttributeUpdate", [
    ("attribute_id", UUID), ("update_type", INT8), ("new_value", INT64), ("old_value", INT64)]), 33,
    "attribute updates")
MERGED_SOURCES = ListOf(Record("MergedSource", [("source", JAVA_UTF), ("new_target_write_offset", INT64)]), 10,
                        "merged sources")
CHUNKS = ListOf(Record("ChunkInfo", [
    ("length_in_metadata", INT64), ("length_in_storage", INT64), ("start_offset", INT64),
    ("chunk_name", JAVA_UTF), ("exists_in_storage", BOOL)]), 27, "chunks")
ITERATOR_ARGS = IteratorArgs()
STR, I8, I32, I64 = JAVA_UTF, INT8, INT32, INT64

#: the minimum payload bytes a field of each codec takes (for "is an optional field present")
_MIN_SIZE = {id(c): s for c, s in ((BOOL, 1), (I8, 1), (I32, 4), (I64, 8), (UUID, 16), (STR, 2), (BLOB, 4),
                                   (LENIENT_BLOB, 4), (ATTRIBUTE_UPDATES, 4))}

REQUIRED = object()
OMIT = object()  # as a value of an optional field: end the payload before it (an older version's shape)


@dataclass(frozen=True)
class Field:
    name: str
    codec: object
    default: object = REQUIRED  # an optional trailing field's value when absent

    @property
    def optional(self) -> bool:
        return self.default is not REQUIRED


@dataclass(frozen=True)
class Command:
    code: int
    name: str
    fields: tuple[Field, ...]
    direction: str  # "request", "reply", "both", "embedded" (only inside another command's payload)
    since: int = 1  # the wire version that introduced it
    admin: bool = False  # served on the admin port only (§4.7)

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)


def _f(spec: str, codec, default=REQUIRED) -> Field:
    return Field(spec, codec, default)


RID, TOKEN, SEGMENT, WRITER, STACK = (_f("request_id", I64), _f("delegation_token", STR), _f("segment", STR),
                                      _f("writer_id", UUID), _f("server_stack_trace", STR, ""))

_TABLE = [
    # code, name, direction, fields[, since]
    (-127, "Hello", "both", [_f("high_version", I32), _f("low_version", I32)]),
    (-1, "Padding", "request", [_f("data", REST)]),
    (-2, "PartialEvent", "embedded", [_f("data", REST)]),
    (-3, "FlushToStorage", "request", [_f("container_id", I32), TOKEN, RID]),
    (-4, "StorageFlushed", "reply", [RID]),
    (-5, "ListStorageChunks", "request", [SEGMENT, TOKEN, RID]),
    (-6, "StorageChunksListed", "reply", [RID, _f("chunks", CHUNKS)]),
    (0, "Event", "embedded", [_f("data", REST)]),
    (1, "SetupAppend", "request", [RID, WRITER, SEGMENT, TOKEN]),
    (2, "AppendSetup", "reply", [RID, SEGMENT, WRITER, _f("last_event_number", I64)]),
    (3, "AppendBlock", "request", [WRITER, _f("data", REST)]),
    (4, "AppendBlockEnd", "request", [WRITER, _f("size_of_whole_events", I32), _f("data", LENIENT_BLOB),
                                      _f("num_events", I32), _f("last_event_number", I64),
                                      _f("request_id", I64, -1)]),
    (5, "ConditionalAppend", "request", [WRITER, _f("event_number", I64), _f("expected_offset", I64),
                                         _f("event", EVENT), _f("request_id", I64, -1)]),
    (7, "DataAppended", "reply", [WRITER, _f("event_number", I64), _f("previous_event_number", I64, -1),
                                  _f("request_id", I64, -1), _f("current_segment_write_offset", I64, -1)]),
    (8, "ConditionalCheckFailed", "reply", [WRITER, _f("event_number", I64), _f("request_id", I64, -1)]),
    (9, "ReadSegment", "request", [SEGMENT, _f("offset", I64), _f("suggested_length", I32), TOKEN,
                                   _f("request_id", I64, -1)]),
    (10, "SegmentRead", "reply", [SEGMENT, _f("offset", I64), _f("at_tail", BOOL), _f("end_of_segment", BOOL),
                                  _f("data", BLOB), _f("request_id", I64, -1)]),
    (11, "GetStreamSegmentInfo", "request", [RID, SEGMENT, TOKEN]),
    (12, "StreamSegmentInfo", "reply", [RID, SEGMENT, _f("exists", BOOL), _f("is_sealed", BOOL),
                                        _f("is_deleted", BOOL), _f("last_modified", I64), _f("write_offset", I64),
                                        _f("start_offset", I64, 0)]),
    (20, "CreateSegment", "request", [RID, SEGMENT, _f("target_rate", I32), _f("scale_type", I8), TOKEN,
                                      _f("rollover_size_bytes", I64, 0)]),
    (21, "SegmentCreated", "reply", [RID, SEGMENT]),
    (28, "SealSegment", "request", [RID, SEGMENT, TOKEN]),
    (29, "SegmentSealed", "reply", [RID, SEGMENT]),
    (30, "DeleteSegment", "request", [RID, SEGMENT, TOKEN]),
    (31, "SegmentDeleted", "reply", [RID, SEGMENT]),
    (32, "UpdateSegmentPolicy", "request", [RID, SEGMENT, _f("target_rate", I32), _f("scale_type", I8), TOKEN]),
    (33, "SegmentPolicyUpdated", "reply", [RID, SEGMENT]),
    (34, "GetSegmentAttribute", "request", [RID, SEGMENT, _f("attribute_id", UUID), TOKEN]),
    (35, "SegmentAttribute", "reply", [RID, _f("value", I64)]),
    (36, "UpdateSegmentAttribute", "request", [RID, SEGMENT, _f("attribute_id", UUID), _f("new_value", I64),
                                               _f("expected_value", I64), TOKEN]),
    (37, "SegmentAttributeUpdated", "reply", [RID, _f("success", BOOL)]),
    (38, "TruncateSegment", "request", [RID, SEGMENT, _f("truncation_offset", I64), TOKEN]),
    (39, "SegmentTruncated", "reply", [RID, SEGMENT]),
    (40, "CreateTransientSegment", "request", [RID, WRITER, _f("parent_segment", STR), TOKEN]),
    (41, "LocateOffset", "request", [RID, SEGMENT, _f("target_offset", I64), TOKEN], 17),
    (42, "OffsetLocated", "reply", [RID, SEGMENT, _f("offset", I64)], 17),
    (50, "WrongHost", "reply", [RID, SEGMENT, _f("correct_host", STR), STACK]),
    (51, "SegmentIsSealed", "reply", [RID, SEGMENT, STACK, _f("offset", I64, -1)]),
    (52, "SegmentAlreadyExists", "reply", [RID, SEGMENT, STACK]),
    (53, "NoSuchSegment", "reply", [RID, SEGMENT, STACK, _f("offset", I64, -1)]),
    (55, "InvalidEventNumber", "reply", [WRITER, RID, STACK, _f("event_number", I64, -1)]),
    (56, "SegmentIsTruncated", "reply", [RID, SEGMENT, _f("start_offset", I64), STACK, _f("offset", I64, -1)]),
    (57, "OperationUnsupported", "reply", [RID, _f("operation_name", STR), STACK]),
    (58, "MergeSegments", "request", [RID, _f("target", STR), _f("source", STR), TOKEN,
                                      _f("attribute_updates", ATTRIBUTE_UPDATES, ())]),
    (59, "SegmentsMerged", "reply", [RID, _f("target", STR), _f("source", STR),
                                     _f("new_target_write_offset", I64, -1)]),
    (60, "AuthTokenCheckFailed", "reply", [RID, STACK, _f("error_code", I32, -1)]),
    (61, "ErrorMessage", "reply", [RID, SEGMENT, _f("message", STR), _f("error_code", I32)]),
    (68, "GetTableSegmentInfo", "request", [RID, SEGMENT, TOKEN]),
    (69, "TableSegmentInfo", "reply", [RID, SEGMENT, _f("start_offset", I64), _f("length", I64),
                                       _f("entry_count", I64), _f("key_length", I32)]),
    (70, "CreateTableSegment", "request", [RID, SEGMENT, TOKEN, _f("sorted_deprecated", BOOL, False),
                                           _f("key_length", I32, 0), _f("rollover_size_bytes", I64, 0)]),
    (71, "DeleteTableSegment", "request", [RID, SEGMENT, _f("must_be_empty", BOOL), TOKEN]),
    (74, "UpdateTableEntries", "request", [RID, SEGMENT, TOKEN, _f("entries", TABLE_ENTRIES),
                                           _f("table_segment_offset", I64, -1)]),
    (75, "TableEntriesUpdated", "reply", [RID, _f("updated_versions", VERSIONS)]),
    (76, "RemoveTableKeys", "request", [RID, SEGMENT, TOKEN, _f("keys", TABLE_KEYS),
                                        _f("table_segment_offset", I64, -1)]),
    (77, "TableKeysRemoved", "reply", [RID, SEGMENT]),
    (78, "ReadTable", "request", [RID, SEGMENT, TOKEN, _f("keys", TABLE_KEYS)]),
    (79, "TableRead", "reply", [RID, SEGMENT, _f("entries", TABLE_ENTRIES)]),
    (80, "TableSegmentNotEmpty", "reply", [RID, SEGMENT, _f("server_stack_trace", STR)]),
    (81, "TableKeyDoesNotExist", "reply", [RID, SEGMENT, _f("server_stack_trace", STR)]),
    (82, "TableKeyBadVersion", "reply", [RID, SEGMENT, _f("server_stack_trace", STR)]),
    (83, "ReadTableKeys", "request", [RID, SEGMENT, TOKEN, _f("suggested_key_count", I32),
                                      _f("args", ITERATOR_ARGS)]),
    (84, "TableKeysRead", "reply", [RID, SEGMENT, _f("keys", TABLE_KEYS), _f("continuation_token", BLOB)]),
    (85, "ReadTableEntries", "request", [RID, SEGMENT, TOKEN, _f("suggested_entry_count", I32),
                                         _f("args", ITERATOR_ARGS)]),
    (86, "TableEntriesRead", "reply", [RID, SEGMENT, _f("entries", TABLE_ENTRIES),
                                       _f("continuation_token", BLOB)]),
    (87, "TableEntriesDeltaRead", "reply", [RID, SEGMENT, _f("entries", TABLE_ENTRIES), _f("should_clear", BOOL),
                                            _f("reached_end", BOOL), _f("last_position", I64)]),
    (88, "ReadTableEntriesDelta", "request", [RID, SEGMENT, TOKEN, _f("from_position", I64),
                                              _f("suggested_entry_count", I32)]),
    (89, "ConditionalBlockEnd", "request", [WRITER, _f("event_number", I64), _f("expected_offset", I64),
                                            _f("data", LENIENT_BLOB), RID], 11),
    (90, "MergeSegmentsBatch", "request", [RID, _f("target", STR), _f("sources", STRINGS), TOKEN], 15),
    (91, "SegmentsBatchMerged", "reply", [RID, _f("target", STR), _f("merged", MERGED_SOURCES)], 15),
    (100, "KeepAlive", "both", []),
]

COMMANDS: dict[int, Command] = {}
BY_NAME: dict[str, Command] = {}
for _row in _TABLE:
    _code, _name, _direction, _fields = _row[:4]
    _cmd = Command(_code, _name, tuple(_fields), _direction, _row[4] if len(_row) > 4 else 1,
                   admin=_code in (-3, -4, -5, -6))
    COMMANDS[_code] = BY_NAME[_name] = _cmd

#: command name -> type code
CODE: dict[str, int] = {c.name: c.code for c in COMMANDS.values()}

#: codes the server answers on its main port (requests it processes); every other code closes the connection
REQUESTS = frozenset(c.code for c in COMMANDS.values() if c.direction in ("request", "both") and not c.admin)
#: codes a segment store sends
REPLIES = frozenset(c.code for c in COMMANDS.values() if c.direction in ("reply", "both") and not c.admin)
#: retired or never-assigned codes that have no command (§3): the server closes on them
RETIRED = (6, 13, 14, 22, 23, 24, 25, 26, 27, 54, 72, 73)

ERROR_REPLIES = frozenset(BY_NAME[n].code for n in (
    "WrongHost", "SegmentIsSealed", "SegmentAlreadyExists", "NoSuchSegment", "InvalidEventNumber",
    "SegmentIsTruncated", "OperationUnsupported", "AuthTokenCheckFailed", "ErrorMessage", "TableSegmentNotEmpty",
    "TableKeyDoesNotExist", "TableKeyBadVersion", "ConditionalCheckFailed"))


def name_of(code: int) -> str:
    command = COMMANDS.get(code)
    return command.name if command else f"unknown({code})"


class Decoded(NamedTuple):
    code: int
    name: str
    fields: dict
    trailing: int  # payload bytes after the last known field (skipped)

    def __getitem__(self, key):  # decoded["request_id"] reads a field; decoded[0] stays the tuple's
        return self.fields[key] if isinstance(key, str) else tuple.__getitem__(self, key)

    def get(self, key, default=None):
        return self.fields.get(key, default)


# -- encode / decode ------------------------------------------------------------------------------------------


def frame(code: int, payload: bytes) -> bytes:
    return HEADER.pack(code, len(payload)) + payload


def encode_payload(code: int, values: dict, trace: list | None = None, omit_optional: bool = False) -> bytes:
    """The payload of ``code`` from ``values`` (defaults fill missing optional fields; ``omit_optional`` leaves
    every optional trailing field out, the older-version shape). ``trace`` collects
    ``(path, kind, start, end, prefix)`` per field, offsets counted from the frame start."""
    command = COMMANDS[code]
    out = bytearray()
    for f in command.fields:
        value = values.get(f.name, f.default) if f.optional else values.get(f.name, REQUIRED)
        if f.optional and (omit_optional or value is OMIT):
            break
        if value is REQUIRED:
            raise KeyError(f"{command.name}: field {f.name!r} is required")
        start = len(out)
        f.codec.write(out, value)
        if trace is not None:
            _trace(trace, f, start + HEADER_SIZE, len(out) + HEADER_SIZE)
    return bytes(out)


def _trace(trace: list, f: Field, start: int, end: int) -> None:
    codec = f.codec
    if codec is STR:
        trace.append((f.name, "length", start, start + 2, "uint16"))
        trace.append((f.name, "data", start + 2, end, "text"))
    elif codec in (BLOB, LENIENT_BLOB) or isinstance(codec, ListOf):
        trace.append((f.name, "count" if isinstance(codec, ListOf) else "length", start, start + 4, "int32"))
        trace.append((f.name, "data", start + 4, end, ""))
    elif codec in (I8, I32, I64, BOOL, UUID):
        trace.append((f.name, "fixed", start, end, ""))
    else:
        trace.append((f.name, "data", start, end, ""))


def encode(code: int | str, values: dict | None = None, trace: list | None = None, **kw) -> bytes:
    """A whole frame; ``trace`` (if given) receives the header's two fields, then the payload's."""
    code = BY_NAME[code].code if isinstance(code, str) else code
    if trace is not None:
        trace += [("type", "fixed", 0, 4, "int32"), ("length", "fixed", 4, HEADER_SIZE, "int32")]
    return frame(code, encode_payload(code, {**(values or {}), **kw}, trace))


def decode_payload(code: int, payload: bytes) -> Decoded:
    command = COMMANDS.get(code)
    if command is None:
        raise DecodeError(f"unknown wire command type {code}", 0)
    out, pos, size = {}, 0, len(payload)
    for f in command.fields:
        if f.optional and size - pos < _MIN_SIZE.get(id(f.codec), 1):
            out[f.name] = f.default
            continue
        try:
            out[f.name], pos = f.codec.read(payload, pos)
        except DecodeError as exc:
            exc.offset += HEADER_SIZE
            raise exc.within(f"{command.name}.{f.name}") from None
    return Decoded(code, command.name, out, size - pos)


def decode(data: bytes, max_payload: int = MAX_REPLY_PAYLOAD) -> Decoded:
    """One whole frame: the header's length must equal the payload's."""
    if len(data) < HEADER_SIZE:
        raise DecodeError(f"frame of {len(data)} bytes is shorter than the 8-byte header", 0)
    code, length = HEADER.unpack_from(data)
    if length < 0 or length > max_payload:
        raise DecodeError(f"payload length {length} outside 0..{max_payload}", 4)
    if length != len(data) - HEADER_SIZE:
        raise DecodeError(f"length {length} but {len(data) - HEADER_SIZE} payload bytes", 4)
    return decode_payload(code, data[HEADER_SIZE:])


def describe(data: bytes) -> str:
    """One frame as readable text; never raises."""
    try:
        decoded = decode(data)
    except DecodeError as exc:
        code = HEADER.unpack_from(data)[0] if len(data) >= 8 else None
        return f"{name_of(code) if code is not None else 'frame'} ({len(data)} bytes, undecodable: {exc})"
    shown = ", ".join(f"{k}={_show(v)}" for k, v in decoded.fields.items())
    extra = f" +{decoded.trailing} trailing bytes" if decoded.trailing else ""
    return f"{decoded.name}({shown}){extra}"


def _show(value) -> str:
    if isinstance(value, (bytes, bytearray)):
        return f"{len(value)}B:{bytes(value[:16]).hex()}{'...' if len(value) > 16 else ''}"
    if isinstance(value, uuid.UUID):
        return str(value)
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- helpers the suite, strategies and vectors share ----------------------------------------------------------


def event(data: bytes) -> bytes:
    """An Event as it travels inside an append block and as it is stored: ``i32 0 | i32 n | data``."""
    return struct.pack(">ii", 0, len(data)) + data


def split_events(data: bytes) -> list[bytes] | None:
    """The payloads of the Event records a segment's bytes hold; None if they are not whole Event records."""
    out, pos = [], 0
    while pos < len(data):
        if len(data) - pos < 8:
            return None
        kind, size = struct.unpack_from(">ii", data, pos)
        if kind != 0 or size < 0 or pos + 8 + size > len(data):
            return None
        out.append(data[pos + 8 : pos + 8 + size])
        pos += 8 + size
    return out


def uuid_of(msb: int, lsb: int) -> uuid.UUID:
    """A Java UUID from its two longs (signed or unsigned)."""
    return uuid.UUID(int=((msb & (2**64 - 1)) << 64) | (lsb & (2**64 - 1)))
