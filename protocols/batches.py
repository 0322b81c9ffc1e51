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
