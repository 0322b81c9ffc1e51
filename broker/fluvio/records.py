"""Fluvio's RecordSet and RecordBatch as the SPU sees them on produce: split, checked, stored as bytes.

Layout (notes §2.5, §4.2; upstream ``crates/fluvio-protocol/src/record/{data,batch}.rs``):
    RecordSet = i32 byte_length, then RecordBatches back to back (no batch count)
    RecordBatch = base_offset i64 | batch_len i32 | partition_leader_epoch i32 | magic i8 | crc u32 |
                  attributes i16 | last_offset_delta i32 | first_timestamp i64 | max_time_stamp i64 |
                  producer_id i64 | producer_epoch i16 | first_sequence i32 | [schema_id u32 if attributes & 0x10]
                  | records (uncompressed: i32 record count + records; compressed: that whole region compressed)
The batch framing is Kafka's (offset + length preamble, CRC-32C from ``attributes`` to the end), which is why
``CRC_START`` matches the Kafka personality's; the differences are the optional schema id, the record count
that Fluvio never reads (A6) and the records themselves (Option-tagged keys, A10), which the SPU does not parse
on produce (§4.2) and neither does this broker.

Decisions where the SPU is undefined (notes §7, §11 A15, §12 "strict-but-safe"); each is implementation-
defined, the real SPU takes another path:
- A RecordSet length that is negative or larger than the bytes left: malformed (the SPU: EOF, closed; same).
- Bytes left in a RecordSet that do not make a whole batch (fewer than the 57-byte header, or a batch_len
  reaching past the RecordSet): malformed, connection closed. The SPU silently stops at the first batch that
  does not decode and misparses the leftover bytes as the following fields (§2.5, A15).
- batch_len below 45 (49 with a schema id): malformed, connection closed. The SPU underflows (A15).
- CRC: checked, see ``crc_ok``; a mismatch is refused by the produce handler (the SPU never checks, A7).
"""

from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import dataclass

import crc32c

from wirecheck.broker.fluvio.wire import Malformed, Reader

PREAMBLE = 12  # base_offset + batch_len: batch_len counts the bytes after these (§4.2)
BATCH_HEADER_SIZE = 45  # partition_leader_epoch .. first_sequence (BATCH_HEADER_SIZE in batch.rs)
CRC_START = 21  # attributes: the CRC-32C covers from here to the end of the batch
SCHEMA_FLAG = 0x10  # attributes bit 4: a u32 schema_id follows first_sequence (§4.2)
COMPRESSION_MASK = 0x07
GZIP = 1
MAX_COMPRESSION = 4  # 0 none, 1 gzip, 2 snappy (framed), 3 lz4 (frame), 4 zstd; 5-7 are invalid (§8)
_FIELDS = struct.Struct(">qiibIhi")  # base_offset .. last_offset_delta


@dataclass
class Batch:
    """One produced batch: its exact bytes and the header fields the SPU acts on."""

    data: bytes
    crc: int
    attributes: int
    last_offset_delta: int

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def records_start(self) -> int:
        return PREAMBLE + BATCH_HEADER_SIZE + (4 if self.attributes & SCHEMA_FLAG else 0)

    @property
    def record_total(self) -> int:
        """Records the SPU counts for this batch: last_offset_delta + 1, or 0 when negative (§4.2, A6)."""
        return self.last_offset_delta + 1 if self.last_offset_delta >= 0 else 0

    @property
    def record_count_field(self) -> int | None:
        """The i32 count in front of the records (uncompressed batches only); the SPU never reads it (A6)."""
        start = self.records_start
        if self.compression or len(self.data) < start + 4:
            return None
        return struct.unpack_from(">i", self.data, start)[0]

    @property
    def write_size(self) -> int:
        """The size storage compares with max_request_size: preamble + header + records (§4.4 step 7)."""
        return len(self.data)

    def computed_crc(self) -> int:
        return crc32c.crc32c(memoryview(self.data)[CRC_START:])

    def stored(self, base_offset: int) -> bytes:
        """The copy storage keeps: base_offset set to the LEO (§4.4 step 7, ST/segment.rs append_batch).

        The SPU re-encodes the batch, recomputing batch_len and the CRC (ST/mut_records.rs). Here neither can
        change: only exact batches are accepted (batch_len already right) and the CRC was verified, and the
        CRC's range (attributes..end) does not include base_offset.
        """
        out = bytearray(self.data)
        struct.pack_into(">q", out, 0, base_offset)
        return bytes(out)

    # -- what three faults make of a batch (the SPU re-encoding it wrongly); each keeps batch_len and CRC right

    def recompressed(self) -> Batch:
        """Fault compression-recompressed: a gzip region decompressed and compressed again, at another level."""
        try:
            plain = zlib.decompressobj(31).decompress(self.data[self.records_start:], 1 << 26)
        except zlib.error:
            return self
        return self._resealed(self.data[:self.records_start] + gzip.compress(plain, 9, mtime=0))

    def count_rewritten(self) -> Batch:
        """Fault record-count-rewritten: the records' i32 count set to last_offset_delta + 1."""
        if self.record_count_field is None:
            return self
        out = bytearray(self.data)
        struct.pack_into(">i", out, self.records_start, self.record_total)
        return self._resealed(bytes(out))

    def schema_dropped(self) -> Batch:
        """Fault schema-id-dropped: the header re-encoded without the schema id and its attributes bit."""
        if not self.attributes & SCHEMA_FLAG:
            return self
        out = bytearray(self.data[:self.records_start - 4] + self.data[self.records_start:])
        struct.pack_into(">h", out, CRC_START, self.attributes & ~SCHEMA_FLAG)
        return self._resealed(bytes(out))

    @property
    def padded_length_varint(self) -> bool:
        """Fault padded-varint-hangs: does the first record's length varint end in padding (0x80 ... 0x00)?"""
        start = self.records_start + 4  # after the record count
        if self.compression or len(self.data) <= start:
            return False
        end = start
        while end < len(self.data) - 1 and self.data[end] & 0x80:
            end += 1
        return end > start and self.data[end] == 0

    def crc_recomputed(self) -> Batch:
        """Variant crc-recomputed: the batch as the SPU stores it whatever its CRC (ST/mut_records.rs, A7)."""
        return self._resealed(self.data)

    def _resealed(self, data: bytes) -> Batch:
        """``data`` with batch_len and the CRC-32C recomputed (ST/mut_records.rs does both on storage)."""
        out = bytearray(data)
        struct.pack_into(">i", out, 8, len(out) - PREAMBLE)
        crc = crc32c.crc32c(memoryview(out)[CRC_START:])
        struct.pack_into(">I", out, CRC_START - 4, crc)
        attributes = struct.unpack_from(">h", out, CRC_START)[0]
        return Batch(bytes(out), crc, attributes, self.last_offset_delta)


class BadShape(Malformed):
    """A RecordSet whose batches do not fill it (``shape``: "trailing" bytes too few for a batch, or a "short"
    batch_len). Raised with the reader already past the whole set, so a caller may answer it instead of
    closing (the variants batch-len-short-answers and recordset-trailing-answers; A15 permits either)."""

    def __init__(self, shape: str, message: str):
        super().__init__(message)
        self.shape = shape


def read_record_set(r: Reader, clamp: bool = False) -> list[Batch]:
    """A partition's ``records``: i32 byte length, then whole batches filling it exactly.

    ``clamp`` (fault recordset-overrun-clamped): a length past the request's end means "the rest of the
    request", and bytes there too few for a batch are dropped."""
    length = r.i32()
    clamped = clamp and length > r.remaining
    if clamped:
        length = r.remaining
    if length < 0 or length > r.remaining:
        raise Malformed(f"RecordSet length {length} with {r.remaining} bytes left")
    end = r.pos + length
    buf, pos = r.buf, r.pos
    batches = []
    while pos < end:
        left = end - pos
        if left < PREAMBLE + BATCH_HEADER_SIZE:
            if clamped:
                break
            r.pos = end
            raise BadShape("trailing", f"{left} trailing bytes in a RecordSet, fewer than a batch header")
        _base, batch_len, _epoch, _magic, crc, attributes, lod = _FIELDS.unpack_from(buf, pos)
        minimum = BATCH_HEADER_SIZE + (4 if attributes & SCHEMA_FLAG else 0)
        if batch_len < minimum:
            r.pos = end
            raise BadShape("short", f"batch_len {batch_len} below the header size {minimum}")
        if batch_len > left - PREAMBLE:
            raise Malformed(f"batch_len {batch_len} reaches past the RecordSet ({left - PREAMBLE} bytes left)")
        batch_end = pos + PREAMBLE + batch_len
        batches.append(Batch(bytes(buf[pos:batch_end]), crc, attributes, lod))
        pos = batch_end
        r.elements += 1  # counts against the request's element budget like any Vec element
    r.pos = end
    return batches

