"""Byte-exact Barco vectors (tests/vectors/barco/vectors.json) checked against the suite's struct codec
(protocols/barco/wire.py), its scapy layers (layers.py), its murmur3 (murmur.py) AND the reference broker's own
codec (broker/barco/), which is a second implementation: both must agree with the same bytes.

Frames are the research notes' computed examples; records, chunks, poll bodies, JSON polls and discovery documents
are laid out by hand from the notes' tables; murmur3 and token vectors are upstream's tests, copied as data.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
import zstandard

from wirecheck.protocols.barco import layers, murmur, wire
from wirecheck.broker.barco import codec

DATA = json.loads((Path(__file__).parent / "barco" / "vectors.json").read_text(encoding="utf-8"))


def named(section: str) -> dict:
    return {v["name"]: v for v in DATA[section]}


FRAMES, RECORDS, CHUNKS = named("frames"), named("records"), named("chunks")
MIN_TOKEN = -(1 << 63)


def unhex(text: str, chunk: str | None = None) -> bytes:
    if chunk is not None:
        text = text.replace("<chunk>", CHUNKS[chunk]["hex"])
    return bytes.fromhex(re.sub(r"[\s|]", "", text))


def records_of(name: str) -> list[tuple[int, bytes]]:
    return [(ts, body.encode()) for ts, body in RECORDS[name]["records"]]


def each(section: str, where=lambda v: True):
    chosen = [v for v in DATA[section] if where(v)]
    return pytest.mark.parametrize("vector", chosen, ids=[v["name"] for v in chosen])


def produce_of(vector) -> tuple:
    p = vector["produce"]
    return p["timestamp"], p["key"].encode(), p["topic"].encode(), [m.encode() for m in p["messages"]]


# -- binary producer frames ------------------------------------------------------------------------------------


@each("frames")
def test_wire_header(vector):
    data = unhex(vector["hex"])
    version, flags, sid, op, length, crc = vector["header"]
    head = wire.parse_header(data)
    assert (head.version, head.flags, head.stream_id, head.opcode, head.body_length, head.crc) == tuple(vector["header"])
    assert head.crc_ok and length == len(data) - wire.HEADER_SIZE
    assert wire.header(op, length, sid, flags, version) == data[: wire.HEADER_SIZE]
    assert wire.crc(data[:9]) == crc


@each("frames")
def test_wire_bad_crc_is_seen(vector):
    data = bytearray(unhex(vector["hex"]))
    data[12] ^= 0x01
    assert not wire.parse_header(bytes(data)).crc_ok


@each("frames", lambda v: "produce" in v)
def test_wire_produce(vector):
    data = unhex(vector["hex"])
    timestamp, key, topic, messages = produce_of(vector)
    parsed = wire.parse_produce(data[wire.HEADER_SIZE :], data[1])
    assert (parsed.timestamp, parsed.key, parsed.topic, parsed.messages) == (timestamp, key, topic, messages)
    assert wire.produce(topic, messages, key, data[3], timestamp) == data


@each("frames", lambda v: "error" in v)
def test_wire_error(vector):
    data = unhex(vector["hex"])
    assert wire.parse_error(data[wire.HEADER_SIZE :]) == (vector["error"]["code"], vector["error"]["message"])
    body = wire.error_body(vector["error"]["code"], vector["error"]["message"])
    assert wire.frame(wire.ERROR, body, vector["header"][2]) == data


@each("frames")
def test_layers_dissect_and_build(vector):
    data = unhex(vector["hex"])
    version, flags, sid, op, length, crc = vector["header"]
    packet = layers.BarcoFrame(data)
    assert (packet.version, int(packet.flags), packet.stream_id, packet.opcode, packet.body_length, packet.crc) == \
        (version, flags, sid, op, length, crc)
    built = layers.BarcoFrame(flags=flags, stream_id=sid, opcode=op)
    if "produce" in vector:
        timestamp, key, topic, messages = produce_of(vector)
        body = packet[layers.Produce]
        assert (body.key, body.topic, [m.data for m in body.messages]) == (key, topic, messages)
        assert (body.timestamp if flags & 1 else None) == timestamp
        fields = {"timestamp": timestamp} if timestamp is not None else {}
        built = built / layers.Produce(key=key, topic=topic, messages=[layers.Message(data=m) for m in messages],
                                       **fields)
    elif "error" in vector:
        body = packet[layers.Error]
        assert (body.code, body.message.decode()) == (vector["error"]["code"], vector["error"]["message"])
        built = built / layers.Error(code=vector["error"]["code"], message=vector["error"]["message"].encode())
    assert bytes(built) == data


@each("frames")
def test_broker_codec_frames(vector):
    data = unhex(vector["hex"])
    version, flags, sid, op, length, _ = vector["header"]
    assert codec.decode_head(data[: codec.HEAD_SIZE]) == (version, flags, sid, op, length, True)
    if "produce" in vector:
        assert codec.decode_produce(data[codec.HEAD_SIZE :], flags) == produce_of(vector)
    elif "error" in vector:
        assert codec.error_frame(sid, vector["error"]["message"], vector["error"]["code"]) == data
    elif op in (codec.OP_READY, codec.OP_PRODUCE_RESPONSE, codec.OP_STARTUP, codec.OP_HEARTBEAT):
        assert codec.encode_frame(op, sid) == data  # responses and empty requests: version 1, flags 0


def test_broker_codec_sees_a_bad_crc():
    data = bytearray(unhex(FRAMES["startup-sid0"]["hex"]))
    data[9] ^= 0x80
    assert codec.decode_head(bytes(data))[-1] is False


# -- records, chunks, poll bodies ------------------------------------------------------------------------------


@each("records")
def test_records(vector):
    data, records = unhex(vector["hex"]), records_of(vector["name"])
    assert wire.parse_records(data) == records
    assert wire.records(records) == data
    assert codec.encode_records(records) == data
    dissected = layers.Records(data)
    assert [(r.timestamp, r.body) for r in dissected.records] == records
    assert bytes(layers.Records(records=[layers.Record(timestamp=t, body=b) for t, b in records])) == data


@each("chunks")
def test_chunks_decompress_to_their_records(vector):
    payload, records = unhex(vector["hex"]), records_of(vector["records"])
    assert wire.zstd_has_checksum(payload)
    assert wire.parse_records(wire.decompress(payload)) == records
    assert codec.decompress_records(payload) == records


@each("chunks")
def test_chunk_with_a_broken_checksum_is_refused(vector):
    payload = bytearray(unhex(vector["hex"]))
    payload[-1] ^= 0xFF  # the last 4 bytes are the content checksum (low 32 bits of XXH64)
    with pytest.raises(wire.WireError):
        wire.decompress(bytes(payload))
    with pytest.raises(zstandard.ZstdError):
        codec.decompress_records(bytes(payload))


def test_both_compressors_write_the_checksum_flag():
    raw = wire.records(records_of("records-hello-world"))
    assert wire.zstd_has_checksum(wire.compress(raw))
    assert wire.zstd_has_checksum(codec.compress(raw))
    assert not wire.zstd_has_checksum(codec.compress(raw, checksum=False))


def poll_items(vector) -> list[tuple]:
    payload = unhex(CHUNKS[vector["chunk"]]["hex"])
    return [(i["token"], i["range_index"], i["version"], i["topic"].encode(), i["offset"], payload)
            for i in vector["items"]]


@each("polls")
def test_poll_response(vector):
    data, items = unhex(vector["hex"], vector["chunk"]), poll_items(vector)
    parsed = wire.parse_poll_response(data)
    assert [(p.token, p.range_index, p.version, p.topic, p.offset, p.payload) for p in parsed] == items
    assert wire.poll_response([wire.PollItem(*i) for i in items]) == data
    assert codec.poll_body(items) == data
    records = records_of(CHUNKS[vector["chunk"]]["records"])
    assert all(p.records() == records for p in parsed)


@each("polls")
def test_poll_response_layers(vector):
    data, items = unhex(vector["hex"], vector["chunk"]), poll_items(vector)
    dissected = layers.PollResponse(data)
    assert dissected.count == len(items)
    assert [(p.token, p.range_index, p.version, p.topic, p.offset, p.chunk) for p in dissected.items] == items
    built = layers.PollResponse(items=[layers.PollItem(token=t, range_index=r, version=v, topic=n, offset=o, chunk=c)
                                       for t, r, v, n, o, c in items])
    assert bytes(built) == data


@each("polls")
def test_poll_response_truncated_or_padded_is_refused(vector):
    data = unhex(vector["hex"], vector["chunk"])
    for broken in (data[:-1], data + b"\x00", b"\x00\x03" + data[2:]):
        with pytest.raises(wire.WireError):
            wire.parse_poll_response(broken)


@each("json_polls")
def test_json_poll(vector):
    items = wire.parse_poll_json(vector["text"].encode())
    assert [(p.token, p.range_index, p.version, p.topic, p.offset, [json.loads(v) for v in p.values])
            for p in items] == [(i["token"], i["range_index"], i["version"], i["topic"].encode(), i["offset"],
                                 i["values"]) for i in vector["items"]]


def test_json_poll_without_start_offset_is_refused():
    doc = json.loads(DATA["json_polls"][0]["text"])
    del doc[0]["startOffset"]
    with pytest.raises(wire.WireError):
        wire.parse_poll_json(json.dumps(doc).encode())


@each("discovery")
def test_discovery(vector):
    if vector["valid"]:
        assert wire.parse_brokers(vector["text"].encode()) == json.loads(vector["text"])
    else:
        with pytest.raises(wire.WireError):
            wire.parse_brokers(vector["text"].encode())


# -- murmur3 and tokens -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", DATA["murmur3_h1"], ids=lambda v: v["key_hex"][:24] or "empty")
def test_murmur3_h1(vector):
    key = bytes.fromhex(vector["key_hex"])
    assert murmur.murmur3_h1(key) == vector["h1"]
    assert murmur.hash_token(key) == vector["h1"]
    assert codec.token_of(key) == vector["h1"]


TOKENS = DATA["token_ranges"]


@pytest.mark.parametrize("case", TOKENS["cases"], ids=lambda c: f"{c['token']}-n{c['brokers']}-r{c['ranges']}")
def test_token_ranges(case):
    unit, n = TOKENS["chunk_size_unit"], case["brokers"]
    size = unit * (12288 // n) if n > 1 else 1 << 64  # dev mode owns the whole ring
    broker = max(i for i in range(n) if MIN_TOKEN + size * i <= case["token"])
    assert broker == case["broker"]
    assert murmur.range_index(case["token"], case["ranges"], MIN_TOKEN + size * broker, size) == case["range"]


def test_broker_range_index_in_dev_mode():
    """The broker computes a keyed message's range index over the whole ring (dev mode, decision D7)."""
    from wirecheck.broker.barco.server import TOKEN

    broker = Broker()
    for case in (c for c in TOKENS["cases"] if c["brokers"] == 1):
        key = next(k for k in (b"k%d" % i for i in range(10_000))
                   if murmur.range_index(murmur.hash_token(k), 4) == case["range"])
        assert broker.personality._reader_key(b"t1", key) == (b"t1", TOKEN, case["range"], 1)


# -- the reference broker, in-process, fed the same bytes -------------------------------------------------------


class Broker:
    """The Barco personality driven in-process: frame bodies and HTTP requests in, bytes out."""

    def __init__(self):
        from wirecheck.broker.barco import BarcoOptions, create
        from wirecheck.broker.core import BrokerConfig

        self.personality = create(BrokerConfig(), BarcoOptions())
        for endpoint, port in (("producer-http", 9251), ("consumer", 9252), ("producer", 9254)):
            self.personality.listening(endpoint, port)

    def request(self, handler, method: str, path: str, query: dict | None = None, headers: dict | None = None):
        from wirecheck.broker.barco.http import Request

        request = Request(method, path, {k: [v] for k, v in (query or {}).items()}, headers or {}, b"", False, self)
        answer = handler(request)
        return asyncio.run(answer) if asyncio.iscoroutine(answer) else answer


def test_broker_acknowledges_the_produce_vectors():
    broker = Broker()
    data = unhex(FRAMES["produce-no-key"]["hex"])
    assert broker.personality._produce_frame(1, data[1], data[codec.HEAD_SIZE :]) == \
        unhex(FRAMES["produce-response-sid1"]["hex"])
    data = unhex(FRAMES["produce-timestamp"]["hex"])
    assert broker.personality._produce_frame(2, data[1], data[codec.HEAD_SIZE :]) == \
        wire.header(wire.PRODUCE_RESPONSE, 0, 2)


def test_broker_serves_the_produced_vector_as_a_poll_body():
    broker = Broker()
    data = unhex(FRAMES["produce-timestamp"]["hex"])
    broker.personality._produce_frame(2, data[1], data[codec.HEAD_SIZE :])
    query = {"consumerId": "c1", "topic": "t1", "onNewGroup": "startFromEarliest"}
    assert broker.request(broker.personality._register, "PUT", "/v1/consumer/register", query).status == 200
    reply = broker.request(broker.personality._poll, "POST", "/v1/consumer/poll", {"consumerId": "c1"})
    assert reply.status == 200 and reply.content_type == wire.POLL_MIME
    (item,) = wire.parse_poll_response(reply.body)
    assert (item.token, item.version, item.topic, item.offset) == (MIN_TOKEN, 1, b"t1", 0)
    assert item.range_index == murmur.range_index(murmur.hash_token(b"key"), wire.DEFAULT_RANGES)
    assert wire.zstd_has_checksum(item.payload)
    assert wire.decompress(item.payload) == wire.records([(1700000000000000, b"abc")])


def test_broker_json_poll_matches_the_vector():
    broker = Broker()
    vector = DATA["json_polls"][0]
    item = vector["items"][0]
    key = (item["topic"].encode(), item["token"], item["range_index"], item["version"])
    body = broker.personality._poll_json([(key, item["offset"], unhex(CHUNKS[vector["chunk"]]["hex"]), None)])
    assert json.loads(body) == json.loads(vector["text"])


def test_broker_discovery_matches_the_vector():
    broker = Broker()
    reply = broker.request(broker.personality._discovery, "GET", "/v1/brokers")
    assert reply.status == 200
    assert json.loads(reply.body) == json.loads(named("discovery")["brokers-dev"]["text"])
