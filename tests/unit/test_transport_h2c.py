"""HTTP/2 with prior knowledge over h2 against a small h2 server on 127.0.0.1: concurrent streams, binary polls
in several DATA frames, long polls that do not hold other streams back, and resets and GOAWAY per stream."""

import time

import pytest

from wirecheck.protocols.spec import Endpoint
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.transport.outcome import Outcome
from wirecheck.targets.transport import open_session
from wirecheck.targets.transport.h2c import H2Session
from tests.http_servers import POLL_BODY, H2Server

CONSUMER = Endpoint("consumer", default_port=9252, transport="h2c", max_body=1 << 20)


@pytest.fixture(scope="module")
def server():
    running = H2Server()
    yield running
    running.close()


def test_request_and_transcript(server):
    transcript = Transcript("barco")
    with open_session(server.address, CONSUMER, transcript) as session:
        assert isinstance(session, H2Session)
        status = session.request("GET", "/status")
        echoed = session.request("POST", "/echo", [("content-type", "application/octet-stream")], b"\x00\xff" * 40)
    assert status.complete and (status.status, status.body, status.stream_id) == (200, b"Consumer server listening", 1)
    assert echoed.complete and echoed.body == b"\x00\xff" * 40 and echoed.stream_id == 3
    sent = b"".join(e.data for e in transcript.events if e.kind == "send")
    assert sent.startswith(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")  # prior knowledge: the preface, no Upgrade
    assert b"\x00\xff" * 40 in sent
    assert any(e.kind == "recv" for e in transcript.events)
    text = transcript.render()
    assert "stream 1: GET /status HTTP/2" in text and "stream 3: 200 (content-length: 80) 80-byte body" in text


def test_concurrent_streams_a_held_poll_does_not_hold_the_others(server):
    with H2Session(server.address, CONSUMER, Transcript("barco")) as session:
        held = session.start("POST", "/v1/consumer/poll?ms=400")
        quick = session.start("GET", "/status")
        started = time.monotonic()
        first = session.response(quick, deadline=3)
        quick_wait = time.monotonic() - started
        poll = session.response(held, deadline=3)
    assert first.complete and quick_wait < 0.4 <= time.monotonic() - started
    assert poll.complete and poll.body == POLL_BODY and poll.header("content-length") is None


def test_requests_returns_replies_in_order(server):
    with H2Session(server.address, CONSUMER, Transcript("barco")) as session:
        replies = session.requests([("POST", "/v1/consumer/poll"), ("GET", "/status"), ("GET", "/nowhere")])
    assert [(r.outcome, r.status) for r in replies] == [(Outcome.RESPONSE, 200)] * 2 + [(Outcome.RESPONSE, 404)]
    assert replies[0].body == POLL_BODY


def test_a_long_poll_past_the_deadline_is_silent(server):
    transcript = Transcript("barco")
    with H2Session(server.address, CONSUMER, transcript, deadline=0.2) as session:
        reply = session.request("POST", "/v1/consumer/poll?ms=1500")
        assert session.request("GET", "/status").complete  # the connection is still usable
    assert reply.outcome is Outcome.SILENT and reply.stream_id == 1
    assert any(e.kind == "silent" for e in transcript.events)


def test_a_reset_stream_ends_that_stream_only(server):
    with H2Session(server.address, CONSUMER, Transcript("barco")) as session:
        refused = session.request("GET", "/refuse")
        after = session.request("GET", "/status")
    assert refused.outcome is Outcome.RESET and "REFUSED_STREAM" in refused.detail
    assert after.complete


def test_goaway_ends_every_open_stream(server):
    transcript = Transcript("barco")
    with H2Session(server.address, CONSUMER, transcript) as session:
        held = session.start("POST", "/v1/consumer/poll?ms=1000")
        gone = session.request("GET", "/goaway")
        pending = session.response(held)
        later = session.request("GET", "/status")
    assert gone.outcome is Outcome.CLOSED and "GOAWAY ENHANCE_YOUR_CALM" in gone.detail
    assert pending.outcome is Outcome.CLOSED and later.outcome is Outcome.CLOSED


def test_requests_on_a_connection_already_over_each_get_their_own_stream(server):
    """Nothing is sent once the server has gone away, so h2 hands out no new stream ids: each request still gets
    a stream of its own (it was one id for all, and the second reply lookup failed)."""
    with H2Session(server.address, CONSUMER, Transcript("barco")) as session:
        session.request("GET", "/goaway")
        replies = session.requests([("GET", "/status")] * 3)
    assert [r.outcome for r in replies] == [Outcome.CLOSED] * 3
    assert len({r.stream_id for r in replies}) == 3


def test_bytes_that_are_not_http2_are_malformed():
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def answer_garbage():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        time.sleep(0.5)
        conn.close()

    threading.Thread(target=answer_garbage, daemon=True).start()
    with H2Session(listener.getsockname()[:2], CONSUMER, Transcript("barco")) as session:
        reply = session.request("GET", "/status")
    listener.close()
    assert reply.outcome is Outcome.MALFORMED and reply.status is None
