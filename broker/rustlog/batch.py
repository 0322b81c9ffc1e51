"""The bytes of one durable Produce batch: every record of a RustLog batch shares one timestamp, and offsets are
the batch's base offset plus the record's position, so neither is stored per record::

    u64 timestamp (µs) | u32 count | count x u32 payload length | the payloads, concatenated   (big-endian)

The length table comes first so that a read can start at any record of the batch without scanning payloads.
Integrity is the batch log's business (its CRC-32C covers these bytes).
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator

HEAD = struct.Struct(">QI")  # timestamp µs, record count


def encode_batch(timestamp: int, payloads: list[bytes]) -> bytes:
    lengths = struct.pack(f">{len(payloads)}I", *map(len, payloads))
    return b"".join((HEAD.pack(timestamp, len(payloads)), lengths, *payloads))


def decode_batch(data: bytes, first: int = 0) -> Iterator[tuple[int, int, memoryview]]:
    """Yield (position in the batch, timestamp, payload) for the records from position ``first`` on.

    Each payload is a view into ``data``, not a copy: a Fetch encodes it at once, and copies of many small
    records would be small objects whose allocator arenas outlive the answer."""
    timestamp, count = HEAD.unpack_from(data)
    lengths = struct.unpack_from(f">{count}I", data, HEAD.size)
    start = HEAD.size + 4 * count + sum(itertools.islice(lengths, first))
    view = memoryview(data)
    for position in range(first, count):
        end = start + lengths[position]
        yield position, timestamp, view[start:end]
        start = end
