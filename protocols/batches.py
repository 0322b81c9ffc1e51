"""The record-batch layout Kafka's magic 2 defined and Fluvio's batches share (byte offsets from the start of the
batch, and the CRC-32C that covers attributes to the end). Each protocol's records module builds on it; neither
imports the other.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from wirecheck.protocols import fields as f
from wirecheck.protocols.fields import DecodeError

LENGTH_OFFSET = 8  # batchLength (after the int64 base offset)
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21  # the CRC covers from here to the end
PREAMBLE_SIZE = 12  # the base offset and the length, which counts the bytes after it
#: the fields both protocols' batches open with, base offset .. base sequence (Kafka's record count, Fluvio's
#: schema id and records region follow): 57 bytes
HEADER = struct.Struct(">qiibIhiqqqhi")


class BatchHeader(NamedTuple):
    base_offset: int
    length: int
    leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    first_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int


def read_header(buf: bytes, pos: int, needed: int = HEADER.size) -> BatchHeader:
    """The shared header at ``pos``; fewer than ``needed`` bytes there (the protocol's whole fixed part) is a
    truncated header."""
    if len(buf) - pos < needed:
        raise DecodeError(f"truncated batch header: {len(buf) - pos} of {needed} bytes", pos)
    return BatchHeader._make(HEADER.unpack_from(buf, pos))


def batch_end(buf: bytes, pos: int, header: BatchHeader, minimum: int, length_name: str) -> int:
    """Where the batch at ``pos`` ends: its length below the protocol's ``minimum`` or past the data is a
    DecodeError on the length field (named as the protocol names it)."""
    if header.length < minimum:
        raise DecodeError(f"{length_name} {header.length} below the minimum {minimum}", pos + LENGTH_OFFSET,
                          [length_name])
    end = pos + PREAMBLE_SIZE + header.length
    if end > len(buf):
        raise DecodeError(f"{length_name} {header.length} overruns the data by {end - len(buf)} bytes",
                          pos + LENGTH_OFFSET, [length_name])
    return end


def crc_mismatch(buf: bytes, pos: int, end: int, header: BatchHeader) -> str | None:
    """What is wrong with the batch's CRC-32C (attributes to the end), or None when it matches."""
    actual = f.crc32c(buf[pos + ATTRIBUTES_OFFSET : end])
    return None if actual == header.crc else f"crc {header.crc:#010x} but the data gives {actual:#010x}"


def recompute_crc(batch: bytes) -> bytes:
    """Fix the CRC of a batch edited by hand (mutators use it to keep only the intended defect)."""
    crc = f.crc32c(batch[ATTRIBUTES_OFFSET:])
    return batch[:CRC_OFFSET] + struct.pack(">I", crc) + batch[ATTRIBUTES_OFFSET:]


def reseal_edited(before: bytes, after: bytes) -> bytes:
    """``after`` is ``before`` with same-length edits (a replay carrying a new producer id into a request): every
    batch whose CRC was valid in ``before`` gets the CRC of its edited bytes, so the edit alone changes nothing
    else. Batches are found by their layout (magic 2, a length that fits, a CRC that matches), wherever they sit."""
    if before == after or len(before) != len(after):
        return after
    out = bytearray(after)
    for pos in range(0, len(before) - ATTRIBUTES_OFFSET):
        if before[pos + MAGIC_OFFSET] != 2:
            continue
        end = pos + 12 + int.from_bytes(before[pos + LENGTH_OFFSET : pos + 12], "big", signed=True)
        if not pos + ATTRIBUTES_OFFSET <= end <= len(before) or before[pos:end] == after[pos:end]:
            continue
        if f.crc32c(before[pos + ATTRIBUTES_OFFSET : end]) == int.from_bytes(before[pos + CRC_OFFSET : pos + 21], "big"):
            out[pos + CRC_OFFSET : pos + ATTRIBUTES_OFFSET] = struct.pack(">I", f.crc32c(after[pos + ATTRIBUTES_OFFSET : end]))
    return bytes(out)
