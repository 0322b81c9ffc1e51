"""Framing and hostile input: every bad frame costs one connection at most, and the broker stays alive.

Each case sends one hostile frame and checks the outcome the broker's decisions name (server.py D1/D2,
records.py, messages.py, wire.py), then proves liveness with a fresh connection.
"""

from __future__ import annotations

import struct
import time

import pytest

from tests.broker.fluvio_support import (
    ThreadBroker, api_versions_body, batch, decode_api_versions, fetch_body, produce_body, record_set, request, s16,
)


@pytest.fixture(scope="module")
def broker():
    with ThreadBroker(max_frame=1 << 20, idle_timeout=0.5) as b:
        yield b


def alive(broker) -> None:
    with broker.client() as c:
        assert decode_api_versions(c.call(18, 2, api_versions_body()))[0] == 0


def produce_frame(records: bytes, topic: bytes = b"hostile", trailer: bytes = b"\x00\x00\x00\x00") -> bytes:
    name = struct.pack(">h", len(topic)) + topic
    body = b"\x00" + struct.pack(">hi", 1, 1500) + struct.pack(">i", 1) + name + struct.pack(">iI", 1, 0)
    return request(0, 25, 1, body + records + trailer)


HOSTILE = {
    "size -1": struct.pack(">i", -1),
    "size -4": struct.pack(">i", -4),
    "size -5": struct.pack(">i", -5),
    "size min i32": struct.pack(">i", -2**31),
    "size 0": struct.pack(">i", 0),
    "size 9": struct.pack(">i", 9) + bytes(9),
    "size over the frame limit": struct.pack(">i", (1 << 20) + 1),
    "size max i32": struct.pack(">i", 2**31 - 1),
    "unknown api key": request(4242, 0, 1, b""),
    "api key 1001 (server to client)": request(1001, 0, 1, b""),
    "api key 0xffff": request(0xFFFF, 0, 1, b""),
    "produce version 26": request(0, 26, 1, produce_body([])),
    "produce version -1": request(0, -1, 1, produce_body([])),
    "fetch offsets version 22": request(1002, 22, 1, struct.pack(">i", 0)),  # below the advertised 23
    "update offsets version 1": request(1005, 1, 1, struct.pack(">i", 0)),
    "truncated body": request(1, 25, 1, fetch_body([("t", [(0, 0)])])[:-3]),
    "client id invalid utf-8": struct.pack(">i", 12) + struct.pack(">Hhi", 18, 0, 1) + b"\x00\x02\xff\xfe",
    "topic name invalid utf-8": produce_frame(record_set(batch([b"a"])), topic=b"\xff\xfe"),
    "option tag 2": request(0, 25, 1, b"\x02" + produce_body([])[1:]),
    "negative produce timeout": request(0, 25, 1, b"\x00" + struct.pack(">hi", 1, -1) + struct.pack(">ii", 0, 0)),
    "hostile topic count": request(0, 25, 1, b"\x00" + struct.pack(">hi", 1, 1) + struct.pack(">i", 2**31 - 1)),
    "hostile smartmodule count": request(0, 25, 1, produce_body([], smartmodules=struct.pack(">i", 10**9))),
    "record set length negative": produce_frame(struct.pack(">i", -5)),
    "record set length beyond the frame": produce_frame(struct.pack(">i", 10**6) + batch([b"a"])),
    "batch_len below 45": produce_frame(record_set(batch([b"a"], batch_len=44))),
    "batch_len below 49 with schema id": produce_frame(record_set(batch([b"a"], schema_id=1, batch_len=48))),
    "batch_len past the record set": produce_frame(record_set(batch([b"a"], batch_len=500))),
    "trailing garbage in the record set": produce_frame(record_set(batch([b"a"]), b"\x00" * 20)),
    "fetch isolation 2": request(1, 25, 1, fetch_body([("t", [(0, 0)])], isolation=2)),
    "stream fetch isolation 255": request(1003, 25, 1, s16("t") + struct.pack(">Iqi", 0, 0, 100) + b"\xff"
                                          + b"\x00\x00\x00\x00\x00"),
    "smartmodule kind 9": request(0, 25, 1, produce_body([], smartmodules=b"\x00\x00\x00\x01\x00" + s16("m")
                                                         + b"\x09")),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_frame_closes_the_connection_and_the_broker_lives(broker, name):
    with broker.client() as c:
        assert c.outcome(HOSTILE[name], wait=2.0) == "closed", name
    alive(broker)


def test_trailing_bytes_after_a_request_are_ignored(broker):
    with broker.client() as c:
        c.send_raw(request(18, 2, 7, api_versions_body() + b"junk"))
        correlation, body = c.recv()
        assert correlation == 7 and decode_api_versions(body)[0] == 0


def test_negative_strings_and_counts_decode_as_empty(broker):
    with broker.client() as c:
        body = b"\x00" + struct.pack(">hi", 1, 1) + struct.pack(">i", -7) + struct.pack(">i", -1)
        assert c.call(0, 25, body) == struct.pack(">ii", 0, 0)


def test_a_peer_stalling_mid_frame_is_dropped_after_the_idle_timeout(broker):
    with broker.client() as c:
        c.send_raw(struct.pack(">i", 100) + b"\x00\x12")
        started = time.monotonic()
        assert c.outcome(b"", wait=3.0) == "closed"
        assert time.monotonic() - started < 2.5
    alive(broker)


def test_a_dropped_connection_with_open_streams_leaves_no_listener(broker):
    with broker.client() as c:
        c.produce("drop", batch([b"a"]))
        for n in range(5):
            c.send_raw(request(1003, 25, n, s16("drop") + struct.pack(">Iqi", 0, 1, 100) + b"\x00" + bytes(5)))
        c.fetch_offsets("drop")  # the streams are open once this is answered
    partition = broker.personality.storage.partition("drop", 0)
    deadline = time.monotonic() + 2
    while partition.listeners and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not partition.listeners
    alive(broker)


def test_more_streams_than_allowed_close_the_connection(broker):
    with broker.client() as c:
        c.produce("many", batch([b"a"]))
        frames = b"".join(request(1003, 25, n, s16("many") + struct.pack(">Iqi", 0, 1, 100) + b"\x00" + bytes(5))
                          for n in range(65))
        assert c.outcome(frames, wait=2.0) == "closed"
    alive(broker)
