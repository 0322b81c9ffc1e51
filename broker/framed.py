"""The one read loop of every length-prefixed personality: header, length check, body, handler, repeat.

A personality describes its header with a :class:`FrameShape` (size, where the length field is, its struct
format and so its signedness, the accepted length range) and supplies a frame handler. What it does with a
length outside the range differs by protocol (Kafka closes in silence, RustLog answers an Error first, a fault
may skip the header or drain the body), so that reaction is a small hook returning a :class:`BadLength`.

Time bounds: the first byte of a frame may take up to the idle timeout; from that byte on, the whole frame must
arrive within the frame timeout (``Connection.frame_timeout``), so a peer that trickles a frame cannot hold a
connection slot for longer. The handler runs outside that bound (a long-poll may wait as long as it likes).
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from wirecheck.broker.core import Connection

DRAIN_CHUNK = 1 << 16


class BadLength(enum.Enum):
    """What the loop does after the hook has reacted to a length outside the shape's range."""

    CLOSE = "close"  # end the connection
    SKIP = "skip"  # forget the header, read the next one
    DRAIN = "drain"  # read and discard the claimed body (in chunks), then read the next header


@dataclass(frozen=True)
class FrameShape:
    header_size: int  # bytes before the body, the length field included
    length_at: int  # offset of the length field in the header
    length_format: str  # struct format of the length field, e.g. ">i" (signed) or ">I" (unsigned)
    min_length: int  # smallest accepted body length
    max_length: int  # largest accepted body length (inclusive)
    _length: struct.Struct = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_length", struct.Struct(self.length_format))

    def length_of(self, header: bytes) -> int:
        """The body length the header claims (the length field counts the bytes after the header)."""
        return self._length.unpack_from(header, self.length_at)[0]

    def accepts(self, length: int) -> bool:
        return self.min_length <= length <= self.max_length


FrameHandler = Callable[[bytes, bytes], Awaitable[bool]]  # (header, body) -> keep the connection open
BadLengthHook = Callable[[int], Awaitable[BadLength]]  # (claimed length) -> what the loop does next


async def close_silently(length: int) -> BadLength:
    return BadLength.CLOSE


async def serve_frames(conn: Connection, shape: FrameShape, handle: FrameHandler,
                       bad_length: BadLengthHook = close_silently) -> None:
    """Read frames until the handler or the hook ends the connection, the peer closes (EOFError) or a timeout
    (IdleTimeout, FrameTimeout) fires. The body is read only once its length is accepted, and never allocated
    from the claimed length before its bytes exist (the stream reader buffers at most its limit)."""
    rest_of_header = shape.header_size - 1
    while True:
        first = await conn.read_exactly(1)  # idle timeout: waiting for a frame to start
        deadline = conn.frame_deadline()
        header = first + await conn.read_by(rest_of_header, deadline)
        length = shape.length_of(header)
        if not shape.accepts(length):
            action = await bad_length(length)
            if action is BadLength.CLOSE:
                return
            if action is BadLength.DRAIN:
                await discard(conn, length, deadline)
            continue
        body = await conn.read_by(length, deadline)
        conn.mark_working()
        # The body goes straight to the handler (and is dropped here), so the handler can free it once decoded.
        if not await handle(header, body):
            return


async def discard(conn: Connection, length: int, deadline: float) -> None:
    """Read and drop ``length`` bytes in bounded chunks, all within ``deadline`` (a body skipped unbuffered)."""
    remaining = length
    while remaining > 0:
        remaining -= len(await conn.read_by(min(remaining, DRAIN_CHUNK), deadline))
