"""Smoke test: start the independent SPU as a subprocess, then ApiVersions + Produce + Fetch.

The byte strings are the hand-derived vectors of spec §10.2 (A-F).
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def hx(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", "").replace("\n", ""))


BATCH_X = hx(
    "00 00 00 00 00 00 00 00 00 00 00 3d ff ff ff ff 02 af 7d d9 6c 00 00 00 00 00 00 00 00 01 8b cf"
    " e5 68 00 00 00 01 8b cf e5 68 00 ff ff ff ff ff ff ff ff ff ff ff ff ff ff 00 00 00 01 16 00 00"
    " 00 00 0a 68 65 6c 6c 6f 00"
)
API_VERSIONS_REQ = hx(
    "00 00 00 27 00 12 00 02 00 00 00 01 00 06 66 6c 75 76 69 6f 00 06 30 2e 31 38 2e 32 00 05 6c 69"
    " 6e 75 78 00 06 78 38 36 5f 36 34"
)
API_VERSIONS_RESP = hx(
    "00 00 00 2f 00 00 00 01 00 00 00 00 00 05 00 00 00 00 00 19 00 01 00 00 00 19 03 ea 00 19 00 19"
    " 03 eb 00 00 00 19 03 ed 00 00 00 00 00 05 30 2e 30 2e 30"
)
PRODUCE_REQ = (
    hx(
        "00 00 00 77 00 00 00 19 00 00 00 02 00 06 66 6c 75 76 69 6f 00 00 01 00 00 05 dc 00 00 00 01"
        " 00 01 74 00 00 00 01 00 00 00 00 00 00 00 49"
    )
    + BATCH_X
    + hx("00 00 00 00")
)
PRODUCE_RESP = (
    hx("00 00 00 31 00 00 00 02 00 00 00 01 00 01 74 00 00 00 01 00 00 00 00 00 00")
    + bytes(24)
    + hx("00 00 00 00")
)
FETCH_REQ = hx(
    "00 00 00 48 00 01 00 19 00 00 00 03 00 06 66 6c 75 76 69 6f 00 00 00 00 00 00 00 00 00 10 00 0c"
    " 00 00 00 00 01 00 01 74 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    " 00 00 00 00 00 10 00 0c 00 00 00 00"
)
# Vector F of §10.2 has 65 header bytes although its own size prefix (0x85) implies 64: one
# stray 00 in the tail.  The reply is therefore built field by field from the §5.2 layout.
FETCH_RESP = (
    hx("00 00 00 85 00 00 00 03")          # size, correlation_id 3
    + hx("00 00 00 00 00 00 00 00 00 00")  # throttle 0, error 0, session 0
    + hx("00 00 00 01 00 01 74")           # topics [ "t"
    + hx("00 00 00 01 00 00 00 00 00 00")  #   partitions [ index 0, error 0
    + struct.pack(">qqq", 1, 0, 0)         #   hw 1, next_filter_offset 0, log_start 0
    + hx("00 00 00 00 49")                 #   aborted None, RecordSet length 73
    + BATCH_X
)


@pytest.fixture()
def spu(tmp_path):
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.independent.fluvio", "--port", "0", "--ready-file", str(ready)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 5
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("server did not start: " + proc.stderr.read().decode(errors="replace"))
            time.sleep(0.02)
        yield json.loads(ready.read_text())["spu"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def read_frame(sock: socket.socket) -> bytes:
    def exact(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return buf

    head = exact(4)
    return head + exact(struct.unpack(">i", head)[0])


def test_api_versions_produce_fetch(spu):
    with socket.create_connection(("127.0.0.1", spu), timeout=3) as s:
        s.sendall(API_VERSIONS_REQ)
        assert read_frame(s) == API_VERSIONS_RESP
        s.sendall(PRODUCE_REQ)
        assert read_frame(s) == PRODUCE_RESP
        s.sendall(FETCH_REQ)
        assert read_frame(s) == FETCH_RESP


def test_unknown_key_closes(spu):
    with socket.create_connection(("127.0.0.1", spu), timeout=3) as s:
        s.sendall(hx("00 00 00 0a 03 e9 00 00 00 00 00 07 00 00"))  # key 1001 is not a request
        assert s.recv(16) == b""
