"""Framing and request header: size prefix, correlation ids, order, split frames, hostile sizes (notes §2, §7)."""

import struct
import time

import pytest

from wirecheck.protocols.fluvio import messages
from wirecheck.protocols.fluvio.clauses import MAX_FRAME
from wirecheck.protocols.framing import leading_correlation_id
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.fluvio.client import C, Fluvio, frame_with_size, new_topic, record_set, batch_of

case = pytest.mark.case
API_VERSIONS_V2 = {"client_version": "0.18.2", "client_os": "linux", "client_arch": "x86_64"}


@case("fluvio.framing.response-frame")
@pytest.mark.parametrize("version", [0, 1, 2])
def test_api_versions_response_is_one_exact_frame(target, version):
    # decode_response is strict: the size must match and the body must end where the frame ends.
    Fluvio(target).api_versions(version)


@case("fluvio.framing.response-frame")
def test_answer_over_64_kib_is_one_exact_frame(target):
    """A Fetch answer larger than a 16-bit size can say: framed by its i32 size all the same."""
    client, topic = new_topic(target, stem="bigframe")
    start = client.log_end(topic)
    client.produce_ok(topic, 0, batch_of([b"\x5a" * 100_000]))
    client.fetch(topic, 0, start, clause_id="fluvio.framing.response-frame",
                 decode_clause="fluvio.framing.response-frame")


@case("fluvio.framing.correlation-id")
@pytest.mark.parametrize("correlation_id", [0, 1, 0x7FFFFFFF, -1, -(2**31)], ids=["0", "1", "max", "-1", "min"])
def test_correlation_id_is_echoed(target, correlation_id):
    client = Fluvio(target)
    client.send(messages.API_VERSIONS, 2, API_VERSIONS_V2, correlation_id)
    client.receive(messages.API_VERSIONS, 2, correlation_id, "fluvio.framing.correlation-id")


@case("fluvio.framing.in-order")
def test_pipelined_requests_are_answered_in_order(target):
    client, topic = new_topic(target, stem="order")
    version = client.version(messages.PRODUCE)
    offsets_version = client.version(messages.FETCH_OFFSETS)
    sent = []
    data = b""
    for i in range(12):  # Produce, Produce, ApiVersions, FetchOffsets, ...: every kind has others behind it
        corr = client.next_correlation_id()
        if i % 4 == 2:
            key, ver, body = messages.API_VERSIONS, 2, API_VERSIONS_V2
        elif i % 4 == 3:
            key, ver = messages.FETCH_OFFSETS, offsets_version
            body = {"topics": [{"name": topic, "partitions": [{"partition_index": 0}]}], "consumer_id": None}
        else:
            key, ver, body = messages.PRODUCE, version, Fluvio.produce_body([(topic, [(0, batch_of([b"%d" % i]))])])
        data += messages.encode_request(key, ver, corr, body)
        sent.append((key, ver, corr))
    client.session.send(data)  # one write: twelve frames back to back
    order = [corr for _, _, corr in sent]
    bases = []
    for position, (key, ver, corr) in enumerate(sent):
        reply = client.session.recv()
        got = leading_correlation_id(client.frame_of(reply, "fluvio.framing.in-order"))
        if got != corr and got in order:  # another request's answer (a wrong id is the correlation-id clause's)
            raise Divergence(C["fluvio.framing.in-order"], f"answers in request order: {order}",
                             f"the answer to request {order.index(got)} in position {position}")
        answer = client.decode(reply, key, ver, corr, "fluvio.framing.in-order")
        if key == messages.PRODUCE:
            bases.append(answer["responses"][0]["partitions"][0]["base_offset"])
    # The order is in the differences between the base offsets; where they start is fluvio.produce.offsets'.
    if [b - bases[0] for b in bases] != list(range(6)):
        raise Divergence(C["fluvio.framing.in-order"], "base offsets one apart, in request order", str(bases))
    client.expect_base(topic, 0, bases[0], batch_of([b"0"]))


@case("fluvio.framing.partial")
@pytest.mark.parametrize("split", [1, 3, 4, 5, 12, 20], ids=lambda n: f"split-at-{n}")
def test_frame_split_across_segments(target, split):
    client = Fluvio(target)
    corr = client.next_correlation_id()
    frame = messages.encode_request(messages.API_VERSIONS, 2, corr, API_VERSIONS_V2)
    client.session.send(frame[:split])
    early = client.session.recv(deadline=0.2)
    if early.is_frame:
        raise Divergence(C["fluvio.framing.partial"], "no answer before the frame is complete", str(early))
    client.session.send(frame[split:])
    client.receive(messages.API_VERSIONS, 2, corr, "fluvio.framing.partial")


@case("fluvio.framing.zero-size", hostile=True)
def test_zero_size_closes(target):
    client = Fluvio(target)
    client.session.send(frame_with_size(0))
    client.closes("fluvio.framing.zero-size")


@case("fluvio.framing.negative-size", hostile=True)
@pytest.mark.parametrize("size", [-1, -4, -5, -(2**31)], ids=["-1", "-4", "-5", "min"])
def test_negative_size_closes(target, size):
    client = Fluvio(target)
    corr = client.next_correlation_id()
    # A valid request right behind the bad size: answering it means the size was skipped, never right.
    client.session.send(frame_with_size(size) + messages.encode_request(messages.API_VERSIONS, 2, corr,
                                                                        API_VERSIONS_V2))
    reply = client.session.recv(deadline=min(target.deadline, 1.0))
    if reply.is_frame:
        raise Divergence(C["fluvio.framing.negative-size-unanswered"], "no answer after a negative size",
                         f"a {len(reply.frame)}-byte answer")
    if not reply.ended:
        raise Divergence(C["fluvio.framing.negative-size"], "the connection closed", f"{reply}: it stayed open")


@case("fluvio.framing.oversize", hostile=True)
@pytest.mark.parametrize("size", [MAX_FRAME + 1, 2**31 - 1], ids=["cap+1", "i32-max"])
def test_oversize_frame_closes_unread(target, size):
    client = Fluvio(target)
    client.session.send(frame_with_size(size, messages.encode_request(messages.API_VERSIONS, 2, 1,
                                                                      API_VERSIONS_V2)[4:]))
    reply = client.session.recv(deadline=min(target.deadline, 1.0))
    if reply.is_frame:
        raise Divergence(C["fluvio.robustness.no-hang"], "no answer to a frame that never completed", str(reply))
    if not reply.ended:
        raise Divergence(C["fluvio.framing.oversize"], "the connection closed before the body", str(reply))


@case("fluvio.header.unknown-api-key", hostile=True)
@pytest.mark.parametrize("api_key", [2, 17, 1001, 1004, 0x7FFF, 0x8000, 0xFFFF])
def test_unknown_api_key_closes(target, api_key):
    client = Fluvio(target)
    body = messages.encode_header(api_key, 0, 7, "wirecheck") + b"\x00" * 16
    client.session.send(struct.pack(">i", len(body)) + body)
    client.closes("fluvio.header.unknown-api-key")


@case("fluvio.header.truncated", hostile=True)
@pytest.mark.parametrize("cut", [2, 6, 9, 12, -1], ids=["api-key", "correlation", "client-id-len", "client-id",
                                                         "last-byte"])
def test_truncated_request_closes(target, cut):
    client = Fluvio(target)
    frame = messages.encode_request(messages.API_VERSIONS, 2, 9, API_VERSIONS_V2)
    body = frame[4:][:cut] if cut > 0 else frame[4:cut]
    client.session.send(struct.pack(">i", len(body)) + body)
    client.closes("fluvio.header.truncated")


@case("fluvio.header.truncated", hostile=True)
@pytest.mark.parametrize("what", ["option-tag-2", "bool-tag-ff", "invalid-utf8"])
def test_invalid_bytes_in_a_request_close(target, what):
    client = Fluvio(target)
    if what == "invalid-utf8":
        frame = messages.encode_request(messages.API_VERSIONS, 2, 9, {**API_VERSIONS_V2, "client_os": "linuxx"})
        frame = frame.replace(b"linuxx", b"linu\xff\xfe")  # same length, not UTF-8
    else:
        body = Fluvio.produce_body([])
        frame = bytearray(messages.encode_request(messages.PRODUCE, client.version(messages.PRODUCE), 9, body))
        tag_at = 4 + 2 + 2 + 4 + 2 + len("wirecheck")  # transactional_id's option tag
        frame[tag_at] = 2 if what == "option-tag-2" else 0xFF
        frame = bytes(frame)
    client.session.send(frame)
    client.closes("fluvio.header.truncated")


@case("fluvio.header.trailing-bytes")
def test_trailing_bytes_after_a_request_are_ignored(target):
    client = Fluvio(target)
    corr = client.next_correlation_id()
    body = messages.encode_request(messages.API_VERSIONS, 2, corr, API_VERSIONS_V2)[4:] + b"\x00\x01garbage"
    client.session.send(struct.pack(">i", len(body)) + body)
    client.receive(messages.API_VERSIONS, 2, corr, "fluvio.header.trailing-bytes")


@case("fluvio.robustness.slow-peer", hostile=True)
def test_partial_frame_does_not_block_other_connections(target):
    frame = messages.encode_request(messages.API_VERSIONS, 2, 3, API_VERSIONS_V2)
    stalled = [Fluvio(target) for _ in range(3)]
    try:
        for i, client in enumerate(stalled):
            client.session.send(frame[: 2 + i * 6])
        time.sleep(0.05)
        started = time.monotonic()
        # an answer within the deadline is this clause's; what the answer lists is fluvio.versions.advertised'
        Fluvio(target).call(messages.API_VERSIONS, 2, API_VERSIONS_V2, "fluvio.robustness.slow-peer")
        if time.monotonic() - started > target.deadline:
            raise Divergence(C["fluvio.robustness.slow-peer"], f"an answer within {target.deadline}s",
                             f"{time.monotonic() - started:.2f}s")
    finally:  # before the liveness probe: it asks whether the target survived, not whether these peers stall it
        for client in stalled:
            client.close()


@case("fluvio.robustness.survives", hostile=True)
def test_many_connections_dropped_mid_frame(target):
    frame = messages.encode_request(messages.PRODUCE, 25, 3, Fluvio.produce_body(
        [("wc-dropped", [(0, record_set(batch_of([b"x"])))])]))
    for i in range(40):
        client = Fluvio(target)
        client.session.send(frame[: 1 + i * 3 % (len(frame) - 1)])
        client.close()
    Fluvio(target).api_versions()
