"""Byte-exact RustLog frames from the seed, checked against the layers, the fast codec and the broker's codec."""

import json
from pathlib import Path

import pytest

from wirecheck.protocols.rustlog.layers import REQUESTS, RESPONSES, RustLogFrame, decode_frame, encode_frame, schema_problems

VECTORS = json.loads((Path(__file__).parent / "rustlog" / "frames.json").read_text())["frames"]


def test_seed_example_length_is_computed_not_copied():
    frame = bytes.fromhex(VECTORS[0]["hex"])
    assert frame[:4] == b"\x00\x00\x00\x4e"  # 78: the seed's "0x4A (74)" is wrong
    assert len(frame) - 4 == 78


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_fast_codec(vector):
    frame = encode_frame(vector["object"])
    if vector["hex"]:
        assert frame.hex() == vector["hex"]
    assert decode_frame(frame) == vector["object"]
    assert schema_problems(vector["object"]) == []


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_scapy_layers(vector):
    obj = vector["object"]
    cls = {**REQUESTS, **RESPONSES}[obj["type"]]
    layer = cls(**{k: v for k, v in obj.items() if k != "type"})
    frame = bytes(RustLogFrame() / layer)
    assert frame == encode_frame(obj)  # the layer and the fast codec agree byte for byte
    assert RustLogFrame(frame).message().to_dict() == obj
    assert RustLogFrame(frame)[cls].to_dict() == obj  # dissected: the message is the frame's payload layer


@pytest.mark.parametrize("vector", [v for v in VECTORS if v["object"]["type"] in REQUESTS], ids=lambda v: v["name"])
def test_reference_broker_decodes_the_vectors(vector):
    from wirecheck.broker.rustlog import schema, wire

    frame = bytes.fromhex(vector["hex"])
    (length,) = wire.LENGTH.unpack_from(frame)
    assert length == len(frame) - 4
    kind, fields = schema.parse_request(wire.parse_json(wire.decode_text(frame[4:])))
    assert kind == vector["object"]["type"]
    assert set(fields) >= {k for k in vector["object"] if k != "type"}
