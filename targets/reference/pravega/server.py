"""The Pravega segment store personality: framing, the append decoder and writer states, reads with long polls,
segment lifecycle, attributes and table segments.

Connection rules (notes §1, §5.3, §8):
- Every frame is ``i32 type | i32 length | payload`` (framed.serve_frames). A length above 16,777,207 (header plus
  payload above 0xFFFFFF) or negative closes the connection before the payload is read (PCL:180).
- An unknown type, a reply-only type, a top-level Event or PartialEvent, an admin-port command, or a payload
  that does not hold its fields closes the connection without a reply (SCIH:74-77). Bytes after the known
  fields are skipped (CD:62). Hello is answered with Hello(17, 5) and closes after it when the ranges do not
  meet; it is not required first (§6).
- Appends follow AppendDecoder (per connection, per writerId: SetupAppend first, one open AppendBlock, its
  AppendBlockEnd with a PartialEvent or Padding trailer, numEvents > 0, event numbers never lower) and the
  writer state (acks strictly increasing, InvalidEventNumber + close when another connection moved the writer's
  attribute, SegmentIsSealed then close on the next append). A violation closes the connection.
- Reads at or beyond the tail of an unsealed segment park until data reaches the offset, the segment is sealed
  (SegmentIsSealed) or deleted (an empty SegmentRead at the tail), with no timeout, as upstream; at most
  ``max_parked_reads`` per connection. Replies to parked reads interleave with later replies (the requestId
  tells them apart, §7.1); everything else is answered in order.
Decisions (implementation-defined upstream): D1 a read beyond a sealed end or at a negative offset answers
ErrorMessage(code 0) (the "metadata not loaded" path; upstream may also close). D2 MergeSegments seals an
unsealed source first. D3 a missing table key read with ReadTable comes back with version -1 and an empty
value. D4 table iteration orders keys by their bytes; the continuation token is the last key returned. D5
ReadTableEntriesDelta returns entries whose version is at or after ``fromPosition``, in version order, and
``lastPosition`` is the table length after the last one returned. D6 table operations on a stream segment, and
stream reads or appends on a table segment, answer OperationUnsupported. D7 the idle timeout
(``--idle-timeout``) does not end a connection while one of its reads is parked.
"""

from __future__ import annotations

import asyncio
import logging
import struct

from wirecheck.targets.reference.core import BrokerConfig, Connection, FrameTimeout, IdleTimeout
from wirecheck.targets.reference.framed import FrameShape, serve_frames
from wirecheck.targets.reference.pravega.faults import FAULTS, VARIANTS
from wirecheck.targets.reference.pravega.options import PravegaOptions
from wirecheck.targets.reference.pravega.store import NOT_EXISTS, NULL_VALUE, Segment, Store, StoreFull, wait_for_change
from wirecheck.targets.reference.pravega.wire import Malformed, Reader, Truncated, Writer, java_utf_decode

log = logging.getLogger("wirecheck.broker.pravega")

WIRE_VERSION, OLDEST_COMPATIBLE = 17, 5
MAX_PAYLOAD = 0xFFFFFF - 8
MAX_READ, MIN_READ = 2 * 1024 * 1024, 8
NO_VERSION = -(2**63)

# type codes (WireCommandType, notes §3)
HELLO, PADDING, PARTIAL_EVENT = -127, -1, -2
SETUP_APPEND, APPEND_SETUP, APPEND_BLOCK, APPEND_BLOCK_END, CONDITIONAL_APPEND = 1, 2, 3, 4, 5
DATA_APPENDED, CONDITIONAL_CHECK_FAILED, READ_SEGMENT, SEGMENT_READ = 7, 8, 9, 10
GET_INFO, INFO, CREATE, CREATED, SEAL, SEALED, DELETE, DELETED = 11, 12, 20, 21, 28, 29, 30, 31
UPDATE_POLICY, POLICY_UPDATED, GET_ATTRIBUTE, ATTRIBUTE, UPDATE_ATTRIBUTE, ATTRIBUTE_UPDATED = 32, 33, 34, 35, 36, 37
TRUNCATE, TRUNCATED, CREATE_TRANSIENT, LOCATE_OFFSET, OFFSET_LOCATED = 38, 39, 40, 41, 42
WRONG_HOST, IS_SEALED, ALREADY_EXISTS, NO_SUCH_SEGMENT, INVALID_EVENT_NUMBER, IS_TRUNCATED = 50, 51, 52, 53, 55, 56
OPERATION_UNSUPPORTED, MERGE, MERGED, AUTH_FAILED, ERROR_MESSAGE = 57, 58, 59, 60, 61
GET_TABLE_INFO, TABLE_INFO, CREATE_TABLE, DELETE_TABLE = 68, 69, 70, 71
UPDATE_ENTRIES, ENTRIES_UPDATED, REMOVE_KEYS, KEYS_REMOVED, READ_TABLE, TABLE_READ = 74, 75, 76, 77, 78, 79
TABLE_NOT_EMPTY, KEY_DOES_NOT_EXIST, KEY_BAD_VERSION = 80, 81, 82
READ_KEYS, KEYS_READ, READ_ENTRIES, ENTRIES_READ, DELTA_READ, READ_DELTA = 83, 84, 85, 86, 87, 88
CONDITIONAL_BLOCK_END, MERGE_BATCH, BATCH_MERGED, KEEP_ALIVE = 89, 90, 91, 100
#: codes that are commands but never requests on this port: replies, embedded-only, admin-port (§3, §4.7, §8)
NOT_REQUESTS = {0, PARTIAL_EVENT, -3, -4, -5, -6, APPEND_SETUP, DATA_APPENDED, CONDITIONAL_CHECK_FAILED,
                SEGMENT_READ, INFO, CREATED, SEALED, DELETED, POLICY_UPDATED, ATTRIBUTE, ATTRIBUTE_UPDATED,
                TRUNCATED, OFFSET_LOCATED, WRONG_HOST, IS_SEALED, ALREADY_EXISTS, NO_SUCH_SEGMENT,
                INVALID_EVENT_NUMBER, IS_TRUNCATED, OPERATION_UNSUPPORTED, MERGED, AUTH_FAILED, ERROR_MESSAGE,
                TABLE_INFO, ENTRIES_UPDATED, KEYS_REMOVED, TABLE_READ, TABLE_NOT_EMPTY, KEY_DOES_NOT_EXIST,
                KEY_BAD_VERSION, KEYS_READ, ENTRIES_READ, DELTA_READ, BATCH_MERGED}
APPEND_DECODER = {SETUP_APPEND, APPEND_BLOCK, APPEND_BLOCK_END, PADDING, CONDITIONAL_APPEND, CONDITIONAL_BLOCK_END}
_EVENT_HEADER = struct.Struct(">ii")
_AUTH_FAILED_CODE = struct.pack(">i", AUTH_FAILED)


class Close(Exception):
    """End the connection without a reply (the server's answer to every protocol violation)."""


class WriterState:
    __slots__ = ("segment", "decoder_last", "last_stored", "last_acked", "dropped")

    def __init__(self, segment: str, last: int):
        self.segment = segment
        self.decoder_last = 0  # AppendDecoder's floor after SetupAppend (AD:170-176)
        self.last_stored = self.last_acked = last
        self.dropped = False  # after SegmentIsSealed / NoSuchSegment: the next append closes (pravega#3694)


class ConnectionState:
    def __init__(self, conn: Connection):
        self.conn = conn
        self.lock = asyncio.Lock()
        self.writers: dict[bytes, WriterState] = {}
        self.block: tuple[bytes, bytes] | None = None  # the open AppendBlock: (writerId, data)
        self.parked: set[asyncio.Task] = set()
        self.greeted = False  # a Hello came (only the hello-required fault looks)
        self.last_info: tuple[str, bool] | None = None  # only the pipelined-info-coalesced fault looks

    async def send(self, data: bytes) -> None:
        async with self.lock:
            await self.conn.write(data)


class PravegaPersonality:
    name = "pravega"

    def __init__(self, config: BrokerConfig, options: PravegaOptions):
        self.active = config.faults_of(self.name, FAULTS)
        self.variants = config.variants_of(self.name, VARIANTS)  # other readings the notes permit
        self.options = options
        max_payload = min(config.max_frame, MAX_PAYLOAD) if config.max_frame else MAX_PAYLOAD
        if "oversize-waits" in self.active:
            max_payload = 2**31 - 1
        if "max-payload-refused" in self.active:
            max_payload = MAX_PAYLOAD - 1
        self.shape = FrameShape(header_size=8, length_at=4, length_format=">i", min_length=0,
                                max_length=max_payload)
        self.store = Store(config.data_dir, config.fsync == "batch", options.max_store_bytes, config.cache_bytes)
        for name, table in [*((n, False) for n in options.segments), *((n, True) for n in options.tables)]:
            if name not in self.store.segments:  # pre-created by the operator (kept across restarts with --data-dir)
                self.store.create(name, table=table)
        self.wedged = False
        self.handlers = {
            HELLO: self._hello, KEEP_ALIVE: self._keep_alive, READ_SEGMENT: self._read_segment,
            GET_INFO: self._info, CREATE: self._create, SEAL: self._seal, DELETE: self._delete,
            UPDATE_POLICY: self._policy, GET_ATTRIBUTE: self._get_attribute, UPDATE_ATTRIBUTE: self._update_attribute,
            TRUNCATE: self._truncate, CREATE_TRANSIENT: self._create_transient, LOCATE_OFFSET: self._locate,
            MERGE: self._merge, MERGE_BATCH: self._merge_batch, GET_TABLE_INFO: self._table_info,
            CREATE_TABLE: self._create_table, DELETE_TABLE: self._delete_table, UPDATE_ENTRIES: self._update_entries,
            REMOVE_KEYS: self._remove_keys, READ_TABLE: self._read_table, READ_KEYS: self._read_keys,
            READ_ENTRIES: self._read_entries, READ_DELTA: self._read_delta,
        }

    async def close(self) -> None:
        self.store.close()

    def _w(self) -> Writer:
        return Writer(standard_utf8="standard-utf8-replies" in self.active)

    # ------------------------------------------------------------------------------------------ connection

    async def serve(self, conn: Connection) -> None:
        state = ConnectionState(conn)
        if "split-frame-dropped" in self.active:
            conn.frame_timeout = 0.05  # fault: a frame in pieces must be whole within 50 ms
        reader = LenientReader if "invalid-utf8-accepted" in self.active else Reader

        async def handle(header: bytes, payload: bytes) -> bool:
            if self.wedged:
                return True  # fault: a wedged broker reads and never answers
            code = struct.unpack_from(">i", header)[0]
            try:
                replies = self._dispatch(state, code, reader(payload))
                if replies is None:
                    return True
                if isinstance(replies, Close):  # reply first, then close (incompatible Hello, InvalidEventNumber)
                    if replies.args and replies.args[0]:
                        await state.send(replies.args[0])
                    return False
                await state.send(replies)
                if "auth-failure-closes" in self.active and replies[:4] == _AUTH_FAILED_CODE:
                    return False  # fault: a token rejection ends the connection
                return True
            except Malformed as exc:
                if "truncated-answered" in self.active and isinstance(exc, Truncated):
                    await state.send(self._illegal(-1, "", f"payload does not decode: {exc}"))
                    return True
                log.debug("closing: %s payload does not decode: %s", code, exc)
            except Close as exc:
                log.debug("closing: %s", exc)
            except StoreFull as exc:
                log.warning("closing: %s", exc)
            return False

        try:
            while True:
                try:
                    await serve_frames(conn, self.shape, handle)
                    return
                except IdleTimeout as exc:
                    # D7: a connection whose reads are parked at a tail is waiting, not idle (upstream has no idle
                    # timeout at all); a frame left half-sent still ends it.
                    if isinstance(exc, FrameTimeout) or not state.parked:
                        raise
        finally:
            for task in state.parked:
                task.cancel()
            await asyncio.gather(*state.parked, return_exceptions=True)

    def _dispatch(self, state: ConnectionState, code: int, r: Reader):
        """The reply bytes, None (no reply), or a Close (carrying bytes to send first); raises Close/Malformed."""
        if "hello-required" in self.active and code != HELLO and not state.greeted:
            raise Close(f"type {code} before Hello")
        if code in APPEND_DECODER:
            return self._append_decoder(state, code, r)
        handler = self.handlers.get(code)
        if handler is not None:
            replies = handler(state, r)
            if "trailing-bytes-close" in self.active and r.left():
                raise Close(f"{r.left()} bytes after the fields of type {code}")
            return replies
        if code in NOT_REQUESTS:
            if "reply-type-ignored" in self.active:
                return None
            raise Close(f"type {code} is not a request")
        if "unknown-type-error-frame" in self.active:
            return self._w().i64(-1).utf("").utf(f"unknown wire command {code}").i32(-1).frame(ERROR_MESSAGE)
        raise Close(f"unknown wire command {code}")

    # ------------------------------------------------------------------------------------------ helpers

    def _token_ok(self, token: str) -> bool:
        return not self.options.auth_token or token == self.options.auth_token

    def _auth_failed(self, rid: int) -> bytes:
        return self._w().i64(rid).utf("").i32(0).frame(AUTH_FAILED)

    def _error_rid(self, rid: int) -> int:
        return 0 if "error-request-id-zero" in self.active else rid

    def _no_such_segment(self, rid: int, name: str, offset: int = -1) -> bytes:
        return self._w().i64(self._error_rid(rid)).utf(name).utf("").i64(offset).frame(NO_SUCH_SEGMENT)

    def _unsupported(self, rid: int, operation: str) -> bytes:
        return self._w().i64(rid).utf(operation).utf("").frame(OPERATION_UNSUPPORTED)

    def _illegal(self, rid: int, name: str, message: str) -> bytes:
        """ErrorMessage with ILLEGAL_ARGUMENT (0), what an IllegalArgumentException becomes (PRP:1218-1222)."""
        return self._w().i64(rid).utf(name).utf(message).i32(0).frame(ERROR_MESSAGE)

    def _simple(self, code: int, rid: int, name: str) -> bytes:
        return self._w().i64(rid).utf(name).frame(code)

    def _lookup(self, rid: int, name: str, table: bool, operation: str) -> Segment | bytes:
        """The segment, or the error reply: NoSuchSegment, or OperationUnsupported for the wrong kind (D6)."""
        segment = self.store.segments.get(name)
        if segment is None:
            return self._no_such_segment(rid, name)
        if segment.table != table:
            return self._unsupported(rid, operation)
        return segment

    # ------------------------------------------------------------------------------------------ control

    def _hello(self, state, r: Reader):
        high, low = r.i32(), r.i32()
        state.greeted = True
        mine = (4, 4) if "hello-version-too-low" in self.active else (WIRE_VERSION, OLDEST_COMPATIBLE)
        if "hello-echoes-client-range" in self.active:
            mine = (high, low)
        reply = self._w().i32(mine[0]).i32(mine[1]).frame(HELLO)
        if (low > WIRE_VERSION or high < OLDEST_COMPATIBLE) and "incompatible-hello-stays-open" not in self.active:
            return Close(reply)
        return reply

    def _keep_alive(self, state, r: Reader):
        if "keepalive-ignored" in self.active:
            return None
        return struct.pack(">ii", KEEP_ALIVE, 0)

    # ------------------------------------------------------------------------------------------ appends

    def _append_decoder(self, state: ConnectionState, code: int, r: Reader):
        if state.block is not None and code != APPEND_BLOCK_END:
            raise Close(f"type {code} following an open append block")
        if code == PADDING:
            if "top-level-padding-closes" in self.active:
                raise Close("top-level Padding")
            return None  # a top-level Padding is ignored (AD:113-115)
        if code == SETUP_APPEND:
            return self._setup_append(state, r)
        writer = r.uuid()
        ws = state.writers.get(writer)
        if ws is None:
            if "unset-writer-ignored" in self.active:
                return None
            raise Close("writer referenced before SetupAppend")
        if code == APPEND_BLOCK:
            state.block = (writer, r.rest())
            return None
        if code == APPEND_BLOCK_END:
            size, tail, count, last, rid = r.i32(), r.blob(lenient=True), r.i32(), r.i64(), r.opt_i64(-1)
            if count <= 0 and "num-events-unchecked" not in self.active:
                raise Close(f"numEvents {count}")
            if last < ws.decoder_last and "lower-event-number-acked" not in self.active:
                raise Close(f"event number {last} below {ws.decoder_last}")
            data = self._block_data(state, writer, size, tail)
            ws.decoder_last = last
            return self._append(state, writer, ws, last, data, rid, None, count)
        event_number, expected = r.i64(), r.i64()
        if code == CONDITIONAL_APPEND:
            kind, length = r.i32(), r.i32()
            if kind != 0 and "conditional-event-type-unchecked" not in self.active:
                raise Close(f"nested event type {kind}")
            data = _EVENT_HEADER.pack(0, length) + r._take(length)
            rid = r.opt_i64(-1)
        else:
            data, rid = r.blob(lenient=True), r.i64()
        if event_number < ws.decoder_last and "lower-event-number-acked" not in self.active:
            raise Close(f"event number {event_number} below {ws.decoder_last}")
        ws.decoder_last = event_number
        return self._append(state, writer, ws, event_number, data, rid, expected)

    def _block_data(self, state: ConnectionState, writer: bytes, size: int, tail: bytes) -> bytes:
        """The bytes an AppendBlockEnd appends (notes §5.3 rule 4)."""
        if state.block is None:
            if "standalone-size-checked" in self.active and not 0 <= size <= len(tail):
                raise Close(f"sizeOfWholeEvents {size} outside 0..{len(tail)}")
            return tail  # standalone AppendBlockEnd: its data is the append (AD:191-193)
        block_writer, block = state.block
        state.block = None
        if block_writer != writer:
            raise Close("AppendBlockEnd for another writer than the open block's")
        if not 0 <= size <= len(block):
            raise Close(f"sizeOfWholeEvents {size} outside 0..{len(block)}")
        rest = block[size:]
        if not rest:
            return block[:size]  # AppendBlockEnd's own data is dropped here, as AD does (A21)
        if len(rest) < 8:
            raise Close("a block trailer shorter than a command header")
        kind, length = _EVENT_HEADER.unpack_from(rest)
        if length < 0 or length > len(rest) - 8:
            raise Close(f"block trailer length {length} runs past the block")
        if kind == PADDING:
            if "padding-trailer-rejected" in self.active:
                raise Close("a block ended by a Padding trailer")
            if tail:
                raise Close("data in AppendBlockEnd after a Padding trailer")
            return block[:size]
        if kind != PARTIAL_EVENT:
            raise Close(f"block trailer of type {kind}")
        partial = b"" if "partial-event-dropped" in self.active else rest[8 : 8 + length]
        return block[:size] + partial + tail

    def _setup_append(self, state: ConnectionState, r: Reader):
        rid, writer, name, token = r.i64(), r.uuid(), r.utf(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        if "setup-missing-closes" in self.active and name not in self.store.segments:
            raise Close(f"SetupAppend on missing segment {name}")
        found = self._lookup(rid, name, False, "setupAppend")
        if isinstance(found, bytes):
            return found
        last = found.attributes.get(writer, NULL_VALUE)
        state.writers[writer] = WriterState(name, last)
        return self._w().i64(rid).utf(name).uuid(writer).i64(self._setup_reported(last)).frame(APPEND_SETUP)

    def _setup_reported(self, last: int) -> int:
        """The lastEventNumber AppendSetup carries (the writer's state keeps the true one)."""
        if "setup-new-writer-zero" in self.active and last == NULL_VALUE:
            return 0
        if "resetup-returns-min" in self.active:
            return NULL_VALUE
        return last

    def _append(self, state, writer: bytes, ws: WriterState, event_number: int, data: bytes, rid: int,
                expected: int | None, count: int = 1):
        if ws.dropped:
            raise Close("data from a writer whose segment was sealed or deleted")
        segment = self.store.segments.get(ws.segment)
        if segment is None or segment.table:
            ws.dropped = True
            return self._no_such_segment(rid, ws.segment)
        if event_number < ws.last_stored and "lower-event-number-acked" not in self.active:
            raise Close(f"event {event_number} was already appended (last {ws.last_stored})")
        if event_number == ws.last_stored and "equal-event-number-closes" in self.variants:
            # variant: an equal event number treated as a resend, like a lower one (notes §7.2, A24: SHOULD)
            raise Close(f"event {event_number} equals the last stored")
        if segment.sealed and "sealed-accepts-appends" not in self.active:
            ws.dropped = True
            # fault sealed-append-offset-is-length: the reply's offset is the segment's length, not the event number
            offset = segment.length if "sealed-append-offset-is-length" in self.active else event_number
            return self._w().i64(rid).utf(ws.segment).utf("").i64(offset).frame(IS_SEALED)
        if segment.attributes.get(writer, NULL_VALUE) != ws.last_stored and "writer-moved-unchecked" not in self.active:
            # another connection moved this writer on: the store's compare-and-set fails (AP:479-482)
            return Close(self._w().uuid(writer).i64(rid).utf("").i64(event_number).frame(INVALID_EVENT_NUMBER))
        if expected is not None and expected != segment.length and "conditional-offset-ignored" not in self.active:
            return self._w().uuid(writer).i64(event_number).i64(rid).frame(CONDITIONAL_CHECK_FAILED)
        before = segment.length
        if "event-headers-stripped" in self.active:
            data = _without_event_headers(data)
        after = self.store.append(segment, data, writer, event_number)
        ws.last_stored = event_number
        if event_number == ws.last_acked:
            return None  # an equal event number is stored, not acknowledged again (AP:366-367)
        previous = event_number - 1 if "ack-previous-wrong" in self.active else ws.last_acked
        offset = before if "write-offset-before-append" in self.active else after
        ws.last_acked = event_number
        if "ack-first-event-number" in self.active:
            event_number -= count - 1  # the block's first event number, not its last
        return self._w().uuid(writer).i64(event_number).i64(previous).i64(rid).i64(offset).frame(DATA_APPENDED)

    def _create_transient(self, state, r: Reader):
        rid, writer, parent, token = r.i64(), r.uuid(), r.utf(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        found = self._lookup(rid, parent, False, "createTransientSegment")
        if isinstance(found, bytes):
            return found
        name = f"{parent}#transient.{writer.hex()}"
        if name not in self.store.segments:
            self.store.create(name)
        if "transient-name-is-parent" in self.active:
            return self._simple(CREATED, rid, parent)
        return self._simple(CREATED, rid, name)

    # ------------------------------------------------------------------------------------------ reads

    def _read_segment(self, state: ConnectionState, r: Reader):
        name, offset, suggested, token = r.utf(), r.i64(), r.i32(), r.utf()
        rid = r.i64() if "read-requires-request-id" in self.active else r.opt_i64(-1)
        if not self._token_ok(token):
            # A16: upstream passes the read's offset as the requestId (PRP:228); the variant does as upstream
            return self._auth_failed(offset if "read-auth-offset-as-request-id" in self.variants else rid)
        size = min(MAX_READ, max(0 if "suggested-length-unclamped" in self.active else MIN_READ, suggested))
        answer = self._read_now(name, offset, size, rid)
        if answer is not None:
            return answer
        if "read-tail-answered" in self.active:
            return self._segment_read(name, offset, True, False, b"", rid)
        if len(state.parked) >= self.options.max_parked_reads:
            raise Close(f"more than {self.options.max_parked_reads} parked reads")
        task = asyncio.create_task(self._park(state, name, offset, size, rid))
        state.parked.add(task)
        task.add_done_callback(state.parked.discard)
        return None

    def _read_now(self, name: str, offset: int, size: int, rid: int) -> bytes | None:
        """The reply a read gets now, or None while it must stay parked (an unsealed segment's tail)."""
        segment = self.store.segments.get(name)
        if segment is None:
            lost = "no-such-segment-offset-lost" in self.active
            return self._no_such_segment(rid, name, -1 if lost else offset)
        if segment.table:
            return self._unsupported(rid, "readSegment")
        if 0 <= offset < segment.start:
            if "truncated-read-served" in self.active:
                return self._segment_read(name, offset, False, False, b"", rid)
            return self._w().i64(rid).utf(name).i64(segment.start).utf("").i64(offset).frame(IS_TRUNCATED)
        if 0 <= offset < segment.length:
            if "short-reads" in self.variants:
                # variant: one short chunk, as a storage read may give (notes §7.4 Size: fewer bytes than asked)
                size = min(size, (segment.length - offset + 1) // 2)
            data = segment.read(offset + 1 if "read-skips-first-byte" in self.active else offset, size)
            end = offset + len(data) == segment.length
            return self._segment_read(name, offset, end and not segment.sealed, end and segment.sealed, data, rid)
        if segment.sealed and offset == segment.length:
            if "sealed-end-not-flagged" in self.active:
                return self._segment_read(name, offset, True, False, b"", rid)
            return self._segment_read(name, offset, False, True, b"", rid)
        if segment.sealed and offset > segment.length and "beyond-sealed-read-served" in self.active:
            return self._segment_read(name, offset, False, True, b"", rid)
        if (segment.sealed or offset < 0) and "beyond-sealed-closes" in self.variants:
            raise Close(f"read at {offset} outside the segment")  # D1's other path: metadata loaded (notes §7.4)
        if segment.sealed or offset < 0:  # D1
            return self._illegal(rid, name, f"offset {offset} is outside the segment (length {segment.length})")
        return None

    def _segment_read(self, name, offset, at_tail, end, data, rid) -> bytes:
        return self._w().utf(name).i64(offset).boolean(at_tail).boolean(end).blob(data).i64(rid).frame(SEGMENT_READ)

    async def _park(self, state: ConnectionState, name: str, offset: int, size: int, rid: int) -> None:
        segment = self.store.segments.get(name)
        try:
            while True:
                await wait_for_change(segment)
                current = self.store.segments.get(name)
                if current is not segment:  # deleted (or merged away) while parked: an empty read at the tail
                    await state.send(self._segment_read(name, offset, True, False, b"", rid))
                    return
                if segment.sealed and offset >= segment.length:
                    if "parked-read-ignores-seal" in self.active:
                        continue
                    await state.send(self._w().i64(rid).utf(name).utf("").i64(offset).frame(IS_SEALED))
                    return
                answer = self._read_now(name, offset, size, rid)
                if answer is not None:
                    await state.send(answer)
                    return
        except (ConnectionError, OSError) as exc:
            log.debug("parked read ended: %s", exc)

    # ------------------------------------------------------------------------------------------ segments

    def _info(self, state, r: Reader):
        rid, name, token = r.i64(), r.utf(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        segment = self.store.segments.get(name)
        if segment is None:
            return self._no_such_segment(rid, name)
        if "pipelined-info-coalesced" in self.active and self._coalesced(state, name):
            return None
        start = 0 if "info-start-offset-zero" in self.active else segment.start
        reply = (self._w().i64(rid).utf(name).boolean(True).boolean(segment.sealed).boolean(False)
                 .i64(segment.modified_ms).i64(segment.length).i64(start).frame(INFO))
        if "info-length-short" in self.active:
            return reply[:4] + struct.pack(">i", len(reply) - 9) + reply[8:]  # the header claims a byte too few
        return reply

    @staticmethod
    def _coalesced(state: ConnectionState, name: str) -> bool:
        """Fault pipelined-info-coalesced: an info request for the segment the previous one named, when that one
        had more bytes queued behind it (the client sent on without waiting for its answer), is folded into it
        (left unanswered). Queued bytes, not a time window: a client that waits for each answer never meets it."""
        queued = len(state.conn.reader._buffer) > 0  # asyncio.StreamReader has no public peek
        last, state.last_info = state.last_info, (name, queued)
        return last is not None and last[0] == name and last[1]

    def _create(self, state, r: Reader):
        rid, name, rate, scale, token, _rollover = r.i64(), r.utf(), r.i32(), r.i8(), r.utf(), r.opt_i64(0)
        if not self._token_ok(token):
            return self._auth_failed(rid)
        if name in self.store.segments and "create-twice-ok" not in self.active:
            return self._w().i64(self._error_rid(rid)).utf(name).utf("").frame(ALREADY_EXISTS)
        if name not in self.store.segments:
            segment = self.store.create(name)
            segment.rate, segment.scale_type = rate, scale
            if "created-sealed" in self.active:
                self.store.seal(segment)
        return self._simple(CREATED, rid, name)

    def _seal(self, state, r: Reader):
        rid, name, token = r.i64(), r.utf(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        if "seal-missing-error-message" in self.active and name not in self.store.segments:
            return self._illegal(rid, name, "no such segment")
        found = self._lookup(rid, name, False, "sealSegment")
        if isinstance(found, bytes):
            return found
        if found.sealed and "seal-twice-ok" not in self.active:
            return self._w().i64(rid).utf(name).utf("").i64(-1).frame(IS_SEALED)
        self.store.seal(found)
        return self._simple(SEALED, rid, name)

    def _delete(self, state, r: Reader):
        rid, name, token = r.i64(), r.utf(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        if name not in self.store.segments:
            return self._no_such_segment(rid, name)
        if "delete-keeps-segment" not in self.active:
            self.store.delete(name)
        return self._simple(DELETED, rid, name)

    def _policy(self, state, r: Reader):
        rid, name, rate, scale, token = r.i64(), r.utf(), r.i32(), r.i8(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        found = self._lookup(rid, name, False, "updateSegmentPolicy")
        if isinstance(found, bytes):
            return found
        if "policy-unsupported" in self.active:
            return self._unsupported(rid, "updateSegmentPolicy")
        found.rate, found.scale_type = rate, scale
        return self._simple(POLICY_UPDATED, rid, name)

    def _truncate(self, state, r: Reader):
        rid, name, offset, token = r.i64(), r.utf(), r.i64(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        found = self._lookup(rid, name, False, "truncateSegment")
        if isinstance(found, bytes):
            return found
        if "truncate-past-length-ok" in self.active and offset > found.length:
            return self._simple(TRUNCATED, rid, name)  # answered, start offset unmoved
        if not found.start <= offset <= found.length:
            return self._w().i64(rid).utf(name).i64(found.start).utf("").i64(offset).frame(IS_TRUNCATED)
        if offset > found.start:
            self.store.truncate(found, offset)
        return self._simple(TRUNCATED, rid, name)

    def _locate(self, state, r: Reader):
        rid, name, _target, token = r.i64(), r.utf(), r.i64(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        found = self._lookup(rid, name, False, "locateOffset")
        if isinstance(found, bytes):
            return found
        located = found.length + 1 if "locate-offset-past-length" in self.active else found.length
        return self._w().i64(rid).utf(name).i64(located).frame(OFFSET_LOCATED)  # no index segment (§7.5)

    def _merge(self, state, r: Reader):
        rid, target_name, source_name, token = r.i64(), r.utf(), r.utf(), r.utf()
        updates = []
        if r.left() > 0:
            for _ in range(r.count(33)):
                updates.append((r.uuid(), r.i8(), r.i64(), r.i64()))
        if not self._token_ok(token):
            return self._auth_failed(rid)
        target = self._lookup(rid, target_name, False, "mergeSegments")
        if isinstance(target, bytes):
            return target
        source = self._lookup(rid, source_name, False, "mergeSegments")
        if isinstance(source, bytes):
            return source
        if source is target:
            return self._illegal(rid, target_name, "a segment cannot be merged into itself")
        if target.sealed:
            return self._w().i64(rid).utf(target_name).utf("").i64(-1).frame(IS_SEALED)
        for attribute, kind, _new, old in updates:  # 4 ReplaceIfEquals must match; 1 Replace always applies
            if kind == 4 and target.attributes.get(attribute, NULL_VALUE) != old:
                return self._w().i64(rid).boolean(False).frame(ATTRIBUTE_UPDATED)
        if not source.sealed:
            self.store.seal(source)  # D2
        for attribute, _kind, new, _old in updates:
            self.store.set_attribute(target, attribute, new)
        before = target.length
        length = self.store.merge(target, source)
        if "merge-offset-before" in self.active:
            length = before
        return self._w().i64(rid).utf(target_name).utf(source_name).i64(length).frame(MERGED)

    def _merge_batch(self, state, r: Reader):
        rid, target_name = r.i64(), r.utf()
        sources = [r.utf() for _ in range(r.count(2))]
        token = r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        target = self._lookup(rid, target_name, False, "mergeSegmentsBatch")
        if isinstance(target, bytes):
            return target
        found = []
        for name in sources:
            source = self._lookup(rid, name, False, "mergeSegmentsBatch")
            if isinstance(source, bytes):
                return source
            if source is target or source in found:
                return self._illegal(rid, name, "a segment cannot be merged into itself or twice")
            found.append(source)
        w = self._w().i64(rid).utf(target_name).i32(len(found))
        for source in found:
            if not source.sealed:
                self.store.seal(source)
            before = target.length
            after = self.store.merge(target, source)
            w.utf(source.name).i64(before if "merge-batch-offset-before" in self.active else after)
        return w.frame(BATCH_MERGED)

    # ------------------------------------------------------------------------------------------ attributes

    def _get_attribute(self, state, r: Reader):
        rid, name, attribute, token = r.i64(), r.utf(), r.uuid(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        segment = self.store.segments.get(name)
        if segment is None:
            return self._no_such_segment(rid, name)
        unset = 0 if "unset-attribute-zero" in self.active else NULL_VALUE
        return self._w().i64(rid).i64(segment.attributes.get(attribute, unset)).frame(ATTRIBUTE)

    def _update_attribute(self, state, r: Reader):
        rid, name, attribute, new, expected, token = r.i64(), r.utf(), r.uuid(), r.i64(), r.i64(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        segment = self.store.segments.get(name)
        if segment is None:
            return self._no_such_segment(rid, name)
        current = segment.attributes.get(attribute, NULL_VALUE)
        if current != expected and "attribute-cas-ignored" not in self.active:
            return self._w().i64(rid).boolean(False).frame(ATTRIBUTE_UPDATED)
        self.store.set_attribute(segment, attribute, new)
        return self._w().i64(rid).boolean(True).frame(ATTRIBUTE_UPDATED)

    # ------------------------------------------------------------------------------------------ tables

    def _counted(self, r: Reader, min_item: int) -> int:
        """A list count; under the crash-on-huge-count fault, a count beyond the payload wedges the broker."""
        if "crash-on-huge-count" in self.active:
            at = r.pos
            n = r.i32()
            if n * min_item > r.left():
                self.wedged = True
                raise Close(f"wedged on count {n}")
            r.pos = at
        return r.count(min_item)

    @staticmethod
    def _key(r: Reader) -> tuple[bytes, int]:
        r.i32()  # payloadSize: 4 + len + 8, even when the version is left out
        size = r.i32()
        if size == 0:
            return b"", NO_VERSION
        return bytes(r._take(size)) if size > 0 else r._take(-1), r.i64()

    @staticmethod
    def _value(r: Reader) -> bytes:
        r.i32()
        size = r.i32()
        return b"" if size == 0 else bytes(r._take(size)) if size > 0 else r._take(-1)

    @staticmethod
    def _write_key(w: Writer, key: bytes, version: int) -> None:
        w.i32(12 + len(key)).i32(len(key))
        if key:
            w.raw(key).i64(version)

    def _write_entries(self, w: Writer, entries: list[tuple[bytes, int, bytes]]) -> Writer:
        w.i32(len(entries))
        for key, version, value in entries:
            self._write_key(w, key, version)
            w.i32(4 + len(value)).i32(len(value)).raw(value)
        return w

    def _table(self, r: Reader, operation: str):
        rid, name, token = r.i64(), r.utf(), r.utf()
        if not self._token_ok(token):
            return rid, name, self._auth_failed(rid)
        return rid, name, self._lookup(rid, name, True, operation)

    def _table_info(self, state, r: Reader):
        rid, name, table = self._table(r, "getTableSegmentInfo")
        if isinstance(table, bytes):
            return table
        count = 0 if "table-info-count-zero" in self.active else len(table.entries)
        return (self._w().i64(rid).utf(name).i64(0).i64(table.table_length).i64(count)
                .i32(table.key_length).frame(TABLE_INFO))

    def _create_table(self, state, r: Reader):
        rid, name, token = r.i64(), r.utf(), r.utf()
        _sorted, key_length, _rollover = r.opt_bool(), r.opt_i32(0), r.opt_i64(0)
        if not self._token_ok(token):
            return self._auth_failed(rid)
        if name in self.store.segments and "table-create-twice-ok" not in self.active:
            return self._w().i64(self._error_rid(rid)).utf(name).utf("").frame(ALREADY_EXISTS)
        if name not in self.store.segments:
            self.store.create(name, table=True, key_length=max(0, key_length))
        return self._simple(CREATED, rid, name)

    def _delete_table(self, state, r: Reader):
        rid, name, must_be_empty, token = r.i64(), r.utf(), r.boolean(), r.utf()
        if not self._token_ok(token):
            return self._auth_failed(rid)
        table = self._lookup(rid, name, True, "deleteTableSegment")
        if isinstance(table, bytes):
            return table
        if must_be_empty and table.entries and "delete-table-ignores-must-be-empty" not in self.active:
            return self._w().i64(rid).utf(name).utf("").frame(TABLE_NOT_EMPTY)
        self.store.delete(name)
        return self._simple(DELETED, rid, name)

    def _check_versions(self, rid: int, table: Segment, keys: list[tuple[bytes, int]]) -> bytes | None:
        """The error reply of the first key whose version condition fails, or None (notes §4.6, §7.6)."""
        for key, version in keys:
            if version == NO_VERSION:
                continue
            current = table.entries.get(key)
            if current is None and version != NOT_EXISTS:
                return self._w().i64(rid).utf(table.name).utf("").frame(KEY_DOES_NOT_EXIST)
            if current is not None and current[0] != version:
                return self._w().i64(rid).utf(table.name).utf("").frame(KEY_BAD_VERSION)
        return None

    def _update_entries(self, state, r: Reader):
        rid, name, table = self._table(r, "updateTableEntries")
        entries = []
        for _ in range(self._counted(r, 16)):
            key, version = self._key(r)
            entries.append((key, version, self._value(r)))
        r.opt_i64(-1)  # tableSegmentOffset: no conditional-on-length here
        if isinstance(table, bytes):
            return table
        error = self._check_versions(rid, table, [(k, v) for k, v, _ in entries])
        if error is not None:
            if "table-conditional-partial" in self.active:  # the batch's unconditional entries applied anyway
                self.store.put(table, [(k, value) for k, v, value in entries if v == NO_VERSION])
            return error
        versions = self.store.put(table, [(k, value) for k, _, value in entries],
                                  bump="table-version-not-bumped" not in self.active)
        if "update-versions-reversed" in self.active:
            versions.reverse()
        if "table-update-hangs" in self.active:
            return None  # applied, never answered
        w = self._w().i64(rid).i32(len(versions))
        for version in versions:
            w.i64(version)
        return w.frame(ENTRIES_UPDATED)

    def _remove_keys(self, state, r: Reader):
        rid, name, table = self._table(r, "removeTableKeys")
        keys = [self._key(r) for _ in range(self._counted(r, 8))]
        r.opt_i64(-1)
        if isinstance(table, bytes):
            return table
        error = self._check_versions(rid, table, keys)
        if error is not None:
            return error
        if "remove-keys-ignored" not in self.active:
            self.store.remove(table, [k for k, _ in keys])
        return self._simple(KEYS_REMOVED, rid, name)

    def _read_table(self, state, r: Reader):
        rid, name, table = self._table(r, "readTable")
        keys = [self._key(r) for _ in range(self._counted(r, 8))]
        if isinstance(table, bytes):
            return table
        entries = []
        for key, _ in keys:
            current = table.entries.get(key)
            if current is None and "read-table-drops-missing" in self.active:
                continue
            entries.append((key, NOT_EXISTS, b"") if current is None else (key, current[0], current[1]))  # D3
        return self._write_entries(self._w().i64(rid).utf(name), entries).frame(TABLE_READ)

    def _page(self, r: Reader, operation: str):
        rid, name, table = self._table(r, operation)
        count = r.i32()
        args = [r.blob() if r.left() >= 4 else b"" for _ in range(4)]  # token, prefix, fromKey, toKey
        if isinstance(table, bytes):
            return rid, name, table, []
        token, prefix = args[0], args[1]
        keys = sorted(k for k in table.entries if k.startswith(prefix) and (not token or k > token[1:]))
        page, budget = [], MAX_READ
        for key in keys[: max(1, count)]:
            budget -= len(key) + len(table.entries[key][1])
            if budget < 0 and page:
                break
            page.append(key)
        return rid, name, table, page

    def _continuation(self, page: list[bytes]) -> bytes:
        if "iterate-token-first-key" in self.active and page:
            return b"\x01" + page[0]
        return b"\x01" + page[-1] if page else b""  # D4: a marker byte, then the last key returned

    def _read_keys(self, state, r: Reader):
        rid, name, table, page = self._page(r, "readTableKeys")
        if isinstance(table, bytes):
            return table
        w = self._w().i64(rid).utf(name).i32(len(page))
        for key in page:
            self._write_key(w, key, table.entries[key][0])
        return w.blob(self._continuation(page)).frame(KEYS_READ)

    def _read_entries(self, state, r: Reader):
        rid, name, table, page = self._page(r, "readTableEntries")
        if isinstance(table, bytes):
            return table
        entries = [(key, *table.entries[key]) for key in page]
        w = self._write_entries(self._w().i64(rid).utf(name), entries)
        return w.blob(self._continuation(page)).frame(ENTRIES_READ)

    def _read_delta(self, state, r: Reader):
        rid, name, table = self._table(r, "readTableEntriesDelta")
        from_position, count = r.i64(), r.i32()
        if isinstance(table, bytes):
            return table
        if "delta-ignores-position" in self.active:
            from_position = 0
        changed = sorted((version, key, value) for key, (version, value) in table.entries.items()
                         if version >= from_position)
        page = changed[: max(1, count)]
        last = from_position
        if page:
            version, key, value = page[-1]
            last = version + 29 + len(key) + len(value)
        reached_end = len(page) == len(changed)
        if reached_end:
            last = max(last, table.table_length)
        w = self._write_entries(self._w().i64(rid).utf(name), [(k, v, val) for v, k, val in page])
        return w.boolean(False).boolean(reached_end).i64(last).frame(DELTA_READ)


def _without_event_headers(data: bytes) -> bytes:
    """Fault event-headers-stripped: the payloads of the whole Event frames ``data`` holds (as is otherwise)."""
    out, pos = bytearray(), 0
    while pos + 8 <= len(data):
        kind, length = _EVENT_HEADER.unpack_from(data, pos)
        if kind != 0 or length < 0 or pos + 8 + length > len(data):
            return data
        out += data[pos + 8 : pos + 8 + length]
        pos += 8 + length
    return bytes(out) if pos == len(data) else data


class LenientReader(Reader):
    """Fault invalid-utf8-accepted: a string readUTF rejects is decoded anyway (U+FFFD for the bad bytes)."""

    __slots__ = ()

    def utf(self) -> str:
        data = self._take(struct.unpack(">H", self._take(2))[0])
        try:
            return java_utf_decode(data)
        except Malformed:
            return bytes(data).decode("utf-8", "replace")
