"""The stream segment lifecycle (notes §7.5): GetStreamSegmentInfo, CreateSegment, SealSegment, DeleteSegment,
UpdateSegmentPolicy, TruncateSegment, LocateOffset, MergeSegments and MergeSegmentsBatch. D2: a merge seals an
unsealed source first."""

from __future__ import annotations

import struct

from wirecheck.broker.pravega.codes import (
    ALREADY_EXISTS, ATTRIBUTE_UPDATED, BATCH_MERGED, CREATED, DELETED, INFO, IS_SEALED, IS_TRUNCATED, MERGED,
    OFFSET_LOCATED, POLICY_UPDATED, SEALED, TRUNCATED)
from wirecheck.broker.pravega.connection import Close, ConnectionState
from wirecheck.broker.pravega.family import CommandFamily
from wirecheck.broker.pravega.store import NULL_VALUE
from wirecheck.broker.pravega.wire import Reader


class SegmentCommands(CommandFamily):
    def info(self, state: ConnectionState, r: Reader):
        rid, name, token = r.i64(), r.utf(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        segment = self.store.segments.get(name)
        if segment is None:
            return self.no_such_segment(rid, name)
        if self.faults.pipelined_info_coalesced and _coalesced(state, name):
            return None
        start = 0 if self.faults.info_start_offset_zero else segment.start
        reply = (self.writer().i64(rid).utf(name).boolean(True).boolean(segment.sealed).boolean(False)
                 .i64(segment.modified_ms).i64(segment.length).i64(start).frame(INFO))
        if self.faults.info_length_short:
            return reply[:4] + struct.pack(">i", len(reply) - 9) + reply[8:]  # the header claims a byte too few
        return reply

    def create(self, state: ConnectionState, r: Reader):
        rid, name, rate, scale, token, _rollover = r.i64(), r.utf(), r.i32(), r.i8(), r.utf(), r.opt_i64(0)
        if not self.token_ok(token):
            return self.auth_failed(rid)
        if name in self.store.segments and not self.faults.create_twice_ok:
            return self.writer().i64(self.error_rid(rid)).utf(name).utf("").frame(ALREADY_EXISTS)
        if name not in self.store.segments:
            segment = self.store.create(name)
            segment.rate, segment.scale_type = rate, scale
            if self.faults.created_sealed:
                self.store.seal(segment)
        return self.simple(CREATED, rid, name)

    def seal(self, state: ConnectionState, r: Reader):
        rid, name, token = r.i64(), r.utf(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        if self.faults.seal_missing_error_message and name not in self.store.segments:
            return self.illegal(rid, name, "no such segment")
        found = self.lookup(rid, name, False, "sealSegment")
        if isinstance(found, bytes):
            return found
        if found.sealed and not self.faults.seal_twice_ok:
            return self.writer().i64(rid).utf(name).utf("").i64(-1).frame(IS_SEALED)
        self.store.seal(found)
        return self.simple(SEALED, rid, name)

    def delete(self, state: ConnectionState, r: Reader):
        rid, name, token = r.i64(), r.utf(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        if name not in self.store.segments:
            return self.no_such_segment(rid, name)
        if not self.faults.delete_keeps_segment:
            self.store.delete(name)
        return self.simple(DELETED, rid, name)

    def update_policy(self, state: ConnectionState, r: Reader):
        rid, name, rate, scale, token = r.i64(), r.utf(), r.i32(), r.i8(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        found = self.lookup(rid, name, False, "updateSegmentPolicy")
        if isinstance(found, bytes):
            return found
        if self.faults.policy_unsupported:
            return self.unsupported(rid, "updateSegmentPolicy")
        found.rate, found.scale_type = rate, scale
        return self.simple(POLICY_UPDATED, rid, name)

    def truncate(self, state: ConnectionState, r: Reader):
        rid, name, offset, token = r.i64(), r.utf(), r.i64(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        if name not in self.store.segments:  # the answer carries the offset asked for (PravegaRequestProcessor.java
            return self.no_such_segment(rid, name, offset)  # truncateSegment, 605-618 at v0.13.0)
        found = self.lookup(rid, name, False, "truncateSegment")
        if isinstance(found, bytes):
            return found
        if offset < 0 and self.variants.negative_truncate_closes:
            raise Close(f"truncation at the negative offset {offset}")  # variant: as Pravega 0.13.0
        if self.faults.truncate_past_length_ok and offset > found.length:
            return self.simple(TRUNCATED, rid, name)  # answered, start offset unmoved
        if not found.start <= offset <= found.length:
            return self.writer().i64(rid).utf(name).i64(found.start).utf("").i64(offset).frame(IS_TRUNCATED)
        if offset > found.start:
            self.store.truncate(found, offset)
        return self.simple(TRUNCATED, rid, name)

    def locate_offset(self, state: ConnectionState, r: Reader):
        rid, name, _target, token = r.i64(), r.utf(), r.i64(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        found = self.lookup(rid, name, False, "locateOffset")
        if isinstance(found, bytes):
            return found
        located = found.length + 1 if self.faults.locate_offset_past_length else found.length
        return self.writer().i64(rid).utf(name).i64(located).frame(OFFSET_LOCATED)  # no index segment (§7.5)

    def merge(self, state: ConnectionState, r: Reader):
        rid, target_name, source_name, token = r.i64(), r.utf(), r.utf(), r.utf()
        updates = []
        if r.left() > 0:
            for _ in range(r.count(33)):
                updates.append((r.uuid(), r.i8(), r.i64(), r.i64()))
        if not self.token_ok(token):
            return self.auth_failed(rid)
        # a merge's error names the source, whichever segment it is about (PravegaRequestProcessor.java mergeSegments,
        # 489-535 at v0.13.0: every failure goes to handleException with mergeSegments.getSource()); a sealed
        # target refuses before a merge into itself is looked at (a sealed segment merged into itself: SegmentIsSealed)
        target = self.lookup(rid, target_name, False, "mergeSegments")
        if isinstance(target, bytes):
            return self.no_such_segment(rid, source_name) if target_name not in self.store.segments else target
        source = self.lookup(rid, source_name, False, "mergeSegments")
        if isinstance(source, bytes):
            return source
        if target.sealed:
            return self.writer().i64(rid).utf(source_name).utf("").i64(-1).frame(IS_SEALED)
        if source is target:
            return self.illegal(rid, target_name, "a segment cannot be merged into itself")
        for attribute, kind, _new, old in updates:  # 4 ReplaceIfEquals must match; 1 Replace always applies
            if kind == 4 and target.attributes.get(attribute, NULL_VALUE) != old:
                return self.writer().i64(rid).boolean(False).frame(ATTRIBUTE_UPDATED)
        if not source.sealed:
            self.store.seal(source)  # D2
        for attribute, _kind, new, _old in updates:
            self.store.set_attribute(target, attribute, new)
        before = target.length
        length = self.store.merge(target, source)
        if self.faults.merge_offset_before:
            length = before
        return self.writer().i64(rid).utf(target_name).utf(source_name).i64(length).frame(MERGED)

    def merge_batch(self, state: ConnectionState, r: Reader):
        rid, target_name = r.i64(), r.utf()
        sources = [r.utf() for _ in range(r.count(2))]
        token = r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        target = self.lookup(rid, target_name, False, "mergeSegmentsBatch")
        if isinstance(target, bytes):
            return target
        found = []
        for name in sources:
            source = self.lookup(rid, name, False, "mergeSegmentsBatch")
            if isinstance(source, bytes):
                return source
            if source is target or source in found:
                return self.illegal(rid, name, "a segment cannot be merged into itself or twice")
            found.append(source)
        w = self.writer().i64(rid).utf(target_name).i32(len(found))
        for source in found:
            if not source.sealed:
                self.store.seal(source)
            before = target.length
            after = self.store.merge(target, source)
            w.utf(source.name).i64(before if self.faults.merge_batch_offset_before else after)
        return w.frame(BATCH_MERGED)


def _coalesced(state: ConnectionState, name: str) -> bool:
    """Fault pipelined-info-coalesced: an info request for the segment the previous one named, when that one had
    more bytes queued behind it (the client sent on without waiting for its answer), is folded into it (left
    unanswered). Queued bytes, not a time window: a client that waits for each answer never meets it."""
    queued = len(state.conn.reader._buffer) > 0  # asyncio.StreamReader has no public peek
    last, state.last_info = state.last_info, (name, queued)
    return last is not None and last[0] == name and last[1]
