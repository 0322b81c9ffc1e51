"""Segment attributes (notes §4.3, §7.5): GetSegmentAttribute, and UpdateSegmentAttribute with compare-and-set."""

from __future__ import annotations

from wirecheck.broker.pravega.codes import ATTRIBUTE, ATTRIBUTE_UPDATED
from wirecheck.broker.pravega.connection import ConnectionState
from wirecheck.broker.pravega.family import CommandFamily
from wirecheck.broker.pravega.store import NULL_VALUE
from wirecheck.broker.pravega.wire import Reader


class AttributeCommands(CommandFamily):
    def get_attribute(self, state: ConnectionState, r: Reader):
        rid, name, attribute, token = r.i64(), r.utf(), r.uuid(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        segment = self.store.segments.get(name)
        if segment is None:
            return self.no_such_segment(rid, name)
        unset = 0 if self.faults.unset_attribute_zero else NULL_VALUE
        return self.writer().i64(rid).i64(segment.attributes.get(attribute, unset)).frame(ATTRIBUTE)

    def update_attribute(self, state: ConnectionState, r: Reader):
        rid, name, attribute, new, expected, token = r.i64(), r.utf(), r.uuid(), r.i64(), r.i64(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        segment = self.store.segments.get(name)
        if segment is None:
            return self.no_such_segment(rid, name)
        current = segment.attributes.get(attribute, NULL_VALUE)
        if current != expected and not self.faults.attribute_cas_ignored:
            return self.writer().i64(rid).boolean(False).frame(ATTRIBUTE_UPDATED)
        self.store.set_attribute(segment, attribute, new)
        return self.writer().i64(rid).boolean(True).frame(ATTRIBUTE_UPDATED)
