"""RustLog broker: framing, the two-stage decoder, the envelope and the connection model (D1, D2, D11, D13)."""

from __future__ import annotations

import base64
import json
import struct

import pytest

from tests.broker.rustlog_support import MAX_FRAME, ThreadBroker, create_topic, encode, frame, produce


@pytest.fixture(scope="module")
def broker():
    with ThreadBroker() as running:
        yield running


@pytest.fixture
def client(broker):
    with broker.client() as connected:
        yield connected


PING = b'{"type":"Ping"}'


def assert_error(response: dict, code: int) -> None:
    assert response["type"] == "Error", response
    assert response["code"] == code, response
    assert isinstance(response["message"], str) and response["message"], response
    assert "details" in response and (response["details"] is None or isinstance(response["details"], dict))


def test_ping_pong(client):
    assert client.request({"type": "Ping"}) == {"type": "Pong"}


def test_response_length_counts_payload_only(client):
    client.send_raw(frame(PING))
    length, payload = client.recv_frame()
    assert length == len(payload) == len(b'{"type":"Pong"}')
    assert json.loads(payload.decode("utf-8")) == {"type": "Pong"}


def test_exactly_max_frame_is_accepted(client):
    padded = PING[:-1] + b" " * (MAX_FRAME - len(PING)) + b"}"
    assert len(padded) == MAX_FRAME
    assert client.exchange(frame(padded)) == ({"type": "Pong"}, False)


def test_oversize_gets_413_then_close_without_body(client):
    response, closed = client.exchange(struct.pack(">I", MAX_FRAME + 1))  # no body is ever sent
    assert closed
    assert_error(response, 413)


def test_huge_length_does_not_allocate(client):
    response, closed = client.exchange(b"\xff\xff\xff\xff")
    assert closed
    assert_error(response, 413)


def test_zero_length_gets_400_then_close(client):
    response, closed = client.exchange(b"\x00\x00\x00\x00")
    assert closed
    assert_error(response, 400)


@pytest.mark.parametrize("payload", [b'{"type":"Ping","x":"\xff"}', b'{"type":"\xed\xa0\x80"}', b"\xc0\x80"])
def test_invalid_utf8_closes(client, payload):
    response, closed = client.exchange(frame(payload))
    assert closed
    assert_error(response, 400)


@pytest.mark.parametrize("payload", [b'{"type":"Ping"', b"{'type':'Ping'}", b'{"type":"Ping"} {}', b"NaN",
                                     b'{"type":"Ping","x":Infinity}', b"\xef\xbb\xbf{}", b"[[[[[[[[[[" * 10])
def test_malformed_json_closes(client, payload):
    response, closed = client.exchange(frame(payload))
    assert closed
    assert_error(response, 400)


@pytest.mark.parametrize("payload", [b"[]", b"1", b'"Ping"', b"null", b"{}", b'{"type":1}', b'{"type":null}',
                                     b'{"type":["Ping"]}', b'{"Type":"Ping"}'])
def test_wrong_envelope_is_400_and_stays_open(client, payload):
    response, closed = client.exchange(frame(payload))
    assert not closed
    assert_error(response, 400)
    assert client.request({"type": "Ping"}) == {"type": "Pong"}


@pytest.mark.parametrize("kind", ["Nope", "ping", "Pong", "ProduceResponse", "Error", ""])
def test_unknown_type_is_400_and_stays_open(client, kind):
    response, closed = client.exchange(encode({"type": kind}))
    assert not closed
    assert_error(response, 400)


def test_deep_json_is_refused_without_recursing(client):
    for depth in (65, 100_000):
        payload = b'{"type":"Ping","x":' + b"[" * depth + b"]" * depth + b"}"
        response, closed = client.exchange(frame(payload))
        assert_error(response, 400)
        assert not closed
    nested_64 = b'{"type":"Ping","x":' + b"[" * 63 + b"]" * 63 + b"}"  # the object itself is level 1
    assert client.exchange(frame(nested_64)) == ({"type": "Pong"}, False)


def test_brackets_inside_strings_do_not_count(client):
    payload = json.dumps({"type": "Ping", "x": "[" * 1000 + '\\"{' * 100}).encode()
    assert client.exchange(frame(payload)) == ({"type": "Pong"}, False)


def test_extra_fields_ignored(client):
    assert client.request({"type": "Ping", "extra": {"nested": [1, 2]}, "z": None}) == {"type": "Pong"}


def test_duplicate_keys_are_invalid(client):
    response, closed = client.exchange(frame(b'{"type":"Ping","type":"Ping"}'))
    assert_error(response, 400)
    assert not closed


def test_header_and_body_split_across_segments(client):
    data = encode({"type": "Ping"})
    for byte in data:
        client.send_raw(bytes([byte]))
    assert client.recv() == {"type": "Pong"}


def test_pipelined_requests_answered_in_order(broker, client):
    create_topic(client, "pipelined")
    batch = b""
    for i in range(50):
        batch += encode({"type": "Produce", "topic": "pipelined", "partition": 0,
                         "records": [base64.b64encode(b"r%d" % i).decode()]})
        batch += encode({"type": "Ping"} if i % 2 else {"type": "Nope"})
    client.send_raw(batch)
    for i in range(50):
        assert client.recv() == {"type": "ProduceResponse", "base_offset": i, "record_count": 1}
        second = client.recv()
        assert second == {"type": "Pong"} if i % 2 else second["code"] == 400


def test_handler_exception_is_500_and_connection_survives(broker, client):
    async def broken(**_):
        raise ZeroDivisionError("injected")

    original = broker.personality.handlers["Ping"]
    broker.personality.handlers["Ping"] = broken
    try:
        response, closed = client.exchange(encode({"type": "Ping"}))
    finally:
        broker.personality.handlers["Ping"] = original
    assert_error(response, 500)
    assert not closed
    assert client.request({"type": "Ping"}) == {"type": "Pong"}


def test_slow_partial_frame_does_not_block_others(broker):
    with broker.client() as slow, broker.client() as fast:
        slow.send_raw(b"\x00\x00\x01\x00{")  # a frame that never completes
        assert fast.request({"type": "Ping"}) == {"type": "Pong"}


def test_broker_survives_everything_above(broker):
    with broker.client() as probe:
        assert probe.request({"type": "Ping"}) == {"type": "Pong"}
        produce(probe, "pipelined", [b"x"])
