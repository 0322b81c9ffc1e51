"""Kafka record batches (magic 2) and the legacy message sets (magic 0 and 1), written from the protocol guide.

Record batch, magic 2 (protocol guide "Record Batch"; KIP-98)::

    baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 (2) | crc uint32 |
    attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 |
    producerId int64 | producerEpoch int16 | baseSequence int32 | recordCount int32 | records...

* ``batchLength`` counts the bytes after itself (partitionLeaderEpoch .. end);
* ``crc`` is CRC-32C over attributes .. end (everything after the crc field);
* attributes: bits 0-2 compression, bit 3 timestamp type (1 = log append time), bit 4 transactional,
  bit 5 control, bit 6 delete horizon present (KIP-534);
* records (compressed as one block when bits 0-2 are non-zero; the count stays outside)::

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
    keyLength varint | key | valueLength varint | value | headerCount varint |
    (headerKeyLength varint | headerKey | headerValueLength varint | headerValue)*

  lengths are zig-zag varints, -1 null (header keys are never null).
* a control batch holds one record whose key is ``version int16 | type int16`` (0 abort, 1 commit).

Legacy message (magic 0/1; protocol guide "Message sets")::

    offset int64 | messageSize int32 | crc int32 | magic int8 | attributes int8 | [timestamp int64 (magic 1)] |
    key bytes(int32 length, -1 null) | value bytes

  CRC-32 (IEEE) over magic .. end. A compressed message's value is a whole inner message set.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from wirecheck.protocols import fields as f
from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols import compression
from wirecheck.protocols.batches import (ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER, LENGTH_OFFSET,  # noqa: F401 (re-exported)
                                         MAGIC_OFFSET, batch_end, crc_mismatch, read_header, recompute_crc)

BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")  # base offset .. record count: 61 bytes
BATCH_OVERHEAD = BATCH_HEADER.size  # 61
MIN_BATCH_LENGTH = BATCH_OVERHEAD - 12  # 49: batchLength's value for an empty batch

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40

CONTROL_ABORT, CONTROL_COMMIT = 0, 1

_HEADER_KEY = f.VarBytes("header key", text=True)
_BYTES = f.VarBytes("bytes")


class CorruptBatch(DecodeError):
    """The batch frames correctly but its CRC does not match (Kafka: CORRUPT_MESSAGE, error 2)."""


@dataclass
class Record:
    value: bytes | None = b""
    key: bytes | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    offset_delta: int = 0
    timestamp_delta: int = 0
    attributes: int = 0  # unused by Kafka, must be written as 0


@dataclass
class RecordBatch:
    records: list[Record] = field(default_factory=list)
    base_offset: int = 0
    partition_leader_epoch: int = -1
    magic: int = 2
    compression: int = compression.NONE
    log_append_time: bool = False
    transactional: bool = False
    control: bool = False
    delete_horizon: bool = False
    last_offset_delta: int | None = None  # None: derived from the records
    base_timestamp: int = 0
    max_timestamp: int | None = None  # None: derived from the records
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    crc: int | None = None  # filled by the parser; the builder computes it

    @property
    def attributes(self) -> int:
        return ((self.compression & COMPRESSION_MASK) | (TIMESTAMP_TYPE_BIT if self.log_append_time else 0)
                | (TRANSACTIONAL_BIT if self.transactional else 0) | (CONTROL_BIT if self.control else 0)
                | (DELETE_HORIZON_BIT if self.delete_horizon else 0))


# ---------------------------------------------------------------------------------------------------------
# Writing


def encode_record(record: Record) -> bytes:
    body = bytearray()
    f.INT8.write(body, record.attributes)
    f.VARLONG.write(body, record.timestamp_delta)
    f.VARINT.write(body, record.offset_delta)
    _BYTES.write(body, record.key)
    _BYTES.write(body, record.value)
    f.VARINT.write(body, len(record.headers))
    for key, value in record.headers:
        _HEADER_KEY.write(body, key)
        _BYTES.write(body, value)
    out = bytearray()
    f.VARINT.write(out, len(body))
    return bytes(out + body)


def encode_batch(batch: RecordBatch) -> bytes:
    """The batch's bytes, with batchLength and CRC-32C computed."""
    payload = b"".join(encode_record(r) for r in batch.records)
    payload = compression.compress(batch.compression, payload)
    last_delta = batch.last_offset_delta
    if last_delta is None:
        last_delta = max((r.offset_delta for r in batch.records), default=0)
    max_ts = batch.max_timestamp
    if max_ts is None:
        max_ts = batch.base_timestamp + max((r.timestamp_delta for r in batch.records), default=0)
    after_crc = struct.pack(">hiqqqhii", batch.attributes, last_delta, batch.base_timestamp, max_ts,
                            batch.producer_id, batch.producer_epoch, batch.base_sequence,
                            len(batch.records)) + payload
    crc = f.crc32c(after_crc)
    batch_length = 4 + 1 + 4 + len(after_crc)  # partitionLeaderEpoch + magic + crc + the rest
    return struct.pack(">qiibI", batch.base_offset, batch_length, batch.partition_leader_epoch, batch.magic,
                       crc) + after_crc


def build_batch(values, *, keys=None, compression_codec: int = compression.NONE, base_offset: int = 0,
                base_timestamp: int = 0, **options) -> bytes:
    """Convenience: a batch of records with these values (and keys), offset deltas 0..n-1."""
    keys = list(keys) if keys is not None else [None] * len(values)
    records = [Record(value=v, key=k, offset_delta=i) for i, (k, v) in enumerate(zip(keys, values))]
    return encode_batch(RecordBatch(records=records, compression=compression_codec, base_offset=base_offset,
                                    base_timestamp=base_timestamp, **options))


def control_batch(commit: bool, producer_id: int, producer_epoch: int, base_offset: int = 0,
                  coordinator_epoch: int = 0, timestamp: int = 0) -> bytes:
    """A transaction marker: one control record, key = version 0 + type, value = version + coordinator epoch."""
    key = struct.pack(">hh", 0, CONTROL_COMMIT if commit else CONTROL_ABORT)
    value = struct.pack(">hi", 0, coordinator_epoch)
    return encode_batch(RecordBatch(records=[Record(key=key, value=value)], base_offset=base_offset,
                                    transactional=True, control=True, producer_id=producer_id,
                                    producer_epoch=producer_epoch, base_timestamp=timestamp))


# ---------------------------------------------------------------------------------------------------------
# Reading


def _decode_record(buf: bytes, pos: int, index: int) -> tuple[Record, int]:
    start = pos
    length, pos = f.VARINT.read(buf, pos)
    if length < 0 or pos + length > len(buf):
        raise DecodeError(f"record length {length} with {len(buf) - pos} bytes left", start, [f"record[{index}]"])
    end = pos + length
    base = pos
    body = buf[base:end]  # the record alone, so reads stay inside it (slicing up to it was quadratic per batch)
    size = len(body)
    try:
        attributes, at = f.INT8.read(body, 0)
        timestamp_delta, at = f.VARLONG.read(body, at)
        offset_delta, at = f.VARINT.read(body, at)
        key, at = _BYTES.read(body, at)
        value, at = _BYTES.read(body, at)
        count_at = at
        count, at = f.VARINT.read(body, at)
        if count < 0 or count * 2 > size - at:
            raise DecodeError(f"header count {count} with {size - at} bytes left", count_at)
        headers = []
        for _ in range(count):
            header_key, at = _HEADER_KEY.read(body, at)
            if header_key is None:
                raise DecodeError("null header key", at)
            header_value, at = _BYTES.read(body, at)
            headers.append((header_key, header_value))
    except DecodeError as exc:
        exc.offset += base  # offsets in the frame, not in the record
        raise exc.within(f"record[{index}]") from None
    if at != size:
        raise DecodeError(f"record length {length} but its fields end {size - at} bytes before it", start,
                          [f"record[{index}]"])
    return Record(value=value, key=key, headers=headers, offset_delta=offset_delta,
                  timestamp_delta=timestamp_delta, attributes=attributes), end


def decode_batch(buf: bytes, pos: int = 0, verify_crc: bool = True,
                 limit: int = compression.DEFAULT_LIMIT) -> tuple[RecordBatch, int]:
    """Decode one magic-2 batch at ``pos``; returns (batch, end). Strict: raises DecodeError/CorruptBatch."""
    header = read_header(buf, pos, BATCH_OVERHEAD)
    (count,) = struct.unpack_from(">i", buf, pos + HEADER.size)
    if header.magic != 2:
        raise DecodeError(f"magic {header.magic} where a record batch (magic 2) was expected", pos + MAGIC_OFFSET,
                          ["magic"])
    end = batch_end(buf, pos, header, MIN_BATCH_LENGTH, "batchLength")
    if verify_crc and (wrong := crc_mismatch(buf, pos, end, header)):
        raise CorruptBatch(wrong, pos + CRC_OFFSET, ["crc"])
    attributes = header.attributes
    codec = attributes & COMPRESSION_MASK
    if codec not in compression.NAMES:
        raise DecodeError(f"unknown compression codec {codec}", pos + ATTRIBUTES_OFFSET, ["attributes"])
    if count < 0:
        raise DecodeError(f"negative record count {count}", pos + BATCH_OVERHEAD - 4, ["recordCount"])
    payload = bytes(buf[pos + BATCH_OVERHEAD : end])
    try:
        payload = compression.decompress(codec, payload, limit)
    except compression.CompressionError as exc:
        raise DecodeError(str(exc), pos + BATCH_OVERHEAD, ["records"]) from None
    if count > len(payload):  # every record takes at least one byte
        raise DecodeError(f"record count {count} but only {len(payload)} record bytes", pos + BATCH_OVERHEAD - 4,
                          ["recordCount"])
    records, rpos = [], 0
    for index in range(count):
        try:
            record, rpos = _decode_record(payload, rpos, index)
        except DecodeError as exc:
            if codec == compression.NONE:
                exc.offset += pos + BATCH_OVERHEAD
            raise exc.within("records") from None
        records.append(record)
    if rpos != len(payload):
        raise DecodeError(f"{len(payload) - rpos} bytes after the {count} records the batch counts",
                          pos + BATCH_OVERHEAD + (rpos if codec == compression.NONE else 0), ["records"])
    batch = RecordBatch(records=records, base_offset=header.base_offset, partition_leader_epoch=header.leader_epoch,
                        magic=header.magic, compression=codec, log_append_time=bool(attributes & TIMESTAMP_TYPE_BIT),
                        transactional=bool(attributes & TRANSACTIONAL_BIT), control=bool(attributes & CONTROL_BIT),
                        delete_horizon=bool(attributes & DELETE_HORIZON_BIT),
                        last_offset_delta=header.last_offset_delta, base_timestamp=header.first_timestamp,
                        max_timestamp=header.max_timestamp, producer_id=header.producer_id,
                        producer_epoch=header.producer_epoch, base_sequence=header.base_sequence, crc=header.crc)
    return batch, end


def decode_batches(data: bytes, allow_partial_tail: bool = False, verify_crc: bool = True) -> list[RecordBatch]:
    """Decode a records field of magic-2 batches.

    A Fetch response may end with a partial batch (the broker cuts at max bytes; protocol guide, "Fetch API"):
    ``allow_partial_tail`` ignores a tail shorter than its own batchLength.
    """
    batches, pos = [], 0
    while pos < len(data):
        if allow_partial_tail and _is_partial_tail(data, pos):
            break
        batch, pos = decode_batch(data, pos, verify_crc)
        batches.append(batch)
    return batches


def batches_as_fields(data: bytes | None) -> list[dict] | bytes | None:
    """A Records field as plain values (batch header fields, and each record), for comparing two servers' answers
    field by field (differential mode); bytes that are not v2 batches stay bytes."""
    if not data or magic_of(data) != 2:
        return data
    try:
        found = decode_batches(data, allow_partial_tail=True, verify_crc=False)
    except DecodeError:
        return data
    return [{name: getattr(batch, name) for name in ("base_offset", "partition_leader_epoch", "compression",
                                                     "log_append_time", "transactional", "control", "base_timestamp",
                                                     "max_timestamp", "producer_id", "producer_epoch",
                                                     "base_sequence", "crc")}
            | {"records": [vars(record) for record in batch.records]} for batch in found]


def _is_partial_tail(data: bytes, pos: int) -> bool:
    if len(data) - pos < 12:
        return True
    (length,) = struct.unpack_from(">i", data, pos + LENGTH_OFFSET)
    return length >= MIN_BATCH_LENGTH and pos + 12 + length > len(data)


def magic_of(data: bytes, pos: int = 0) -> int | None:
    """The magic byte of the batch or message at ``pos`` (offset 16 in every format), None if too short."""
    return data[pos + MAGIC_OFFSET] if len(data) > pos + MAGIC_OFFSET else None


# ---------------------------------------------------------------------------------------------------------
# Legacy message sets (magic 0 and 1)


@dataclass
class LegacyMessage:
    offset: int
    magic: int
    attributes: int
    timestamp: int | None  # None for magic 0
    key: bytes | None
    value: bytes | None
    crc: int = 0

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK


_LEGACY_BYTES = f.bytes_codec(compact=False, nullable=True)


def encode_legacy_message(offset: int, value: bytes | None, key: bytes | None = None, magic: int = 1,
                          timestamp: int = 0, attributes: int = 0) -> bytes:
    body = bytearray(struct.pack(">bb", magic, attributes))
    if magic == 1:
        body += struct.pack(">q", timestamp)
    _LEGACY_BYTES.write(body, key)
    _LEGACY_BYTES.write(body, value)
    crc = f.crc32(bytes(body))
    return struct.pack(">qiI", offset, len(body) + 4, crc) + bytes(body)


def encode_legacy_set(values, magic: int = 1, codec: int = compression.NONE, base_offset: int = 0,
                      timestamp: int = 0) -> bytes:
    """A message set; with a codec, one wrapper message whose value is the compressed inner set."""
    inner = b"".join(encode_legacy_message(base_offset + i if codec == compression.NONE else i, v, magic=magic,
                                           timestamp=timestamp) for i, v in enumerate(values))
    if codec == compression.NONE:
        return inner
    if codec not in (compression.GZIP, compression.SNAPPY, compression.LZ4):
        raise ValueError(f"codec {codec} is not available in magic {magic}")
    return encode_legacy_message(base_offset + len(values) - 1, compression.compress(codec, inner), magic=magic,
                                 timestamp=timestamp, attributes=codec)


def decode_legacy_set(data: bytes, verify_crc: bool = True, allow_partial_tail: bool = False,
                      limit: int = compression.DEFAULT_LIMIT, _depth: int = 0) -> list[LegacyMessage]:
    """Decode a message set of magic 0/1 messages, unwrapping compressed wrappers (one level deep)."""
    messages, pos = [], 0
    while pos < len(data):
        if len(data) - pos < 12:
            if allow_partial_tail:
                break
            raise DecodeError(f"truncated message header: {len(data) - pos} bytes", pos)
        offset, size = struct.unpack_from(">qi", data, pos)
        if size < 0:
            raise DecodeError(f"negative message size {size}", pos + 8, ["messageSize"])
        end = pos + 12 + size
        if end > len(data):
            if allow_partial_tail:
                break
            raise DecodeError(f"message size {size} overruns the data", pos + 8, ["messageSize"])
        body = data[pos + 12 : end]
        if len(body) < 6:
            raise DecodeError(f"message of {size} bytes is shorter than crc+magic+attributes", pos + 8)
        crc, magic, attributes = struct.unpack_from(">Ibb", body, 0)
        if magic not in (0, 1):
            raise DecodeError(f"magic {magic} in a legacy message set", pos + 16, ["magic"])
        if verify_crc and f.crc32(body[4:]) != crc:
            raise CorruptBatch(f"crc {crc:#010x} but the data gives {f.crc32(body[4:]):#010x}", pos + 12, ["crc"])
        bpos = 6
        timestamp = None
        try:
            if magic == 1:
                timestamp, bpos = f.INT64.read(body, bpos)
            key, bpos = _LEGACY_BYTES.read(body, bpos)
            value, bpos = _LEGACY_BYTES.read(body, bpos)
        except DecodeError as exc:
            exc.offset += pos + 12
            raise
        if bpos != len(body):
            raise DecodeError(f"{len(body) - bpos} bytes after the message value", pos + 12 + bpos)
        message = LegacyMessage(offset, magic, attributes, timestamp, key, value, crc)
        if message.compression != compression.NONE:
            if _depth > 0 or value is None:
                raise DecodeError("nested or empty compressed wrapper", pos)
            try:
                inner = compression.decompress(message.compression, value, limit)
            except compression.CompressionError as exc:
                raise DecodeError(str(exc), pos + 12, ["value"]) from None
            messages.extend(decode_legacy_set(inner, verify_crc, False, limit, _depth + 1))
        else:
            messages.append(message)
        pos = end
    return messages
