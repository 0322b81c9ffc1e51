"""Byte-exact Kafka vectors (tests/vectors/kafka/*.json) checked against our codecs, record batches and layers.

Each vector names its source. Decoding must give the recorded value, and encoding that value must give the
recorded bytes (except compressed record payloads, whose bytes depend on the compressor).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wirecheck.protocols import fields as f
from wirecheck.protocols.kafka import layers, messages, records

HERE = Path(__file__).parent / "kafka"


def load(name: str) -> dict:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


MESSAGES = load("messages.json")["vectors"]
BATCHES = load("record_batches.json")["batches"]
FIELDS = load("fields.json")


@pytest.mark.parametrize("vector", MESSAGES, ids=[v["name"] for v in MESSAGES])
def test_message_vector(vector):
    data = bytes.fromhex(vector["hex"])
    key, version = vector["api_key"], vector["version"]
    if vector["part"] == "request-frame":
        decoded = messages.decode_request(data)
        header = decoded["header"]
        encoded = messages.encode_request(key, version, header["CorrelationId"], header["ClientId"],
                                          vector["decoded"]["body"])
        assert bytes(layers.KafkaRequest(data)) == data  # the generated scapy layer round-trips it too
        assert layers.KafkaRequest(data).payload.to_value() == vector["decoded"]["body"]
    elif vector["part"] == "response-frame":
        decoded = messages.decode_response(key, version, data)
        encoded = messages.encode_response(key, version, decoded["header"]["CorrelationId"],
                                           vector["decoded"]["body"])
        assert bytes(layers.response_frame_class(key, version)(data)) == data
    else:
        codec = messages.request_codec(key, version)
        decoded = codec.decode(data)
        encoded = codec.encode(vector["decoded"])
    assert decoded == vector["decoded"]
    assert encoded == data


@pytest.mark.parametrize("vector", BATCHES, ids=[v["name"] for v in BATCHES])
def test_record_batch_vector(vector):
    data = bytes.fromhex(vector["hex"])
    batch, end = records.decode_batch(data)
    assert end == len(data)
    assert batch.crc == vector["crc"] == f.crc32c(data[records.ATTRIBUTES_OFFSET:])
    assert batch.compression == vector["compression"]
    assert batch.control == vector["control"]
    assert (batch.base_timestamp, batch.max_timestamp) == (vector["base_timestamp"], vector["max_timestamp"])
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
        vector["producer_id"], vector["producer_epoch"], vector["base_sequence"])
    expected = [records.Record(value=bytes.fromhex(r["value"]), key=bytes.fromhex(r["key"]),
                               headers=[(k, bytes.fromhex(v)) for k, v in r["headers"]],
                               offset_delta=r["offset_delta"], timestamp_delta=r["timestamp_delta"])
                for r in vector["records"]]
    assert batch.records == expected
    rebuilt = records.encode_batch(batch)
    if vector["byte_exact_encoding"]:
        assert rebuilt == data
    else:
        again, _ = records.decode_batch(rebuilt)
        assert again.records == expected


def test_record_batch_vector_crc_is_checked():
    data = bytearray(bytes.fromhex(BATCHES[2]["hex"]))
    data[-1] ^= 0xFF
    with pytest.raises(records.CorruptBatch):
        records.decode_batch(bytes(data))


@pytest.mark.parametrize(("value", "hexed"), FIELDS["uvarint"])
def test_uvarint_vector(value, hexed):
    assert f.uvarint_bytes(value) == bytes.fromhex(hexed)
    assert f.read_uvarint(bytes.fromhex(hexed), 0) == (value, len(hexed) // 2)


@pytest.mark.parametrize(("signed", "unsigned"), FIELDS["zigzag"])
def test_zigzag_vector(signed, unsigned):
    assert f.zigzag(signed) == unsigned
    assert f.unzigzag(unsigned) == signed


@pytest.mark.parametrize(("value", "hexed"), FIELDS["varint"])
def test_varint_vector(value, hexed):
    out = bytearray()
    f.VARINT.write(out, value)
    assert bytes(out) == bytes.fromhex(hexed)
    assert f.VARINT.read(bytes(out), 0) == (value, len(out))


def test_checksum_vectors():
    for data, crc in FIELDS["crc32c"]:
        assert f.crc32c(bytes.fromhex(data)) == int(crc, 16)
    for data, crc in FIELDS["crc32"]:
        assert f.crc32(bytes.fromhex(data)) == int(crc, 16)
