"""Byte-exact Fluvio vectors (tests/vectors/fluvio/vectors.json) checked against our codecs and scapy layers.

Each vector names its source: an upstream test (copied as data), the seed, or derived by hand from the upstream
code. Decoding must give the recorded values and re-encoding them must give the recorded bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wirecheck.protocols import fields as f
from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import errors, layers, messages, records

DATA = json.loads((Path(__file__).parent / "fluvio" / "vectors.json").read_text(encoding="utf-8"))
VECTORS = {v["name"]: v for v in DATA["vectors"]}


def of_kind(*kinds):
    chosen = [v for v in DATA["vectors"] if v["kind"] in kinds]
    return pytest.mark.parametrize("vector", chosen, ids=[v["name"] for v in chosen])


@pytest.mark.parametrize("case", DATA["varints"], ids=lambda c: str(c["value"]))
def test_varint(case):
    assert f.varint_bytes(case["value"]).hex() == case["hex"]
    assert f.VARLONG.read(bytes.fromhex(case["hex"]), 0) == (case["value"], len(case["hex"]) // 2)


def test_request_header():
    vector = VECTORS["request-header"]
    data = bytes.fromhex(vector["hex"])
    framed = len(data).to_bytes(4, "big") + data
    header, end = messages.decode_header(framed)
    assert header == vector["decoded"] and end == len(framed)
    d = vector["decoded"]
    assert messages.encode_header(d["api_key"], d["api_version"], d["correlation_id"], d["client_id"]) == data
    assert bytes(layers.FluvioRequest(api_key=18, api_version=1, correlation_id=1, client_id=b"consumer-1"))[4:] == data


def test_record():
    vector = VECTORS["record-dog"]
    data = bytes.fromhex(vector["hex"])
    record, end = records.decode_record(data, 0)
    d = vector["decoded"]
    assert (record.value, record.key, record.offset_delta, record.headers) == (b"dog", None, 1, 0) and end == len(data)
    assert records.encode_record(records.Record(value=d["value"].encode(), offset_delta=d["offset_delta"])) == data
    layer = layers.FluvioRecord(data)
    assert (layer.length, layer.offset_delta, layer.key_tag) == (9, 1, 0)


def _batch_from(decoded: dict) -> bytes:
    return records.build_batch([v.encode() for v in decoded["values"]], last_offset_delta=decoded["last_offset_delta"],
                               first_timestamp=decoded["first_timestamp"], max_time_stamp=decoded["max_time_stamp"],
                               schema_id=decoded["schema_id"])


@of_kind("batch")
def test_batch(vector):
    data = bytes.fromhex(vector["hex"])
    assert _batch_from(vector["decoded"]) == data
    batch, end = records.decode_batch(data)
    assert end == len(data) and batch.crc == vector["crc"]
    assert [r.value.decode() for r in batch.records] == vector["decoded"]["values"]
    layer = layers.FluvioBatchHeader(data)
    assert layer.crc == vector["crc"] and bytes(layer) == data
    rebuilt = layers.FluvioBatchHeader(first_timestamp=layer.first_timestamp, max_time_stamp=layer.max_time_stamp,
                                       last_offset_delta=layer.last_offset_delta) / data[records.HEADER.size:]
    assert bytes(rebuilt) == data  # the layer computes batch_len and the CRC itself


def test_batch_crc_with_schema_id():
    vector = VECTORS["batch-crc-schema"]
    data = _batch_from(vector["decoded"])
    assert records.decode_batch(data)[0].crc == vector["crc"]
    assert records.decode_batch(data)[0].schema_id == 42


def test_batch_with_a_wrong_crc_is_refused_by_the_strict_reader():
    data = bytearray(bytes.fromhex(VECTORS["batch-x"]["hex"]))
    data[records.CRC_OFFSET] ^= 1
    with pytest.raises(DecodeError, match="crc"):
        records.decode_batch(bytes(data))
    assert records.recompute_crc(bytes(data)).hex() == VECTORS["batch-x"]["hex"]


@of_kind("produce-body")
def test_produce_body(vector):
    data = bytes.fromhex(vector["hex"])
    version = vector["version"]
    body = messages.decode_produce_body(data, version)
    assert body["_smartmodules_trailer"] is vector["trailer"]
    expected = vector.get("decoded")
    if expected:
        assert (body["transactional_id"], body["isolation"], body["timeout_ms"]) == (
            expected["transactional_id"], expected["isolation"], expected["timeout_ms"])
        topic = body["topics"][0]
        assert topic["name"] == expected["topic"]
        assert topic["partitions"][0]["partition_index"] == expected["partition_index"]
        (batch,) = records.decode_record_set(topic["partitions"][0]["records"])
        assert batch.crc == expected["crc"]
    out = bytearray()
    body.pop("_smartmodules_trailer")
    messages.PRODUCE_REQUEST.write(out, body, version)
    assert bytes(out) == (data if vector["trailer"] else data + b"\x00\x00\x00\x00")
    for older, shorter in vector.get("shorter_at", {}).items():
        out = bytearray()
        messages.PRODUCE_REQUEST.write(out, body, int(older))
        assert bytes(out) == data[: len(data) - shorter]


def test_stream_fetch_body():
    data = bytes.fromhex(VECTORS["stream-fetch-request-v25"]["hex"])
    body, end = messages.STREAM_FETCH_REQUEST.read(data, 0, 25)
    assert end == len(data)
    assert (body["topic"], body["partition"], body["consumer_id"]) == ("one", 3, None)
    assert body["smartmodules"][0]["params"]["lookback"] == {"last": 1, "age": None}
    out = bytearray()
    messages.STREAM_FETCH_REQUEST.write(out, body, 25)
    assert bytes(out) == data


@of_kind("error-code")
def test_error_code(vector):
    data = bytes.fromhex(vector["hex"])
    value, end = errors.ERROR_CODE.read(data, 0, 0)
    assert (value.code, value.payload, end) == (vector["code"], vector["payload"], len(data))
    assert errors.encode(vector["code"], **vector["payload"]) == data


@of_kind("request-frame")
def test_request_frame(vector):
    data = bytes.fromhex(vector["hex"])
    decoded = messages.decode_request(data)
    header = decoded["header"]
    assert (header["api_key"], header["api_version"]) == (vector["api_key"], vector["version"])
    body = dict(decoded["body"])
    body.pop("_smartmodules_trailer", None)
    assert messages.encode_request(vector["api_key"], vector["version"], header["correlation_id"], body,
                                   header["client_id"]) == data
    layer = layers.FluvioRequest(data)
    assert bytes(layer) == data and layer.api_key == vector["api_key"]


@of_kind("response-frame")
def test_response_frame(vector):
    data = bytes.fromhex(vector["hex"])
    decoded = messages.decode_response(vector["api_key"], vector["version"], data)
    assert messages.encode_response(vector["api_key"], vector["version"], decoded["correlation_id"],
                                    decoded["body"]) == data


def test_fetch_response_carries_batch_x_unchanged():
    decoded = messages.decode_response(1, 25, bytes.fromhex(VECTORS["fetch-response-v25"]["hex"]))
    entry = decoded["body"]["topics"][0]["partitions"][0]
    assert entry["high_watermark"] == 1 and entry["aborted"] is None
    assert entry["records"].hex() == VECTORS["batch-x"]["hex"]
    assert records.as_stored(entry["records"], 0) == entry["records"]


def test_seed_example_literal_lacks_the_record_set_length():
    """The seed's example omits the RecordSet length and the record count (A6): the code's layout misreads it."""
    literal = bytes.fromhex(VECTORS["seed-produce-request-literal"]["hex"])
    corrected = bytes.fromhex(VECTORS["seed-produce-request-v7"]["hex"])
    misread = messages.decode_produce_body(literal, 7)
    # base_offset's zero bytes are taken for an empty RecordSet and an empty smartmodules list: the batch is lost
    assert misread["topics"][0]["partitions"][0]["records"] == b"" and misread["smartmodules"] == []
    assert len(corrected) == len(literal) + 4 + 4  # RecordSet length + record count, nothing else
    body = messages.decode_produce_body(corrected, 7)
    (batch,) = records.decode_record_set(body["topics"][0]["partitions"][0]["records"])
    assert [r.value for r in batch.records] == [b"seed"] and batch.first_sequence == 0
