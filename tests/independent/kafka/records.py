"""RecordBatch v2 (magic 2): a small reader/validator and writer.

Layout (all big-endian), from Kafka's protocol documentation:

    baseOffset           int64    0
    batchLength          int32    8   bytes after this field
    partitionLeaderEpoch int32   12
    magic                int8    16
    crc                  uint32  17   CRC-32C of everything from attributes on
    attributes           int16   21
    lastOffsetDelta      int32   23
    baseTimestamp        int64   27
    maxTimestamp         int64   35
    producerId           int64   43
    producerEpoch        int16   51
    baseSequence         int32   53
    recordCount          int32   57
    records...                   61

Each record: length varint, attributes int8, timestampDelta varlong,
offsetDelta varint, key (varint length, -1 = null), value (same), header count
varint, headers (key varint length + bytes, value varint length + bytes).
"""
from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass

import crc32c

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD  # 49
MAX_DECOMPRESSED = 64 * 1024 * 1024

COMPRESSION_NONE, COMPRESSION_GZIP, COMPRESSION_SNAPPY, COMPRESSION_LZ4, COMPRESSION_ZSTD = range(5)


class CorruptBatch(Exception):
    """Maps to CORRUPT_MESSAGE (2): illegal length or bad CRC."""


class InvalidBatch(Exception):
    """Maps to INVALID_RECORD (87): structurally wrong batch or records."""


class UnsupportedCompression(Exception):
    """Maps to UNSUPPORTED_COMPRESSION_TYPE (76)."""


@dataclass
class Batch:
    raw: bytearray           # the complete batch bytes (base offset rewritten on append)
    magic: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    record_count: int
    timestamps: list[int]    # per record, absolute (CreateTime)

    @property
    def compression(self) -> int:
        return self.attributes & 0x07

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & 0x10)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & 0x20)


# --------------------------------------------------------------------------
# varints (zig-zag signed, as used inside records)


def _read_varlong(buf, pos: int, end: int) -> tuple[int, int]:
    result = 0
    shift = 0
    for _ in range(10):
        if pos >= end:
            raise InvalidBatch("truncated varint in record")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
    raise InvalidBatch("varint too long in record")


def write_varint(value: int) -> bytes:
    z = (value << 1) ^ (value >> 63)
    z &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


# --------------------------------------------------------------------------
# decompression (bounded)


def _decompress(kind: int, data: bytes) -> bytes:
    try:
        if kind == COMPRESSION_GZIP:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out = d.decompress(data, MAX_DECOMPRESSED + 1)
        elif kind == COMPRESSION_SNAPPY:
            out = _snappy(data)
        elif kind == COMPRESSION_LZ4:
            import lz4.frame

            out = lz4.frame.LZ4FrameDecompressor().decompress(data, max_length=MAX_DECOMPRESSED + 1)
        elif kind == COMPRESSION_ZSTD:
            import zstandard

            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as reader:
                out = reader.read(MAX_DECOMPRESSED + 1)
        else:
            raise InvalidBatch(f"unknown compression codec {kind}")
    except InvalidBatch:
        raise
    except Exception as exc:  # any codec failure means the payload is corrupt
        raise CorruptBatch(f"cannot decompress: {exc}") from exc
    if len(out) > MAX_DECOMPRESSED:
        raise InvalidBatch("decompressed batch too large")
    return bytes(out)


_XERIAL_MAGIC = b"\x82SNAPPY\x00"


def _snappy(data: bytes) -> bytes:
    import cramjam

    if data.startswith(_XERIAL_MAGIC):
        # xerial framing: magic(8) version(4) compat(4) then [len(4) block]*
        pos = 16
        out = bytearray()
        while pos < len(data):
            (n,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if n < 0 or pos + n > len(data):
                raise CorruptBatch("bad xerial snappy block")
            out += bytes(cramjam.snappy.decompress_raw(data[pos : pos + n]))
            pos += n
            if len(out) > MAX_DECOMPRESSED:
                raise InvalidBatch("decompressed batch too large")
        return bytes(out)
    return bytes(cramjam.snappy.decompress_raw(data))


# --------------------------------------------------------------------------
# validation


def split_single_batch(data: bytes) -> tuple[int, int]:
    """Check the outer framing of a Produce partition's records.

    Returns (magic, batch_length).  Raises InvalidBatch for "not exactly one
    batch / wrong magic", CorruptBatch for an illegal batch length.
    """
    if len(data) == 0:
        raise InvalidBatch("no record batch")
    if len(data) < LOG_OVERHEAD + 5:
        raise CorruptBatch("records shorter than a batch header")
    (batch_length,) = struct.unpack_from(">i", data, 8)
    magic = data[16]
    if magic != 2:
        raise InvalidBatch(f"magic {magic} is not 2")
    if batch_length < MIN_BATCH_LENGTH:
        raise CorruptBatch(f"batch length {batch_length} below the minimum {MIN_BATCH_LENGTH}")
    if LOG_OVERHEAD + batch_length > len(data):
        raise CorruptBatch(f"batch length {batch_length} exceeds the {len(data) - LOG_OVERHEAD} bytes present")
    if LOG_OVERHEAD + batch_length < len(data):
        raise InvalidBatch("more than one record batch (or trailing bytes)")
    return magic, batch_length


def crc_ok(data: bytes) -> bool:
    (stored,) = struct.unpack_from(">I", data, 17)
    return crc32c.crc32c(memoryview(data)[21:]) == stored


def parse_batch(data: bytes, produce_version: int) -> Batch:
    """Decode header and records of an already length/CRC-checked batch."""
    (attributes, last_offset_delta, base_ts, max_ts, producer_id, _epoch, _seq, count) = struct.unpack_from(
        ">hiqqqhii", data, 21
    )
    if attributes & 0x07 > 4:
        raise InvalidBatch(f"unknown compression codec {attributes & 0x07}")
    if attributes & 0x07 == COMPRESSION_ZSTD and produce_version < 7:
        raise UnsupportedCompression("zstd needs Produce v7+")
    if count <= 0:
        raise InvalidBatch(f"invalid record count {count}")
    if last_offset_delta != count - 1:
        raise InvalidBatch(f"lastOffsetDelta {last_offset_delta} inconsistent with record count {count}")
    body = bytes(data[HEADER_SIZE:])
    if attributes & 0x07:
        body = _decompress(attributes & 0x07, body)
    timestamps = _parse_records(body, count, base_ts)
    return Batch(
        raw=bytearray(data),
        magic=2,
        attributes=attributes,
        last_offset_delta=last_offset_delta,
        base_timestamp=base_ts,
        max_timestamp=max_ts,
        producer_id=producer_id,
        record_count=count,
        timestamps=timestamps,
    )


def _read_bytes_field(buf, pos: int, end: int, nullable: bool, what: str) -> int:
    n, pos = _read_varlong(buf, pos, end)
    if n == -1 and nullable:
        return pos
    if n < 0:
        raise InvalidBatch(f"invalid {what} length {n}")
    if pos + n > end:
        raise InvalidBatch(f"{what} runs past the record")
    return pos + n


def _parse_records(body: bytes, count: int, base_ts: int) -> list[int]:
    pos = 0
    timestamps = []
    for index in range(count):
        length, pos = _read_varlong(body, pos, len(body))
        if length <= 0 or pos + length > len(body):
            raise InvalidBatch(f"record {index} has an invalid length {length}")
        end = pos + length
        pos += 1  # attributes
        if pos > end:
            raise InvalidBatch("record too short")
        ts_delta, pos = _read_varlong(body, pos, end)
        offset_delta, pos = _read_varlong(body, pos, end)
        if offset_delta != index:
            raise InvalidBatch(f"record {index} has offset delta {offset_delta}")
        pos = _read_bytes_field(body, pos, end, True, "key")
        pos = _read_bytes_field(body, pos, end, True, "value")
        n_headers, pos = _read_varlong(body, pos, end)
        if n_headers < 0:
            raise InvalidBatch("negative header count")
        for _ in range(n_headers):
            pos = _read_bytes_field(body, pos, end, False, "header key")
            pos = _read_bytes_field(body, pos, end, True, "header value")
        if pos != end:
            raise InvalidBatch(f"record {index} length does not match its contents")
        timestamps.append(base_ts + ts_delta)
    if pos != len(body):
        raise InvalidBatch("bytes left after the last record")
    return timestamps


def set_base_offset(batch: Batch, base_offset: int, leader_epoch: int = 0) -> None:
    """baseOffset and partitionLeaderEpoch are outside the CRC's coverage."""
    struct.pack_into(">q", batch.raw, 0, base_offset)
    struct.pack_into(">i", batch.raw, 12, leader_epoch)


# --------------------------------------------------------------------------
# writer (used by the smoke test helpers and for documentation)


def build_batch(values: list[tuple[bytes | None, bytes | None]], base_timestamp: int) -> bytes:
    records = bytearray()
    for i, (key, value) in enumerate(values):
        rec = bytearray(b"\x00")
        rec += write_varint(0) + write_varint(i)
        for part in (key, value):
            if part is None:
                rec += write_varint(-1)
            else:
                rec += write_varint(len(part)) + part
        rec += write_varint(0)
        records += write_varint(len(rec)) + rec
    tail = struct.pack(
        ">hiqqqhii", 0, len(values) - 1, base_timestamp, base_timestamp, -1, -1, -1, len(values)
    ) + bytes(records)
    crc = crc32c.crc32c(tail)
    return struct.pack(">qiibI", 0, 4 + 1 + 4 + len(tail), 0, 2, crc) + tail
