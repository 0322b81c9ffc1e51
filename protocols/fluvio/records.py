"""Fluvio's RecordSet, Batch and Record (specs/fluvio.md §2.5, §4.2, §4.3; upstream
``fluvio-protocol/src/record/{batch,data}.rs``).

The batch header is byte-for-byte Kafka's record batch v2 up to ``first_sequence`` (base offset, length,
leader epoch, magic, CRC-32C over attributes..end), so the offsets and the CRC fix-up come from the shared
``protocols.batches``, and gzip/lz4/zstd from ``protocols.compression``. What differs, and is named here:

* ``schema_id`` (u32) follows ``first_sequence`` when ``attributes & 0x10`` (Kafka: bit 4 = transactional);
* the records region is ``Vec<Record>``: an **i32 record count then the records**, and when compressed the
  count is compressed with them (Kafka keeps its count outside the compressed block);
* the SPU takes the record count from ``last_offset_delta + 1``, never from that count (ambiguity A6/A14);
* a record's key is an **Option tag** (00 None / 01 Some) then ``RecordData`` (Kafka: varint -1 for null);
* every varint is a zig-zag **i64** varint (Kafka's offset delta is an i32 varint); we write the standard
  64-bit zig-zag (``protocols.fields.VARLONG``), which equals upstream's encoder for values in the i32 range
  (ambiguity A11: upstream's encoder is wrong outside it);
* ``headers`` is a bare varint count: header entries are never encoded (Kafka encodes key/value pairs);
* snappy is the *framed* snappy format (``snap::write::FrameEncoder``), not Kafka's xerial framing.

A RecordSet is an i32 byte length, then batches back to back with no batch count.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import cramjam

from wirecheck.protocols import fields as f
from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols import compression
from wirecheck.protocols.batches import (ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER, LENGTH_OFFSET, MAGIC_OFFSET,
                                         PREAMBLE_SIZE, batch_end, crc_mismatch, read_header, recompute_crc)

__all__ = ["ATTRIBUTES_OFFSET", "CRC_OFFSET", "HEADER", "LENGTH_OFFSET", "MAGIC_OFFSET", "PREAMBLE_SIZE", "recompute_crc"]

BATCH_HEADER_SIZE = 45  # partition_leader_epoch .. first_sequence (upstream BATCH_HEADER_SIZE)
SCHEMA_ID_SIZE = 4
LAST_OFFSET_DELTA_OFFSET = 23
COMPRESSION_MASK = 0x07
SCHEMA_ID_BIT = 0x10  # Fluvio: a u32 schema id follows first_sequence (Kafka: the transactional bit)
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODECS = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
#: the producer's default max request / storage write limit: 12 + 45 + records above this is MessageTooLarge
STORAGE_MAX_REQUEST_SIZE = 33_554_432


@dataclass
class Record:
    value: bytes = b""
    key: bytes | None = None
    attributes: int = 0
    timestamp_delta: int = 0
    offset_delta: int = 0
    headers: int = 0  # a count only (upstream never encodes header entries)


@dataclass
class Batch:
    records: list[Record] = field(default_factory=list)
    base_offset: int = 0
    partition_leader_epoch: int = -1
    magic: int = 2
    compression: int = NONE
    schema_id: int | None = None  # set: the schema bit is on and the id is written
    extra_attributes: int = 0  # attribute bits we do not interpret (mutations set unknown bits here)
    last_offset_delta: int | None = None  # None: len(records) - 1, as the Rust producer sets it
    first_timestamp: int = -1
    max_time_stamp: int = -1
    producer_id: int = -1
    producer_epoch: int = -1
    first_sequence: int = -1
    record_count: int | None = None  # None: len(records); the SPU ignores it
    raw_records: bytes | None = None  # the records region as given (overrides records; for mutation)
    crc: int | None = None  # None: computed; the parser fills in what it read

    @property
    def attributes(self) -> int:
        return ((self.compression & COMPRESSION_MASK) | (SCHEMA_ID_BIT if self.schema_id is not None else 0)
                | self.extra_attributes)


def encode_record(record: Record) -> bytes:
    body = bytearray()
    f.INT8.write(body, record.attributes)
    f.VARLONG.write(body, record.timestamp_delta)
    f.VARLONG.write(body, record.offset_delta)
    if record.key is None:
        body.append(0)
    else:
        body.append(1)
        f.VARLONG.write(body, len(record.key))
        body += record.key
    f.VARLONG.write(body, len(record.value))
    body += record.value
    f.VARLONG.write(body, record.headers)
    out = bytearray()
    f.VARLONG.write(out, len(body))
    return bytes(out + body)


def encode_records_region(batch: Batch) -> bytes:
    """``Vec<Record>`` (i32 count + records), compressed as a whole when the batch says so."""
    if batch.raw_records is not None:
        return batch.raw_records
    count = len(batch.records) if batch.record_count is None else batch.record_count
    plain = struct.pack(">i", count) + b"".join(encode_record(r) for r in batch.records)
    return compress(batch.compression, plain)


def encode_batch(batch: Batch) -> bytes:
    """The batch's bytes with batch_len and CRC-32C computed (unless ``batch.crc`` forces a value)."""
    last_delta = batch.last_offset_delta
    if last_delta is None:
        last_delta = len(batch.records) - 1
    after_crc = struct.pack(">hiqqqhi", batch.attributes, last_delta, batch.first_timestamp, batch.max_time_stamp,
                            batch.producer_id, batch.producer_epoch, batch.first_sequence)
    if batch.schema_id is not None:
        after_crc += struct.pack(">I", batch.schema_id)
    after_crc += encode_records_region(batch)
    crc = f.crc32c(after_crc) if batch.crc is None else batch.crc
    batch_len = 4 + 1 + 4 + len(after_crc)  # leader epoch + magic + crc + the rest
    return struct.pack(">qiibI", batch.base_offset, batch_len, batch.partition_leader_epoch, batch.magic,
                       crc) + after_crc


def build_batch(values, keys=None, **options) -> bytes:
    """A batch with these values (and keys), offset deltas 0..n-1."""
    keys = list(keys) if keys is not None else [None] * len(values)
    records = [Record(value=v, key=k, offset_delta=i) for i, (k, v) in enumerate(zip(keys, values))]
    return encode_batch(Batch(records=records, **options))


# -- compression --------------------------------------------------------------------------------------------


def compress(codec: int, data: bytes) -> bytes:
    if codec == SNAPPY:
        return bytes(cramjam.snappy.compress(data))  # the framed format, as upstream's snap::FrameEncoder
    return compression.compress(codec, data)  # gzip, lz4 frame, zstd: the same as Kafka's


def decompress(codec: int, data: bytes, limit: int = compression.DEFAULT_LIMIT) -> bytes:
    if codec == SNAPPY:
        try:
            decompressor = cramjam.snappy.Decompressor()
            decompressor.decompress(bytes(data))
            out = bytes(decompressor.finish())
        except Exception as exc:  # cramjam raises its own error types
            raise compression.CompressionError(f"snappy frame: {exc}") from None
        if len(out) > limit:
            raise compression.CompressionError(f"snappy output over the limit {limit}")
        return out
    return compression.decompress(codec, data, limit)


# -- reading ------------------------------------------------------------------------------------------------


def decode_record(buf: bytes, pos: int) -> tuple[Record, int]:
    start = pos
    length, pos = f.VARLONG.read(buf, pos)
    if length < 0 or pos + length > len(buf):
        raise DecodeError(f"record length {length} with {len(buf) - pos} bytes left", start)
    end = pos + length
    body = buf[:end]
    attributes, pos = f.INT8.read(body, pos)
    timestamp_delta, pos = f.VARLONG.read(body, pos)
    offset_delta, pos = f.VARLONG.read(body, pos)
    if pos >= end:
        raise DecodeError("truncated key option tag", pos)
    tag = body[pos]
    pos += 1
    if tag > 1:
        raise DecodeError(f"key option tag {tag} is neither 0 nor 1", pos - 1)
    key = None
    if tag == 1:
        key, pos = _read_data(body, pos)
    value, pos = _read_data(body, pos)
    headers, pos = f.VARLONG.read(body, pos)
    if pos != end:
        raise DecodeError(f"record length {length} but its fields end {end - pos} bytes before it", start)
    return Record(value=value, key=key, attributes=attributes, timestamp_delta=timestamp_delta,
                  offset_delta=offset_delta, headers=headers), end


def _read_data(buf: bytes, pos: int) -> tuple[bytes, int]:
    length, at = f.VARLONG.read(buf, pos)
    if length < 0 or at + length > len(buf):
        raise DecodeError(f"record data claims {length} bytes, {len(buf) - at} left", pos)
    return bytes(buf[at : at + length]), at + length


def batch_length_at(data: bytes, pos: int) -> int | None:
    if len(data) - pos < PREAMBLE_SIZE:
        return None
    return struct.unpack_from(">i", data, pos + LENGTH_OFFSET)[0]


def decode_batch(buf: bytes, pos: int = 0, verify_crc: bool = True, parse_records: bool = True) -> tuple[Batch, int]:
    """One batch at ``pos`` -> (batch, end). Strict: a short header, batch_len < 45 (+4 with a schema id), a
    length past the data, a wrong CRC, an unknown codec or records that do not parse raise DecodeError."""
    header = read_header(buf, pos)
    attributes = header.attributes
    has_schema = bool(attributes & SCHEMA_ID_BIT)
    end = batch_end(buf, pos, header, BATCH_HEADER_SIZE + (SCHEMA_ID_SIZE if has_schema else 0), "batch_len")
    if verify_crc and (wrong := crc_mismatch(buf, pos, end, header)):
        raise DecodeError(wrong, pos + CRC_OFFSET, ["crc"])
    codec = attributes & COMPRESSION_MASK
    at = pos + HEADER.size
    schema_id = None
    if has_schema:
        (schema_id,) = struct.unpack_from(">I", buf, at)
        at += SCHEMA_ID_SIZE
    region = bytes(buf[at:end])
    batch = Batch(base_offset=header.base_offset, partition_leader_epoch=header.leader_epoch, magic=header.magic,
                  compression=codec, schema_id=schema_id,
                  extra_attributes=attributes & ~(COMPRESSION_MASK | SCHEMA_ID_BIT) & 0xFFFF,
                  last_offset_delta=header.last_offset_delta, first_timestamp=header.first_timestamp,
                  max_time_stamp=header.max_timestamp, producer_id=header.producer_id,
                  producer_epoch=header.producer_epoch, first_sequence=header.base_sequence, raw_records=region,
                  crc=header.crc)
    if parse_records:
        if codec not in CODECS:
            raise DecodeError(f"unknown compression {codec}", pos + ATTRIBUTES_OFFSET, ["attributes"])
        try:
            plain = decompress(codec, region)
        except compression.CompressionError as exc:
            raise DecodeError(str(exc), at, ["records"]) from None
        count, rpos = f.INT32.read(plain, 0) if len(plain) >= 4 else (None, 0)
        if count is None:
            raise DecodeError("records region shorter than its i32 count", at, ["records"])
        if count < 0 or count > len(plain):
            raise DecodeError(f"record count {count} with {len(plain) - 4} record bytes", at, ["records"])
        records = []
        for index in range(count):
            try:
                record, rpos = decode_record(plain, rpos)
            except DecodeError as exc:
                raise exc.within(f"records[{index}]") from None
            records.append(record)
        if rpos != len(plain):
            raise DecodeError(f"{len(plain) - rpos} bytes after the {count} records", at, ["records"])
        batch.records, batch.record_count = records, count
    return batch, end


def decode_record_set(data: bytes, allow_partial_tail: bool = False, verify_crc: bool = True,
                      parse_records: bool = True) -> list[Batch]:
    """Batches back to back. A fetch may end in a batch cut at max_bytes (§5.2): ``allow_partial_tail``
    drops a tail that is shorter than its own batch_len claims (or than a preamble)."""
    batches, pos = [], 0
    while pos < len(data):
        if allow_partial_tail and is_partial_tail(data, pos):
            break
        batch, pos = decode_batch(data, pos, verify_crc, parse_records)
        batches.append(batch)
    return batches


def is_partial_tail(data: bytes, pos: int) -> bool:
    length = batch_length_at(data, pos)
    return length is None or (length >= BATCH_HEADER_SIZE and pos + PREAMBLE_SIZE + length > len(data))


def split_batches(data: bytes) -> list[bytes]:
    """The raw bytes of each whole batch (a truncated tail is dropped); no CRC or record checks."""
    out, pos = [], 0
    while not is_partial_tail(data, pos) and pos < len(data):
        length = batch_length_at(data, pos)
        if length < BATCH_HEADER_SIZE:
            break
        out.append(bytes(data[pos : pos + PREAMBLE_SIZE + length]))
        pos += PREAMBLE_SIZE + length
    return out


def offsets_taken(batch: bytes) -> int:
    """How many offsets a batch advances the log end: last_offset_delta + 1, 0 if negative (§4.4)."""
    (delta,) = struct.unpack_from(">i", batch, LAST_OFFSET_DELTA_OFFSET)
    return max(0, delta + 1)


def as_stored(batch: bytes, base_offset: int) -> bytes:
    """The batch as the SPU stores and serves it: base_offset assigned, batch_len and CRC recomputed, every
    other byte as produced (``ST/mut_records.rs`` re-encodes it)."""
    body = batch[PREAMBLE_SIZE:]
    fixed = struct.pack(">qi", base_offset, len(body)) + body
    return recompute_crc(fixed)
