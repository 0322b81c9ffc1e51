"""Framing: length prefix limits, bytes that are not JSON, split and pipelined frames (seed §Frame Structure)."""

import struct
import time

import pytest

from wirecheck.protocols.rustlog.clauses import MAX_FRAME
from wirecheck.protocols.rustlog.layers import encode_frame
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.rustlog.client import C, RustLog, answer_clause, b64, short

case = pytest.mark.case


@case("rustlog.framing.max-size-accepted", hostile=True)
def test_frame_of_exactly_max_size_is_processed(target):
    # A Ping padded with JSON whitespace to exactly MAX_FRAME_SIZE bytes: valid JSON, the largest legal frame.
    core = b'{"type":"Ping"}'
    payload = b"{" + b" " * (MAX_FRAME - len(core)) + core[1:]
    assert len(payload) == MAX_FRAME
    client = RustLog(target)
    client.session.deadline = max(target.deadline, 10.0)
    client.send(encode_frame(payload))
    client.pong("rustlog.framing.max-size-accepted")


@case("rustlog.framing.oversize", hostile=True)
@pytest.mark.parametrize("length", [MAX_FRAME + 1, 0xFFFFFFFF], ids=["max+1", "u32-max"])
def test_oversized_length_closes_the_connection(target, length):
    # Only the header is sent: a conforming broker decides from the length alone and never waits for the body.
    client = RustLog(target)
    client.send(struct.pack(">I", length) + b'{"type":"Ping"}')
    client.closes("rustlog.framing.oversize", allowed_codes=(413, 400))


@case("rustlog.framing.zero-length", hostile=True)
def test_zero_length_closes_the_connection(target):
    client = RustLog(target)
    client.send(struct.pack(">I", 0))
    reply = client.session.recv()
    if reply.is_frame:
        error = client.decode(reply, "rustlog.framing.zero-length")
        if error["type"] != "Error":
            raise Divergence(C["rustlog.framing.zero-length"], "an Error or a close", short(error))
        ending = client.session.recv()
        if not ending.ended:
            # Answered and stayed open: the seed's framing error should end the connection.
            raise Divergence(C["rustlog.framing.zero-length"], "the connection closed after the Error",
                             f"{ending}: the connection stayed open", note="SHOULD-level reading: see decision")
    elif not reply.ended:
        raise Divergence(C["rustlog.framing.zero-length"], "an Error then a close, or a close", str(reply))


@case("rustlog.framing.invalid-utf8", hostile=True)
@pytest.mark.parametrize("payload", [
    b'{"type":"Ping","x":"\xff"}',
    b'{"type":"Ping","x":"\xc3\x28"}',  # invalid continuation byte
    b'{"type":"Ping","x":"\xed\xa0\x80"}',  # an encoded UTF-16 surrogate
    b'{"type":"Ping","x":"\xf0\x9f\x98"}',  # truncated 4-byte sequence
], ids=["ff", "bad-continuation", "surrogate", "truncated"])
def test_invalid_utf8_closes_the_connection(target, payload):
    client = RustLog(target)
    client.send(encode_frame(payload))
    client.closes("rustlog.framing.invalid-utf8", allowed_codes=(400,))


@case("rustlog.framing.malformed-json", hostile=True)
@pytest.mark.parametrize("payload", [
    b'{"type":"Ping"', b'{"type":Ping}', b"{'type':'Ping'}", b'{"type":"Ping"}}', b"not json",
    b'{"type":"Ping",}', b"\x00", b'{"type":"Ping"} {"type":"Ping"}', b"NaN",
], ids=["unterminated", "bare-word", "single-quotes", "extra-brace", "text", "trailing-comma", "nul",
        "two-values", "nan"])
def test_malformed_json_closes_the_connection(target, payload):
    client = RustLog(target)
    client.send(encode_frame(payload))
    client.closes("rustlog.framing.malformed-json", allowed_codes=(400,))


@case("rustlog.framing.partial-header")
@pytest.mark.parametrize("split", [1, 2, 3, 4, 7], ids=lambda n: f"split-at-{n}")
def test_frame_split_across_segments(target, split):
    client = RustLog(target)
    frame = encode_frame({"type": "Ping"})
    client.send(frame)  # whole, it gets a Pong (a wrong answer is rustlog.ping.pong's)
    client.pong("rustlog.framing.partial-header")
    client.send(frame[:split])
    time.sleep(0.05)  # separate TCP segments, not one coalesced write
    client.send(frame[split:])
    answer = client.receive("rustlog.framing.partial-header", "an answer to the split Ping")
    if answer != {"type": "Pong"}:  # the same frame got a Pong whole: the split is what changed
        raise Divergence(C["rustlog.framing.partial-header"], '{"type":"Pong"}, as for the whole frame',
                         short(answer))


@case("rustlog.framing.pipelining")
def test_pipelined_requests_are_answered_in_order(target):
    client = RustLog(target)
    topic = target.unique("pipe")
    requests = [{"type": "CreateTopic", "topic": topic, "partition_count": 1}, {"type": "Ping"}]
    requests += [{"type": "Produce", "topic": topic, "partition": 0, "records": [b64(f"{i:04d}".encode())]}
                 for i in range(20)]
    requests += [{"type": "DescribeTopic", "topic": topic}, {"type": "Ping"}]
    client.send(b"".join(encode_frame(r) for r in requests))  # one write: 24 frames back to back
    expected = ["CreateTopicResponse", "Pong"] + ["ProduceResponse"] * 20 + ["DescribeTopicResponse", "Pong"]
    seen = [client.decode(client.session.recv(), "rustlog.framing.pipelining", f"answer {i + 1} of {len(requests)}",
                          type_clause=answer_clause(request)) for i, request in enumerate(requests)]
    kinds = [a["type"] for a in seen]
    if kinds != expected:
        raise Divergence(C["rustlog.framing.pipelining"], " ".join(expected), " ".join(kinds))
    offsets = [a["base_offset"] for a in seen[2:22]]  # their values are produce.offsets' concern; their order ours
    if offsets != list(range(offsets[0], offsets[0] + 20)):
        raise Divergence(C["rustlog.framing.pipelining"], "consecutive base offsets in request order", str(offsets))


@case("rustlog.framing.response-frame")
@pytest.mark.parametrize("request_obj", [{"type": "Ping"}, {"type": "ListTopics"}, {"type": "MetricsFetch"},
                                         {"type": "DescribeTopic", "topic": "no-such-topic-wirecheck"}],
                         ids=["Ping", "ListTopics", "MetricsFetch", "Error"])
def test_every_response_is_a_length_prefixed_json_object(target, request_obj):
    # call() decodes strictly: length prefix = payload size, UTF-8, a JSON object with a string "type", and the
    # field kinds of that type's layer.
    RustLog(target).call(request_obj, "rustlog.framing.response-frame")
