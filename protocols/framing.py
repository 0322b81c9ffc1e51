"""Length-prefixed framing, described once for every protocol.

Every protocol here frames a TCP stream as a fixed-size header that carries the body length:
RustLog, Kafka and Fluvio put a 4-byte big-endian length first; Pravega's 8-byte header is type then length;
Barco's 13-byte header carries the body length at offset 5. ``Framing`` captures that shape so the session
and the capture reassembler can split a stream without knowing the protocol.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class Framing:
    header_size: int  # bytes before the body, the length field included
    length_offset: int  # where the body-length field starts inside the header
    length_format: str  # struct format of the length field, e.g. ">I" or ">i"
    length_counts_header: bool = False  # True if the length includes the header itself

    def body_length(self, header: bytes | bytearray) -> int:
        """The body length the header claims (may be negative for signed formats)."""
        (value,) = struct.unpack_from(self.length_format, header, self.length_offset)
        return value - self.header_size if self.length_counts_header else value

    def split(self, buffer: bytes | bytearray, max_body: int) -> tuple[list[bytes], int, str | None]:
        """Split complete frames off the front of ``buffer``.

        Returns (frames, bytes consumed, problem). ``problem`` names why splitting stopped early on a header
        that can never frame (negative or above ``max_body``); the rest of the buffer is then unframeable.
        """
        frames, pos = [], 0
        while len(buffer) - pos >= self.header_size:
            length = self.body_length(buffer[pos : pos + self.header_size])
            if length < 0:
                return frames, pos, f"negative body length {length}"
            if length > max_body:
                return frames, pos, f"body length {length} above the limit {max_body}"
            end = pos + self.header_size + length
            if end > len(buffer):
                break
            frames.append(bytes(buffer[pos:end]))
            pos = end
        return frames, pos, None


#: u32/i32 big-endian length, then the body: RustLog (unsigned), Kafka and Fluvio (signed).
U32_PREFIX = Framing(header_size=4, length_offset=0, length_format=">I")
I32_PREFIX = Framing(header_size=4, length_offset=0, length_format=">i")


def leading_correlation_id(frame: bytes) -> int | None:
    """The i32 right after an I32_PREFIX length: where Kafka and Fluvio put a response's correlation id (None when
    the frame is too short to hold one)."""
    return struct.unpack_from(">i", frame, 4)[0] if len(frame) >= 8 else None
