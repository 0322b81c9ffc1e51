"""The Pravega segment store personality: framing, the connection rules and the dispatch table; each family of
commands is its own module (hello.py, appends.py, reads.py, segments.py, attributes.py, tables.py).

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
  attribute, SegmentIsSealed then close on the next append). A violation closes the connection (appends.py).
- Reads at or beyond the tail of an unsealed segment park until data reaches the offset, the segment is sealed
  (SegmentIsSealed) or deleted (an empty SegmentRead at the tail), with no timeout, as upstream; at most
  ``max_parked_reads`` per connection. Replies to parked reads interleave with later replies (the requestId
  tells them apart, §7.1); everything else is answered in order (reads.py).
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

from wirecheck.broker.core import BrokerConfig, Connection, FrameTimeout, IdleTimeout
from wirecheck.broker.framed import FrameShape, serve_frames
from wirecheck.broker.pravega.appends import AppendCommands
from wirecheck.broker.pravega.attributes import AttributeCommands
from wirecheck.broker.pravega.codes import (
    APPEND_BLOCK, APPEND_BLOCK_END, APPEND_DECODER, AUTH_FAILED, CONDITIONAL_APPEND, CONDITIONAL_BLOCK_END, CREATE,
    CREATE_TABLE, CREATE_TRANSIENT, DELETE, DELETE_TABLE, ERROR_MESSAGE, GET_ATTRIBUTE, GET_INFO, GET_TABLE_INFO,
    HELLO, KEEP_ALIVE, LOCATE_OFFSET, MAX_PAYLOAD, MERGE, MERGE_BATCH, NOT_REQUESTS, PADDING, READ_DELTA,
    READ_ENTRIES, READ_KEYS, READ_SEGMENT, READ_TABLE, REMOVE_KEYS, SEAL, SETUP_APPEND, TRUNCATE, UPDATE_ATTRIBUTE,
    UPDATE_ENTRIES, UPDATE_POLICY)
from wirecheck.broker.pravega.connection import Close, ConnectionState, Wedged
from wirecheck.broker.pravega.faults import PravegaFaults, PravegaVariants
from wirecheck.broker.pravega.hello import HelloCommands
from wirecheck.broker.pravega.options import PravegaOptions
from wirecheck.broker.pravega.reads import ReadCommands
from wirecheck.broker.pravega.family import CommandFamily
from wirecheck.broker.pravega.segments import SegmentCommands
from wirecheck.broker.pravega.store import Store, StoreFull
from wirecheck.broker.pravega.tables import TableCommands
from wirecheck.broker.pravega.wire import LenientReader, Malformed, Reader, Truncated

log = logging.getLogger("wirecheck.broker.pravega")

_AUTH_FAILED_CODE = struct.pack(">i", AUTH_FAILED)


class PravegaPersonality:
    name = "pravega"

    def __init__(self, config: BrokerConfig, options: PravegaOptions):
        self.faults = config.faults_as(PravegaFaults)
        self.variants = config.variants_as(PravegaVariants)  # other readings the notes permit
        self.options = options
        max_payload = min(config.max_frame, MAX_PAYLOAD) if config.max_frame else MAX_PAYLOAD
        if self.faults.oversize_waits:
            max_payload = 2**31 - 1
        if self.faults.max_payload_refused:
            max_payload = MAX_PAYLOAD - 1
        self.shape = FrameShape(header_size=8, length_at=4, length_format=">i", min_length=0,
                                max_length=max_payload)
        self.store = Store(config.data_dir, config.fsync == "batch", options.max_store_bytes, config.cache_bytes,
                           faults=self.faults)
        for name, table in [*((n, False) for n in options.segments), *((n, True) for n in options.tables)]:
            if name not in self.store.segments:  # pre-created by the operator (kept across restarts with --data-dir)
                self.store.create(name, table=table)
        self.wedged = False  # fault crash-on-huge-count: the broker reads on and answers nothing
        shared = (self.store, options, self.faults, self.variants)
        self.replies = CommandFamily(*shared)
        hello, appends, reads = HelloCommands(*shared), AppendCommands(*shared), ReadCommands(*shared)
        segments, attributes, tables = SegmentCommands(*shared), AttributeCommands(*shared), TableCommands(*shared)
        #: every request this port serves, by its wire command type code
        self.handlers = {
            HELLO: hello.hello, KEEP_ALIVE: hello.keep_alive,
            PADDING: appends.padding, SETUP_APPEND: appends.setup_append, APPEND_BLOCK: appends.append_block,
            APPEND_BLOCK_END: appends.append_block_end, CONDITIONAL_APPEND: appends.conditional_append,
            CONDITIONAL_BLOCK_END: appends.conditional_block_end, CREATE_TRANSIENT: appends.create_transient,
            READ_SEGMENT: reads.read_segment,
            GET_INFO: segments.info, CREATE: segments.create, SEAL: segments.seal, DELETE: segments.delete,
            UPDATE_POLICY: segments.update_policy, TRUNCATE: segments.truncate, LOCATE_OFFSET: segments.locate_offset,
            MERGE: segments.merge, MERGE_BATCH: segments.merge_batch,
            GET_ATTRIBUTE: attributes.get_attribute, UPDATE_ATTRIBUTE: attributes.update_attribute,
            GET_TABLE_INFO: tables.table_info, CREATE_TABLE: tables.create_table, DELETE_TABLE: tables.delete_table,
            UPDATE_ENTRIES: tables.update_entries, REMOVE_KEYS: tables.remove_keys, READ_TABLE: tables.read_table,
            READ_KEYS: tables.read_keys, READ_ENTRIES: tables.read_entries, READ_DELTA: tables.read_delta,
        }

    async def close(self) -> None:
        self.store.close()

    async def serve(self, conn: Connection) -> None:
        state = ConnectionState(conn)
        if self.faults.split_frame_dropped:
            conn.frame_timeout = 0.05  # fault: a frame in pieces must be whole within 50 ms
        reader = LenientReader if self.faults.invalid_utf8_accepted else Reader

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
                if self.faults.auth_failure_closes and replies[:4] == _AUTH_FAILED_CODE:
                    return False  # fault: a token rejection ends the connection
                return True
            except Malformed as exc:
                if self.faults.truncated_answered and isinstance(exc, Truncated):
                    await state.send(self.replies.illegal(-1, "", f"payload does not decode: {exc}"))
                    return True
                log.debug("closing: %s payload does not decode: %s", code, exc)
            except Close as exc:
                if isinstance(exc, Wedged):
                    self.wedged = True
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
        if self.faults.hello_required and code != HELLO and not state.greeted:
            raise Close(f"type {code} before Hello")
        handler = self.handlers.get(code)
        if handler is not None:
            replies = handler(state, r)
            if self.faults.trailing_bytes_close and code not in APPEND_DECODER and r.left():
                raise Close(f"{r.left()} bytes after the fields of type {code}")
            return replies
        if code in NOT_REQUESTS:
            if self.faults.reply_type_ignored:
                return None
            raise Close(f"type {code} is not a request")
        if self.faults.unknown_type_error_frame:
            message = f"unknown wire command {code}"
            return self.replies.writer().i64(-1).utf("").utf(message).i32(-1).frame(ERROR_MESSAGE)
        raise Close(f"unknown wire command {code}")
