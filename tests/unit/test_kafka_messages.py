"""The definition-driven Kafka message API: versions, header rules, round trips, strict decoding."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirecheck.protocols.kafka import messages, schema
from wirecheck.protocols.kafka.messages import DecodeError
from wirecheck.strategies import kafka as kafka_strategies

# (api key, first flexible version), from the spec notes section 3 (Kafka 4.x definitions)
FLEXIBLE_FROM = {18: 3, 3: 9, 0: 9, 1: 12, 2: 6, 10: 3, 11: 6, 14: 4, 12: 4, 13: 4, 8: 8, 9: 6, 19: 5, 22: 2}


def test_all_definitions_load():
    definitions = schema.definitions()
    assert len(definitions) >= 108
    assert {"RequestHeader", "ResponseHeader"} <= set(definitions)
    assert len(messages.api_keys()) >= 50


@pytest.mark.parametrize(("api_key", "first_flexible"), sorted(FLEXIBLE_FROM.items()))
def test_flexible_versions_match_the_spec_notes(api_key, first_flexible):
    assert not messages.flexible(api_key, first_flexible - 1)
    assert messages.flexible(api_key, first_flexible)
    assert messages.request_header_version(api_key, first_flexible - 1) == 1
    assert messages.request_header_version(api_key, first_flexible) == 2


def test_version_ranges_from_the_definitions():
    assert messages.versions(0) == (3, 13)
    assert messages.versions(1) == (4, 18)
    assert messages.versions(18) == (0, 4)
    assert messages.api_name(18) == "ApiVersions" and messages.api_key_by_name("Produce") == 0
    assert list(messages.encodable_versions(0))[:3] == [0, 1, 2]  # removed versions stay encodable
    with pytest.raises(messages.UnknownApi):
        messages.request_codec(18, 5)
    with pytest.raises(messages.UnknownApi):
        messages.api_name(9999)


def test_api_versions_response_header_is_always_v0():
    for version in range(0, 5):
        assert messages.response_header_version(18, version) == 0
    assert messages.response_header_version(3, 12) == 1
    assert messages.response_header_version(3, 8) == 0


def test_client_id_stays_classic_in_header_v2():
    frame = messages.encode_request(3, 12, 9, "ab", {"Topics": None})
    assert frame[12:16] == b"\x00\x02ab"  # INT16 length, not a compact string


@given(kafka_strategies.request_frames(include_removed=True))
def test_request_frames_round_trip(frame):
    decoded = messages.decode_request(frame)
    header = decoded["header"]
    again = messages.encode_request(header["RequestApiKey"], header["RequestApiVersion"], header["CorrelationId"],
                                    header["ClientId"], decoded["body"], header.get("_tagged_fields"))
    assert again == frame


@given(kafka_strategies.any_message(kind="response", unknown_tags=True), kafka_strategies.correlation_ids)
def test_response_frames_round_trip_with_unknown_tags(message, correlation_id):
    frame = messages.encode_response(message.api_key, message.version, correlation_id, message.body)
    decoded = messages.decode_response(message.api_key, message.version, frame)
    assert decoded["header"]["CorrelationId"] == correlation_id
    assert messages.encode_response(message.api_key, message.version, correlation_id, decoded["body"]) == frame


@given(kafka_strategies.any_message(kind="response"), st.data())
def test_every_truncation_is_a_decode_error(message, data):
    frame = messages.encode_response(message.api_key, message.version, 1, message.body)
    cut = data.draw(st.integers(4, len(frame) - 1))
    truncated = (cut - 4).to_bytes(4, "big") + frame[4:cut]
    with pytest.raises(DecodeError):
        messages.decode_response(message.api_key, message.version, truncated)


def test_trailing_bytes_and_bad_frame_lengths_are_rejected():
    frame = messages.encode_response(18, 0, 1, {"ErrorCode": 0, "ApiKeys": []})
    longer = (len(frame) - 3).to_bytes(4, "big") + frame[4:] + b"\x00"
    with pytest.raises(DecodeError, match="trailing"):
        messages.decode_response(18, 0, longer)
    with pytest.raises(DecodeError, match="frame length"):
        messages.decode_response(18, 0, frame + b"\x00")
    with pytest.raises(DecodeError, match="negative frame length"):
        messages.decode_response(18, 0, b"\xff\xff\xff\xff")


def test_decode_error_names_field_and_offset():
    body = {"ErrorCode": 0, "ApiKeys": [{"ApiKey": 0, "MinVersion": 0, "MaxVersion": 3}]}
    frame = bytearray(messages.encode_response(18, 1, 1, body))
    frame[10:14] = (5).to_bytes(4, "big")  # ApiKeys count: 5 claimed, 1 present
    with pytest.raises(DecodeError) as caught:
        messages.decode_response(18, 1, bytes(frame))
    assert caught.value.path == ["body", "ApiKeys"]
    assert caught.value.offset == 10
    assert "body.ApiKeys at offset 10" in str(caught.value)


def test_a_cut_inside_fixed_fields_read_together_names_the_cut_field():
    # the request header's ApiKey, ApiVersion and CorrelationId are read with one struct call
    frame = messages.encode_request(18, 0, 7, "c", {})
    short = (7).to_bytes(4, "big") + frame[4:11]  # CorrelationId cut after 3 of its 4 bytes
    with pytest.raises(DecodeError) as caught:
        messages.decode_request(short)
    assert caught.value.path == ["header", "CorrelationId"] and "truncated int32" in str(caught.value)
    assert messages.decode_request(frame)["header"]["CorrelationId"] == 7


def test_tagged_fields_known_and_unknown():
    body = {"ErrorCode": 0, "ApiKeys": [], "ThrottleTimeMs": 0, "FinalizedFeaturesEpoch": 7,
            "_tagged_fields": {42: b"\x99"}}
    encoded = messages.response_codec(18, 3).encode(body)
    assert encoded.endswith(b"\x02\x01\x08" + (7).to_bytes(8, "big") + b"\x2a\x01\x99")
    decoded = messages.response_codec(18, 3).decode(encoded)
    assert decoded["FinalizedFeaturesEpoch"] == 7 and decoded["_tagged_fields"] == {42: b"\x99"}
    assert decoded["ZkMigrationReady"] is False  # absent tagged fields take their defaults
    default_only = messages.response_codec(18, 3).encode({"ErrorCode": 0, "FinalizedFeaturesEpoch": -1})
    assert default_only.endswith(b"\x00")  # a tagged field equal to its default is not written


def test_nullable_struct_marker():
    codec = messages.request_codec(75, 0)  # DescribeTopicPartitions: Cursor is a nullable struct
    encoded = codec.encode({"Topics": [], "ResponsePartitionLimit": 10, "Cursor": None})
    assert codec.decode(encoded)["Cursor"] is None
    cursor = {"TopicName": "t", "PartitionIndex": 3}
    assert codec.decode(codec.encode({"Topics": [], "Cursor": cursor}))["Cursor"] == cursor
    bad = bytearray(codec.encode({"Topics": [], "Cursor": cursor}))
    bad[bad.index(1, 5)] = 7  # the marker: neither -1 nor 1
    with pytest.raises(DecodeError, match="marker"):
        codec.decode(bytes(bad))


def test_encoding_matches_kafka_python():
    """kafka-python builds its classes from the same JSON with its own code: an independent encoder."""
    from kafka.protocol.metadata.api_versions import ApiVersionsRequest
    from kafka.protocol.metadata import MetadataRequest

    request = ApiVersionsRequest[4](client_software_name="wc", client_software_version="1")
    request.with_header(correlation_id=5, client_id="x")
    assert bytes(request.encode(header=True, framed=True)) == messages.encode_request(
        18, 4, 5, "x", {"ClientSoftwareName": "wc", "ClientSoftwareVersion": "1"})
    topic_id = uuid.UUID(int=0)
    request = MetadataRequest[12](topics=[(topic_id, "t")], allow_auto_topic_creation=True,
                                  include_topic_authorized_operations=False)
    request.with_header(correlation_id=6, client_id="x")
    assert bytes(request.encode(header=True, framed=True)) == messages.encode_request(
        3, 12, 6, "x", {"Topics": [{"TopicId": topic_id, "Name": "t"}], "AllowAutoTopicCreation": True,
                        "IncludeTopicAuthorizedOperations": False})


def test_describe_requests_and_their_responses():
    import wirecheck.protocols.kafka as kafka

    request = messages.encode_request(18, 3, 4242, "c", {"ClientSoftwareName": "a", "ClientSoftwareVersion": "1"})
    assert kafka.describe(request).startswith("ApiVersions v3 request corr=4242")
    response = messages.encode_response(18, 3, 4242, {"ErrorCode": 35, "ApiKeys": []})
    assert kafka.describe_answer(response).startswith("ApiVersions v3 response corr=4242 {'ErrorCode': 35")
    assert "not a ApiVersions v3 response" in kafka.describe_answer(response[:-1])
    assert kafka.describe(b"\xff") == "Kafka frame length=None corr?=None (1 bytes)"
    assert kafka.is_hello_answer(messages.encode_response(18, 0, kafka.HELLO_CORRELATION_ID, {
        "ErrorCode": 0, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}]}))


def test_a_response_that_parses_as_a_request_is_shown_as_a_response():
    # An ApiVersions v0 answer with correlation id 0x00120000, error 0 and no keys is also a valid ApiVersions v0
    # request (api key 18, version 0, correlation id 0, empty client id): transcripts must label it by its
    # direction, not by what it parses as.
    import wirecheck.protocols.kafka as kafka
    from wirecheck.protocols.transcript import Transcript

    correlation = 18 << 16
    request = messages.encode_request(18, 0, correlation, "c", {})
    response = messages.encode_response(18, 0, correlation, {"ErrorCode": 0, "ApiKeys": []})
    assert messages.decode_request(response)["header"]["RequestApiKey"] == 18
    transcript = Transcript("kafka", kafka.SPEC.describe, kafka.SPEC.describe_answer)
    transcript.add(1, "send", request)
    transcript.add(1, "recv", response)
    decoded = [e["decoded"] for e in transcript.to_dict("c", "n")["events"]]
    assert decoded[0].startswith(f"ApiVersions v0 request corr={correlation}")
    assert decoded[1].startswith(f"ApiVersions v0 response corr={correlation}")
    assert f"ApiVersions v0 response corr={correlation}" in transcript.render()


@pytest.mark.parametrize("shape", ["v12-body-for-v13", "tags-in-non-flexible", "field-missing"])
def test_responses_decode_only_in_the_requested_versions_shape(shape):
    body = {"Brokers": [], "ClusterId": None, "ControllerId": 1, "Topics": []}
    if shape == "v12-body-for-v13":
        frame, version = messages.encode_response(3, 12, 5, body), 13
    elif shape == "tags-in-non-flexible":
        frame, version = messages.encode_response(3, 8, 5, body) + b"\x00", 8
    else:
        frame, version = messages.encode_response(3, 8, 5, body)[:-4], 8
    frame = (len(frame) - 4).to_bytes(4, "big") + frame[4:]
    with pytest.raises(messages.DecodeError):
        messages.decode_response(3, version, frame)
