"""Byte-exact vectors of the Kafka 4 APIs whose definitions come from kio (tests/vectors/kafka/kafka4_messages.json).

Laid out by hand from the Apache JSON each vector names, so they check the folded definitions against the
spec text rather than against kio. Decoding must give the recorded value, encoding it the recorded bytes, and
the generated scapy layers must rebuild the frame.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from wirecheck.protocols.kafka import kio_definitions, layers, messages

if not kio_definitions.available():
    pytest.skip("kio (the differential extra) is not installed", allow_module_level=True)

VECTORS = json.loads((Path(__file__).parent / "kafka" / "kafka4_messages.json").read_text(encoding="utf-8"))[
    "vectors"]


def typed(value):
    """JSON values as the codec's: {"uuid": hex} is a UUID, {"hex": hex} bytes."""
    if isinstance(value, dict):
        if value.keys() == {"uuid"}:
            return uuid.UUID(hex=value["uuid"])
        if value.keys() == {"hex"}:
            return bytes.fromhex(value["hex"])
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return value


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_kafka4_message_vector(vector):
    data = bytes.fromhex(vector["hex"])
    key, version, expected = vector["api_key"], vector["version"], typed(vector["decoded"])
    if vector["part"] == "request-frame":
        decoded = messages.decode_request(data)
        header = decoded["header"]
        encoded = messages.encode_request(key, version, header["CorrelationId"], header["ClientId"],
                                          expected["body"])
        assert bytes(layers.KafkaRequest(data)) == data
        assert layers.KafkaRequest(data).payload.to_value() == expected["body"]
    elif vector["part"] == "response-frame":
        decoded = messages.decode_response(key, version, data)
        encoded = messages.encode_response(key, version, decoded["header"]["CorrelationId"], expected["body"])
        assert bytes(layers.response_frame_class(key, version)(data)) == data
    else:
        codec = messages.request_codec(key, version)
        decoded = codec.decode(data)
        encoded = codec.encode(expected)
    assert decoded == expected
    assert encoded == data


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_kio_reads_the_vector_body_whole(vector):
    """A second reader of the hand-laid bytes: kio's, generated from the same Apache JSON."""
    from kio import index
    from kio.serial import entity_reader

    key, version, decoded = vector["api_key"], vector["version"], typed(vector["decoded"])
    kind = "response" if vector["part"] == "response-frame" else "request"
    body_value = decoded["body"] if vector["part"].endswith("frame") else decoded
    codec = messages.response_codec(key, version) if kind == "response" else messages.request_codec(key, version)
    body = codec.encode(body_value)
    assert bytes.fromhex(vector["hex"]).endswith(body)
    load = index.load_response_schema if kind == "response" else index.load_request_schema
    _, size = entity_reader(load(key, version))(body, 0)
    assert size == len(body)
