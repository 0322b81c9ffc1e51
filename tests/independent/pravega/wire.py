"""Type codes (notes section 3), request decoders and reply encoders (section 4).

Every decoder reads the fields in wire order and ignores surplus bytes after them
(forward compatibility, section 1).  Optional trailing fields take their defaults
when the payload ends early.  Every encoder writes the v17 layout.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from .codec import LONG_MIN, DecodeError, Reader, Writer, frame

# --------------------------------------------------------------------- type codes

HELLO = -127
PADDING = -1
PARTIAL_EVENT = -2
FLUSH_TO_STORAGE = -3
FLUSHED_TO_STORAGE = -4
LIST_STORAGE_CHUNKS = -5
STORAGE_CHUNKS_LISTED = -6
EVENT = 0
SETUP_APPEND = 1
APPEND_SETUP = 2
APPEND_BLOCK = 3
APPEND_BLOCK_END = 4
CONDITIONAL_APPEND = 5
DATA_APPENDED = 7
CONDITIONAL_CHECK_FAILED = 8
READ_SEGMENT = 9
SEGMENT_READ = 10
GET_STREAM_SEGMENT_INFO = 11
STREAM_SEGMENT_INFO = 12
CREATE_SEGMENT = 20
SEGMENT_CREATED = 21
SEAL_SEGMENT = 28
SEGMENT_SEALED = 29
DELETE_SEGMENT = 30
SEGMENT_DELETED = 31
UPDATE_SEGMENT_POLICY = 32
SEGMENT_POLICY_UPDATED = 33
GET_SEGMENT_ATTRIBUTE = 34
SEGMENT_ATTRIBUTE = 35
UPDATE_SEGMENT_ATTRIBUTE = 36
SEGMENT_ATTRIBUTE_UPDATED = 37
TRUNCATE_SEGMENT = 38
SEGMENT_TRUNCATED = 39
CREATE_TRANSIENT_SEGMENT = 40
LOCATE_OFFSET = 41
OFFSET_LOCATED = 42
WRONG_HOST = 50
SEGMENT_IS_SEALED = 51
SEGMENT_ALREADY_EXISTS = 52
NO_SUCH_SEGMENT = 53
INVALID_EVENT_NUMBER = 55
SEGMENT_IS_TRUNCATED = 56
OPERATION_UNSUPPORTED = 57
MERGE_SEGMENTS = 58
SEGMENTS_MERGED = 59
AUTH_TOKEN_CHECK_FAILED = 60
ERROR_MESSAGE = 61
GET_TABLE_SEGMENT_INFO = 68
TABLE_SEGMENT_INFO = 69
CREATE_TABLE_SEGMENT = 70
DELETE_TABLE_SEGMENT = 71
UPDATE_TABLE_ENTRIES = 74
TABLE_ENTRIES_UPDATED = 75
REMOVE_TABLE_KEYS = 76
TABLE_KEYS_REMOVED = 77
READ_TABLE = 78
TABLE_READ = 79
TABLE_SEGMENT_NOT_EMPTY = 80
TABLE_KEY_DOES_NOT_EXIST = 81
TABLE_KEY_BAD_VERSION = 82
READ_TABLE_KEYS = 83
TABLE_KEYS_READ = 84
READ_TABLE_ENTRIES = 85
TABLE_ENTRIES_READ = 86
TABLE_ENTRIES_DELTA_READ = 87
READ_TABLE_ENTRIES_DELTA = 88
CONDITIONAL_BLOCK_END = 89
MERGE_SEGMENTS_BATCH = 90
SEGMENTS_BATCH_MERGED = 91
KEEP_ALIVE = 100

# Codes that exist in WireCommandType but that the main port must not accept:
# replies, embedded-only commands and admin-port requests (notes section 8).
NOT_ACCEPTED = frozenset({
    EVENT, PARTIAL_EVENT, FLUSH_TO_STORAGE, FLUSHED_TO_STORAGE, LIST_STORAGE_CHUNKS,
    STORAGE_CHUNKS_LISTED, APPEND_SETUP, DATA_APPENDED, CONDITIONAL_CHECK_FAILED,
    SEGMENT_READ, STREAM_SEGMENT_INFO, SEGMENT_CREATED, SEGMENT_SEALED, SEGMENT_DELETED,
    SEGMENT_POLICY_UPDATED, SEGMENT_ATTRIBUTE, SEGMENT_ATTRIBUTE_UPDATED, SEGMENT_TRUNCATED,
    OFFSET_LOCATED, WRONG_HOST, SEGMENT_IS_SEALED, SEGMENT_ALREADY_EXISTS, NO_SUCH_SEGMENT,
    INVALID_EVENT_NUMBER, SEGMENT_IS_TRUNCATED, OPERATION_UNSUPPORTED, SEGMENTS_MERGED,
    AUTH_TOKEN_CHECK_FAILED, ERROR_MESSAGE, TABLE_SEGMENT_INFO, TABLE_ENTRIES_UPDATED,
    TABLE_KEYS_REMOVED, TABLE_READ, TABLE_SEGMENT_NOT_EMPTY, TABLE_KEY_DOES_NOT_EXIST,
    TABLE_KEY_BAD_VERSION, TABLE_KEYS_READ, TABLE_ENTRIES_READ, TABLE_ENTRIES_DELTA_READ,
    SEGMENTS_BATCH_MERGED,
})

NO_VERSION = LONG_MIN  # TableKey: unconditional
NOT_EXISTS = -1  # TableKey: must not exist / "missing" in TableRead

ERROR_CODE_UNSPECIFIED = -1
ERROR_CODE_ILLEGAL_ARGUMENT = 0

# --------------------------------------------------------------------- requests


@dataclass
class Req:
    code: int
    request_id: int = -1
    consumed: int = field(default=0, compare=False, repr=False, kw_only=True)  # payload bytes the fields used


@dataclass
class Hello(Req):
    high: int = 0
    low: int = 0


@dataclass
class SetupAppend(Req):
    writer_id: uuid.UUID = uuid.UUID(int=0)
    segment: str = ""


@dataclass
class AppendBlock(Req):
    writer_id: uuid.UUID = uuid.UUID(int=0)
    data: bytes = b""


@dataclass
class AppendBlockEnd(Req):
    writer_id: uuid.UUID = uuid.UUID(int=0)
    size_of_whole_events: int = 0
    data: bytes = b""
    num_events: int = 0
    last_event_number: int = 0


@dataclass
class ConditionalAppend(Req):
    """ConditionalAppend (5) and ConditionalBlockEnd (89) share this shape."""
    writer_id: uuid.UUID = uuid.UUID(int=0)
    event_number: int = 0
    expected_offset: int = 0
    data: bytes = b""


@dataclass
class Simple(Req):
    """Requests with (requestId, segment, token) and a few extra named fields."""
    segment: str = ""
    extra: dict = field(default_factory=dict)


def decode_request(code: int, payload: bytes, *, strict_utf8: bool = True) -> Req:
    """Decode a request payload.  Raises DecodeError for short/invalid payloads.
    Bytes after the known fields are left unread (and so ignored)."""
    r = Reader(payload, strict_utf8)
    req = _decode(code, r)
    req.consumed = len(payload) if code == PADDING else r.pos
    return req


def _decode(code: int, r: Reader) -> Req:
    if code == HELLO:
        return Hello(code, 0, r.i32(), r.i32())
    if code == KEEP_ALIVE:
        return Req(code, -1)
    if code == PADDING:
        return Req(code, -1)  # the payload is the padding itself
    if code == SETUP_APPEND:
        rid = r.i64()
        w = r.uuid()
        seg = r.str()
        r.str()  # delegation token
        return SetupAppend(code, rid, w, seg)
    if code == APPEND_BLOCK:
        w = r.uuid()  # length < 16 fails here
        return AppendBlock(code, -1, w, r.rest())
    if code == APPEND_BLOCK_END:
        w = r.uuid()
        size = r.i32()
        n = r.i32()
        data = r.raw(n) if n > 0 else b""  # dataLen <= 0 reads as empty (11.20)
        num = r.i32()
        last = r.i64()
        rid = r.opt_i64(-1)
        return AppendBlockEnd(code, rid, w, size, data, num, last)
    if code == CONDITIONAL_APPEND:
        w = r.uuid()
        ev = r.i64()
        exp = r.i64()
        if r.i32() != EVENT:
            raise DecodeError("nested command of a ConditionalAppend is not an Event")
        n = r.i32()
        if n < 0:
            raise DecodeError("negative event length")
        body = r.raw(n)
        rid = r.opt_i64(-1)
        # The stored bytes are the whole Event frame, header included.
        return ConditionalAppend(code, rid, w, ev, exp, frame(EVENT, body))
    if code == CONDITIONAL_BLOCK_END:
        w = r.uuid()
        ev = r.i64()
        exp = r.i64()
        n = r.i32()
        data = r.raw(n) if n > 0 else b""
        rid = r.i64()  # required
        return ConditionalAppend(code, rid, w, ev, exp, data)
    if code == READ_SEGMENT:
        seg = r.str()
        off = r.i64()
        sug = r.i32()
        r.str()
        rid = r.opt_i64(-1)
        return Simple(code, rid, seg, {"offset": off, "suggested": sug})
    if code in (GET_STREAM_SEGMENT_INFO, SEAL_SEGMENT, DELETE_SEGMENT, GET_TABLE_SEGMENT_INFO):
        rid = r.i64()
        seg = r.str()
        r.str()
        return Simple(code, rid, seg)
    if code == CREATE_SEGMENT:
        rid = r.i64()
        seg = r.str()
        rate = r.i32()
        scale = r.i8()
        r.str()
        rollover = r.opt_i64(0)
        return Simple(code, rid, seg, {"rate": rate, "scale": scale, "rollover": rollover})
    if code == UPDATE_SEGMENT_POLICY:
        rid = r.i64()
        seg = r.str()
        rate = r.i32()
        scale = r.i8()
        r.str()
        return Simple(code, rid, seg, {"rate": rate, "scale": scale})
    if code == GET_SEGMENT_ATTRIBUTE:
        rid = r.i64()
        seg = r.str()
        attr = r.uuid()
        r.str()
        return Simple(code, rid, seg, {"attr": attr})
    if code == UPDATE_SEGMENT_ATTRIBUTE:
        rid = r.i64()
        seg = r.str()
        attr = r.uuid()
        new = r.i64()
        exp = r.i64()
        r.str()
        return Simple(code, rid, seg, {"attr": attr, "new": new, "expected": exp})
    if code == TRUNCATE_SEGMENT:
        rid = r.i64()
        seg = r.str()
        off = r.i64()
        r.str()
        return Simple(code, rid, seg, {"offset": off})
    if code == CREATE_TRANSIENT_SEGMENT:
        rid = r.i64()
        w = r.uuid()
        seg = r.str()
        r.str()
        return Simple(code, rid, seg, {"writer": w})
    if code == LOCATE_OFFSET:
        rid = r.i64()
        seg = r.str()
        off = r.i64()
        r.str()
        return Simple(code, rid, seg, {"offset": off})
    if code == MERGE_SEGMENTS:
        rid = r.i64()
        target = r.str()
        source = r.str()
        r.str()
        updates = []
        if r.available() > 0:
            n = r.i32()
            if n < 0:
                raise DecodeError("negative attribute-update count")
            for _ in range(n):
                attr = r.uuid()
                typ = r.i8()
                if typ not in (0, 1, 2, 3, 4):
                    raise DecodeError("unknown AttributeUpdateType %d" % typ)
                updates.append((attr, typ, r.i64(), r.i64()))
        return Simple(code, rid, target, {"source": source, "updates": updates})
    if code == MERGE_SEGMENTS_BATCH:
        rid = r.i64()
        target = r.str()
        n = r.i32()
        if n < 0:
            raise DecodeError("negative source count")
        sources = [r.str() for _ in range(n)]
        r.str()
        return Simple(code, rid, target, {"sources": sources})
    if code == CREATE_TABLE_SEGMENT:
        rid = r.i64()
        seg = r.str()
        r.str()
        sorted_ = r.bool() if r.available() >= 1 else False
        key_len = r.i32() if r.available() >= 4 else 0
        rollover = r.opt_i64(0)
        return Simple(code, rid, seg, {"sorted": sorted_, "key_length": key_len, "rollover": rollover})
    if code == DELETE_TABLE_SEGMENT:
        rid = r.i64()
        seg = r.str()
        must_be_empty = r.bool()
        r.str()
        return Simple(code, rid, seg, {"must_be_empty": must_be_empty})
    if code == UPDATE_TABLE_ENTRIES:
        rid = r.i64()
        seg = r.str()
        r.str()
        entries = _read_entries(r)
        off = r.opt_i64(-1)
        return Simple(code, rid, seg, {"entries": entries, "table_offset": off})
    if code == REMOVE_TABLE_KEYS:
        rid = r.i64()
        seg = r.str()
        r.str()
        keys = _read_keys(r)
        off = r.opt_i64(-1)
        return Simple(code, rid, seg, {"keys": keys, "table_offset": off})
    if code == READ_TABLE:
        rid = r.i64()
        seg = r.str()
        r.str()
        return Simple(code, rid, seg, {"keys": _read_keys(r)})
    if code in (READ_TABLE_KEYS, READ_TABLE_ENTRIES):
        rid = r.i64()
        seg = r.str()
        r.str()
        count = r.i32()
        blobs = []
        for _ in range(4):  # continuationToken, prefixFilter, fromKey, toKey; each optional
            if r.available() >= 4:
                n = r.i32()
                blobs.append(r.raw(n) if n > 0 else b"")
            else:
                blobs.append(b"")
        return Simple(code, rid, seg, {"count": count, "token": blobs[0], "prefix": blobs[1],
                                       "from": blobs[2], "to": blobs[3]})
    if code == READ_TABLE_ENTRIES_DELTA:
        rid = r.i64()
        seg = r.str()
        r.str()
        pos = r.i64()
        count = r.i32()
        return Simple(code, rid, seg, {"from": pos, "count": count})
    raise DecodeError("no decoder for type %d" % code)


def _read_key(r: Reader) -> tuple[bytes, int]:
    r.i32()  # payloadSize: read and ignored
    n = r.i32()
    if n == 0:
        return b"", NO_VERSION  # TableKey.EMPTY: no version follows
    if n < 0:
        raise DecodeError("negative key length")
    data = r.raw(n)
    return data, r.i64()


def _read_value(r: Reader) -> bytes:
    r.i32()
    n = r.i32()
    if n == 0:
        return b""
    if n < 0:
        raise DecodeError("negative value length")
    return r.raw(n)


def _read_keys(r: Reader) -> list[tuple[bytes, int]]:
    n = r.i32()
    if n < 0:
        raise DecodeError("negative key count")
    return [_read_key(r) for _ in range(n)]


def _read_entries(r: Reader) -> list[tuple[bytes, int, bytes]]:
    n = r.i32()
    if n < 0:
        raise DecodeError("negative entry count")
    out = []
    for _ in range(n):
        k, v = _read_key(r)
        out.append((k, v, _read_value(r)))
    return out


# --------------------------------------------------------------------- replies


def _f(code: int, w: Writer) -> bytes:
    return frame(code, w.payload())


def hello(high: int, low: int) -> bytes:
    return _f(HELLO, Writer().i32(high).i32(low))


def keep_alive() -> bytes:
    return frame(KEEP_ALIVE, b"")


def append_setup(rid: int, seg: str, w: uuid.UUID, last: int) -> bytes:
    return _f(APPEND_SETUP, Writer().i64(rid).str(seg).uuid(w).i64(last))


def data_appended(rid: int, w: uuid.UUID, ev: int, prev: int, offset: int) -> bytes:
    # Wire order: writerId, eventNumber, previousEventNumber, requestId, offset (11.14).
    return _f(DATA_APPENDED, Writer().uuid(w).i64(ev).i64(prev).i64(rid).i64(offset))


def conditional_check_failed(rid: int, w: uuid.UUID, ev: int) -> bytes:
    return _f(CONDITIONAL_CHECK_FAILED, Writer().uuid(w).i64(ev).i64(rid))


def invalid_event_number(rid: int, w: uuid.UUID, ev: int) -> bytes:
    return _f(INVALID_EVENT_NUMBER, Writer().uuid(w).i64(rid).str("").i64(ev))


def segment_read(rid: int, seg: str, offset: int, at_tail: bool, eos: bool, data: bytes) -> bytes:
    return _f(SEGMENT_READ, Writer().str(seg).i64(offset).bool(at_tail).bool(eos).blob(data).i64(rid))


def stream_segment_info(rid: int, seg: str, sealed: bool, last_modified: int, length: int,
                        start: int) -> bytes:
    return _f(STREAM_SEGMENT_INFO, Writer().i64(rid).str(seg).bool(True).bool(sealed).bool(False)
              .i64(last_modified).i64(length).i64(start))


def rid_seg(code: int, rid: int, seg: str) -> bytes:
    """SegmentCreated / SegmentSealed / SegmentTruncated / SegmentDeleted /
    SegmentPolicyUpdated / TableKeysRemoved: (requestId, segment)."""
    return _f(code, Writer().i64(rid).str(seg))


def segment_attribute(rid: int, value: int) -> bytes:
    return _f(SEGMENT_ATTRIBUTE, Writer().i64(rid).i64(value))


def segment_attribute_updated(rid: int, ok: bool) -> bytes:
    return _f(SEGMENT_ATTRIBUTE_UPDATED, Writer().i64(rid).bool(ok))


def offset_located(rid: int, seg: str, offset: int) -> bytes:
    return _f(OFFSET_LOCATED, Writer().i64(rid).str(seg).i64(offset))


def segments_merged(rid: int, target: str, source: str, new_len: int) -> bytes:
    return _f(SEGMENTS_MERGED, Writer().i64(rid).str(target).str(source).i64(new_len))


def segments_batch_merged(rid: int, target: str, results: list[tuple[str, int]]) -> bytes:
    w = Writer().i64(rid).str(target).i32(len(results))
    for name, off in results:
        w.str(name).i64(off)
    return _f(SEGMENTS_BATCH_MERGED, w)


# errors (section 4.5) ------------------------------------------------------------------


def segment_is_sealed(rid: int, seg: str, offset: int) -> bytes:
    return _f(SEGMENT_IS_SEALED, Writer().i64(rid).str(seg).str("").i64(offset))


def segment_already_exists(rid: int, seg: str) -> bytes:
    return _f(SEGMENT_ALREADY_EXISTS, Writer().i64(rid).str(seg).str(""))


def no_such_segment(rid: int, seg: str, offset: int) -> bytes:
    return _f(NO_SUCH_SEGMENT, Writer().i64(rid).str(seg).str("").i64(offset))


def segment_is_truncated(rid: int, seg: str, start: int, offset: int) -> bytes:
    return _f(SEGMENT_IS_TRUNCATED, Writer().i64(rid).str(seg).i64(start).str("").i64(offset))


def operation_unsupported(rid: int, op: str) -> bytes:
    return _f(OPERATION_UNSUPPORTED, Writer().i64(rid).str(op).str(""))


def error_message(rid: int, seg: str, msg: str, code: int = ERROR_CODE_ILLEGAL_ARGUMENT) -> bytes:
    return _f(ERROR_MESSAGE, Writer().i64(rid).str(seg).str(msg).i32(code))


def table_error(code: int, rid: int, seg: str) -> bytes:
    """TableSegmentNotEmpty / TableKeyDoesNotExist / TableKeyBadVersion."""
    return _f(code, Writer().i64(rid).str(seg).str(""))


# tables (section 4.6) ------------------------------------------------------------------


def _key(w: Writer, data: bytes, version: int) -> None:
    w.i32(4 + len(data) + 8).i32(len(data))
    if data:
        w.raw(data).i64(version)


def _value(w: Writer, data: bytes) -> None:
    w.i32(4 + len(data)).i32(len(data))
    if data:
        w.raw(data)


def _entries(w: Writer, entries: list[tuple[bytes, int, bytes]]) -> None:
    w.i32(len(entries))
    for k, ver, v in entries:
        _key(w, k, ver)
        _value(w, v)


def table_segment_info(rid: int, seg: str, start: int, length: int, count: int, key_len: int) -> bytes:
    return _f(TABLE_SEGMENT_INFO, Writer().i64(rid).str(seg).i64(start).i64(length).i64(count).i32(key_len))


def table_entries_updated(rid: int, versions: list[int]) -> bytes:
    w = Writer().i64(rid).i32(len(versions))
    for v in versions:
        w.i64(v)
    return _f(TABLE_ENTRIES_UPDATED, w)


def table_read(rid: int, seg: str, entries: list[tuple[bytes, int, bytes]]) -> bytes:
    w = Writer().i64(rid).str(seg)
    _entries(w, entries)
    return _f(TABLE_READ, w)


def table_keys_read(rid: int, seg: str, keys: list[tuple[bytes, int]], token: bytes) -> bytes:
    w = Writer().i64(rid).str(seg).i32(len(keys))
    for k, ver in keys:
        _key(w, k, ver)
    w.blob(token)
    return _f(TABLE_KEYS_READ, w)


def table_entries_read(rid: int, seg: str, entries: list[tuple[bytes, int, bytes]], token: bytes) -> bytes:
    w = Writer().i64(rid).str(seg)
    _entries(w, entries)
    w.blob(token)
    return _f(TABLE_ENTRIES_READ, w)


def table_entries_delta_read(rid: int, seg: str, entries: list[tuple[bytes, int, bytes]],
                             should_clear: bool, reached_end: bool, last_position: int) -> bytes:
    w = Writer().i64(rid).str(seg)
    _entries(w, entries)
    w.bool(should_clear).bool(reached_end).i64(last_position)
    return _f(TABLE_ENTRIES_DELTA_READ, w)
