"""An asyncio Fluvio SPU public-protocol server, written from the research notes only.

Layout of this module:
  * ``Connection``: framing (spec §2.1), request header (§2.2), dispatch, the
    close-on-decode-error rule (§7), per-connection StreamFetch streams (§5.4).
  * one ``handle_*`` coroutine per API key (§3.1).  A handler returns the
    response body, ``NO_RESPONSE`` (StreamFetch answers from its own task) or
    raises ``DecodeError`` (connection closed without a response).
"""

from __future__ import annotations

import asyncio
import logging
import struct
from dataclasses import dataclass, field

from . import errors
from .codec import DecodeError, Reader, Writer
from .defects import Defects
from .errors import ErrorCode
from .records import MAX_COMPRESSION_CODE, Batch, read_record_set
from .storage import Partition, Storage

log = logging.getLogger("indep-fluvio")

# ---------------------------------------------------------------- constants

DEFAULT_MAX_FRAME = 64 * 1024 * 1024       # spec §12 suggests a cap "e.g. 64 MiB"
MAX_REQUEST_SIZE = 32 * 1024 * 1024        # STORAGE_MAX_REQUEST_SIZE (§8) -> MessageTooLarge
MAX_CONNECTIONS = 1024
MAX_STREAMS_PER_CONNECTION = 1024
MAX_FETCH_RESPONSE_RECORDS = 64 * 1024 * 1024   # record bytes in one Fetch response, all partitions
PLATFORM_VERSION = "0.0.0"                 # what a bare SPU sends (§3.2, A18)

API_PRODUCE = 0
API_FETCH = 1
API_API_VERSIONS = 18
API_FETCH_OFFSETS = 1002
API_STREAM_FETCH = 1003
API_UPDATE_OFFSETS = 1005
API_UPDATE_CONSUMER_OFFSET = 1006
API_DELETE_CONSUMER_OFFSET = 1007
API_FETCH_CONSUMER_OFFSETS = 1008

NO_RESPONSE = object()

_I32 = struct.Struct(">i")


# ---------------------------------------------------------------- SmartModule invocations

class UnsupportedSmartModule(Exception):
    """A SmartModuleInvocation whose remaining layout the notes do not give (kind Generic)."""


@dataclass
class SmartModuleRef:
    predefined_name: str | None  # None for AdHoc wasm


def read_smartmodule_invocation(r: Reader, v: int) -> SmartModuleRef:
    """SmartModuleInvocation (§4.1).  Decoded only to skip it and to name it in an error."""
    wasm_tag = r.u8()
    if wasm_tag == 0:
        ref = SmartModuleRef(r.string())
    elif wasm_tag == 1:
        r.bytes_vec()
        ref = SmartModuleRef(None)
    else:
        raise DecodeError(f"Unknown SmartModuleInvocationWasm type {wasm_tag}")
    kind = r.u8()
    if kind in (0, 1, 2, 4):
        pass
    elif kind == 3:
        r.bytes_vec()                      # Aggregate{accumulator}
    elif kind == 5:
        r.string()                         # Join(String)
    elif kind == 6:
        r.string()
        r.string()                         # JoinStream{topic, derivedstream}
    elif kind == 7:
        raise UnsupportedSmartModule("Generic(SmartModuleContextData) is not laid out in the notes")
    else:
        raise DecodeError(f"Unknown SmartModuleKind type {kind}")
    read_smartmodule_params(r, v)
    if v >= 25:
        r.option(r.string)                 # name
    return ref


def read_smartmodule_params(r: Reader, v: int) -> None:
    n = r.u16()                            # BTreeMap<String,String>, u16 count
    for _ in range(n):
        r.string()
        r.string()
    if v >= 20:
        if r.bool():                       # lookback: Option<Lookback>
            r.u64()                        # last
            if v >= 21 and r.bool():       # age: Option<Duration>
                r.u64()
                r.u32()


def smartmodule_error(ref: SmartModuleRef | None) -> ErrorCode:
    """This server cannot run wasm; it rejects every SmartModule (README: SmartModules)."""
    if ref is not None and ref.predefined_name is not None:
        return errors.smartmodule_not_found(ref.predefined_name)
    return errors.simple(errors.SMARTMODULE_ERROR)


# ---------------------------------------------------------------- streams

@dataclass
class Stream:
    stream_id: int
    topic: str
    partition: Partition
    consumer_id: str | None
    offset: int
    updated: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None


# ---------------------------------------------------------------- server

class SpuServer:
    def __init__(
        self,
        storage: Storage | None = None,
        defects: Defects | None = None,
        *,
        max_frame: int = DEFAULT_MAX_FRAME,
    ) -> None:
        self.storage = storage or Storage()
        self.defects = defects or Defects()
        self.max_frame = max_frame
        self.connections: set[Connection] = set()
        self._server: asyncio.AbstractServer | None = None

    async def start(self, host: str, port: int) -> int:
        self._server = await asyncio.start_server(self._on_connect, host, port, limit=64 * 1024)
        return self._server.sockets[0].getsockname()[1]

    async def serve_forever(self) -> None:
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self.connections) >= MAX_CONNECTIONS:
            writer.close()
            return
        conn = Connection(self, reader, writer)
        self.connections.add(conn)
        try:
            await conn.run()
        finally:
            self.connections.discard(conn)


class Connection:
    def __init__(self, server: SpuServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.storage = server.storage
        self.defects = server.defects
        self.reader = reader
        self.writer = writer
        self.write_lock = asyncio.Lock()
        self.streams: dict[int, Stream] = {}
        self.next_stream_id = 1            # starts at 1 for each connection (§5.4)
        self.closed = False

    # ------------------------------------------------------------ framing

    async def run(self) -> None:
        try:
            while not self.closed:
                size_bytes = await self.reader.readexactly(4)
                (size,) = _I32.unpack(size_bytes)
                if size <= 0 or size > self.server.max_frame:
                    # size 0 is an empty frame (header EOF, §7); negative or oversized frames
                    # close the connection (strict reading, §12).
                    log.debug("closing: frame size %d", size)
                    break
                frame = await self.reader.readexactly(size)
                if not await self.dispatch(frame):
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        except Exception:  # never let one connection take the server down
            log.exception("connection error")
        finally:
            await self.close()

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for s in list(self.streams.values()):
            if s.task is not None:
                s.task.cancel()
        self.streams.clear()
        try:
            self.writer.close()
        except Exception:
            pass

    async def send(self, correlation_id: int, body: bytes, *, api_key: int | None = None) -> None:
        if self.closed:
            return
        if self.defects.on("wrong-correlation-id") and api_key != API_API_VERSIONS:
            # ApiVersions is spared so that a client can still recognise the server.
            correlation_id = (correlation_id + 1) & 0x7FFFFFFF
        payload = _I32.pack(correlation_id) + body
        async with self.write_lock:
            self.writer.write(_I32.pack(len(payload)) + payload)
            await self.writer.drain()

    async def dispatch(self, frame: bytes) -> bool:
        """Handle one frame.  Returns False when the connection must be closed."""
        r = Reader(frame)
        try:
            api_key = r.u16()              # u16 (A1)
            api_version = r.i16()
            correlation_id = r.i32()
            r.string()                     # client_id: metrics only (§2.2)
        except DecodeError as exc:
            log.debug("closing: bad header: %s", exc)
            return False
        handler = HANDLERS.get(api_key)
        if handler is None:
            if self.defects.on("unknown-api-key-answered"):
                await self.send(correlation_id, b"")
                return True
            log.debug("closing: unknown api key %d", api_key)
            return False
        try:
            body = await handler(self, api_version, correlation_id, r)
        except DecodeError as exc:
            log.debug("closing: cannot decode api %d v%d: %s", api_key, api_version, exc)
            return False
        # Leftover bytes after a complete request are ignored (§7).
        if body is not NO_RESPONSE:
            await self.send(correlation_id, body, api_key=api_key)
        return True


# ---------------------------------------------------------------- ApiVersions (18)

async def handle_api_versions(conn: Connection, v: int, corr: int, r: Reader):
    client_version = ""
    if v >= 1:
        client_version = r.string()
        r.string()                         # client_os
        r.string()                         # client_arch
    stream_max = 25 if client_version else 15
    if conn.defects.on("fetch-offsets-range-wide"):
        fetch_offsets_range = (0, 25)
    else:
        fetch_offsets_range = (25, 25)
    keys = [
        (API_PRODUCE, 0, 25),
        (API_FETCH, 0, 25),
        (API_FETCH_OFFSETS, *fetch_offsets_range),
        (API_STREAM_FETCH, 0, stream_max),
        (API_UPDATE_OFFSETS, 0, 0),
    ]
    w = Writer()
    errors.OK.encode(w)
    w.vec_len(len(keys))
    for key, lo, hi in keys:
        w.i16(key).i16(lo).i16(hi)
    w.string("spu" if conn.defects.on("platform-version-not-semver") else PLATFORM_VERSION)
    return w.getvalue()


# ---------------------------------------------------------------- Produce (0)

@dataclass
class PartitionEntry:
    index: int
    batches: list[Batch]


async def handle_produce(conn: Connection, v: int, corr: int, r: Reader):
    r.option(r.string)                     # transactional_id, always present (A3)
    r.i16()                                # isolation: <0 ReadCommitted, >=0 ReadUncommitted
    timeout = r.i32()
    if timeout < 0 and not conn.defects.on("negative-timeout-accepted"):
        raise DecodeError("Timeout must be positive integer value")

    def read_partition() -> PartitionEntry:
        return PartitionEntry(r.u32(), read_record_set(r))

    def read_topic() -> tuple[str, list[PartitionEntry]]:
        return r.string(), r.vec(read_partition)

    topics = r.vec(read_topic)

    # smartmodules: always decoded; a request that ends right after the topics means
    # "no smartmodules" (A5).  Only the first invocation is looked at: it names the error.
    sm_err: ErrorCode | None = None
    if r.remaining() > 0:
        if r.vec_count() > 0:
            try:
                sm_err = smartmodule_error(read_smartmodule_invocation(r, v))
            except UnsupportedSmartModule:
                sm_err = smartmodule_error(None)

    # Single replica: ReadCommitted returns at once (HW moves to LEO at write, §4.4 step 9),
    # so the isolation and timeout values change nothing here.
    w = Writer()
    w.vec_len(len(topics))
    for name, entries in topics:
        results: list[tuple[int, ErrorCode, int]] = []
        for entry in entries:
            err, base = produce_partition(conn, name, entry, sm_err)
            results.append((entry.index, err, base))
        if conn.defects.on("produce-merges-duplicates"):
            merged: dict[int, tuple[int, ErrorCode, int]] = {}
            for res in results:
                merged.setdefault(res[0], res)
            results = list(merged.values())
        w.string(name)
        w.vec_len(len(results))
        full_layout = conn.defects.on("produce-response-ignores-version")
        for index, err, base in results:
            w.u32(index)
            encode_error(conn, w, err)
            w.i64(base)
            if v >= 2 or full_layout:
                w.i64(0)                   # log_append_time_ms: always 0 (A19)
            if v >= 5 or full_layout:
                w.i64(0)                   # log_start_offset: always 0 (A19)
    if v >= 1 or conn.defects.on("produce-response-ignores-version"):
        w.i32(0)                           # throttle_time_ms
    return w.getvalue()


def produce_partition(conn: Connection, topic: str, entry: PartitionEntry, sm_err: ErrorCode | None) -> tuple[ErrorCode, int]:
    """One request partition entry (§4.4).  Returns (error, base_offset)."""
    storage = conn.storage
    part = storage.lookup_for_produce(topic, entry.index)
    if part is None:
        return unknown_partition_error(conn), 0
    if sm_err is not None:
        return sm_err, 0
    batches = entry.batches
    if sum(b.record_count for b in batches) == 0:
        return errors.OK, 0                # nothing to write: success, base_offset 0 (§4.4 step 4)
    if not conn.defects.on("compression-code-unchecked"):
        if any(b.compression > MAX_COMPRESSION_CODE for b in batches):
            return errors.simple(errors.COMPRESSION_ERROR), 0
    if any(b.write_size > MAX_REQUEST_SIZE for b in batches):
        return errors.simple(errors.MESSAGE_TOO_LARGE), 0
    if any(b.last_offset_delta < 0 for b in batches):
        # EmptyBatch inside a non-empty set -> StorageError (56).  Nothing is written and the
        # partition is NOT short-circuited (README: decisions).
        return errors.simple(errors.STORAGE_ERROR), 0
    total = sum(b.write_size + 4 for b in batches)   # + schema_id at most
    if not storage.has_room(total):
        return errors.partition_full(topic, entry.index), 0
    base = part.leo
    for b in batches:
        stored_base = b.base_offset if conn.defects.on("base-offset-not-assigned") else part.leo
        data = b.encode(stored_base, recompute_crc=not conn.defects.on("crc-not-recomputed"))
        advance = 1 if conn.defects.on("leo-per-batch") else b.last_offset_delta + 1
        part.append(data, advance)
        storage.stored_bytes += len(data)
    if conn.defects.on("base-offset-plus-one"):
        base += 1
    return errors.OK, base


def unknown_partition_error(conn: Connection) -> ErrorCode:
    """Produce/Fetch/StreamFetch: no local leader -> NotLeaderForPartition (6), A8."""
    if conn.defects.on("unknown-partition-topic-not-found"):
        return errors.simple(errors.TOPIC_NOT_FOUND)
    return errors.simple(errors.NOT_LEADER_FOR_PARTITION)


def encode_error(conn: Connection, w: Writer, err: ErrorCode) -> None:
    err.encode(w, with_payload=not conn.defects.on("error-payload-dropped"))


# ---------------------------------------------------------------- Fetch (1)

def read_isolation(conn: Connection, r: Reader) -> int:
    """Isolation as a u8 enum: 0 ReadUncommitted, 1 ReadCommitted (A4)."""
    iso = r.u8()
    if iso not in (0, 1):
        if conn.defects.on("fetch-isolation-lenient"):
            return 0
        raise DecodeError(f"Unknown Isolation type {iso}")
    return iso


def encode_partition_response(
    conn: Connection,
    w: Writer,
    v: int,
    index: int,
    err: ErrorCode,
    part: Partition | None,
    records: bytes,
) -> None:
    """FetchablePartitionResponse (§5.2), shared by Fetch and StreamFetch."""
    hw = part.hw if part is not None else 0
    log_start = part.log_start if part is not None else 0
    if part is not None and conn.defects.on("hw-off-by-one"):
        hw += 1
    w.u32(index)
    encode_error(conn, w, err)
    w.i64(hw)
    if v >= 11:
        w.i64(0)                           # next_filter_offset: no SmartModules ran
    w.i64(log_start)
    w.u8(0)                                # aborted: None
    w.i32(len(records))
    w.raw(records)


def read_partition_slice(conn: Connection, part: Partition, offset: int, max_bytes: int) -> tuple[ErrorCode, bytes]:
    if conn.defects.on("fetch-max-bytes-ignored"):
        max_bytes = 1 << 62
    err, data = part.read(offset, max_bytes, skip_containing=conn.defects.on("fetch-skips-containing-batch"))
    if err.tag == errors.OTHER and conn.defects.on("fetch-past-leo-silent"):
        return errors.OK, b""
    return err, data


async def handle_fetch(conn: Connection, v: int, corr: int, r: Reader):
    r.i32()                                # max_wait: ignored (A17)
    r.i32()                                # min_bytes: ignored
    request_max_bytes = r.i32() if v >= 3 else None
    if v >= 4:
        read_isolation(conn, r)            # HW == LEO here, so both isolations read the same

    def read_partition():
        index = r.u32()
        if v >= 9:
            r.i32()                        # current_leader_epoch: ignored
        fetch_offset = r.i64()
        if v >= 5:
            r.i64()                        # log_start_offset
        partition_max_bytes = r.i32()      # ignored when the request-level value exists
        return index, fetch_offset, partition_max_bytes

    def read_topic():
        return r.string(), r.vec(read_partition)

    topics = r.vec(read_topic)
    if v >= 7:
        r.vec(lambda: (r.string(), r.vec(r.i32)))   # forgotten: ignored
    budget = MAX_FETCH_RESPONSE_RECORDS

    w = Writer()
    w.i32(0)                               # throttle_time_ms
    encode_error(conn, w, errors.OK)
    w.i32(0)                               # session_id
    w.vec_len(len(topics))
    for name, parts in topics:
        w.string(name)
        w.vec_len(len(parts))
        for index, fetch_offset, partition_max_bytes in parts:
            part = conn.storage.lookup(name, index)
            if part is None:
                encode_partition_response(conn, w, v, index, unknown_partition_error(conn), None, b"")
                continue
            # Before v3 there is no request-level max_bytes: the partition value is used (README).
            max_bytes = request_max_bytes if request_max_bytes is not None else partition_max_bytes
            # Hostile-input guard: one response carries at most MAX_FETCH_RESPONSE_RECORDS bytes of
            # records in total; partitions past that budget get an empty RecordSet (README).
            err, data = read_partition_slice(conn, part, fetch_offset, min(max_bytes, budget))
            budget -= len(data)
            encode_partition_response(conn, w, v, index, err, part, data)
    return w.getvalue()


# ---------------------------------------------------------------- FetchOffsets (1002)

async def handle_fetch_offsets(conn: Connection, v: int, corr: int, r: Reader):
    topics = r.vec(lambda: (r.string(), r.vec(r.u32)))
    if v == 23:
        r.option(r.string)                 # consumer_id, only at v23 exactly (§5.3)
    swap = conn.defects.on("fetch-offsets-field-order")
    w = Writer()
    w.vec_len(len(topics))
    for name, indexes in topics:
        w.string(name)
        w.vec_len(len(indexes))
        for index in indexes:
            part = conn.storage.lookup(name, index)
            if part is None:
                if conn.defects.on("fetch-offsets-unknown-code-6"):
                    err = errors.simple(errors.NOT_LEADER_FOR_PARTITION)
                else:
                    err = errors.simple(errors.PARTITION_NOT_LEADER)
                start, hw = 0, 0
            else:
                err, start, hw = errors.OK, part.log_start, part.hw
            if swap:
                w.u32(index)
                encode_error(conn, w, err)
            else:
                encode_error(conn, w, err)
                w.u32(index)
            w.i64(start).i64(hw)
    return w.getvalue()


# ---------------------------------------------------------------- StreamFetch (1003)

def stream_response(conn: Connection, v: int, topic: str, stream_id: int, index: int, err: ErrorCode,
                    part: Partition | None, records: bytes) -> bytes:
    w = Writer()
    w.string(topic)
    w.u32(stream_id)
    encode_partition_response(conn, w, v, index, err, part, records)
    return w.getvalue()


async def handle_stream_fetch(conn: Connection, v: int, corr: int, r: Reader):
    topic = r.string()
    index = r.u32()
    fetch_offset = r.i64()
    max_bytes = r.i32()
    read_isolation(conn, r)
    sm_ref: SmartModuleRef | None = None
    uses_smartmodule = False
    consumer_id: str | None = None
    try:
        if 11 <= v <= 18:
            if r.bytes_vec():              # legacy wasm_module
                uses_smartmodule = True
        if 16 <= v <= 18:
            sm = r.option(lambda: read_smartmodule_invocation(r, v))
            if sm is not None:
                uses_smartmodule, sm_ref = True, sm
            if r.bool():                   # derivedstream: Option<{stream, params}>
                uses_smartmodule = True
                r.string()
                read_smartmodule_params(r, v)
        if v >= 18:
            sms = r.vec(lambda: read_smartmodule_invocation(r, v))
            if sms:
                uses_smartmodule = True
                sm_ref = sm_ref or sms[0]
        if v >= 23:
            consumer_id = r.option(r.string)
    except UnsupportedSmartModule:
        uses_smartmodule = True

    part = conn.storage.lookup(topic, index)
    if part is None:
        # One response with stream_id 0 and NotLeaderForPartition (§5.4).
        return stream_response(conn, v, topic, 0, index, unknown_partition_error(conn), None, b"")

    if len(conn.streams) >= MAX_STREAMS_PER_CONNECTION:
        return stream_response(conn, v, topic, 0, index, errors.other("too many streams"), part, b"")

    stream_id = conn.next_stream_id
    conn.next_stream_id = (conn.next_stream_id + 1) & 0xFFFFFFFF or 1
    wire_id = 0 if conn.defects.on("stream-id-zero") else stream_id

    if uses_smartmodule:
        return stream_response(conn, v, topic, wire_id, index, smartmodule_error(sm_ref), part, b"")

    stream = Stream(stream_id, topic, part, consumer_id, fetch_offset)
    conn.streams[stream_id] = stream
    stream.task = asyncio.create_task(run_stream(conn, v, corr, stream, wire_id, max_bytes))
    return NO_RESPONSE


async def run_stream(conn: Connection, v: int, corr: int, stream: Stream, wire_id: int, max_bytes: int) -> None:
    """Push data for one stream; after each data response wait for UpdateOffsets (§5.4)."""
    part = stream.partition
    try:
        while not conn.closed:
            offset = stream.offset
            if 0 <= offset:
                await part.wait_beyond(offset)   # nothing at fetch_offset: send nothing yet
            err, data = read_partition_slice(conn, part, offset, max_bytes)
            # Clear before sending: an UpdateOffsets handled while the send drains must not be lost.
            stream.updated.clear()
            await conn.send(corr, stream_response(conn, v, stream.topic, wire_id, part.index, err, part, data))
            if not err.ok:
                break                            # errors end the stream
            if conn.defects.on("stream-no-flow-control"):
                stream.offset = part.leo
                continue
            await stream.updated.wait()          # flow control: wait for UpdateOffsets
    except (asyncio.CancelledError, ConnectionError):
        pass
    except Exception:
        log.exception("stream %d failed", stream.stream_id)
    finally:
        # An ended stream is gone: a later UpdateOffsets for it answers FetchSessionNotFoud.
        conn.streams.pop(stream.stream_id, None)


# ---------------------------------------------------------------- UpdateOffsets (1005)

async def handle_update_offsets(conn: Connection, v: int, corr: int, r: Reader):
    offsets = r.vec(lambda: (r.i64(), r.u32()))
    w = Writer()
    w.vec_len(len(offsets))
    for offset, session_id in offsets:
        stream = conn.streams.get(session_id)
        if stream is None and not conn.defects.on("update-offsets-unknown-session-ok"):
            err = errors.simple(errors.FETCH_SESSION_NOT_FOUND)
        else:
            err = errors.OK
            if stream is not None:
                stream.offset = offset
                stream.updated.set()
        w.u32(session_id)
        encode_error(conn, w, err)
    return w.getvalue()


# ---------------------------------------------------------------- consumer offsets (1006-1008)

def read_replica_key(r: Reader) -> tuple[str, int]:
    return r.string(), r.u32()


async def handle_update_consumer_offset(conn: Connection, v: int, corr: int, r: Reader):
    offset = r.i64()
    session_id = r.u32()
    stream = conn.streams.get(session_id)
    if stream is None:
        err = errors.simple(errors.FETCH_SESSION_NOT_FOUND)
    elif not stream.consumer_id:
        err = errors.simple(errors.OFFSET_MANAGEMENT_DISABLED)
    else:
        conn.storage.set_consumer_offset(stream.consumer_id, stream.topic, stream.partition.index, offset)
        err = errors.OK
    w = Writer().i64(offset)
    encode_error(conn, w, err)
    return w.getvalue()


async def handle_delete_consumer_offset(conn: Connection, v: int, corr: int, r: Reader):
    topic, partition = read_replica_key(r)
    consumer_id = r.string()
    conn.storage.consumer_offsets.pop((consumer_id, topic, partition), None)
    w = Writer()
    encode_error(conn, w, errors.OK)       # deleting an absent offset is not an error (README)
    return w.getvalue()


async def handle_fetch_consumer_offsets(conn: Connection, v: int, corr: int, r: Reader):
    replica: tuple[str, int] | None = None
    consumer: str | None = None
    if v >= 24:
        opts = r.option(lambda: (r.option(lambda: read_replica_key(r)), r.option(r.string)))
        if opts is not None:
            replica, consumer = opts
    rows = []
    for (cid, topic, partition), co in sorted(conn.storage.consumer_offsets.items()):
        if replica is not None and (topic, partition) != replica:
            continue
        if consumer is not None and cid != consumer:
            continue
        rows.append((cid, topic, partition, co))
    w = Writer()
    encode_error(conn, w, errors.OK)
    w.vec_len(len(rows))
    for cid, topic, partition, co in rows:
        w.string(cid).string(topic).u32(partition).i64(co.offset).u64(co.modified_time)
    return w.getvalue()


HANDLERS = {
    API_PRODUCE: handle_produce,
    API_FETCH: handle_fetch,
    API_API_VERSIONS: handle_api_versions,
    API_FETCH_OFFSETS: handle_fetch_offsets,
    API_STREAM_FETCH: handle_stream_fetch,
    API_UPDATE_OFFSETS: handle_update_offsets,
    API_UPDATE_CONSUMER_OFFSET: handle_update_consumer_offset,
    API_DELETE_CONSUMER_OFFSET: handle_delete_consumer_offset,
    API_FETCH_CONSUMER_OFFSETS: handle_fetch_consumer_offsets,
}
