"""One SPU connection: its writes (one lock keeps frames whole), its streams, and the reads two faults break."""

from __future__ import annotations

import asyncio
import struct
from typing import TYPE_CHECKING

from wirecheck.broker.core import Connection
from wirecheck.broker.fluvio.api import Call
from wirecheck.broker.fluvio.faults import FluvioFaults

if TYPE_CHECKING:
    from wirecheck.broker.fluvio.fetch import Stream

_SIZE = struct.Struct(">i")


class ConnectionState:
    def __init__(self, conn: Connection, faults: FluvioFaults):
        self.conn = conn
        self.faults = faults
        self.write_lock = asyncio.Lock()
        self.streams: dict[int, Stream] = {}
        self.stream_sequence = 0
        self.late: set[asyncio.Task] = set()  # fault fetch-offsets-overtaken: answers still to be sent

    async def send(self, correlation_id: int, body: bytes) -> None:
        size = len(body) + 4
        if self.faults.response_size_u16:
            size &= 0xFFFF  # fault: the size written through a 16-bit field
        async with self.write_lock:
            await self.conn.write(_SIZE.pack(size) + _SIZE.pack(correlation_id) + body)


class FaultyReads:
    """A connection whose frame reads two faults break. partial-size-prefix: the size prefix's last three bytes
    are whatever one read returns (an unlooped recv()). reads-serialised: one broker-wide lock is held while a
    started frame arrives, so a peer stalled mid-frame stalls the frames of every other connection."""

    def __init__(self, conn: Connection, faults: FluvioFaults, lock: asyncio.Lock):
        self._conn, self._faults, self._lock = conn, faults, lock

    def __getattr__(self, name: str):
        return getattr(self._conn, name)

    async def read_by(self, n: int, deadline: float) -> bytes:
        if n == 3 and self._faults.partial_size_prefix:  # serve_frames reads 1 size byte, then these 3
            return await self._conn.reader.read(n)
        if self._faults.reads_serialised:
            async with self._lock:
                return await self._conn.read_by(n, deadline)
        return await self._conn.read_by(n, deadline)

    @staticmethod
    def needed(faults: FluvioFaults) -> bool:
        return faults.partial_size_prefix or faults.reads_serialised


#: A request on an SPU connection, as the SPU's handlers take it
SpuCall = Call[ConnectionState]
