"""The generated Fluvio scapy layers describe exactly the bytes the codec writes, for every advertised version."""

from hypothesis import given, settings

from wirecheck.protocols.fluvio import layers, messages
from wirecheck.strategies.fluvio import request_frames


def test_a_layer_for_every_spoken_request_and_response_version():
    assert messages.SPOKEN[messages.FETCH_OFFSETS] == (23, 25)  # what released clients send, not only 25
    for key, (low, high) in messages.SPOKEN.items():
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


def test_sc_request_layers_dissect_and_rebuild_the_codec_bytes():
    """An SC object request: the header, the TypeBuffer bound by api key (not the SPU's meaning of 1002/1003),
    and its body through ``inner_layer``, each rebuilt byte for byte."""
    from wirecheck.protocols.fluvio import sc, sc_layers

    spec = {"replicas": ("Computed", {"partitions": 2, "replication_factor": 1, "ignore_rack_assignment": False}),
            "cleanup_policy": None, "storage": None, "compression_type": 4, "no_deduplication": 0, "system": False}
    requests = [(sc.WATCH, sc.TOPIC, {"epoch": 3, "summary": False}),
                (sc.LIST, sc.PARTITION, {"name_filters": [{"name": "a"}], "summary": True, "system": False}),
                (sc.DELETE, sc.TOPIC, {"key": "gone", "force": False}),
                (sc.CREATE, sc.TOPIC, {"name": "made", "dry_run": False, "timeout": 5, "spec": spec})]
    for version in sc_layers.VERSIONS:
        for key, label, body in requests:
            frame = sc.encode_object_request(key, version, 9, label, body)
            packet = sc_layers.ScRequest(frame)
            assert type(packet.payload) is sc_layers.OBJECT_LAYERS[version], (key, version)
            assert packet.payload.label == label and bytes(packet) == frame
            inner = sc_layers.inner_layer("request", key, label, version)(packet.payload.body)
            assert bytes(inner) == packet.payload.body


def test_sc_answer_layers_read_what_the_reference_sc_writes():
    from wirecheck.protocols.fluvio import sc, sc_layers
    from wirecheck.broker.fluvio import sc_messages

    update = sc_messages.metadata_update(7, [], [sc_messages.topic("t", 2, 1, 5001, 4, False, 19)])
    answer = sc_layers.OBJECT_LAYERS[19](sc_messages.type_buffer(sc.TOPIC, update))
    inner = sc_layers.inner_layer("response", sc.WATCH, sc.TOPIC, 19)(answer.body)
    assert inner.epoch == 7 and [m["name"] for m in inner.all] == ["t"] and bytes(inner) == answer.body
