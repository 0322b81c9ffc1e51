"""The generated Fluvio scapy layers describe exactly the bytes the codec writes, for every advertised version."""

from hypothesis import given, settings

from wirecheck.protocols.fluvio import layers, messages
from wirecheck.strategies.fluvio import request_frames


def test_a_layer_for_every_advertised_request_and_response_version():
    for key, (low, high) in messages.SPU_ADVERTISED.items():
        for version in range(low, high + 1):
            assert ("request", key, version) in layers.LAYERS
            assert ("response", key, version) in layers.LAYERS


@settings(max_examples=60)
@given(request_frames("wirecheck-layers"))
def test_request_layers_dissect_and_rebuild_the_codec_bytes(drawn):
    api_key, version, frame = drawn
    packet = layers.FluvioRequest(frame)
    header_size = 4 + 2 + 2 + 4 + 2 + len(packet.client_id)
    if len(frame) > header_size:  # an ApiVersions v0 body is empty: nothing for a body layer to dissect
        assert type(packet.payload) is layers.LAYERS["request", api_key, version]
    assert bytes(packet) == frame


def test_response_layer_dissects_an_encoded_response():
    body = {"responses": [{"name": "t", "partitions": [
        {"partition_index": 0, "error_code": 0, "base_offset": 7, "log_append_time_ms": -1,
         "log_start_offset": 0}]}], "throttle_time_ms": 0}
    frame = messages.encode_response(messages.PRODUCE, 25, 5, body)
    layer = layers.LAYERS["response", messages.PRODUCE, 25](frame[8:])  # after size and correlation id
    assert bytes(layer) == frame[8:]
    assert layer.responses[0]["partitions"][0]["base_offset"] == 7
