"""Table segments (notes §4.6, §7.6): versioned keys; create, info, delete, update and remove with version
conditions, read, key and entry iteration, delta reads.

D3 a missing key read with ReadTable comes back with version -1 and an empty value. D4 iteration orders keys by
their bytes; the continuation token is a marker byte and the last key returned. D5 ReadTableEntriesDelta returns
entries whose version is at or after ``fromPosition``, in version order, and ``lastPosition`` is the table length
after the last one returned.
"""

from __future__ import annotations

from wirecheck.broker.pravega.codes import (
    ALREADY_EXISTS, CREATED, DELETED, DELTA_READ, ENTRIES_READ, ENTRIES_UPDATED, KEY_BAD_VERSION, KEY_DOES_NOT_EXIST,
    KEYS_READ, KEYS_REMOVED, MAX_READ, NO_VERSION, TABLE_INFO, TABLE_NOT_EMPTY, TABLE_READ)
from wirecheck.broker.pravega.connection import ConnectionState, Wedged
from wirecheck.broker.pravega.family import CommandFamily
from wirecheck.broker.pravega.store import ENTRY_OVERHEAD, NOT_EXISTS, Segment
from wirecheck.broker.pravega.wire import Reader, Writer


class TableCommands(CommandFamily):
    def table_info(self, state: ConnectionState, r: Reader):
        rid, name, table = self._table(r, "getTableSegmentInfo")
        if isinstance(table, bytes):
            return table
        count = 0 if self.faults.table_info_count_zero else len(table.entries)
        if self.variants.table_info_count_converges:  # the count the index held at the last ask, then the new one
            answered = self.__dict__.setdefault("_info_counts", {})
            count, answered[name] = answered.get(name, 0), count
        return (self.writer().i64(rid).utf(name).i64(0).i64(table.table_length).i64(count)
                .i32(table.key_length).frame(TABLE_INFO))

    def create_table(self, state: ConnectionState, r: Reader):
        rid, name, token = r.i64(), r.utf(), r.utf()
        _sorted, key_length, _rollover = r.opt_bool(), r.opt_i32(0), r.opt_i64(0)
        if not self.token_ok(token):
            return self.auth_failed(rid)
        if name in self.store.segments and not self.faults.table_create_twice_ok:
            return self.writer().i64(self.error_rid(rid)).utf(name).utf("").frame(ALREADY_EXISTS)
        if name not in self.store.segments:
            self.store.create(name, table=True, key_length=max(0, key_length))
        return self.simple(CREATED, rid, name)

    def delete_table(self, state: ConnectionState, r: Reader):
        rid, name, must_be_empty, token = r.i64(), r.utf(), r.boolean(), r.utf()
        if not self.token_ok(token):
            return self.auth_failed(rid)
        table = self.lookup(rid, name, True, "deleteTableSegment")
        if isinstance(table, bytes):
            return table
        if must_be_empty and table.entries and not self.faults.delete_table_ignores_must_be_empty:
            return self.writer().i64(rid).utf(name).utf("").frame(TABLE_NOT_EMPTY)
        self.store.delete(name)
        return self.simple(DELETED, rid, name)

    def update_entries(self, state: ConnectionState, r: Reader):
        rid, name, table = self._table(r, "updateTableEntries")
        entries = []
        for _ in range(self._counted(r, 16)):
            key, version = _key(r)
            entries.append((key, version, _value(r)))
        r.opt_i64(-1)  # tableSegmentOffset: no conditional-on-length here
        if isinstance(table, bytes):
            return table
        error = self._check_versions(rid, table, [(k, v) for k, v, _ in entries])
        if error is not None:
            if self.faults.table_conditional_partial:  # the batch's unconditional entries applied anyway
                self.store.put(table, [(k, value) for k, v, value in entries if v == NO_VERSION])
            return error
        versions = self.store.put(table, [(k, value) for k, _, value in entries],
                                  bump=not self.faults.table_version_not_bumped)
        if self.faults.update_versions_reversed:
            versions.reverse()
        if self.faults.table_update_hangs:
            return None  # applied, never answered
        w = self.writer().i64(rid).i32(len(versions))
        for version in versions:
            w.i64(version)
        return w.frame(ENTRIES_UPDATED)

    def remove_keys(self, state: ConnectionState, r: Reader):
        rid, name, table = self._table(r, "removeTableKeys")
        keys = [_key(r) for _ in range(self._counted(r, 8))]
        r.opt_i64(-1)
        if isinstance(table, bytes):
            return table
        error = self._check_versions(rid, table, keys)
        if error is not None:
            return error
        if not self.faults.remove_keys_ignored:
            self.store.remove(table, [k for k, _ in keys])
        return self.simple(KEYS_REMOVED, rid, name)

    def read_table(self, state: ConnectionState, r: Reader):
        rid, name, table = self._table(r, "readTable")
        keys = [_key(r) for _ in range(self._counted(r, 8))]
        if isinstance(table, bytes):
            return table
        entries = []
        for key, _ in keys:
            current = table.entries.get(key)
            if current is None and self.faults.read_table_drops_missing:
                continue
            entries.append((key, NOT_EXISTS, b"") if current is None else (key, current[0], current[1]))  # D3
        return _write_entries(self.writer().i64(rid).utf(name), entries).frame(TABLE_READ)

    def read_keys(self, state: ConnectionState, r: Reader):
        rid, name, table, page = self._page(r, "readTableKeys")
        if isinstance(table, bytes):
            return table
        w = self.writer().i64(rid).utf(name).i32(len(page))
        for key in page:
            _write_key(w, key, table.entries[key][0])
        return w.blob(self._continuation(page)).frame(KEYS_READ)

    def read_entries(self, state: ConnectionState, r: Reader):
        rid, name, table, page = self._page(r, "readTableEntries")
        if isinstance(table, bytes):
            return table
        entries = [(key, *table.entries[key]) for key in page]
        w = _write_entries(self.writer().i64(rid).utf(name), entries)
        return w.blob(self._continuation(page)).frame(ENTRIES_READ)

    def read_delta(self, state: ConnectionState, r: Reader):
        rid, name, table = self._table(r, "readTableEntriesDelta")
        from_position, count = r.i64(), r.i32()
        if isinstance(table, bytes):
            return table
        if self.faults.delta_ignores_position:
            from_position = 0
        changed = sorted((version, key, value) for key, (version, value) in table.entries.items()
                         if version >= from_position)
        page = changed[: max(1, count)]
        last = from_position
        if page:
            version, key, value = page[-1]
            last = version + ENTRY_OVERHEAD + len(key) + len(value)
        reached_end = len(page) == len(changed)
        if reached_end:
            last = max(last, table.table_length)
        w = _write_entries(self.writer().i64(rid).utf(name), [(k, v, val) for v, k, val in page])
        return w.boolean(False).boolean(reached_end).i64(last).frame(DELTA_READ)

    # -- shared by the table commands

    def _table(self, r: Reader, operation: str):
        rid, name, token = r.i64(), r.utf(), r.utf()
        if not self.token_ok(token):
            return rid, name, self.auth_failed(rid)
        return rid, name, self.lookup(rid, name, True, operation)

    def _counted(self, r: Reader, min_item: int) -> int:
        """A list count; under the crash-on-huge-count fault, a count beyond the payload wedges the broker."""
        if self.faults.crash_on_huge_count:
            at = r.pos
            n = r.i32()
            if n * min_item > r.left():
                raise Wedged(f"wedged on count {n}")
            r.pos = at
        return r.count(min_item)

    def _check_versions(self, rid: int, table: Segment, keys: list[tuple[bytes, int]]) -> bytes | None:
        """The error reply of the first key whose version condition fails, or None (notes §4.6, §7.6)."""
        for key, version in keys:
            if version == NO_VERSION:
                continue
            current = table.entries.get(key)
            if current is None and version != NOT_EXISTS:
                return self.writer().i64(rid).utf(table.name).utf("").frame(KEY_DOES_NOT_EXIST)
            if current is not None and current[0] != version:
                return self.writer().i64(rid).utf(table.name).utf("").frame(KEY_BAD_VERSION)
        return None

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
        if self.faults.iterate_token_first_key and page:
            return b"\x01" + page[0]
        return b"\x01" + page[-1] if page else b""  # D4: a marker byte, then the last key returned


def _key(r: Reader) -> tuple[bytes, int]:
    r.i32()  # payloadSize: 4 + len + 8, even when the version is left out
    size = r.i32()
    if size == 0:
        return b"", NO_VERSION
    return bytes(r._take(size)) if size > 0 else r._take(-1), r.i64()


def _value(r: Reader) -> bytes:
    r.i32()
    size = r.i32()
    return b"" if size == 0 else bytes(r._take(size)) if size > 0 else r._take(-1)


def _write_key(w: Writer, key: bytes, version: int) -> None:
    w.i32(12 + len(key)).i32(len(key))
    if key:
        w.raw(key).i64(version)


def _write_entries(w: Writer, entries: list[tuple[bytes, int, bytes]]) -> Writer:
    w.i32(len(entries))
    for key, version, value in entries:
        _write_key(w, key, version)
        w.i32(4 + len(value)).i32(len(value)).raw(value)
    return w
