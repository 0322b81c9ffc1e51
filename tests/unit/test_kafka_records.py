"""Record batches (magic 2) and legacy message sets: round trips, strictness, and independent codecs agreeing."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given

from wirecheck.protocols import compression
from wirecheck.protocols.kafka import records
from wirecheck.protocols.kafka.records import CorruptBatch, DecodeError, Record, RecordBatch
from wirecheck.strategies import kafka as kafka_strategies


@given(kafka_strategies.record_batches())
def test_batch_round_trip_every_codec(batch):
    data = records.encode_batch(batch)
    decoded, end = records.decode_batch(data)
    assert end == len(data)
    assert decoded.records == batch.records
    assert decoded.compression == batch.compression
    assert (decoded.producer_id, decoded.producer_epoch, decoded.base_sequence) == (
        batch.producer_id, batch.producer_epoch, batch.base_sequence)
    assert records.encode_batch(decoded) == data  # header fields survive, so the bytes are identical


@given(kafka_strategies.record_batches(codecs=(compression.NONE,)))
def test_uncompressed_batches_match_kafka_python(batch):
    """kafka-python's DefaultRecordBatchBuilder is an independent writer of the same format."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    shift = batch.records[0].timestamp_delta  # kafka-python takes the first record's timestamp as the base
    batch.base_timestamp += shift
    for record in batch.records:
        record.timestamp_delta -= shift
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                                        base_sequence=batch.base_sequence, batch_size=1 << 24)
    for record in batch.records:
        builder.append(record.offset_delta, timestamp=batch.base_timestamp + record.timestamp_delta,
                       key=record.key, value=record.value, headers=list(record.headers))
    theirs = bytes(builder.build())
    batch.partition_leader_epoch, batch.base_offset = 0, 0  # kafka-python writes leader epoch 0, offset 0
    batch.max_timestamp = None
    assert records.encode_batch(batch) == theirs


@pytest.mark.parametrize("codec", [compression.NONE])  # kio 0.6.5's batch reader does not decompress
def test_kio_reads_our_batches(codec):
    kio_readers = pytest.importorskip("kio.records.readers")
    data = records.build_batch([b"a", None, b"c" * 300], keys=[b"k", None, b"z"], compression_codec=codec,
                               base_timestamp=1_700_000_000_000)
    batch, size = kio_readers.read_batch(data, 0)
    assert size == len(data)
    assert [r.value for r in batch.records] == [b"a", None, b"c" * 300]
    assert [r.key for r in batch.records] == [b"k", None, b"z"]


def test_crc_covers_attributes_to_end_only():
    data = records.build_batch([b"x"])
    epoch_changed = data[:12] + struct.pack(">i", 99) + data[16:]  # partitionLeaderEpoch is before the CRC
    records.decode_batch(epoch_changed)
    at = data.index(b"x", records.BATCH_OVERHEAD)  # the record's value byte
    changed = data[:at] + b"y" + data[at + 1:]
    with pytest.raises(CorruptBatch):
        records.decode_batch(changed)
    assert records.decode_batch(records.recompute_crc(changed))[0].records[0].value == b"y"


def test_strict_batch_errors():
    data = records.build_batch([b"x", b"y"])
    with pytest.raises(DecodeError, match="magic 1"):
        records.decode_batch(data[:16] + b"\x01" + data[17:])
    with pytest.raises(DecodeError, match="overruns"):
        records.decode_batch(data[:-1])
    with pytest.raises(DecodeError, match="below the minimum"):
        records.decode_batch(data[:8] + struct.pack(">i", 10) + data[12:])
    lying_count = records.recompute_crc(data[:57] + struct.pack(">i", 3) + data[61:])
    with pytest.raises(DecodeError, match="record"):
        records.decode_batch(lying_count)
    fewer = records.recompute_crc(data[:57] + struct.pack(">i", 1) + data[61:])
    with pytest.raises(DecodeError, match="bytes after"):
        records.decode_batch(fewer)
    unknown_codec = records.recompute_crc(data[:21] + struct.pack(">h", 7) + data[23:])
    with pytest.raises(DecodeError, match="codec 7"):
        records.decode_batch(unknown_codec)


def test_partial_tail_allowed_only_when_asked():
    data = records.build_batch([b"x"]) + records.build_batch([b"y"], base_offset=1)
    assert len(records.decode_batches(data[:-5], allow_partial_tail=True)) == 1
    with pytest.raises(DecodeError):
        records.decode_batches(data[:-5])


def test_control_batch():
    batch, _ = records.decode_batch(records.control_batch(True, producer_id=5, producer_epoch=1))
    assert batch.control and batch.transactional
    assert struct.unpack(">hh", batch.records[0].key) == (0, records.CONTROL_COMMIT)


def test_attributes_bits():
    batch = RecordBatch(records=[Record(b"v")], compression=compression.ZSTD, log_append_time=True,
                        transactional=True)
    assert batch.attributes == 4 | 8 | 16
    decoded, _ = records.decode_batch(records.encode_batch(batch))
    assert decoded.log_append_time and decoded.transactional and not decoded.control


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [compression.NONE, compression.GZIP, compression.SNAPPY, compression.LZ4])
def test_legacy_message_sets_match_kafka_python(magic, codec):
    from kafka.record.legacy_records import LegacyRecordBatch

    data = records.encode_legacy_set([b"one", b"two"], magic=magic, codec=codec, base_offset=10, timestamp=5)
    messages = records.decode_legacy_set(data)
    assert [m.value for m in messages] == [b"one", b"two"]
    if codec == compression.NONE:
        assert [m.offset for m in messages] == [10, 11]
        assert LegacyRecordBatch(data[: 12 + struct.unpack_from(">i", data, 8)[0]], magic).validate_crc()


def test_legacy_message_set_matches_kafka_python_builder():
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    builder = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    builder.append(0, timestamp=5, key=b"k", value=b"v")
    builder.append(1, timestamp=5, key=None, value=b"w")
    theirs = bytes(builder.build())
    ours = records.encode_legacy_message(0, b"v", key=b"k", timestamp=5) + records.encode_legacy_message(
        1, b"w", timestamp=5)
    assert ours == theirs
    with pytest.raises(CorruptBatch):
        records.decode_legacy_set(theirs[:-1] + b"x")


def test_decompression_is_bounded():
    bomb = compression.compress(compression.ZSTD, b"\x00" * 2_000_000)
    with pytest.raises(compression.CompressionError, match="limit"):
        compression.decompress(compression.ZSTD, bomb, limit=1_000_000)
    gzip_bomb = compression.compress(compression.GZIP, b"\x00" * 2_000_000)
    with pytest.raises(compression.CompressionError, match="limit"):
        compression.decompress(compression.GZIP, gzip_bomb, limit=1_000_000)
