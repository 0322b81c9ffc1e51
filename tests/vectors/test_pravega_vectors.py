"""Byte-exact Pravega vectors (tests/vectors/pravega/vectors.json) checked against the struct codec, the scapy
layers and the reference broker's own codec.

The vectors are the research notes' computed bytes (§10.2) and the older layouts upstream's WireCommandsTest and
CommandDecoderTest decode (§10.1). Decoding must give the recorded values; re-encoding them (except for the old
layouts, which current writers no longer produce) must give the recorded bytes. The broker is fed the request
vectors in-process and must answer with the reply vectors byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.pravega import layers, mutf8

DATA = json.loads((Path(__file__).parent / "pravega" / "vectors.json").read_text(encoding="utf-8"))
VECTORS = {v["name"]: v for v in DATA["vectors"]}
W = cmd.uuid_of(DATA["W"]["msb"], DATA["W"]["lsb"])
BYTES_CODECS = (cmd.BLOB, cmd.LENIENT_BLOB, cmd.REST, cmd.EVENT)


def values_of(vector) -> dict:
    command = cmd.BY_NAME[vector["command"]]
    out = {}
    for f in command.fields:
        value = vector["fields"][f.name]
        if value == "W":
            value = W
        elif isinstance(value, dict) and "msb" in value:
            value = cmd.uuid_of(value["msb"], value["lsb"])
        elif f.codec in BYTES_CODECS:
            value = bytes.fromhex(value)
        out[f.name] = value
    return out


def frame_of(name: str) -> bytes:
    return bytes.fromhex(VECTORS[name]["hex"])


ALL = pytest.mark.parametrize("vector", DATA["vectors"], ids=[v["name"] for v in DATA["vectors"]])
CURRENT = [v for v in DATA["vectors"] if not v.get("decode_only")]


@ALL
def test_codec_decodes(vector):
    decoded = cmd.decode(bytes.fromhex(vector["hex"]))
    assert decoded.name == vector["command"]
    assert decoded.fields == values_of(vector)
    assert decoded.trailing == vector.get("trailing", 0)


@pytest.mark.parametrize("vector", CURRENT, ids=[v["name"] for v in CURRENT])
def test_codec_encodes(vector):
    assert cmd.encode(vector["command"], values_of(vector)).hex() == vector["hex"]


@pytest.mark.parametrize("vector", CURRENT, ids=[v["name"] for v in CURRENT])
def test_layers_build_the_same_bytes(vector):
    packet = layers.PravegaFrame() / layers.LAYERS[vector["command"]](**values_of(vector))
    assert bytes(packet).hex() == vector["hex"]


@ALL
def test_layers_dissect(vector):
    packet = layers.dissect(bytes.fromhex(vector["hex"]))
    if not vector["fields"]:  # an empty payload (KeepAlive) has no layer of its own
        assert packet.type == cmd.CODE[vector["command"]] and packet.length == 0
        return
    body = packet[layers.LAYERS[vector["command"]]]
    assert packet.type == cmd.CODE[vector["command"]]
    assert {name: getattr(body, name) for name in vector["fields"]} == values_of(vector)


@pytest.mark.parametrize("case", DATA["modified_utf8"], ids=["nul-emoji", "nul-emoji-e-acute"])
def test_modified_utf8(case):
    data = bytes.fromhex(case["hex"])
    assert cmd.STR.read(data, 0) == (case["text"], len(data))
    out = bytearray()
    cmd.STR.write(out, case["text"])
    assert bytes(out) == data
    assert mutf8.decode(b"\xc1\x81") == "A"  # readUTF accepts overlong forms


# -- the reference broker's codec, fed the same bytes ----------------------------------------------------------


class Broker:
    """The Pravega personality driven in-process: request bytes in, reply bytes out."""

    def __init__(self):
        from wirecheck.broker.core import BrokerConfig
        from wirecheck.broker.pravega import PravegaOptions, create
        from wirecheck.broker.pravega.connection import ConnectionState

        self.personality = create(BrokerConfig(), PravegaOptions())
        self.state = ConnectionState(None)

    def __call__(self, frame: bytes):
        from wirecheck.broker.pravega.wire import Reader

        code = int.from_bytes(frame[:4], "big", signed=True)
        return self.personality._dispatch(self.state, code, Reader(frame[8:]))


def test_broker_answers_hello_and_keepalive():
    broker = Broker()
    assert broker(frame_of("hello")) == frame_of("hello")
    assert broker(frame_of("keepalive")) == frame_of("keepalive")


def test_broker_append_shapes_and_replies():
    broker = Broker()
    seg = VECTORS["setup-append"]["fields"]["segment"]
    broker(cmd.encode("CreateSegment", request_id=9, segment=seg, target_rate=0, scale_type=0, delegation_token=""))
    assert broker(frame_of("setup-append")) == frame_of("append-setup")
    assert broker(frame_of("append-block-a")) is None
    assert broker(frame_of("append-block-end-a")) == frame_of("data-appended")
    assert broker(frame_of("read-segment")) == frame_of("segment-read")
    assert broker(frame_of("append-block-b2")) is None
    acked = cmd.decode(broker(frame_of("append-block-end-b2")))
    assert (acked["event_number"], acked["previous_event_number"], acked["current_segment_write_offset"]) == (2, 1, 39)
    # the segment now holds 'hello' three times; the conditional append expects 13: it fails
    assert broker(frame_of("conditional-append")) == frame_of("conditional-check-failed")
    assert broker.personality.store.segments[seg].read(0, 100) == cmd.event(b"hello") * 3


def test_broker_block_with_padding_and_standalone_end():
    broker = Broker()
    seg = VECTORS["setup-append"]["fields"]["segment"]
    broker(cmd.encode("CreateSegment", request_id=9, segment=seg, target_rate=0, scale_type=0, delegation_token=""))
    broker(frame_of("setup-append"))
    assert broker(frame_of("append-block-b1")) is None
    assert cmd.decode(broker(frame_of("append-block-end-a")))["current_segment_write_offset"] == 13
    end_c = cmd.decode(frame_of("append-block-end-c"))
    again = cmd.encode("AppendBlockEnd", {**end_c.fields, "last_event_number": 2})
    assert cmd.decode(broker(again))["current_segment_write_offset"] == 26


def test_broker_error_and_attribute_replies():
    broker = Broker()
    read_x = cmd.encode("ReadSegment", segment="x", offset=0, suggested_length=10, delegation_token="", request_id=3)
    assert broker(read_x) == frame_of("no-such-segment")
    broker(frame_of("create-segment"))
    assert broker(frame_of("get-segment-attribute")) == frame_of("segment-attribute")
    assert broker(frame_of("update-segment-attribute")) == frame_of("segment-attribute-updated")
    info = cmd.decode(broker(frame_of("get-stream-segment-info")))
    assert (info["request_id"], info["exists"], info["write_offset"]) == (4, True, 0)
