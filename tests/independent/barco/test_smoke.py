"""Quick self-check of the independent Barco server over real loopback sockets."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import httpx
import pytest
import zstandard

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture()
def broker(tmp_path):
    ready = tmp_path / "ready.json"
    cmd = [sys.executable, "-m", "tests.independent.barco", "--host", "127.0.0.1",
           "--discovery-port", "0", "--producer-http-port", "0", "--consumer-port", "0",
           "--producer-binary-port", "0", "--ready-file", str(ready)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 5
        while not ready.exists():
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        yield json.loads(ready.read_text())
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def frame(sid: int, op: int, body: bytes = b"", flags: int = 0) -> bytes:
    first9 = struct.pack(">BBHBI", 1, flags, sid, op, len(body))
    return first9 + struct.pack(">I", zlib.crc32(first9)) + body


def read_frame(sock: socket.socket) -> tuple[int, int, bytes]:
    def exactly(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            piece = sock.recv(n - len(buf))
            assert piece, "connection closed"
            buf += piece
        return buf
    head = exactly(13)
    version, flags, sid, op, length, crc = struct.unpack(">BBHBII", head)
    assert (version, flags) == (1, 0)
    assert crc == zlib.crc32(head[:9])
    return sid, op, exactly(length)


def decode_poll(body: bytes) -> list[tuple[str, int, list[bytes]]]:
    (count,) = struct.unpack_from(">H", body, 0)
    pos, out = 2, []
    for _ in range(count):
        token, rng, version, tlen = struct.unpack_from(">qBIB", body, pos)
        pos += 14
        topic = body[pos:pos + tlen].decode()
        pos += tlen
        offset, plen = struct.unpack_from(">qi", body, pos)
        pos += 12
        raw = zstandard.ZstdDecompressor().decompress(body[pos:pos + plen], max_output_size=1 << 22)
        pos += plen
        records, rpos = [], 0
        while rpos < len(raw):
            _ts, length = struct.unpack_from(">qI", raw, rpos)
            records.append(raw[rpos + 12:rpos + 12 + length])
            rpos += 12 + length
        out.append((topic, offset, records))
    assert pos == len(body)
    return out


def test_discovery_binary_produce_and_poll(broker):
    base = "http://127.0.0.1"
    brokers = httpx.get(f"{base}:{broker['discovery']}/v1/brokers").json()
    assert brokers["producerBinaryPort"] == broker["producer"]
    assert brokers["consumerPort"] == broker["consumer"]
    assert brokers["producerPort"] == broker["producer-http"]

    consumer = f"{base}:{brokers['consumerPort']}"
    params = {"consumerId": "c1", "group": "g1", "topic": "t1"}
    assert httpx.put(f"{consumer}/v1/consumer/register", params=params).status_code == 200

    with socket.create_connection(("127.0.0.1", brokers["producerBinaryPort"]), timeout=3) as sock:
        sock.sendall(frame(0, 1))
        assert read_frame(sock)[:2] == (0, 2)
        body = b"\x00" + b"\x02t1" + struct.pack(">I", 5) + b"hello" + struct.pack(">I", 5) + b"world"
        sock.sendall(frame(1, 4, body))
        assert read_frame(sock)[:2] == (1, 5)
        sock.sendall(frame(5, 6))
        assert read_frame(sock)[:2] == (5, 2)

    with httpx.Client() as client:
        resp = client.post(f"{consumer}/v1/consumer/poll", params={"consumerId": "c1"})
        assert resp.status_code == 200, resp.text
        assert decode_poll(resp.content) == [("t1", 0, [b"hello", b"world"])]
        resp = client.post(f"{consumer}/v1/consumer/poll", params={"consumerId": "c1"})
        assert resp.status_code == 204 and resp.headers["retry-after"] == "1"


def test_http_produce_and_h2c_json_poll(broker):
    base = "http://127.0.0.1"
    resp = httpx.post(f"{base}:{broker['producer-http']}/v1/topic/t2/messages", content=b'{"a":1}\n{"b":2}\n',
                      headers={"Content-Type": "application/x-ndjson"})
    assert resp.status_code == 200 and resp.text == "OK"

    sock = socket.create_connection(("127.0.0.1", broker["consumer"]), timeout=3)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())

    def request(method: str, path: str, body: bytes = b"", accept: str = "*/*"):
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, [(":method", method), (":path", path), (":scheme", "http"),
                                (":authority", "localhost"), ("accept", accept)], end_stream=not body)
        if body:
            conn.send_data(sid, body, end_stream=True)
        sock.sendall(conn.data_to_send())
        status, data = None, b""
        while True:
            for ev in conn.receive_data(sock.recv(65536)):
                if isinstance(ev, h2.events.ResponseReceived) and ev.stream_id == sid:
                    status = int(dict(ev.headers)[b":status"])
                elif isinstance(ev, h2.events.DataReceived) and ev.stream_id == sid:
                    data += ev.data
                    conn.acknowledge_received_data(ev.flow_controlled_length, sid)
                elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == sid:
                    sock.sendall(conn.data_to_send())
                    return status, data
            sock.sendall(conn.data_to_send())

    info = json.dumps({"id": "c2", "group": "g2", "topics": ["t2"], "onNewGroup": 1}).encode()
    assert request("PUT", "/v1/consumer/register", info)[0] == 200
    status, data = request("POST", "/v1/consumer/poll", accept="application/json")
    assert status == 200
    items = json.loads(data)
    assert [(i["topic"], i["startOffset"], i["values"]) for i in items] == [("t2", "0", [{"a": 1}, {"b": 2}])]
    assert request("POST", "/v1/consumer/goodbye")[0] == 200
    sock.close()


def test_hostile_binary_input_does_not_kill_the_server(broker):
    with socket.create_connection(("127.0.0.1", broker["producer"]), timeout=3) as sock:
        sock.sendall(frame(9, 4, b"\x00\x02t1"))  # PRODUCE first: error then close
        sid, op, body = read_frame(sock)
        assert (sid, op, body[:1]) == (9, 3, b"\x00")
    with socket.create_connection(("127.0.0.1", broker["producer"]), timeout=3) as sock:
        sock.sendall(frame(0, 1) + frame(1, 4, b"\x00\x02t1") + frame(2, 4, b"\x00\x02t1\x00\x00\x00\x09ab"))
        assert read_frame(sock)[1] == 2
        assert read_frame(sock)[1] == 3  # zero messages
        assert read_frame(sock)[1] == 3  # overrunning length
        sock.sendall(frame(3, 6))
        assert read_frame(sock)[:2] == (3, 2)
    assert httpx.get(f"http://127.0.0.1:{broker['discovery']}/status").status_code == 200
