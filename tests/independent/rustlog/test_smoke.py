"""Smoke test: start the independent RustLog server as a subprocess on an
ephemeral port and talk to it over a real socket."""

from __future__ import annotations

import base64
import json
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]  # the repository root


def _start(tmp_path, *defects):
    ready = tmp_path / "ready.json"
    cmd = [sys.executable, "-m", "tests.independent.rustlog", "--port", "0", "--ready-file", str(ready)]
    for d in defects:
        cmd += ["--defect", d]
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 5
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"server did not start: {proc.stderr.read().decode()}")
        time.sleep(0.02)
    return proc, json.loads(ready.read_text())["broker"]


@pytest.fixture
def broker(tmp_path):
    proc, port = _start(tmp_path)
    yield port
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)

    def send_raw(self, data: bytes):
        self.sock.sendall(data)

    def recv(self):
        header = self._exact(4)
        if header is None:
            return None
        return json.loads(self._exact(struct.unpack(">I", header)[0]))

    def call(self, body: dict):
        payload = json.dumps(body).encode()
        self.send_raw(struct.pack(">I", len(payload)) + payload)
        return self.recv()

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def close(self):
        self.sock.close()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_create_produce_fetch(broker):
    c = Client(broker)
    assert c.call({"type": "Ping"}) == {"type": "Pong"}
    assert c.call({"type": "CreateTopic", "topic": "smoke", "partition_count": 2}) == {
        "type": "CreateTopicResponse", "success": True, "partitions_created": 2}
    r = c.call({"type": "Produce", "topic": "smoke", "partition": 1, "records": [b64(b"a"), b64(b"bc")]})
    assert r == {"type": "ProduceResponse", "base_offset": 0, "record_count": 2}
    r = c.call({"type": "Produce", "topic": "smoke", "partition": 1, "records": [b64(b"\x00\xff")]})
    assert r["base_offset"] == 2
    r = c.call({"type": "Fetch", "group_id": "", "topic": "smoke", "partition": 1, "offset": 1,
                "max_bytes": 1 << 20})
    assert r["type"] == "FetchResponse"
    assert [x["offset"] for x in r["records"]] == [1, 2]
    assert [base64.b64decode(x["payload"]) for x in r["records"]] == [b"bc", b"\x00\xff"]
    assert r["next_offset"] == 3
    assert all(x["timestamp"] > 1_600_000_000_000_000 for x in r["records"])  # microseconds
    d = c.call({"type": "DescribeTopic", "topic": "smoke"})
    assert [p["high_watermark"] for p in d["partitions"]] == [0, 3]
    c.close()


def test_errors_and_commits(broker):
    c = Client(broker)
    e = c.call({"type": "Produce", "topic": "nope", "partition": 0, "records": []})
    assert e["type"] == "Error" and e["code"] == 404 and "details" in e
    c.call({"type": "CreateTopic", "topic": "t", "partition_count": 1})
    assert c.call({"type": "Produce", "topic": "t", "partition": 1, "records": []})["code"] == 405
    assert c.call({"type": "Bogus"})["code"] == 400  # connection stays open
    assert c.call({"type": "OffsetFetch", "group": "g", "topic": "t", "partition": 0})["offset"] is None
    assert c.call({"type": "OffsetCommit", "group": "g", "topic": "t", "partition": 0, "offset": 7})["success"]
    assert c.call({"type": "OffsetFetch", "group": "g", "topic": "t", "partition": 0})["offset"] == 7
    assert c.call({"type": "OffsetFetch", "group": "h", "topic": "t", "partition": 0})["offset"] is None
    # Malformed JSON: an Error, then the connection is closed.
    c.send_raw(struct.pack(">I", 3) + b"{x}")
    assert c.recv()["code"] == 400
    assert c.recv() is None
    c.close()


def test_oversize_frame_closes(broker):
    c = Client(broker)
    c.send_raw(struct.pack(">I", 10 * 1024 * 1024 + 1))
    reply = c.recv()
    assert reply is None or reply["code"] == 413
    assert c.recv() is None
    c.close()


def test_defect_switch(tmp_path):
    proc, port = _start(tmp_path, "fetch-next-offset-is-last")
    try:
        c = Client(port)
        c.call({"type": "CreateTopic", "topic": "t", "partition_count": 1})
        c.call({"type": "Produce", "topic": "t", "partition": 0, "records": [b64(b"x")]})
        r = c.call({"type": "Fetch", "group_id": "", "topic": "t", "partition": 0, "offset": 0, "max_bytes": 100})
        assert r["next_offset"] == 0  # the defect is visible
        c.close()
    finally:
        proc.terminate()
        proc.wait(timeout=5)
