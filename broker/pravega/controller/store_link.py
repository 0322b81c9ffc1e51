"""The controller's link to the segment store: the segment-lifecycle wire commands, over loopback TCP.

The controller is a client of the segment store, as in Pravega: it creates a stream's segments with CreateSegment,
seals them with SealSegment, truncates and deletes them.
Speaking the wire protocol (rather than calling the store's objects) keeps the two halves independent and lets the
controller front any segment store. Layouts: type:i32, length:i32, payload; strings are a u16 length and
(modified) UTF-8 bytes, which for the ASCII names the controller produces is plain UTF-8.
"""

from __future__ import annotations

import asyncio
import itertools
import struct
from typing import Protocol

CREATE_SEGMENT, SEGMENT_CREATED = 20, 21
SEAL_SEGMENT, SEGMENT_SEALED = 28, 29
DELETE_SEGMENT, SEGMENT_DELETED = 30, 31
TRUNCATE_SEGMENT, SEGMENT_TRUNCATED = 38, 39
MERGE_SEGMENTS, SEGMENTS_MERGED = 58, 59
CREATE_TABLE_SEGMENT, DELETE_TABLE_SEGMENT = 70, 71  # answered SegmentCreated and SegmentDeleted
SEGMENT_IS_SEALED, SEGMENT_ALREADY_EXISTS, NO_SUCH_SEGMENT = 51, 52, 53
KEEP_ALIVE = 100
# The answers that count as done for an idempotent lifecycle step (e.g. sealing a segment already sealed).
ACCEPTED = {
    CREATE_SEGMENT: {SEGMENT_CREATED, SEGMENT_ALREADY_EXISTS},
    SEAL_SEGMENT: {SEGMENT_SEALED, SEGMENT_IS_SEALED},
    DELETE_SEGMENT: {SEGMENT_DELETED, NO_SUCH_SEGMENT},
    TRUNCATE_SEGMENT: {SEGMENT_TRUNCATED},
    MERGE_SEGMENTS: {SEGMENTS_MERGED},
    CREATE_TABLE_SEGMENT: {SEGMENT_CREATED, SEGMENT_ALREADY_EXISTS},
    DELETE_TABLE_SEGMENT: {SEGMENT_DELETED, NO_SUCH_SEGMENT},
}
MAX_REPLY = 1 << 20  # the controller's replies are tiny; anything longer is a broken store
TIMEOUT = 10.0


class StoreError(Exception):
    """The segment store refused a lifecycle step or could not be reached."""


class SegmentStore(Protocol):
    async def create_segment(self, name: str) -> None: ...
    async def seal_segment(self, name: str) -> None: ...
    async def truncate_segment(self, name: str, offset: int) -> None: ...
    async def delete_segment(self, name: str) -> None: ...
    async def merge_segments(self, target: str, source: str) -> None: ...
    async def create_table_segment(self, name: str, key_length: int, rollover: int) -> None: ...
    async def delete_table_segment(self, name: str) -> None: ...


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


class WireSegmentStore:
    """One connection to the segment store, opened on first use and reopened after a failure; requests are
    serialised (the controller's lifecycle steps are rare and small)."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)

    async def create_segment(self, name: str) -> None:
        # targetRate 0, scaleType 0 (no scaling), token "", rolloverSizeBytes 0
        await self._call(CREATE_SEGMENT, lambda rid: struct.pack(">q", rid) + _string(name)
                         + struct.pack(">ib", 0, 0) + _string("") + struct.pack(">q", 0))

    async def seal_segment(self, name: str) -> None:
        await self._call(SEAL_SEGMENT, lambda rid: struct.pack(">q", rid) + _string(name) + _string(""))

    async def truncate_segment(self, name: str, offset: int) -> None:
        await self._call(TRUNCATE_SEGMENT, lambda rid: struct.pack(">q", rid) + _string(name)
                         + struct.pack(">q", offset) + _string(""))

    async def delete_segment(self, name: str) -> None:
        await self._call(DELETE_SEGMENT, lambda rid: struct.pack(">q", rid) + _string(name) + _string(""))

    async def merge_segments(self, target: str, source: str) -> None:
        # a transaction's commit: its segment appended to its parent's (no attribute updates: count 0)
        await self._call(MERGE_SEGMENTS, lambda rid: struct.pack(">q", rid) + _string(target) + _string(source)
                         + _string("") + struct.pack(">i", 0))

    async def create_table_segment(self, name: str, key_length: int, rollover: int) -> None:
        # a key-value table's partition: an unsorted table segment of fixed-length keys (Pravega v0.13.0
        # TableMetadataTasks.createNewSegment: createTableSegment(name, token, id, false, keyLength, rolloverSizeBytes))
        await self._call(CREATE_TABLE_SEGMENT, lambda rid: struct.pack(">q", rid) + _string(name) + _string("")
                         + struct.pack(">?iq", False, key_length, rollover))

    async def delete_table_segment(self, name: str) -> None:
        # mustBeEmpty false: a table is deleted with what it holds (TableMetadataTasks.deleteSegment)
        await self._call(DELETE_TABLE_SEGMENT, lambda rid: struct.pack(">q", rid) + _string(name)
                         + struct.pack(">?", False) + _string(""))

    async def _call(self, command: int, build) -> bytes:
        async with self._lock:
            # a link opened for an earlier step may have been closed by the store meanwhile (its idle timeout):
            # such a failure is tried once more on a new connection (the steps are idempotent: ACCEPTED)
            for reused in (self._streams is not None, False):
                try:
                    async with asyncio.timeout(TIMEOUT):
                        return await self._exchange(command, build(next(self._ids)))
                except (OSError, EOFError, TimeoutError, asyncio.IncompleteReadError) as exc:
                    await self.close()
                    if not reused or isinstance(exc, TimeoutError):
                        raise StoreError(f"segment store at {self.host}:{self.port}: {exc!r}") from None
            raise AssertionError("unreachable: the second attempt returns or raises")

    async def _exchange(self, command: int, payload: bytes) -> bytes:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._streams
        request_id = struct.unpack_from(">q", payload)[0]
        writer.write(struct.pack(">ii", command, len(payload)) + payload)
        await writer.drain()
        while True:
            kind, length = struct.unpack(">ii", await reader.readexactly(8))
            if not 0 <= length <= MAX_REPLY:
                raise EOFError(f"reply length {length}")
            body = await reader.readexactly(length)
            if kind == KEEP_ALIVE or len(body) < 8 or struct.unpack_from(">q", body)[0] != request_id:
                continue  # not the answer to this request
            if kind not in ACCEPTED[command]:
                raise StoreError(f"segment store answered {command} with type {kind}")
            return body

    async def close(self) -> None:
        if self._streams is not None:
            writer = self._streams[1]
            self._streams = None
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass
