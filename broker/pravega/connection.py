"""A connection's state: its writers (the append decoder's and the writer state's), the open AppendBlock, the
reads parked at a tail; and how a handler ends the connection."""

from __future__ import annotations

import asyncio

from wirecheck.broker.core import Connection


class Close(Exception):
    """End the connection without a reply (the server's answer to every protocol violation)."""


class Wedged(Close):
    """Fault crash-on-huge-count: end the connection, and the broker answers nothing more on any connection."""


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
