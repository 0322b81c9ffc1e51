"""Discovery (:9250), the HTTP producer (:9251) and HTTP behaviour every endpoint shares (notes §3, §6)."""

import socket
import time

import h11
import pytest

from wirecheck.protocols.barco import wire
from wirecheck.suites.barco.client import (diverge, expect_records, expect_status, http, http_produce, http_stored,
                                            status_answered)

case = pytest.mark.case


@case("barco.discovery.brokers")
def test_brokers_names_the_ports(target):
    reply = http(target, "discovery").request("GET", "/v1/brokers")
    expect_status(reply, 200, "barco.discovery.brokers")
    try:
        wire.parse_brokers(reply.body)
    except wire.WireError as exc:
        raise diverge("barco.discovery.brokers", "length and the three ports", str(exc)) from None


@case("barco.discovery.status")
def test_discovery_status(target):
    expect_status(http(target, "discovery").request("GET", "/status"), 200, "barco.discovery.status")


@case("barco.http-producer.status")
def test_producer_status(target):
    expect_status(http(target, "producer-http").request("GET", "/status"), 200, "barco.http-producer.status")


@case("barco.consumer.status")
@pytest.mark.parametrize("endpoint", ["consumer", "consumer-h2c"])
def test_consumer_status(target, endpoint):
    expect_status(http(target, endpoint).request("GET", "/status"), 200, "barco.consumer.status")


@case("barco.http.not-found")
@pytest.mark.parametrize("endpoint,path", [("discovery", "/v2/brokers"), ("producer-http", "/v1/topics"),
                                           ("consumer", "/v1/consumer/nothing"), ("consumer-h2c", "/nothing")])
def test_unknown_paths_are_404(target, endpoint, path):
    expect_status(http(target, endpoint).request("GET", path), 404, "barco.http.not-found")


def raw_exchange(target, endpoint: str, data: bytes, answers: int) -> list[int | None]:
    """Send raw bytes (h11 cannot pipeline or send malformed requests) and read up to ``answers`` responses
    (their status codes; None for a close before a whole response). Every read has the run's deadline."""
    http(target, endpoint).close()  # resolves the address
    address = target.endpoint_address(endpoint)
    target.transcript.note(f"raw bytes to {endpoint}: {data[:120]!r}")
    statuses, buffer = [], b""
    with socket.create_connection(address, timeout=target.deadline) as sock:
        sock.sendall(data)
        end = time.monotonic() + target.deadline
        for _ in range(answers):
            parser = h11.Connection(h11.CLIENT)
            parser.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
            parser.send(h11.EndOfMessage())
            if buffer:  # b"" would mean EOF to h11
                parser.receive_data(buffer)
            status = None
            while True:
                try:
                    event = parser.next_event()
                except h11.RemoteProtocolError:  # the peer closed before a whole response
                    return statuses + [status if status is not None and status >= 400 else None]
                if event is h11.NEED_DATA:
                    sock.settimeout(max(0.01, end - time.monotonic()))
                    try:
                        chunk = sock.recv(65536)
                    except OSError:
                        chunk = b""
                    parser.receive_data(chunk)
                    if not chunk:
                        return statuses + [None]
                elif isinstance(event, h11.Response):
                    status = event.status_code
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
            statuses.append(status)
            buffer = parser.trailing_data[0]
    return statuses


@case("barco.http.bad-request", hostile=True)
@pytest.mark.parametrize("endpoint", ["discovery", "producer-http", "consumer"])
@pytest.mark.parametrize("raw", [b"GET /status HTTP/1.1\r\nHost x\r\n\r\n", b"NOT HTTP AT ALL\r\n\r\n"],
                         ids=["bad-header", "bad-line"])
def test_malformed_requests_are_400_or_close(target, endpoint, raw):
    statuses = raw_exchange(target, endpoint, raw, 1)
    if statuses[0] not in (400, None):
        raise diverge("barco.http.bad-request", "400 or a close", f"status {statuses[0]}")


@case("barco.http.keep-alive")
@pytest.mark.parametrize("endpoint", ["discovery", "producer-http", "consumer"])
def test_keep_alive_and_pipelining(target, endpoint):
    session = http(target, endpoint)
    for _ in range(3):
        status_answered(session.request("GET", "/status"), endpoint, "barco.http.keep-alive")
    statuses = raw_exchange(target, endpoint, b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n" * 3, 3)
    if statuses != [200, 200, 200]:
        raise diverge("barco.http.keep-alive", "three pipelined 200s", f"statuses {statuses}")


@case("barco.http-producer.produce")
@pytest.mark.parametrize("size", [1, 1000, 1 << 20])
def test_http_produce_is_stored(target, size):
    topic = target.unique("t")
    body = b"z" * size
    http_produce(target, topic, body, "application/octet-stream", key="k")
    # stored is this clause's; what the records hold, byte for byte, is barco.consumer.records'
    expect_records(http_stored(target, topic, 1), [body], "barco.consumer.records", f"one record of {size} bytes")


@case("barco.http-producer.produce")
def test_http_produce_to_a_topic_with_records(target):
    """Every POST that stores is answered 200, the second to a topic as the first: upstream's handler answers a
    stored body one way only (polarstreams/polar internal/utils/utils.go ToPostHandle, l. 63-71: a nil error from
    producing/server.go handleMessage is RespondText "OK", status 200)."""
    topic = target.unique("t")
    bodies = [b"first", b"second"]
    for body in bodies:
        http_produce(target, topic, body, "application/octet-stream", key="k")
    expect_records(http_stored(target, topic, len(bodies)), bodies, "barco.consumer.records", "both records, in order")


CONTENT = [
    ("application/x-ndjson", b'{"a":1}\n\n{"b":2}\r\n{"c":3}', [b'{"a":1}', b'{"b":2}', b'{"c":3}']),
    ("application/x-ndjson", b"one\n", [b"one"]),
    (wire.FRAMES_MIME, wire.messages_part([b"x", b"", b"yz"]), [b"x", b"", b"yz"]),
    ("application/json", b'{"a":\n1}\n', [b'{"a":\n1}\n']),
    ("text/plain", b"a\nb", [b"a\nb"]),
    (None, b"raw", [b"raw"]),
]


@case("barco.http-producer.content-types")
@pytest.mark.parametrize("kind,body,records", CONTENT, ids=[f"{i}-{c[0]}" for i, c in enumerate(CONTENT)])
def test_content_types_split_records(target, kind, body, records):
    topic = target.unique("t")
    http_produce(target, topic, body, kind, key="k", clause="barco.http-producer.content-types")
    expect_records(http_stored(target, topic, len(records)), records, "barco.http-producer.content-types")


@case("barco.http-producer.frames-invalid")
@pytest.mark.parametrize("body", [b"\x00\x00\x00\x05ab", b"\x00\x00\x00\x01a\x00", b"\x00\x01"])
def test_invalid_frames_body_is_400(target, body):
    http_produce(target, target.unique("t"), body, wire.FRAMES_MIME, clause="barco.http-producer.frames-invalid",
                 status=400)


@case("barco.http-producer.length")
def test_empty_body_is_400(target):
    session = http(target, "producer-http")
    reply = session.request("POST", f"/v1/topic/{target.unique('t')}/messages", [("content-length", "0")], b"")
    expect_status(reply, 400, "barco.http-producer.length")


@case("barco.http-producer.length")
def test_body_above_the_default_limit(target):
    # 1 MiB is upstream's default POLAR_MAX_MESSAGE_SIZE, which an operator may raise: a server may store the
    # body (200), refuse it (400, 413) or close; an error status or a hang is not permitted.
    session = http(target, "producer-http")
    size = (1 << 20) + 1
    reply = session.request("POST", f"/v1/topic/{target.unique('t')}/messages",
                            [("content-length", str(size))], b"a" * size)
    if not reply.ended:
        expect_status(reply, (400, 413, 200), "barco.http-producer.length", "(or the connection closed)")


@case("barco.http-producer.chunked")
def test_chunked_body_is_refused(target):
    session = http(target, "producer-http")
    topic = target.unique("t")
    reply = session.request("POST", f"/v1/topic/{topic}/messages", [("transfer-encoding", "chunked")], b"hello")
    if reply.complete and reply.status == 200:  # D8's other reading: accepted, so it must be stored whole
        expect_records(http_stored(target, topic, 1), [b"hello"], "barco.http-producer.produce")
    expect_status(reply, 400, "barco.http-producer.chunked")  # 200 stays NON-STRICT (SHOULD: 400, as upstream)


@case("barco.http-producer.method")
@pytest.mark.parametrize("method", ["GET"])
def test_get_messages_is_405(target, method):
    reply = http(target, "producer-http").request(method, f"/v1/topic/{target.unique('t')}/messages")
    expect_status(reply, 405, "barco.http-producer.method")


@case("barco.http-producer.topic-valid")
@pytest.mark.parametrize("topic", ["..", "%2E%2E", "a%2Fb", "a%5Cb", "n%00l", "x" * 256])
def test_invalid_topic_is_400(target, topic):
    # an encoded '/' or '\' may be decoded by the server's router into a path no route matches: 404 then
    encoded_separator = "%2F" in topic or "%5C" in topic
    http_produce(target, topic, b"m", clause="barco.http-producer.topic-valid",
                 status=(400, 404) if encoded_separator else 400)
