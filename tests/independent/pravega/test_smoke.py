"""Smoke test: start the server as a subprocess on an ephemeral port, then Hello,
CreateSegment, SetupAppend + AppendBlock/AppendBlockEnd, ReadSegment over a real socket."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]  # the repository root


def _str(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def _frame(code: int, payload: bytes) -> bytes:
    return struct.pack(">ii", code, len(payload)) + payload


def _recv_frame(sock: socket.socket) -> tuple[int, bytes]:
    def exact(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed")
            buf += chunk
        return buf
    code, length = struct.unpack(">ii", exact(8))
    return code, exact(length)


@pytest.fixture()
def server(tmp_path):
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.independent.pravega", "--port", "0", "--ready-file", str(ready)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 5
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("server did not start: %r" % proc.stderr.read())
            time.sleep(0.02)
        yield json.loads(ready.read_text())["segmentstore"]
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_hello_create_append_read(server):
    sock = socket.create_connection(("127.0.0.1", server), timeout=5)
    try:
        sock.sendall(_frame(-127, struct.pack(">ii", 17, 5)))
        assert _recv_frame(sock) == (-127, struct.pack(">ii", 17, 5))

        seg = "scope/stream/0.#epoch.0"
        sock.sendall(_frame(20, struct.pack(">q", 4) + _str(seg) + struct.pack(">ib", 0, 0) + _str("")))
        assert _recv_frame(sock) == (21, struct.pack(">q", 4) + _str(seg))

        w = uuid.UUID(int=0x0102030405060708090A0B0C0D0E0F10)
        sock.sendall(_frame(1, struct.pack(">q", 1) + w.bytes + _str(seg) + _str("")))
        assert _recv_frame(sock) == (2, struct.pack(">q", 1) + _str(seg) + w.bytes
                                     + struct.pack(">q", -(1 << 63)))

        event = _frame(0, b"hello")  # 13 bytes, stored verbatim
        sock.sendall(_frame(3, w.bytes + event)
                     + _frame(4, w.bytes + struct.pack(">iiiqq", 13, 0, 1, 1, 1)))
        code, body = _recv_frame(sock)
        assert code == 7
        assert body == w.bytes + struct.pack(">qqqq", 1, -(1 << 63), 1, 13)

        sock.sendall(_frame(9, _str(seg) + struct.pack(">qi", 0, 1000) + _str("") + struct.pack(">q", 2)))
        code, body = _recv_frame(sock)
        assert code == 10
        assert body == _str(seg) + struct.pack(">q??i", 0, True, False, 13) + event + struct.pack(">q", 2)
    finally:
        sock.close()
