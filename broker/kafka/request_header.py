"""The request header after its fixed part (RequestHeader.json): ClientId, and in v2 a tagged-field section."""

from __future__ import annotations

import struct

from wirecheck.broker.kafka.codec_primitives import MalformedBody, read_uvarint

HEADER = struct.Struct(">hhi")  # api_key, api_version, correlation_id


def read_client_id(frame: bytes, pos: int) -> tuple[int, str | None]:
    """ClientId: INT16-length nullable string in every header version (RequestHeader.json, flexible 'none')."""
    if pos + 2 > len(frame):
        raise MalformedBody("truncated client id")
    (n,) = struct.unpack_from(">h", frame, pos)
    pos += 2
    if n == -1:
        return pos, None
    if n < 0 or pos + n > len(frame):
        raise MalformedBody(f"client id length {n}")
    return pos + n, frame[pos:pos + n].decode("utf-8", "replace")


def skip_tags(frame: bytes, pos: int, first_only: bool = False) -> int:
    count, pos = read_uvarint(frame, pos)
    if count > len(frame) - pos:
        raise MalformedBody(f"header tagged field count {count}")
    for _ in range(min(count, 1) if first_only else count):  # fault header-tags-first-only: one field skipped
        _, pos = read_uvarint(frame, pos)
        size, pos = read_uvarint(frame, pos)
        pos += size
        if pos > len(frame):
            raise MalformedBody("header tagged field beyond the frame")
    return pos
