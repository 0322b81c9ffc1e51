"""The append path: the append decoder (per connection, per writerId: SetupAppend first, one open AppendBlock, its
AppendBlockEnd with a PartialEvent or Padding trailer, numEvents > 0, event numbers never lower; notes §5.3), the
writer state (acks strictly increasing, InvalidEventNumber and a close when another connection moved the
writer's attribute, SegmentIsSealed then a close on the next append; §7.2), conditional appends (§7.3) and
CreateTransientSegment. A violation closes the connection."""

from __future__ import annotations

import struct

from wirecheck.broker.pravega.codes import (
    APPEND_BLOCK, APPEND_SETUP, CONDITIONAL_APPEND, CONDITIONAL_BLOCK_END, CONDITIONAL_CHECK_FAILED, CREATED,
    DATA_APPENDED, INVALID_EVENT_NUMBER, IS_SEALED, PADDING, PARTIAL_EVENT, SETUP_APPEND)
from wirecheck.broker.pravega.connection import Close, ConnectionState, WriterState
from wirecheck.broker.pravega.family import CommandFamily
from wirecheck.broker.pravega.store import NULL_VALUE
from wirecheck.broker.pravega.wire import Reader

_EVENT_HEADER = struct.Struct(">ii")


class AppendCommands(CommandFamily):
    # -- the append decoder's commands

    def padding(self, state: ConnectionState, r: Reader):
        _no_open_block(state, PADDING)
        if self.faults.top_level_padding_closes:
            raise Close("top-level Padding")
        return None  # a top-level Padding is ignored (AD:113-115)

    def setup_append(self, state: ConnectionState, r: Reader):
        _no_open_block(state, SETUP_APPEND)
        rid, writer, name, token = r.i64(), r.uuid(), r.utf(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        if self.faults.setup_missing_closes and name not in self.store.segments:
            raise Close(f"SetupAppend on missing segment {name}")
        found = self.lookup(rid, name, False, "setupAppend")
        if isinstance(found, bytes):
            return found
        last = found.attributes.get(writer, NULL_VALUE)
        state.writers[writer] = WriterState(name, last)
        return self.writer().i64(rid).utf(name).uuid(writer).i64(self._setup_reported(last)).frame(APPEND_SETUP)

    def append_block(self, state: ConnectionState, r: Reader):
        _no_open_block(state, APPEND_BLOCK)
        writer, ws = self._writer_state(state, r)
        if ws is not None:
            state.block = (writer, r.rest())
        return None

    def append_block_end(self, state: ConnectionState, r: Reader):
        writer, ws = self._writer_state(state, r)
        if ws is None:
            return None
        size, tail, count, last, rid = r.i32(), r.blob(lenient=True), r.i32(), r.i64(), r.opt_i64(-1)
        if count <= 0 and not self.faults.num_events_unchecked:
            raise Close(f"numEvents {count}")
        if last < ws.decoder_last and not self.faults.lower_event_number_acked:
            raise Close(f"event number {last} below {ws.decoder_last}")
        data = self._block_data(state, writer, size, tail)
        ws.decoder_last = last
        return self._append(state, writer, ws, last, data, rid, None, count)

    def conditional_append(self, state: ConnectionState, r: Reader):
        _no_open_block(state, CONDITIONAL_APPEND)
        return self._conditional(state, r, CONDITIONAL_APPEND)

    def conditional_block_end(self, state: ConnectionState, r: Reader):
        _no_open_block(state, CONDITIONAL_BLOCK_END)
        return self._conditional(state, r, CONDITIONAL_BLOCK_END)

    def _conditional(self, state: ConnectionState, r: Reader, code: int):
        writer, ws = self._writer_state(state, r)
        if ws is None:
            return None
        event_number, expected = r.i64(), r.i64()
        if code == CONDITIONAL_APPEND:
            kind, length = r.i32(), r.i32()
            if kind != 0 and not self.faults.conditional_event_type_unchecked:
                raise Close(f"nested event type {kind}")
            data = _EVENT_HEADER.pack(0, length) + r._take(length)
            rid = r.opt_i64(-1)
        else:
            data, rid = r.blob(lenient=True), r.i64()
        if event_number < ws.decoder_last and not self.faults.lower_event_number_acked:
            raise Close(f"event number {event_number} below {ws.decoder_last}")
        ws.decoder_last = event_number
        if expected < 0 and self.variants.negative_conditional_appends:
            expected = None  # variant: a negative expected offset is no condition, as Pravega 0.13.0
        return self._append(state, writer, ws, event_number, data, rid, expected)

    def _writer_state(self, state: ConnectionState, r: Reader) -> tuple[bytes, WriterState | None]:
        """The writerId the command names and its state; None when the fault ignores an unknown writer."""
        writer = r.uuid()
        ws = state.writers.get(writer)
        if ws is None and not self.faults.unset_writer_ignored:
            raise Close("writer referenced before SetupAppend")
        return writer, ws

    def _block_data(self, state: ConnectionState, writer: bytes, size: int, tail: bytes) -> bytes:
        """The bytes an AppendBlockEnd appends (notes §5.3 rule 4)."""
        if state.block is None:
            if self.faults.standalone_size_checked and not 0 <= size <= len(tail):
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
            if self.faults.padding_trailer_rejected:
                raise Close("a block ended by a Padding trailer")
            if tail:
                raise Close("data in AppendBlockEnd after a Padding trailer")
            return block[:size]
        if kind != PARTIAL_EVENT:
            raise Close(f"block trailer of type {kind}")
        partial = b"" if self.faults.partial_event_dropped else rest[8 : 8 + length]
        return block[:size] + partial + tail

    def _setup_reported(self, last: int) -> int:
        """The lastEventNumber AppendSetup carries (the writer's state keeps the true one)."""
        if self.faults.setup_new_writer_zero and last == NULL_VALUE:
            return 0
        if self.faults.resetup_returns_min:
            return NULL_VALUE
        return last

    # -- the writer state: store, acknowledge or refuse

    def _append(self, state: ConnectionState, writer: bytes, ws: WriterState, event_number: int, data: bytes,
                rid: int, expected: int | None, count: int = 1):
        if ws.dropped:
            raise Close("data from a writer whose segment was sealed or deleted")
        segment = self.store.segments.get(ws.segment)
        if segment is None or segment.table:
            ws.dropped = True
            return self.no_such_segment(rid, ws.segment)
        if event_number < ws.last_stored and not self.faults.lower_event_number_acked:
            raise Close(f"event {event_number} was already appended (last {ws.last_stored})")
        if event_number == ws.last_stored and self.variants.equal_event_number_closes:
            # variant: an equal event number treated as a resend, like a lower one (notes §7.2, A24: SHOULD)
            raise Close(f"event {event_number} equals the last stored")
        if segment.sealed and not self.faults.sealed_accepts_appends:
            ws.dropped = True
            # fault sealed-append-offset-is-length: the reply's offset is the segment's length, not the event number
            offset = segment.length if self.faults.sealed_append_offset_is_length else event_number
            return self.writer().i64(rid).utf(ws.segment).utf("").i64(offset).frame(IS_SEALED)
        if segment.attributes.get(writer, NULL_VALUE) != ws.last_stored and not self.faults.writer_moved_unchecked:
            # another connection moved this writer on: the store's compare-and-set fails (AP:479-482)
            return Close(self.writer().uuid(writer).i64(rid).utf("").i64(event_number).frame(INVALID_EVENT_NUMBER))
        if expected is not None and expected != segment.length and not self.faults.conditional_offset_ignored:
            return self.writer().uuid(writer).i64(event_number).i64(rid).frame(CONDITIONAL_CHECK_FAILED)
        before = segment.length
        if self.faults.event_headers_stripped:
            data = _without_event_headers(data)
        after = self.store.append(segment, data, writer, event_number)
        ws.last_stored = event_number
        if event_number == ws.last_acked:
            return None  # an equal event number is stored, not acknowledged again (AP:366-367)
        previous = event_number - 1 if self.faults.ack_previous_wrong else ws.last_acked
        offset = before if self.faults.write_offset_before_append else after
        ws.last_acked = event_number
        if self.faults.ack_first_event_number:
            event_number -= count - 1  # the block's first event number, not its last
        return self.writer().uuid(writer).i64(event_number).i64(previous).i64(rid).i64(offset).frame(DATA_APPENDED)

    # -- transient segments

    def create_transient(self, state: ConnectionState, r: Reader):
        rid, writer, parent, token = r.i64(), r.uuid(), r.utf(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        found = self.lookup(rid, parent, False, "createTransientSegment")
        if isinstance(found, bytes):
            return found
        name = f"{parent}#transient.{writer.hex()}"
        if name not in self.store.segments:
            self.store.create(name)
        if self.faults.transient_name_is_parent:
            return self.simple(CREATED, rid, parent)
        return self.simple(CREATED, rid, name)


def _no_open_block(state: ConnectionState, code: int) -> None:
    """Only its AppendBlockEnd may follow an open AppendBlock (AD)."""
    if state.block is not None:
        raise Close(f"type {code} following an open append block")


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
