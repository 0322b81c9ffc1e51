"""RecordBatch v2 (magic 2): header fields, validation and offset assignment on the stored bytes.

Layout (Kafka protocol guide, "Record Batch"; DefaultRecordBatch.java):
    baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 | crc uint32 |
    attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 | producerId int64 |
    producerEpoch int16 | baseSequence int32 | recordCount int32 | records...
The CRC-32C covers everything from ``attributes`` to the end of the batch, so the broker can rewrite
baseOffset and partitionLeaderEpoch without touching it.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import cramjam
import crc32c
import lz4.frame
import zstandard
from wirecheck.broker.kafka.errors import (CORRUPT_MESSAGE, INVALID_RECORD, MESSAGE_TOO_LARGE, NONE,
                                           UNSUPPORTED_COMPRESSION_TYPE)

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: batchLength counts the bytes after these
CRC_START = 21
_HEADER = struct.Struct(">qiibIhiqqqhii")

# error codes (Errors.java)


@dataclass
class Batch:
    base_offset: int
    length: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int

    @property
    def last_sequence(self) -> int:
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & 0x10)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & 0x20)


def parse_header(data: bytes) -> Batch:
    base, length, _epoch, magic, crc, attrs, lod, bts, mts, pid, pepoch, bseq, count = _HEADER.unpack_from(data, 0)
    return Batch(base, length, magic, crc, attrs, lod, bts, mts, pid, pepoch, bseq, count)


def _read_varint(buf, pos: int) -> tuple[int, int]:
    """Zig-zag varint as used inside records; raises ValueError when it runs off the end."""
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("bad varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7


MIN_BATCH_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0: a smaller size field is corrupt (ByteBufferLogInputStream)


def _frame_batch(data: bytes) -> tuple[int, int]:
    """ByteBufferLogInputStream.nextBatch: (error, size of the complete batch at the start of data or 0)."""
    if len(data) < LOG_OVERHEAD:
        return NONE, 0
    (size,) = struct.unpack_from(">i", data, 8)
    if size < MIN_BATCH_SIZE:
        return CORRUPT_MESSAGE, 0
    if len(data) < size + LOG_OVERHEAD or len(data) < 17:
        return NONE, 0  # incomplete: not a batch
    return NONE, size + LOG_OVERHEAD


def validate(data: bytes, max_message_bytes: int, crc_ieee: bool = False,
             one_batch: bool = True) -> tuple[int, Batch | None, str, bytes]:
    """Check one produced records blob the way Kafka does; returns (error, header, message, the batch's bytes).

    Order: ProduceRequest.validateRecords (exactly one complete batch, magic 2: else 87; a size field below 14:
    2), then UnifiedLog.analyzeAndValidateRecords (size > max.message.bytes: 10; then the CRC: 2; trailing
    bytes that do not make a whole batch are trimmed, not refused), then LogValidator's count checks (87).
    """
    error, first = _frame_batch(data)
    if error:
        return error, None, "record batch size field below the minimum", b""
    # A magic byte no format has (above 2, or negative) is Kafka's CorruptRecordException (2), raised while the
    # batch is sized, before it is known complete: ByteBufferLogInputStream.nextBatchSize, "Invalid magic found in
    # record" (clients/src/main/java/org/apache/kafka/common/record/ByteBufferLogInputStream.java); magic 0 and 1
    # are legacy batches, which ProduceRequest.validateRecords refuses with 87 below
    if len(data) > 16 and not 0 <= int.from_bytes(data[16:17], "big", signed=True) <= 2:
        return CORRUPT_MESSAGE, None, f"invalid magic {data[16]}", b""
    if not first:
        return INVALID_RECORD, None, "no complete record batch", b""
    if data[16] != 2:
        return INVALID_RECORD, None, f"magic {data[16]} is not 2", b""
    error, second = _frame_batch(data[first:])
    if error:
        return error, None, "corrupt data after the batch", b""
    if second and one_batch:  # fault multi-batch-first-kept: no one_batch, the batches after the first are dropped
        return INVALID_RECORD, None, "more than one record batch", b""
    data = data[:first]
    if len(data) > max_message_bytes:
        return MESSAGE_TOO_LARGE, None, f"batch of {len(data)} bytes exceeds max.message.bytes {max_message_bytes}", b""
    if len(data) < HEADER_SIZE:
        return CORRUPT_MESSAGE, None, f"batch of {len(data)} bytes is shorter than its header", b""
    batch = parse_header(data)
    body = memoryview(data)[CRC_START:]
    actual = (zlib.crc32(body) if crc_ieee else crc32c.crc32c(body)) & 0xFFFFFFFF
    if actual != batch.crc:
        return CORRUPT_MESSAGE, None, f"CRC {batch.crc:#010x} != computed {actual:#010x}", b""
    if batch.count <= 0 or batch.last_offset_delta != batch.count - 1:
        return INVALID_RECORD, None, f"record count {batch.count} vs lastOffsetDelta {batch.last_offset_delta}", b""
    if batch.is_control:
        return INVALID_RECORD, None, "clients may not write control batches (LogValidator)", b""
    if batch.attributes & 0x07 > 4:
        return UNSUPPORTED_COMPRESSION_TYPE, None, f"compression codec {batch.attributes & 0x07}", b""
    if batch.attributes & 0x07 == 0 and not _records_fit(data, batch.count):
        return INVALID_RECORD, None, "records do not match the batch's count and length", b""
    return NONE, batch, "", data


def _records_fit(data: bytes, count: int) -> bool:
    """Uncompressed batch: the records' own length prefixes must tile the batch exactly."""
    pos = HEADER_SIZE
    try:
        for _ in range(count):
            size, pos = _read_varint(data, pos)
            if size <= 0:
                return False
            pos += size
            if pos > len(data):
                return False
    except ValueError:
        return False
    return pos == len(data)


LOG_APPEND_TIME_FLAG = 0x08  # attributes bit 3: timestamp type


def assign(data: bytes, base_offset: int, leader_epoch: int = 0, append_time_ms: int | None = None) -> bytes:
    """The stored copy of a validated batch (LogValidator.assignOffsetsNonCompressed, in place of bytes).

    baseOffset and partitionLeaderEpoch lie before the CRC'd range and are simply rewritten. For a topic with
    message.timestamp.type=LogAppendTime the timestamp-type bit and maxTimestamp are set too; those are covered
    by the CRC, so it is recomputed, as DefaultRecordBatch.setMaxTimestamp does. A CreateTime batch keeps the
    client's CRC (Kafka skips the rewrite when nothing covered changes).
    """
    out = bytearray(data)
    struct.pack_into(">q", out, 0, base_offset)
    struct.pack_into(">i", out, 12, leader_epoch)
    if append_time_ms is not None:
        (attributes,) = struct.unpack_from(">h", out, 21)
        struct.pack_into(">h", out, 21, attributes | LOG_APPEND_TIME_FLAG)
        struct.pack_into(">q", out, 35, append_time_ms)
        struct.pack_into(">I", out, 17, crc32c.crc32c(memoryview(out)[CRC_START:]))
    return bytes(out)


TRANSACTIONAL_FLAG, CONTROL_FLAG = 0x10, 0x20  # attributes bits 4 and 5
ABORT_MARKER, COMMIT_MARKER = 0, 1  # ControlRecordType


def _varint(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def control_batch(producer_id: int, producer_epoch: int, commit: bool, timestamp_ms: int,
                  coordinator_epoch: int = 0, control: bool = True) -> tuple[bytes, Batch]:
    """A transaction marker: one control record in a transactional control batch (ControlRecordType,
    EndTransactionMarker; protocol guide "Control Batches"). Key: version 0, type (0 abort, 1 commit);
    value: version 0, coordinator epoch. baseOffset 0: the partition assigns it on append."""
    key = struct.pack(">hh", 0, COMMIT_MARKER if commit else ABORT_MARKER)
    value = struct.pack(">hi", 0, coordinator_epoch)
    body = b"\x00" + _varint(0) + _varint(0) + _varint(len(key)) + key + _varint(len(value)) + value + _varint(0)
    record = _varint(len(body)) + body
    attributes = TRANSACTIONAL_FLAG | (CONTROL_FLAG if control else 0)  # control=False: a fault only
    covered = struct.pack(">hiqqqhii", attributes, 0, timestamp_ms, timestamp_ms, producer_id, producer_epoch, -1, 1)
    covered += record
    crc = crc32c.crc32c(covered)
    data = struct.pack(">qiibI", 0, len(covered) + 9, 0, 2, crc) + covered
    return data, parse_header(data)


def control_type(data: bytes) -> int:
    """The ControlRecordType of a control batch's (first) record: ABORT_MARKER or COMMIT_MARKER."""
    _, pos = _read_varint(data, HEADER_SIZE)  # record length
    pos += 1  # attributes
    _, pos = _read_varint(data, pos)  # timestamp delta
    _, pos = _read_varint(data, pos)  # offset delta
    _, pos = _read_varint(data, pos)  # key length
    return struct.unpack_from(">h", data, pos + 2)[0]  # after the key's version


MAX_DECOMPRESSED = 64 << 20  # bound on one batch's decompressed records (a decompression bomb costs no more)


def _raw_snappy(data: bytes) -> bytes:
    if cramjam.snappy.decompress_raw_len(data) > MAX_DECOMPRESSED:
        raise ValueError("snappy block too large")
    return bytes(cramjam.snappy.decompress_raw(data))


def _snappy(data: bytes) -> bytes:
    """Java clients frame snappy the xerial way (magic, two ints, then int32-sized raw blocks); others send raw."""
    if data[:8] != b"\x82SNAPPY\x00":
        return _raw_snappy(data)
    out, pos = bytearray(), 16
    while pos + 4 <= len(data) and len(out) <= MAX_DECOMPRESSED:
        (size,) = struct.unpack_from(">i", data, pos)
        out += _raw_snappy(data[pos + 4:pos + 4 + size])
        pos += 4 + size
    return bytes(out)


#: attributes & 0x07 -> decompressor of the records section (protocol guide 'Record Batch': compression codecs),
#: each stopping at MAX_DECOMPRESSED bytes.
_DECOMPRESS = {
    1: lambda d: zlib.decompressobj(47).decompress(d, MAX_DECOMPRESSED),  # gzip (47: expect a gzip header)
    2: _snappy,
    3: lambda d: lz4.frame.LZ4FrameDecompressor().decompress(d, max_length=MAX_DECOMPRESSED),
    4: lambda d: zstandard.ZstdDecompressor().stream_reader(d).read(MAX_DECOMPRESSED),
}


def decompress(codec: int, data: bytes) -> bytes:
    """``data`` decompressed with a record batch codec id (0 none ... 4 zstd), bounded as batches are; KeyError for
    an unknown id, another exception for data the codec cannot read (KIP-714 telemetry reuses Kafka's codec ids)."""
    return data if codec == 0 else _DECOMPRESS[codec](data)


def record_timestamps(data: bytes) -> list[int]:
    """Timestamps of a stored batch's records, decompressing when needed (ListOffsets by timestamp)."""
    batch = parse_header(data)
    if batch.attributes & LOG_APPEND_TIME_FLAG:  # every record carries the batch's append time
        return [batch.max_timestamp] * batch.count
    codec = batch.attributes & 0x07
    records = data[HEADER_SIZE:]
    stamps, pos = [], 0
    try:
        if codec:
            records = _DECOMPRESS[codec](records)
        for _ in range(batch.count):
            size, pos = _read_varint(records, pos)
            end = pos + size
            pos += 1  # attributes
            delta, _ = _read_varint(records, pos)
            stamps.append(batch.base_timestamp + delta)
            pos = end
    except Exception:  # undecodable or oversized: the batch's own max timestamp is all we know
        return [batch.max_timestamp] * batch.count
    return stamps


def has_null_key(data: bytes) -> bool:
    """Whether any record of a (validated) batch has a null key: a compacted topic refuses it (LogValidator)."""
    batch = parse_header(data)
    records = data[HEADER_SIZE:]
    pos = 0
    try:
        if batch.attributes & 0x07:
            records = _DECOMPRESS[batch.attributes & 0x07](records)
        for _ in range(batch.count):
            size, pos = _read_varint(records, pos)
            end = pos + size
            pos += 1  # attributes
            _, pos = _read_varint(records, pos)  # timestamp delta
            _, pos = _read_varint(records, pos)  # offset delta
            key_length, _ = _read_varint(records, pos)
            if key_length < 0:
                return True
            pos = end
    except Exception:  # an undecodable compressed body: no key can be read, so none is known to be null
        return False
    return False


def split_records(data: bytes) -> list[tuple[int, bytes | None, bytes]]:
    """(offset delta, key, the record's own bytes) of each record of a stored batch, decompressed; raises on an
    undecodable body."""
    batch = parse_header(data)
    body = data[HEADER_SIZE:]
    if batch.attributes & 0x07:
        body = _DECOMPRESS[batch.attributes & 0x07](body)
    out, pos = [], 0
    for _ in range(batch.count):
        start = pos
        size, pos = _read_varint(body, pos)
        end = pos + size
        if end > len(body):
            raise ValueError("a record overruns the batch")
        pos += 1  # attributes
        _, pos = _read_varint(body, pos)  # timestamp delta
        delta, pos = _read_varint(body, pos)
        key_length, pos = _read_varint(body, pos)
        key = None if key_length < 0 else bytes(body[pos:pos + key_length])
        out.append((delta, key, bytes(body[start:end])))
        pos = end
    return out


def with_records(data: bytes, kept: list[bytes]) -> bytes:
    """The stored batch holding only ``kept`` (records of its own, in order), uncompressed; every other header
    field stays, lastOffsetDelta included (as the log cleaner keeps it), and the CRC-32C is recomputed."""
    out = bytearray(data[:HEADER_SIZE]) + b"".join(kept)
    (attributes,) = struct.unpack_from(">h", out, 21)
    struct.pack_into(">h", out, 21, attributes & ~0x07)
    struct.pack_into(">i", out, 57, len(kept))
    struct.pack_into(">i", out, 8, len(out) - LOG_OVERHEAD)
    struct.pack_into(">I", out, 17, crc32c.crc32c(memoryview(out)[CRC_START:]))
    return bytes(out)
