"""RecordSet and RecordBatch handling (spec §2.5, §4.2).

The server keeps the records region of a batch as opaque bytes (the real SPU
never parses records on produce, §4.2).  It only reads the 57/61-byte batch
header, and re-encodes a batch when it is stored: new base_offset, recomputed
batch_len and recomputed CRC-32C (§4.4 step 7).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import crc32c

from .codec import DecodeError, Reader

PREAMBLE_SIZE = 12          # base_offset i64 + batch_len i32
BATCH_HEADER_SIZE = 45      # partition_leader_epoch .. first_sequence
SCHEMA_FLAG = 0x10
COMPRESSION_MASK = 0x07
MAX_COMPRESSION_CODE = 4    # 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd; 5..7 invalid (§8)

_HEADER = struct.Struct(">qiibIhiqqqhi")  # preamble + header up to first_sequence (57 bytes)
assert _HEADER.size == PREAMBLE_SIZE + BATCH_HEADER_SIZE


@dataclass
class Batch:
    base_offset: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    first_timestamp: int
    max_time_stamp: int
    producer_id: int
    producer_epoch: int
    first_sequence: int
    schema_id: int | None
    records: bytes          # the raw records region (count + records, maybe compressed)
    raw: bytes              # the batch exactly as received

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def record_count(self) -> int:
        """records_len used by the SPU: last_offset_delta + 1, or 0 if negative (§4.2)."""
        return self.last_offset_delta + 1 if self.last_offset_delta >= 0 else 0

    @property
    def write_size(self) -> int:
        """12 + 45 + records length (§4.4 step 7)."""
        return PREAMBLE_SIZE + BATCH_HEADER_SIZE + len(self.records)

    def crc_region(self) -> bytes:
        parts = [
            struct.pack(
                ">hiqqqhi",
                self.attributes,
                self.last_offset_delta,
                self.first_timestamp,
                self.max_time_stamp,
                self.producer_id,
                self.producer_epoch,
                self.first_sequence,
            )
        ]
        if self.schema_id is not None:
            parts.append(struct.pack(">I", self.schema_id))
        parts.append(self.records)
        return b"".join(parts)

    def encode(self, base_offset: int, *, recompute_crc: bool = True) -> bytes:
        """The stored form of the batch: server-assigned base_offset, recomputed batch_len and CRC."""
        region = self.crc_region()
        crc = crc32c.crc32c(region) if recompute_crc else self.crc
        batch_len = 4 + 1 + 4 + len(region)  # partition_leader_epoch + magic + crc + region
        return (
            struct.pack(">qiibI", base_offset, batch_len, self.partition_leader_epoch, self.magic, crc)
            + region
        )


def parse_batch(data: bytes) -> Batch:
    """Parse exactly one batch occupying all of ``data``.

    Strict reading (spec §12 "implementation-defined"): a header shorter than
    57/61 bytes, a batch_len below 45 (49 with schema) or a batch_len that does
    not match the bytes present is a decode error.
    """
    if len(data) < _HEADER.size:
        raise DecodeError("batch header truncated")
    (
        base_offset,
        batch_len,
        ple,
        magic,
        crc,
        attributes,
        lod,
        first_ts,
        max_ts,
        producer_id,
        producer_epoch,
        first_sequence,
    ) = _HEADER.unpack_from(data, 0)
    pos = _HEADER.size
    schema_id = None
    header_len = BATCH_HEADER_SIZE
    if attributes & SCHEMA_FLAG:
        if len(data) < pos + 4:
            raise DecodeError("batch schema_id truncated")
        (schema_id,) = struct.unpack_from(">I", data, pos)
        pos += 4
        header_len += 4
    if batch_len < header_len:
        raise DecodeError(f"batch_len {batch_len} below header size {header_len}")
    if PREAMBLE_SIZE + batch_len != len(data):
        raise DecodeError("batch_len does not match the bytes present")
    return Batch(
        base_offset=base_offset,
        partition_leader_epoch=ple,
        magic=magic,
        crc=crc,
        attributes=attributes,
        last_offset_delta=lod,
        first_timestamp=first_ts,
        max_time_stamp=max_ts,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        first_sequence=first_sequence,
        schema_id=schema_id,
        records=bytes(data[pos:]),
        raw=bytes(data),
    )


def read_record_set(r: Reader) -> list[Batch]:
    """RecordSet: i32 byte_length then back-to-back batches (§2.5).

    The RecordSet bytes are taken as a unit, so leftovers can never be misparsed
    as the following request fields.  A negative length, a length beyond the
    frame, or bytes that do not form whole batches are decode errors (strict
    reading, spec §12 / A15).
    """
    length = r.i32()
    if length < 0:
        raise DecodeError(f"negative RecordSet length {length}")
    data = r.take(length)
    batches: list[Batch] = []
    pos = 0
    while pos < length:
        if length - pos < PREAMBLE_SIZE:
            raise DecodeError("trailing bytes in RecordSet")
        (batch_len,) = struct.unpack_from(">i", data, pos + 8)
        if batch_len < BATCH_HEADER_SIZE:
            raise DecodeError(f"batch_len {batch_len} below 45")
        end = pos + PREAMBLE_SIZE + batch_len
        if end > length:
            raise DecodeError("batch runs past the end of the RecordSet")
        batches.append(parse_batch(data[pos:end]))
        pos = end
    return batches
