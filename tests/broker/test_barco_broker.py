"""The Barco personality through the CLI: independence from the suite's code, durability under --data-dir, bounded
memory whatever a peer claims, and discovery announcing the ports actually bound."""

from __future__ import annotations

import ast
import http.client
import json
import socket
from pathlib import Path
from urllib.parse import urlencode

import pytest

from wirecheck.protocols.barco import wire
from wirecheck.targets.launcher import launch
from wirecheck.broker import barco

DEFAULT_PORTS = {9250, 9251, 9252, 9254}


def test_package_imports_nothing_from_the_suite():
    """ARCHITECTURE: broker/ never imports protocols, strategies or suites."""
    for path in Path(barco.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name.removeprefix("wirecheck.").split(".")[0] not in ("protocols", "strategies", "suites"), (path.name, name)


# -- small clients -------------------------------------------------------------------------------------------------


class Producer:
    """One binary producer connection, STARTUP sent."""

    def __init__(self, broker, startup: bool = True):
        self.sock = socket.create_connection(broker.address("barco", "producer"), timeout=5)
        if startup:
            assert self.call(wire.frame(wire.STARTUP)).opcode == wire.READY

    def read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            assert chunk, f"connection closed after {len(data)} of {n} bytes"
            data += chunk
        return data

    def call(self, frame: bytes) -> wire.Header:
        self.sock.sendall(frame)
        head = wire.parse_header(self.read(wire.HEADER_SIZE))
        self.body = self.read(head.body_length)
        return head

    def produce(self, topic: str, messages: list[bytes], key: bytes = b"k", timestamp: int | None = None) -> None:
        head = self.call(wire.produce(topic, messages, key, 1, timestamp))
        assert head.opcode == wire.PRODUCE_RESPONSE, (head, self.body)

    def closed(self) -> bool:
        self.sock.settimeout(5)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()


def http_call(broker, endpoint: str | None, method: str, path: str, body: bytes = b"", headers=None):
    host, port = broker.address("barco", endpoint)
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request(method, path, body=body or None, headers=headers or {})
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def consume(broker, consumer: str, group: str, topic: str, want: int) -> list[tuple[int, int, bytes]]:
    """(offset, timestamp, body) of ``want`` records, polled as ``consumer`` (which registers first)."""
    query = urlencode({"consumerId": consumer, "group": group, "topic": topic, "onNewGroup": "startFromEarliest"})
    assert http_call(broker, "consumer", "PUT", f"/v1/consumer/register?{query}")[0] == 200
    out = []
    for _ in range(20):
        status, body = http_call(broker, "consumer", "POST", f"/v1/consumer/poll?consumerId={consumer}")
        assert status in (200, 204), (status, body[:200])
        if status == 200:
            for item in wire.parse_poll_response(body):
                out += [(item.offset + i, ts, b) for i, (ts, b) in enumerate(item.records())]
        if len(out) >= want:
            break
    return out


def rss_kib(broker) -> int:
    for line in Path(f"/proc/{broker.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


# -- durability ----------------------------------------------------------------------------------------------------


def test_records_and_commits_survive_a_restart(tmp_path):
    data_dir = ["--data-dir", str(tmp_path / "data"), "--fsync", "batch"]
    before = [b"first", b"", bytes(range(256))]
    broker = launch(["barco"], extra_args=data_dir, workdir=tmp_path / "one")
    try:
        producer = Producer(broker)
        producer.produce("durable", before[:2], timestamp=1_700_000_000_000_000)
        producer.produce("durable", before[2:], timestamp=1_700_000_000_000_001)
        producer.close()
        # one group reads and commits the first chunk only
        got = consume(broker, "c1", "committed", "durable", 2)
        assert [b for _, _, b in got] == before[:2]
        assert http_call(broker, "consumer", "POST", "/v1/consumer/commit?consumerId=c1")[0] == 204
        assert http_call(broker, "consumer", "POST", "/v1/consumer/goodbye?consumerId=c1&commit=false")[0] == 200
    finally:
        broker.stop()
    broker = launch(["barco"], extra_args=data_dir, workdir=tmp_path / "two")
    try:
        everything = consume(broker, "fresh", "new-group", "durable", 3)
        assert everything == [(0, 1_700_000_000_000_000, b"first"), (1, 1_700_000_000_000_000, b""),
                              (2, 1_700_000_000_000_001, bytes(range(256)))]
        # the committed group resumes after its commit, and new records follow the old offsets
        Producer(broker).produce("durable", [b"after"])
        resumed = consume(broker, "c2", "committed", "durable", 2)
        assert [(o, b) for o, _, b in resumed] == [(2, bytes(range(256))), (3, b"after")]
    finally:
        broker.stop()


def test_without_data_dir_nothing_survives(tmp_path):
    """The check above can fail: in memory mode a restart forgets."""
    broker = launch(["barco"], workdir=tmp_path / "one")
    try:
        Producer(broker).produce("volatile", [b"gone"])
    finally:
        broker.stop()
    broker = launch(["barco"], workdir=tmp_path / "two")
    try:
        assert consume(broker, "c", "g", "volatile", 1) == []
    finally:
        broker.stop()


# -- memory --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    process = launch(["barco"], workdir=tmp_path_factory.mktemp("barco-broker"))
    try:
        yield process
    finally:
        process.stop()


@pytest.mark.parametrize("claim", [wire.MAX_BODY + 1, 256 << 20, 0xFFFFFFFF])
def test_body_length_claim_above_the_limit_is_refused_unread(broker, claim):
    """Only the header is sent: an ERROR arriving at all shows the broker did not wait for (or buffer) the body."""
    start = rss_kib(broker)
    for _ in range(5):
        producer = Producer(broker)
        head = producer.call(wire.header(wire.PRODUCE, claim, stream_id=9))
        assert (head.opcode, head.stream_id) == (wire.ERROR, 9)
        assert wire.parse_error(producer.body)[0] == wire.SERVER_ERROR
        assert producer.closed()
    assert rss_kib(broker) - start < 16 * 1024, "the broker grew by the claimed size"
    assert broker.alive


def test_http_body_above_the_limit_is_refused(broker):
    host, port = broker.address("barco", "producer-http")
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(b"POST /v1/topic/big/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 4294967296\r\n\r\n")
        sock.sendall(b"\0" * (wire.MAX_MESSAGE_SIZE + 65536))
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:100]
    assert broker.alive


def test_many_connections_stay_bounded(broker):
    start = rss_kib(broker)
    # Connections at work (STARTUP answered): the broker never sheds those, however many are mid-frame at once
    # (connections that never completed a frame are capped apart: tests/broker/test_core.py).
    producers = [Producer(broker) for _ in range(200)]
    try:
        for i, producer in enumerate(producers):  # every one half a frame in, then the rest
            producer.sock.sendall(wire.frame(wire.STARTUP, stream_id=i)[:7])
        for i, producer in enumerate(producers):
            producer.sock.sendall(wire.frame(wire.STARTUP, stream_id=i)[7:])
            head = wire.parse_header(producer.read(wire.HEADER_SIZE))
            producer.read(head.body_length)
            assert head.stream_id == i and head.opcode == wire.ERROR  # a second STARTUP (barco.producer.second-startup)
        assert rss_kib(broker) - start < 64 * 1024
        fresh = Producer(broker)
        fresh.produce("many", [b"still serving"])
        fresh.close()
    finally:
        for producer in producers:
            producer.close()
    assert broker.alive


# -- discovery -----------------------------------------------------------------------------------------------------


def test_discovery_announces_the_ephemeral_ports(broker):
    status, body = http_call(broker, None, "GET", "/v1/brokers")
    assert status == 200
    doc = wire.parse_brokers(body)
    bound = broker.endpoints["barco"]
    assert {"producerPort": doc["producerPort"], "producerBinaryPort": doc["producerBinaryPort"],
            "consumerPort": doc["consumerPort"]} == \
        {"producerPort": bound["producer-http"], "producerBinaryPort": bound["producer"],
         "consumerPort": bound["consumer"]}
    assert not DEFAULT_PORTS & {doc["producerPort"], doc["producerBinaryPort"], doc["consumerPort"],
                                broker.ports["barco"]}
    # each announced port speaks what discovery says it does
    assert http_call(broker, "producer-http", "GET", "/status")[1].startswith(b"Producer server listening on")
    assert http_call(broker, "consumer", "GET", "/status")[1] == \
        f"Consumer server listening on {doc['consumerPort']}".encode()
    Producer(broker).close()  # STARTUP answered READY on producerBinaryPort
    assert json.loads(body)["length"] == 1
