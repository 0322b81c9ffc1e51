"""The generated scapy layers agree with the struct codec, byte for byte and value for value.

Scapy is about 100x slower than the codec, so the property runs on a few examples per API; the layers
describe and display, the codec does the bulk work.
"""

from __future__ import annotations

from hypothesis import given, settings

from wirecheck.protocols.kafka import layers, messages
from wirecheck.strategies import kafka as kafka_strategies


@settings(max_examples=40)
@given(kafka_strategies.any_message(kind="request", unknown_tags=True), kafka_strategies.correlation_ids,
       kafka_strategies.client_ids)
def test_request_layers_agree_with_codec(message, correlation_id, client_id):
    frame = messages.encode_request(message.api_key, message.version, correlation_id, client_id, message.body)
    packet = layers.request_packet(message.api_key, message.version, correlation_id, client_id, message.body)
    assert bytes(packet) == frame
    dissected = layers.KafkaRequest(frame)
    assert dissected.correlation_id == correlation_id and dissected.client_id == client_id
    assert dissected.payload.to_value() == messages.decode_request(frame)["body"]
    assert bytes(dissected) == frame


@settings(max_examples=40)
@given(kafka_strategies.any_message(kind="response", unknown_tags=True))
def test_response_layers_agree_with_codec(message):
    frame = messages.encode_response(message.api_key, message.version, 77, message.body)
    assert bytes(layers.response_packet(message.api_key, message.version, 77, message.body)) == frame
    dissected = layers.response_frame_class(message.api_key, message.version)(frame)
    assert dissected.payload.to_value() == messages.decode_response(message.api_key, message.version, frame)["body"]


def test_every_api_version_has_generated_classes():
    count = 0
    for api_key in messages.api_keys():
        for version in messages.encodable_versions(api_key):
            request = layers.body_class(api_key, version, "request")
            response = layers.body_class(api_key, version, "response")
            assert request.__name__.endswith(f"V{version}") and response.fields_desc is not None
            count += 2
    assert count > 500


def test_header_version_follows_the_api_version():
    classic = layers.KafkaRequest(messages.encode_request(3, 8, 1, "c", {"Topics": None}))
    flexible = layers.KafkaRequest(messages.encode_request(3, 12, 1, "c", {"Topics": None}))
    assert "header_tagged_fields" not in classic.show(dump=True)
    assert flexible.header_tagged_fields == {}
    assert classic.payload.__class__.__name__ == "MetadataRequestV8"
    assert flexible.payload.__class__.__name__ == "MetadataRequestV12"


def test_trailing_bytes_show_as_padding_and_show_works():
    frame = messages.encode_request(18, 0, 1, "c", {}) + b""
    padded = (len(frame) - 4 + 2).to_bytes(4, "big") + frame[4:] + b"zz"
    text = layers.KafkaRequest(padded).show(dump=True)
    assert "ApiVersionsRequest v0" in text and "zz" in text
