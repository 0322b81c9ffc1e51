"""The record-batch layout Kafka's magic 2 defined and Fluvio's batches share (byte offsets from the start of the
batch, and the CRC-32C that covers attributes to the end). Each protocol's records module builds on it; neither
imports the other.
"""

from __future__ import annotations

import struct

from wirecheck.protocols import fields as f

LENGTH_OFFSET = 8  # batchLength (after the int64 base offset)
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21  # the CRC covers from here to the end


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
