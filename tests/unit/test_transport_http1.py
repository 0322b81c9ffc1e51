"""HTTP/1.1 over h11 against Python's http.server on 127.0.0.1: whole responses, chunked binary polls, long
polls within the deadline, and every way the exchange can end otherwise, all in the transcript."""

import time

import pytest

from wirecheck.protocols.spec import Endpoint
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.transport.outcome import Outcome
from wirecheck.targets.transport import client_context, open_session
from wirecheck.targets.transport.http1 import Http1Session
from tests.http_servers import POLL_BODY, Http1Server
from tests.tls_support import make_certificates

CONSUMER = Endpoint("consumer", default_port=9252, transport="http1", max_body=1 << 20)


@pytest.fixture(scope="module")
def server():
    running = Http1Server()
    yield running
    running.close()


def test_keep_alive_requests_on_one_connection(server):
    transcript = Transcript("barco")
    with open_session(server.address, CONSUMER, transcript) as session:
        assert isinstance(session, Http1Session)
        first = session.request("GET", "/status")
        echoed = session.request("POST", "/echo", [("Content-Type", "application/octet-stream")], b"\x00\x01\xff")
    assert first.complete and first.status == 200 and first.body == b"Consumer server listening"
    assert first.header("content-type") == "text/plain"
    assert echoed.complete and echoed.body == b"\x00\x01\xff"
    assert [e.kind for e in transcript.events if e.kind == "connect"] == ["connect"]  # one connection
    kinds = [e.kind for e in transcript.events]
    assert kinds[:3] == ["connect", "http-request", "send"] and kinds.count("http-response") == 2
    sent = b"".join(e.data for e in transcript.events if e.kind == "send")
    assert sent.startswith(b"GET /status HTTP/1.1\r\nhost: 127.0.0.1:") and sent.endswith(b"\x00\x01\xff")
    received = b"".join(e.data for e in transcript.events if e.kind == "recv")
    assert received.startswith(b"HTTP/1.1 200 ") and received.endswith(b"\x00\x01\xff")
    assert "POST /echo HTTP/1.1" in transcript.render() and "200 (" in transcript.render()


def test_a_chunked_binary_poll_is_collected_whole(server):
    with Http1Session(server.address, CONSUMER, Transcript("barco")) as session:
        reply = session.request("POST", "/v1/consumer/poll?consumerId=c1", body=b"")
    assert reply.complete and reply.body == POLL_BODY
    assert reply.header("transfer-encoding") == "chunked" and reply.header("content-length") is None


def test_a_long_poll_is_answered_within_a_longer_deadline_and_silent_within_a_shorter_one(server):
    with Http1Session(server.address, CONSUMER, Transcript("barco"), deadline=0.2) as session:
        started = time.monotonic()
        held = session.request("POST", "/v1/consumer/poll?ms=400", deadline=3)
        waited = time.monotonic() - started
    assert held.complete and held.body == POLL_BODY and waited >= 0.4
    transcript = Transcript("barco")
    with Http1Session(server.address, CONSUMER, transcript, deadline=0.2) as session:
        silent = session.request("POST", "/v1/consumer/poll?ms=1500")
    assert silent.outcome is Outcome.SILENT and silent.status is None
    assert any(e.kind == "silent" for e in transcript.events)


@pytest.mark.parametrize("path, outcome, status, body", [
    ("/truncated", Outcome.CLOSED, 200, b"0123456789"),
    ("/garbage", Outcome.MALFORMED, None, b""),
])
def test_a_broken_response_is_classified_and_keeps_what_arrived(server, path, outcome, status, body):
    transcript = Transcript("barco")
    with Http1Session(server.address, CONSUMER, transcript) as session:
        reply = session.request("GET", path)
        after = session.request("GET", "/status")  # the connection is over: nothing is sent
    assert (reply.outcome, reply.status, reply.body) == (outcome, status, body)
    assert after.outcome is outcome
    assert [e.kind for e in transcript.events].count("http-request") == 1
    assert outcome.value in [e.kind for e in transcript.events]


def test_a_body_read_until_close_is_whole_and_ends_the_connection(server):
    with Http1Session(server.address, CONSUMER, Transcript("barco")) as session:
        reply = session.request("GET", "/until-close")
        after = session.request("GET", "/status")
    assert reply.complete and reply.body == b"body until EOF"
    assert after.outcome is Outcome.CLOSED


def test_a_body_above_the_endpoint_limit_is_malformed(server):
    small = Endpoint("consumer", 9252, transport="http1", max_body=100)
    with Http1Session(server.address, small, Transcript("barco")) as session:
        reply = session.request("POST", "/v1/consumer/poll")
    assert reply.outcome is Outcome.MALFORMED and "above the limit 100" in reply.detail


def test_https(tmp_path):
    certificates = make_certificates(tmp_path)
    server = Http1Server(tls=certificates.server_context())
    transcript = Transcript("barco")
    with Http1Session(server.address, CONSUMER, transcript, tls=client_context(certificates.ca_file)) as session:
        reply = session.request("POST", "/v1/consumer/poll")
    server.close()
    assert reply.complete and reply.body == POLL_BODY
    assert transcript.events[0].detail.startswith("TLSv1.")
    assert b"".join(e.data for e in transcript.events if e.kind == "send").startswith(b"POST /v1/consumer/poll ")
