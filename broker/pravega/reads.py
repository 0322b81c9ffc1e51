"""ReadSegment (notes §7.4): the bytes from an offset, at most ``suggestedLength`` (clamped to 8..2 MiB); a read at
or beyond the tail of an unsealed segment parks until data reaches the offset, the segment is sealed
(SegmentIsSealed) or deleted (an empty SegmentRead at the tail), with no timeout, as upstream; at most
``max_parked_reads`` per connection. Replies to parked reads interleave with later replies (the requestId tells
them apart, §7.1). D1: a read beyond a sealed end or at a negative offset answers ErrorMessage(code 0)."""

from __future__ import annotations

import asyncio
import logging

from wirecheck.broker.pravega.codes import IS_SEALED, IS_TRUNCATED, MAX_READ, MIN_READ, SEGMENT_READ
from wirecheck.broker.pravega.connection import Close, ConnectionState
from wirecheck.broker.pravega.family import CommandFamily
from wirecheck.broker.pravega.store import wait_for_change
from wirecheck.broker.pravega.wire import Reader

log = logging.getLogger("wirecheck.broker.pravega")


class ReadCommands(CommandFamily):
    def read_segment(self, state: ConnectionState, r: Reader):
        name, offset, suggested, token = r.utf(), r.i64(), r.i32(), r.utf()
        rid = r.i64() if self.faults.read_requires_request_id else r.opt_i64(-1)
        if not self.token_ok(token):
            # A16: upstream passes the read's offset as the requestId (PRP:228); the variant does as upstream
            return self.auth_failed(offset if self.variants.read_auth_offset_as_request_id else rid)
        if suggested < 1 and state.writers and self.faults.writer_read_size_closes:
            raise Close(f"suggestedLength {suggested} on a connection holding a writer")
        size = min(MAX_READ, max(0 if self.faults.suggested_length_unclamped else MIN_READ, suggested))
        answer = self._read_now(name, offset, size, rid)
        if answer is not None:
            return answer
        if self.faults.read_tail_answered:
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
            return self.no_such_segment(rid, name, -1 if self.faults.no_such_segment_offset_lost else offset)
        if segment.table:
            return self.unsupported(rid, "readSegment")
        if 0 <= offset < segment.start:
            if self.faults.truncated_read_served:
                return self._segment_read(name, offset, False, False, b"", rid)
            return self.writer().i64(rid).utf(name).i64(segment.start).utf("").i64(offset).frame(IS_TRUNCATED)
        if 0 <= offset < segment.length:
            if self.variants.short_reads:
                # variant: one short chunk, as a storage read may give (notes §7.4 Size: fewer bytes than asked)
                size = min(size, (segment.length - offset + 1) // 2)
            data = segment.read(offset + 1 if self.faults.read_skips_first_byte else offset, size)
            end = offset + len(data) == segment.length
            return self._segment_read(name, offset, end and not segment.sealed, end and segment.sealed, data, rid)
        if segment.sealed and offset == segment.length:
            if self.faults.sealed_end_not_flagged:
                return self._segment_read(name, offset, True, False, b"", rid)
            return self._segment_read(name, offset, False, True, b"", rid)
        if segment.sealed and offset > segment.length and self.faults.beyond_sealed_read_served:
            return self._segment_read(name, offset, False, True, b"", rid)
        if (segment.sealed or offset < 0) and self.variants.beyond_sealed_closes:
            raise Close(f"read at {offset} outside the segment")  # D1's other path: metadata loaded (notes §7.4)
        if segment.sealed or offset < 0:  # D1
            return self.illegal(rid, name, f"offset {offset} is outside the segment (length {segment.length})")
        return None

    def _segment_read(self, name, offset, at_tail, end, data, rid) -> bytes:
        return self.writer().utf(name).i64(offset).boolean(at_tail).boolean(end).blob(data).i64(rid).frame(SEGMENT_READ)

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
                    if self.faults.parked_read_ignores_seal:
                        continue
                    await state.send(self.writer().i64(rid).utf(name).utf("").i64(offset).frame(IS_SEALED))
                    return
                answer = self._read_now(name, offset, size, rid)
                if answer is not None:
                    await state.send(answer)
                    return
        except (ConnectionError, OSError) as exc:
            log.debug("parked read ended: %s", exc)
