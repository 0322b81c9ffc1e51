"""HTTP clients nobody here wrote against the reference Barco broker: ``curl`` over HTTP/1.1 and over HTTP/2 with
prior knowledge, and ``httpx`` with HTTP/2. Each drives a whole cycle (discovery, produce, register, poll, commit,
goodbye, then a second consumer of the group), and every polled payload must decompress, with the ``zstd``
command-line tool and with ``zstandard``, to exactly the produced records.

A missing tool fails (with the package to install); it is never skipped.
"""

from __future__ import annotations

import itertools
import json
import shutil
import struct
import subprocess
import time

import pytest
import zstandard

from wirecheck.protocols.barco import wire
from wirecheck.targets.launcher import launch

pytestmark = pytest.mark.interop

POLL_MIME = "application/vnd.polar.consumermessage"
POLLS = 20
_names = itertools.count()


def tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed (Debian: apt-get install {package}); the Barco interop tests need it")
    return path


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    process = launch(["barco"], workdir=tmp_path_factory.mktemp("barco-broker"))
    try:
        yield process
        assert process.alive, f"broker {process.exit_status()}:\n{process.log_tail()}"
    finally:
        process.stop()


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_names)}-{time.monotonic_ns() % 10**9}"


# -- decoding a poll without our zstd code ----------------------------------------------------------------------


def zstd_cli(payload: bytes) -> bytes:
    """``zstd -d`` checks the frame's content checksum and fails on a mismatch."""
    done = subprocess.run([tool("zstd", "zstd"), "-d", "-c", "-q"], input=payload, capture_output=True, timeout=30)
    assert done.returncode == 0, f"zstd -d failed: {done.stderr.decode(errors='replace')}"
    return done.stdout


def zstandard_lib(payload: bytes) -> bytes:
    return zstandard.ZstdDecompressor().stream_reader(payload, read_across_frames=False).read()


def record_bodies(raw: bytes, since_us: int) -> list[bytes]:
    """``{i64 ts, u32 len, body}`` records, laid out here with struct; timestamps are the broker's clock."""
    bodies, at = [], 0
    now_us = time.time_ns() // 1000
    while at < len(raw):
        ts, length = struct.unpack_from(">qI", raw, at)
        assert since_us - 5_000_000 <= ts <= now_us + 5_000_000, f"record timestamp {ts} is not the produce time"
        bodies.append(raw[at + 12 : at + 12 + length])
        at += 12 + length
    assert at == len(raw), f"{at - len(raw)} bytes overrun the records"
    return bodies


def polled_records(body: bytes, since_us: int) -> list[bytes]:
    """The records of one binary poll body, decompressed by both decoders, which must agree."""
    bodies = []
    for item in wire.parse_poll_response(body):
        assert item.payload[:4] == b"\x28\xb5\x2f\xfd", "the payload is not a zstd frame"
        by_cli, by_lib = zstd_cli(item.payload), zstandard_lib(item.payload)
        assert by_cli == by_lib, "zstd and zstandard disagree on a payload"
        bodies += record_bodies(by_cli, since_us)
    return bodies


# -- curl ----------------------------------------------------------------------------------------------------------


class Curl:
    def __init__(self, http_flag: str, tmp_path):
        self.binary = tool("curl", "curl")
        self.flag = http_flag
        self.out = tmp_path / "curl-body"
        self.version = "2" if http_flag == "--http2-prior-knowledge" else "1.1"

    def __call__(self, method: str, url: str, body: bytes | None = None, headers=(), http_flag: str | None = None):
        """(status, content type, body); the HTTP version curl spoke must be the one asked for."""
        flag = http_flag or self.flag
        argv = [self.binary, "-sS", flag, "-X", method, "-o", str(self.out), "-w",
                "%{http_code} %{http_version} %{content_type}", "--max-time", "20", url]
        for name, value in headers:
            argv += ["-H", f"{name}: {value}"]
        if body is not None:
            argv += ["--data-binary", "@-"]
        done = subprocess.run(argv, input=body, capture_output=True, timeout=30)
        assert done.returncode == 0, f"curl {method} {url}: {done.stderr.decode(errors='replace')}"
        status, version, *kind = done.stdout.decode().split(" ", 2)
        expected = "2" if flag == "--http2-prior-knowledge" else "1.1"
        assert version == expected, f"curl spoke HTTP/{version}, not HTTP/{expected}"
        return int(status), (kind[0] if kind else ""), self.out.read_bytes()


@pytest.mark.parametrize("http_flag", ["--http1.1", "--http2-prior-knowledge"])
def test_curl_cycle(broker, tmp_path, http_flag):
    curl = Curl(http_flag, tmp_path)
    base = f"http://127.0.0.1:{broker.ports['barco']}"
    status, kind, body = curl("GET", f"{base}/v1/brokers", http_flag="--http1.1")
    assert status == 200 and kind.startswith("application/json"), (status, kind, body)
    ports = json.loads(body)
    assert ports["producerBinaryPort"] == broker.endpoints["barco"]["producer"]
    producer = f"http://127.0.0.1:{ports['producerPort']}"
    consumer = f"http://127.0.0.1:{ports['consumerPort']}"
    topic, group, first = unique("curl-t"), unique("curl-g"), unique("curl-c")
    lines = [b'{"n":%d}' % i for i in range(3)] + ["é ✓".encode()]
    since = time.time_ns() // 1000

    # the producer port speaks HTTP/1.1 only (notes §1)
    status, _, answer = curl("POST", f"{producer}/v1/topic/{topic}/messages", b"\n".join(lines) + b"\n",
                             [("Content-Type", "application/x-ndjson")], http_flag="--http1.1")
    assert (status, answer) == (200, b"OK")
    register = f"{consumer}/v1/consumer/register?consumerId={first}&group={group}&topic={topic}" \
               "&onNewGroup=startFromEarliest"
    assert curl("PUT", register)[0] == 200
    got: list[bytes] = []
    for _ in range(POLLS):
        status, kind, body = curl("POST", f"{consumer}/v1/consumer/poll?consumerId={first}")
        assert status in (200, 204), (status, body[:200])
        if status == 200:
            assert kind == POLL_MIME
            got += polled_records(body, since)
        if len(got) >= len(lines):
            break
    assert got == lines
    assert curl("POST", f"{consumer}/v1/consumer/commit?consumerId={first}")[0] == 204
    assert curl("POST", f"{consumer}/v1/consumer/goodbye?consumerId={first}")[:3:2] == (200, b"OK")
    assert curl("POST", f"{consumer}/v1/consumer/poll?consumerId={first}")[0] == 409  # gone

    # the next consumer of the group starts after the commit: only what is produced now
    more = [b"after-commit"]
    assert curl("POST", f"{producer}/v1/topic/{topic}/messages", more[0], [("Content-Type", "application/json")],
                http_flag="--http1.1")[0] == 200
    second = unique("curl-c")
    assert curl("PUT", register.replace(first, second))[0] == 200
    got = []
    for _ in range(POLLS):
        status, _, body = curl("POST", f"{consumer}/v1/consumer/poll?consumerId={second}")
        if status == 200:
            got += polled_records(body, since)
        if got:
            break
    assert got == more
    assert curl("POST", f"{consumer}/v1/consumer/goodbye?consumerId={second}")[0] == 200


# -- httpx over HTTP/2 -------------------------------------------------------------------------------------------


@pytest.fixture
def httpx():
    try:
        import h2  # noqa: F401  (httpx's HTTP/2 support)
        import httpx
    except ImportError as exc:
        pytest.fail(f"{exc.name} is not installed (pip install 'httpx[http2]==0.28.1', the interop extra)")
    return httpx


def test_httpx_h2_cycle(broker, httpx):
    ports = broker.endpoints["barco"]
    topic, group, consumer_id = unique("httpx-t"), unique("httpx-g"), unique("httpx-c")
    messages = [b"", bytes(range(256)), b"\x00" * 70_000, b"last"]
    since = time.time_ns() // 1000
    with httpx.Client(base_url=f"http://127.0.0.1:{ports['producer-http']}", timeout=20) as producer:
        framed = b"".join(struct.pack(">I", len(m)) + m for m in messages)
        reply = producer.post(f"/v1/topic/{topic}/messages", content=framed, params={"partitionKey": "k"},
                              headers={"content-type": "application/vnd.polar.producer.frames"})
        assert (reply.status_code, reply.content) == (200, b"OK")
    # http1=False: HTTP/2 with prior knowledge on a plain-text URL
    with httpx.Client(base_url=f"http://127.0.0.1:{ports['consumer']}", http1=False, http2=True,
                      timeout=20) as consumer:
        query = {"consumerId": consumer_id, "group": group, "topic": topic, "onNewGroup": "startFromEarliest"}
        reply = consumer.put("/v1/consumer/register", params=query)
        assert reply.http_version == "HTTP/2" and reply.status_code == 200
        got: list[bytes] = []
        for _ in range(POLLS):
            reply = consumer.post("/v1/consumer/poll", params={"consumerId": consumer_id})
            assert reply.status_code in (200, 204), reply.text[:200]
            if reply.status_code == 200:
                assert reply.headers["content-type"] == POLL_MIME
                got += polled_records(reply.content, since)
            if len(got) >= len(messages):
                break
        assert got == messages
        assert consumer.post("/v1/consumer/commit", params={"consumerId": consumer_id}).status_code == 204
        reply = consumer.post("/v1/consumer/goodbye", params={"consumerId": consumer_id})
        assert (reply.status_code, reply.content) == (200, b"OK")
        # a JSON poll of a new consumer of a new group, from the start
        other = unique("httpx-c")
        reply = consumer.put("/v1/consumer/register", params={**query, "consumerId": other,
                                                               "group": unique("httpx-g")})
        assert reply.status_code == 200
        reply = consumer.post("/v1/consumer/poll", params={"consumerId": other},
                              headers={"accept": "application/json"})
        assert reply.status_code == 200 and reply.http_version == "HTTP/2"
        items = reply.json()
        assert [item["startOffset"] for item in items] == ["0"] and items[0]["topic"] == topic
        assert len(items[0]["values"]) == len(messages)
        assert consumer.post("/v1/consumer/goodbye", params={"consumerId": other}).status_code == 200
