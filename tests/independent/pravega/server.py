"""The asyncio segment-store server: framing, the append decoder, the writer state
machine and the request processor.

Structure (one ``Connection`` per TCP connection):

* ``Connection.run``        – frame splitting and the frame limit (notes 1).
* ``Connection.dispatch``   – type lookup, decoding, routing (notes 3, 8).
* ``Connection.on_setup_append`` / ``on_append_block*`` / ``on_conditional_append`` /
  ``on_padding`` – the append decoder rules (notes 5.3).
* ``Connection.store_append`` – the writer state machine and acks (notes 7.2, 7.3).
* ``Connection.on_*``       – the request processor (notes 7.4 - 7.6, 4.6).

Everything a command does happens synchronously inside ``dispatch``; only parked
reads complete later (from another connection's append, seal or delete).  Any
protocol fault raises ``Close`` and the connection is closed without an error frame.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import uuid
from dataclasses import dataclass

from . import OLDEST_COMPATIBLE_VERSION, WIRE_VERSION
from . import wire as W
from .codec import LONG_MIN, DecodeError, EncodeError
from .defects import Defects
from .store import ParkedRead, Segment, Store, StoreFull, TableEntry, now_ms

log = logging.getLogger("indep-pravega")

MAX_WIRECOMMAND_SIZE = 0x00FFFFFF  # limit on header + payload (notes 1, 9)
DEFECT_FRAME_LIMIT = 32 << 20  # what the frame-limit-ignored defect lets through
MAX_READ_SIZE = 2 << 20  # 2 MiB (notes 7.4, 9)
MIN_READ_SIZE = 8
MAX_TABLE_READ_BYTES = 2 << 20
MAX_PARKED_READS_PER_CONNECTION = 256
MAX_OUTBOUND_BUFFER = 64 << 20  # a peer that never reads its replies is cut off
MAX_CONNECTIONS = 512  # each may buffer one frame of up to 16 MiB

_HDR = struct.Struct(">iI")  # type is signed; length is read unsigned (notes 1)


class Close(Exception):
    """Close the connection without a reply (a protocol fault, notes 8)."""


@dataclass
class WriterState:
    """Per (segment, writerId) on one connection (notes 7.2)."""
    last_stored: int
    last_acked: int


@dataclass
class AdWriter:
    """The append decoder's per-writerId state (notes 5.3 rule 2)."""
    segment: str
    last_event_number: int = 0


class Server:
    def __init__(self, defects: Defects, max_store_bytes: int = 1 << 30) -> None:
        self.defects = defects
        self.store = Store(max_store_bytes)
        self.connections: set[Connection] = set()
        self._server: asyncio.base_events.Server | None = None

    async def start(self, host: str, port: int) -> int:
        self._server = await asyncio.start_server(self._accept, host, port)
        return self._server.sockets[0].getsockname()[1]

    async def serve_forever(self) -> None:
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
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
    def __init__(self, server: Server, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.store = server.store
        self.d = server.defects
        self.reader = reader
        self.writer = writer
        self.closed = False
        # append decoder state (per writerId) and the pending AppendBlock
        self.ad_writers: dict[uuid.UUID, AdWriter] = {}
        self.pending_block: W.AppendBlock | None = None
        # writer state machine (per (segment, writerId))
        self.writer_states: dict[tuple[str, uuid.UUID], WriterState] = {}
        self.parked_count = 0

    # ================================================================= I/O

    async def run(self) -> None:
        limit = DEFECT_FRAME_LIMIT if self.d.on("frame-limit-ignored") else MAX_WIRECOMMAND_SIZE
        try:
            while not self.closed:
                header = await self.reader.readexactly(8)
                code, length = _HDR.unpack(header)
                if length + 8 > limit:  # oversize or "negative" (read unsigned)
                    raise Close("frame too long")
                payload = await self.reader.readexactly(length)
                self.dispatch(code, payload)
                await self.writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Close as e:
            log.debug("closing connection: %s", e)
        except Exception:  # never let one connection take the server down
            log.exception("unexpected error; closing connection")
        finally:
            await self.close()

    def send(self, data: bytes) -> None:
        if self.closed or self.writer.is_closing():
            return
        self.writer.write(data)
        if self.writer.transport.get_write_buffer_size() > MAX_OUTBOUND_BUFFER:
            self.closed = True
            self.writer.transport.abort()

    async def close(self) -> None:
        self.closed = True
        self.store.drop_parked(self)
        try:
            if not self.writer.is_closing():
                self.writer.close()  # flushes what was written first
            await self.writer.wait_closed()
        except Exception:
            pass

    # ================================================================= dispatch

    def dispatch(self, code: int, payload: bytes) -> None:
        if code in W.NOT_ACCEPTED:
            raise Close("type %d is not a request the main port accepts" % code)
        strict = not self.d.on("utf8-4byte-accepted")
        try:
            req = W.decode_request(code, payload, strict_utf8=strict)
        except DecodeError as e:
            if str(e).startswith("no decoder") and self.d.on("unknown-type-ignored"):
                return  # DEFECT unknown-type-ignored
            raise Close("cannot decode type %d: %s" % (code, e)) from None
        if self.d.on("surplus-bytes-rejected") and req.consumed < len(payload):
            raise Close("surplus bytes")  # DEFECT surplus-bytes-rejected
        handler = self._HANDLERS[code]
        try:
            handler(self, req)
        except EncodeError as e:
            raise Close("cannot encode reply: %s" % e) from None

    # ================================================================= handshake

    def on_hello(self, req: W.Hello) -> None:
        if self.d.on("hello-versions-swapped"):  # DEFECT point
            self.send(W.hello(OLDEST_COMPATIBLE_VERSION, WIRE_VERSION))
        else:
            self.send(W.hello(WIRE_VERSION, OLDEST_COMPATIBLE_VERSION))
        if req.low > WIRE_VERSION or req.high < OLDEST_COMPATIBLE_VERSION:
            if not self.d.on("incompatible-hello-kept-open"):  # DEFECT point
                raise Close("incompatible client version %d..%d" % (req.low, req.high))

    def on_keep_alive(self, req: W.Req) -> None:
        if self.d.on("keepalive-not-echoed"):  # DEFECT point
            return
        self.send(W.keep_alive())

    # ================================================================= append decoder (5.3)

    def on_padding(self, req: W.Req) -> None:
        if self.pending_block is not None:
            raise Close("unexpected Padding following an append block")
        # a top-level Padding outside a block is ignored (rule 7)

    def on_setup_append(self, req: W.SetupAppend) -> None:
        if self.pending_block is not None:
            raise Close("unexpected SetupAppend following an append block")
        self.ad_writers[req.writer_id] = AdWriter(req.segment)  # re-targets, resets to 0
        seg = self.store.get(req.segment)
        if seg is None:
            self.send(W.no_such_segment(req.request_id, req.segment, -1))
            return
        if seg.is_table:
            self.send(W.operation_unsupported(req.request_id, "appending data"))
            return
        last = seg.attr(req.writer_id)
        self.writer_states[(req.segment, req.writer_id)] = WriterState(last, last)
        self.send(W.append_setup(req.request_id, req.segment, req.writer_id, last))

    def _ad_writer(self, writer_id: uuid.UUID) -> AdWriter:
        w = self.ad_writers.get(writer_id)
        if w is None:
            raise Close("writerId referenced before SetupAppend")
        return w

    def on_append_block(self, req: W.AppendBlock) -> None:
        if self.pending_block is not None:
            raise Close("unexpected AppendBlock following an append block")
        self._ad_writer(req.writer_id)
        self.pending_block = req

    def on_append_block_end(self, req: W.AppendBlockEnd) -> None:
        w = self._ad_writer(req.writer_id)
        if req.num_events <= 0:
            raise Close("numEvents <= 0")
        if req.last_event_number < w.last_event_number and not self.d.on("lower-event-number-accepted"):
            raise Close("last event number below the last seen")
        block, self.pending_block = self.pending_block, None
        if block is None:
            data = req.data  # shape C: sizeOfWholeEvents is ignored
        else:
            if block.writer_id != req.writer_id:
                raise Close("AppendBlockEnd for a different writer")
            if not 0 <= req.size_of_whole_events <= len(block.data):
                raise Close("sizeOfWholeEvents out of range")
            whole = block.data[:req.size_of_whole_events]
            rest = block.data[req.size_of_whole_events:]
            if not rest:
                data = whole  # AppendBlockEnd.data is dropped (rule 5)
            else:
                if len(rest) < 8:
                    raise Close("truncated trailer in append block")
                t, n = struct.unpack_from(">ii", rest)
                if n < 0 or n > len(rest) - 8:
                    raise Close("bad trailer length in append block")
                if t == W.PADDING:
                    if req.data:
                        raise Close("unexpected data in BlockEnd")
                    data = whole
                elif t == W.PARTIAL_EVENT:
                    data = whole + rest[8:8 + n] + req.data
                else:
                    raise Close("block trailer is neither PartialEvent nor Padding")
        w.last_event_number = req.last_event_number
        self.store_append(w.segment, req.writer_id, req.last_event_number, req.num_events,
                          data, req.request_id, None)

    def on_conditional_append(self, req: W.ConditionalAppend) -> None:
        if self.pending_block is not None:
            raise Close("unexpected conditional append following an append block")
        w = self._ad_writer(req.writer_id)
        if req.event_number < w.last_event_number and not self.d.on("lower-event-number-accepted"):
            raise Close("event number below the last seen")
        w.last_event_number = req.event_number
        self.store_append(w.segment, req.writer_id, req.event_number, 1, req.data,
                          req.request_id, req.expected_offset)

    # ================================================================= writer state machine (7.2)

    def store_append(self, seg_name: str, writer_id: uuid.UUID, ev: int, count: int,
                     data: bytes, rid: int, expected_offset: int | None) -> None:
        key = (seg_name, writer_id)
        state = self.writer_states.get(key)
        if state is None:
            raise Close("data from unexpected connection (no writer state)")
        if ev < state.last_stored and not self.d.on("lower-event-number-accepted"):
            raise Close("event was already appended")
        seg = self.store.get(seg_name)
        if seg is None:
            del self.writer_states[key]
            self.send(W.no_such_segment(rid, seg_name, -1))
            return
        if seg.sealed:
            del self.writer_states[key]
            if self.d.on("sealed-append-silent-close"):  # DEFECT point
                raise Close("sealed")
            off = seg.length if self.d.on("sealed-append-byte-offset") else ev  # DEFECT point
            self.send(W.segment_is_sealed(rid, seg_name, off))
            return
        if seg.attr(writer_id) != state.last_stored:
            # the writer attribute moved (another connection): InvalidEventNumber + close
            self.send(W.invalid_event_number(rid, writer_id, ev))
            if self.d.on("invalid-event-number-kept-open"):  # DEFECT point
                del self.writer_states[key]
                return
            raise Close("writer attribute CAS failed")
        if expected_offset is not None and seg.length != expected_offset \
                and not self.d.on("conditional-offset-ignored"):  # DEFECT point
            state.last_stored = state.last_acked
            self.send(W.conditional_check_failed(rid, writer_id, ev))
            return
        before = seg.length
        try:
            self.store.append(seg, data)
        except StoreFull:
            raise Close("store full") from None
        seg.set_attr(writer_id, ev)
        state.last_stored = ev
        if ev > state.last_acked or self.d.on("equal-event-number-acked") or \
                (ev < state.last_acked and self.d.on("lower-event-number-accepted")):
            prev = state.last_acked
            if prev == LONG_MIN and self.d.on("dataappended-prev-not-setup-value"):  # DEFECT
                prev = 0
            acked = ev + 1 if self.d.on("dataappended-event-off-by-one") else ev  # DEFECT
            offset = before if self.d.on("dataappended-stale-offset") else seg.length  # DEFECT
            self.send(W.data_appended(rid, writer_id, acked, prev, offset))
            state.last_acked = ev

    # ================================================================= request processor

    def rid(self, rid: int) -> int:
        """The requestId echoed in request-processor replies (7.1)."""
        if self.d.on("wrong-request-id"):  # DEFECT point
            return rid + 1 if rid < (1 << 63) - 1 else LONG_MIN
        return rid

    def _segment(self, req: W.Simple, name: str | None = None, *, offset: int = -1,
                 kind: str | None = None, op: str = "") -> Segment | None:
        """Look a segment up, replying NoSuchSegment / OperationUnsupported on failure."""
        name = req.segment if name is None else name
        seg = self.store.get(name)
        if seg is None:
            self.send(W.no_such_segment(self.rid(req.request_id), name, offset))
            return None
        if kind == "stream" and seg.is_table or kind == "table" and not seg.is_table:
            self.send(W.operation_unsupported(self.rid(req.request_id), op))
            return None
        return seg

    # ----------------------------------------------------------------- reads (7.4)

    def on_read_segment(self, req: W.Simple) -> None:
        rid, name = req.request_id, req.segment
        offset, suggested = req.extra["offset"], req.extra["suggested"]
        hi = 16 << 20 if self.d.on("read-length-unclamped") else MAX_READ_SIZE  # DEFECT point
        size = min(hi, max(MIN_READ_SIZE, suggested))
        seg = self.store.get(name)
        if seg is None:
            off = -1 if self.d.on("nosuchsegment-read-offset") else offset  # DEFECT point
            self.send(W.no_such_segment(self.rid(rid), name, off))
            return
        if seg.is_table:
            self.send(W.operation_unsupported(self.rid(rid), "readSegment"))
            return
        if offset < 0:
            self.send(W.error_message(self.rid(rid), name, "offset must be non-negative"))
            return
        if offset < seg.start:
            if self.d.on("truncated-read-served"):  # DEFECT point
                offset = seg.start
            else:
                self.send(W.segment_is_truncated(self.rid(rid), name, seg.start, offset))
                return
        if offset < seg.length:
            self.send(self._segment_read(rid, seg, offset, size))
            return
        if seg.sealed:
            if offset == seg.length:
                eos = not self.d.on("sealed-read-no-eos")  # DEFECT point
                self.send(W.segment_read(self.rid(rid), name, offset, False, eos, b""))
            else:
                self.send(W.error_message(self.rid(rid), name,
                                          "offset %d is beyond the sealed length %d" % (offset, seg.length)))
            return
        # at or beyond the tail of an unsealed segment: park it, no timeout
        if self.parked_count >= MAX_PARKED_READS_PER_CONNECTION:
            raise Close("too many parked reads on one connection")
        self.parked_count += 1
        seg.parked.append(ParkedRead(self, rid, name, offset, size,
                                     self._parked_data, self._parked_sealed, self._parked_cancel))

    def _segment_read(self, rid: int, seg: Segment, offset: int, size: int) -> bytes:
        data = seg.read(offset, size)
        end = offset + len(data)
        at_tail = end >= seg.length and not seg.sealed
        eos = end >= seg.length and seg.sealed
        return W.segment_read(self.rid(rid), seg.name, offset, at_tail, eos, data)

    def _parked_data(self, p: ParkedRead, seg: Segment) -> None:
        self.parked_count -= 1
        self.send(self._segment_read(p.request_id, seg, p.offset, p.read_size))

    def _parked_sealed(self, p: ParkedRead, seg: Segment) -> None:
        if self.d.on("longpoll-ignores-seal"):  # DEFECT point: stays parked for ever
            seg.parked.append(p)
            return
        self.parked_count -= 1
        self.send(W.segment_is_sealed(self.rid(p.request_id), p.segment, p.offset))

    def _parked_cancel(self, p: ParkedRead, seg: Segment) -> None:
        self.parked_count -= 1
        self.send(W.segment_read(self.rid(p.request_id), p.segment, p.offset, True, False, b""))

    # ----------------------------------------------------------------- segment lifecycle (7.5)

    def on_create_segment(self, req: W.Simple) -> None:
        rid, name = self.rid(req.request_id), req.segment
        if self.store.get(name) is not None:
            if self.d.on("create-twice-succeeds"):  # DEFECT point
                self.send(W.rid_seg(W.SEGMENT_CREATED, rid, name))
            else:
                self.send(W.segment_already_exists(rid, name))
            return
        self.store.create(name, target_rate=req.extra["rate"], scale_type=req.extra["scale"],
                          rollover=max(0, req.extra["rollover"]))
        self.send(W.rid_seg(W.SEGMENT_CREATED, rid, name))

    def on_create_transient_segment(self, req: W.Simple) -> None:
        parent = self._segment(req, kind="stream", op="createTransientSegment")
        if parent is None:
            return
        name = "%s#transient.%s" % (req.segment, req.extra["writer"].hex)
        if self.store.get(name) is None:
            self.store.create(name)
        self.send(W.rid_seg(W.SEGMENT_CREATED, self.rid(req.request_id), name))

    def on_get_stream_segment_info(self, req: W.Simple) -> None:
        seg = self._segment(req)
        if seg is None:
            return
        self.send(W.stream_segment_info(self.rid(req.request_id), seg.name, seg.sealed,
                                        seg.last_modified, seg.length, seg.start))

    def on_seal_segment(self, req: W.Simple) -> None:
        seg = self._segment(req)
        if seg is None:
            return
        rid = self.rid(req.request_id)
        if seg.sealed and not self.d.on("seal-twice-succeeds"):  # DEFECT point
            self.send(W.segment_is_sealed(rid, seg.name, -1))
            return
        self.store.seal(seg)
        self.send(W.rid_seg(W.SEGMENT_SEALED, rid, seg.name))

    def on_truncate_segment(self, req: W.Simple) -> None:
        seg = self._segment(req, kind="stream", op="truncateSegment")
        if seg is None:
            return
        rid, off = self.rid(req.request_id), req.extra["offset"]
        if off > seg.length and self.d.on("truncate-beyond-length"):  # DEFECT point
            off = seg.length
        if off < seg.start or off > seg.length:
            self.send(W.segment_is_truncated(rid, seg.name, seg.start, off))
            return
        self.store.truncate(seg, off)
        self.send(W.rid_seg(W.SEGMENT_TRUNCATED, rid, seg.name))

    def on_delete_segment(self, req: W.Simple) -> None:
        seg = self._segment(req)
        if seg is None:
            return
        self.store.delete(seg)
        self.send(W.rid_seg(W.SEGMENT_DELETED, self.rid(req.request_id), seg.name))

    def on_update_segment_policy(self, req: W.Simple) -> None:
        seg = self._segment(req)
        if seg is None:
            return
        seg.target_rate, seg.scale_type = req.extra["rate"], req.extra["scale"]
        self.send(W.rid_seg(W.SEGMENT_POLICY_UPDATED, self.rid(req.request_id), seg.name))

    def on_locate_offset(self, req: W.Simple) -> None:
        seg = self._segment(req, kind="stream", op="locateOffset")
        if seg is None:
            return
        # no index segment is kept: the answer is the segment length (7.5)
        self.send(W.offset_located(self.rid(req.request_id), seg.name, seg.length))

    # ----------------------------------------------------------------- attributes

    def on_get_segment_attribute(self, req: W.Simple) -> None:
        seg = self._segment(req)
        if seg is None:
            return
        self.send(W.segment_attribute(self.rid(req.request_id), seg.attr(req.extra["attr"])))

    def on_update_segment_attribute(self, req: W.Simple) -> None:
        seg = self._segment(req)
        if seg is None:
            return
        rid = self.rid(req.request_id)
        if seg.sealed:
            self.send(W.segment_is_sealed(rid, seg.name, -1))
            return
        attr = req.extra["attr"]
        ok = seg.attr(attr) == req.extra["expected"] or self.d.on("attribute-cas-ignored")  # DEFECT
        if ok:
            seg.set_attr(attr, req.extra["new"])
        self.send(W.segment_attribute_updated(rid, ok))

    # ----------------------------------------------------------------- merges

    def _merge_one(self, req: W.Simple, target: Segment, source_name: str,
                   updates: list) -> int | None:
        """Merge one source into target; returns the new target length, or None after
        an error reply has been sent."""
        rid = self.rid(req.request_id)
        source = self.store.get(source_name)
        if source is None:
            if self.store.merged_into.get(source_name) == target.name:
                return target.length  # already merged: reply success again
            self.send(W.no_such_segment(rid, source_name, -1))
            return None
        if source.is_table:
            self.send(W.operation_unsupported(rid, "mergeSegments"))
            return None
        if source is target:
            self.send(W.error_message(rid, source_name, "cannot merge a segment into itself"))
            return None
        staged = dict(target.attributes)
        for attr, typ, new, old in updates:
            cur = staged.get(attr, LONG_MIN)
            if typ == 4 and cur != old or typ == 0 and attr in staged or typ == 2 and new <= cur:
                self.send(W.segment_attribute_updated(rid, False))
                return None
            staged[attr] = cur + new if typ == 3 else new
        data = bytes(source.buf)  # [startOffset, length)
        self.store.seal(source)  # the source is sealed first (parked reads see the seal)
        self.store.delete(source)  # frees len(data) first, so the append below fits
        self.store.append(target, data)
        for attr, value in staged.items():
            target.set_attr(attr, value)
        self.store.merged_into[source_name] = target.name
        return target.length

    def _merge_target(self, req: W.Simple) -> Segment | None:
        target = self._segment(req, kind="stream", op="mergeSegments")
        if target is None:
            return None
        if target.sealed:
            self.send(W.segment_is_sealed(self.rid(req.request_id), target.name, -1))
            return None
        return target

    def on_merge_segments(self, req: W.Simple) -> None:
        target = self._merge_target(req)
        if target is None:
            return
        source = req.extra["source"]
        new_len = self._merge_one(req, target, source, req.extra["updates"])
        if new_len is not None:
            self.send(W.segments_merged(self.rid(req.request_id), target.name, source, new_len))

    def on_merge_segments_batch(self, req: W.Simple) -> None:
        target = self._merge_target(req)
        if target is None:
            return
        results = []
        for source in req.extra["sources"]:
            new_len = self._merge_one(req, target, source, [])
            if new_len is None:
                return  # the first failure is reported; earlier merges stay done
            results.append((source, new_len))
        self.send(W.segments_batch_merged(self.rid(req.request_id), target.name, results))

    # ----------------------------------------------------------------- tables (4.6)

    def on_create_table_segment(self, req: W.Simple) -> None:
        rid, name = self.rid(req.request_id), req.segment
        if self.store.get(name) is not None:
            if self.d.on("create-twice-succeeds"):  # DEFECT point
                self.send(W.rid_seg(W.SEGMENT_CREATED, rid, name))
            else:
                self.send(W.segment_already_exists(rid, name))
            return
        if req.extra["key_length"] < 0:
            self.send(W.error_message(rid, name, "keyLength must be non-negative"))
            return
        self.store.create(name, is_table=True, key_length=req.extra["key_length"],
                          rollover=max(0, req.extra["rollover"]))
        self.send(W.rid_seg(W.SEGMENT_CREATED, rid, name))

    def on_delete_table_segment(self, req: W.Simple) -> None:
        seg = self._segment(req, kind="table", op="deleteTableSegment")
        if seg is None:
            return
        rid = self.rid(req.request_id)
        if req.extra["must_be_empty"] and seg.entries:
            self.send(W.table_error(W.TABLE_SEGMENT_NOT_EMPTY, rid, seg.name))
            return
        self.store.delete(seg)
        self.send(W.rid_seg(W.SEGMENT_DELETED, rid, seg.name))

    def on_get_table_segment_info(self, req: W.Simple) -> None:
        seg = self._segment(req, kind="table", op="getTableSegmentInfo")
        if seg is None:
            return
        self.send(W.table_segment_info(self.rid(req.request_id), seg.name, 0, seg.length,
                                       len(seg.entries), seg.key_length))

    def _table_for_write(self, req: W.Simple, op: str) -> Segment | None:
        seg = self._segment(req, kind="table", op=op)
        if seg is None:
            return None
        rid = self.rid(req.request_id)
        if seg.sealed:
            self.send(W.segment_is_sealed(rid, seg.name, -1))
            return None
        off = req.extra["table_offset"]
        if off != -1 and off != seg.length:
            self.send(W.segment_is_truncated(rid, seg.name, seg.length, off))
            return None
        return seg

    def _check_key(self, req: W.Simple, seg: Segment, key: bytes) -> bool:
        if seg.key_length and len(key) != seg.key_length:
            self.send(W.error_message(self.rid(req.request_id), seg.name,
                                      "key length %d, table requires %d" % (len(key), seg.key_length)))
            return False
        return True

    def _check_version(self, req: W.Simple, seg: Segment, current: TableEntry | None,
                       version: int) -> bool:
        """Key-version conditions; sends the error reply and returns False on failure."""
        if version == W.NO_VERSION or self.d.on("table-version-unchecked"):  # DEFECT point
            return True
        rid = self.rid(req.request_id)
        if version == W.NOT_EXISTS:
            if current is not None:
                self.send(W.table_error(W.TABLE_KEY_BAD_VERSION, rid, seg.name))
                return False
            return True
        if current is None:
            self.send(W.table_error(W.TABLE_KEY_DOES_NOT_EXIST, rid, seg.name))
            return False
        if current.version != version:
            self.send(W.table_error(W.TABLE_KEY_BAD_VERSION, rid, seg.name))
            return False
        return True

    def on_update_table_entries(self, req: W.Simple) -> None:
        seg = self._table_for_write(req, "updateTableEntries")
        if seg is None:
            return
        staged: dict[bytes, TableEntry | None] = {}
        pos = seg.length
        versions = []
        for key, version, value in req.extra["entries"]:
            if not self._check_key(req, seg, key):
                return
            current = staged[key] if key in staged else seg.entries.get(key)
            if not self._check_version(req, seg, current, version):
                return
            staged[key] = TableEntry(pos, value)
            versions.append(pos)
            pos += self.store.entry_size(key, value)
        self._commit_table(seg, staged, pos)
        self.send(W.table_entries_updated(self.rid(req.request_id), versions))

    def on_remove_table_keys(self, req: W.Simple) -> None:
        seg = self._table_for_write(req, "removeTableKeys")
        if seg is None:
            return
        staged: dict[bytes, TableEntry | None] = {}
        pos = seg.length
        for key, version in req.extra["keys"]:
            if not self._check_key(req, seg, key):
                return
            current = staged[key] if key in staged else seg.entries.get(key)
            if not self._check_version(req, seg, current, version):
                return
            staged[key] = None
            pos += self.store.entry_size(key, b"")
        self._commit_table(seg, staged, pos)
        self.send(W.rid_seg(W.TABLE_KEYS_REMOVED, self.rid(req.request_id), seg.name))

    def _commit_table(self, seg: Segment, staged: dict, new_length: int) -> None:
        grow = new_length - seg.table_length
        if self.store.total_bytes + grow > self.store.max_bytes:
            raise Close("store full")
        for key, entry in staged.items():
            old = seg.entries.pop(key, None)
            if old is not None:
                self.store.total_bytes -= len(key) + len(old.value)
            if entry is not None:
                seg.entries[key] = entry
                self.store.total_bytes += len(key) + len(entry.value)
        seg.table_length = new_length
        seg.last_modified = now_ms()

    def on_read_table(self, req: W.Simple) -> None:
        seg = self._segment(req, kind="table", op="readTable")
        if seg is None:
            return
        missing = LONG_MIN if self.d.on("table-missing-key-version") else W.NOT_EXISTS  # DEFECT
        out = []
        for key, _version in req.extra["keys"]:
            e = seg.entries.get(key)
            out.append((key, e.version, e.value) if e else (key, missing, b""))
        self.send(W.table_read(self.rid(req.request_id), seg.name, out))

    def _iterate(self, req: W.Simple, seg: Segment) -> tuple[list[bytes], bytes] | None:
        token = req.extra["token"]
        after = None
        if token:
            if token[:1] != b"\x01":
                self.send(W.error_message(self.rid(req.request_id), seg.name, "invalid continuation token"))
                return None
            after = token[1:]
        prefix, lo, hi = req.extra["prefix"], req.extra["from"], req.extra["to"]
        count = max(1, req.extra["count"])
        keys, size = [], 0
        for k in sorted(seg.entries):
            if after is not None and k <= after or lo and k < lo or hi and k > hi:
                continue
            if prefix and not k.startswith(prefix):
                continue
            e = seg.entries[k]
            keys.append(k)
            size += 24 + len(k) + (len(e.value) if req.code == W.READ_TABLE_ENTRIES else 0)
            if len(keys) >= count or size >= MAX_TABLE_READ_BYTES:
                break
        new_token = b"\x01" + keys[-1] if keys else token
        return keys, new_token

    def on_read_table_keys(self, req: W.Simple) -> None:
        seg = self._segment(req, kind="table", op="readTableKeys")
        if seg is None:
            return
        it = self._iterate(req, seg)
        if it is not None:
            keys, token = it
            self.send(W.table_keys_read(self.rid(req.request_id), seg.name,
                                        [(k, seg.entries[k].version) for k in keys], token))

    def on_read_table_entries(self, req: W.Simple) -> None:
        seg = self._segment(req, kind="table", op="readTableEntries")
        if seg is None:
            return
        it = self._iterate(req, seg)
        if it is not None:
            keys, token = it
            self.send(W.table_entries_read(
                self.rid(req.request_id), seg.name,
                [(k, seg.entries[k].version, seg.entries[k].value) for k in keys], token))

    def on_read_table_entries_delta(self, req: W.Simple) -> None:
        seg = self._segment(req, kind="table", op="readTableEntriesDelta")
        if seg is None:
            return
        rid, start = self.rid(req.request_id), req.extra["from"]
        if start < 0 or start > seg.length:
            self.send(W.error_message(rid, seg.name, "fromPosition %d out of range" % start))
            return
        live = sorted((e.version, k) for k, e in seg.entries.items() if e.version >= start)
        count = max(1, req.extra["count"])
        out, size = [], 0
        for _version, k in live:
            e = seg.entries[k]
            out.append((k, e.version, e.value))
            size += 24 + len(k) + len(e.value)
            if len(out) >= count or size >= MAX_TABLE_READ_BYTES:
                break
        reached_end = len(out) == len(live)
        if reached_end:
            last = seg.length
        else:
            k = out[-1][0]
            last = out[-1][1] + self.store.entry_size(k, seg.entries[k].value)
        self.send(W.table_entries_delta_read(rid, seg.name, out, False, reached_end, last))

    _HANDLERS = {
        W.HELLO: on_hello,
        W.KEEP_ALIVE: on_keep_alive,
        W.PADDING: on_padding,
        W.SETUP_APPEND: on_setup_append,
        W.APPEND_BLOCK: on_append_block,
        W.APPEND_BLOCK_END: on_append_block_end,
        W.CONDITIONAL_APPEND: on_conditional_append,
        W.CONDITIONAL_BLOCK_END: on_conditional_append,
        W.READ_SEGMENT: on_read_segment,
        W.GET_STREAM_SEGMENT_INFO: on_get_stream_segment_info,
        W.CREATE_SEGMENT: on_create_segment,
        W.CREATE_TRANSIENT_SEGMENT: on_create_transient_segment,
        W.SEAL_SEGMENT: on_seal_segment,
        W.TRUNCATE_SEGMENT: on_truncate_segment,
        W.DELETE_SEGMENT: on_delete_segment,
        W.UPDATE_SEGMENT_POLICY: on_update_segment_policy,
        W.LOCATE_OFFSET: on_locate_offset,
        W.GET_SEGMENT_ATTRIBUTE: on_get_segment_attribute,
        W.UPDATE_SEGMENT_ATTRIBUTE: on_update_segment_attribute,
        W.MERGE_SEGMENTS: on_merge_segments,
        W.MERGE_SEGMENTS_BATCH: on_merge_segments_batch,
        W.CREATE_TABLE_SEGMENT: on_create_table_segment,
        W.DELETE_TABLE_SEGMENT: on_delete_table_segment,
        W.GET_TABLE_SEGMENT_INFO: on_get_table_segment_info,
        W.UPDATE_TABLE_ENTRIES: on_update_table_entries,
        W.REMOVE_TABLE_KEYS: on_remove_table_keys,
        W.READ_TABLE: on_read_table,
        W.READ_TABLE_KEYS: on_read_table_keys,
        W.READ_TABLE_ENTRIES: on_read_table_entries,
        W.READ_TABLE_ENTRIES_DELTA: on_read_table_entries_delta,
    }
