"""Raw-socket helpers for the RustLog broker's own tests: a tiny client and two ways to run the broker.

Deliberately independent of the suite (no ``protocols``/``suites``/``targets.session`` imports): these tests
check the broker against the spec as written in its tests, with struct + json only.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.rustlog import create

from tests.rawsocket import Closed, InThreadBroker, RawClient

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 5.0  # seconds for any single read in these tests
MAX_FRAME = 10_485_760


def frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


def encode(obj) -> bytes:
    return frame(json.dumps(obj).encode())


class Client(RawClient):
    def __init__(self, port: int, timeout: float = DEADLINE):
        super().__init__(port, timeout)

    def send(self, obj) -> None:
        self.send_raw(encode(obj))

    def recv_frame(self) -> tuple[int, bytes]:
        (length,) = struct.unpack(">I", self._exactly(4))
        return length, self._exactly(length)

    def recv(self) -> dict:
        _, payload = self.recv_frame()
        return json.loads(payload)

    def request(self, obj) -> dict:
        self.send(obj)
        return self.recv()

    def exchange(self, data: bytes, wait: float = DEADLINE) -> tuple[dict | None, bool]:
        """Send raw bytes: (the first response frame or None, whether the connection is closed after it).

        Silence until ``wait`` gives (None, False).
        """
        self.send_raw(data)
        self.sock.settimeout(wait)
        try:
            response = self.recv()
        except Closed:
            return None, True
        except socket.timeout:
            return None, False
        finally:
            self.sock.settimeout(DEADLINE)
        return response, self.is_closed_quick()

    def is_closed_quick(self) -> bool:
        """Closed, or still answering? A Ping tells at once (no waiting for a timeout either way)."""
        try:
            self.send_raw(encode({"type": "Ping"}))
            self.recv_frame()
        except (Closed, BrokenPipeError, ConnectionResetError):
            return True
        return False


class ThreadBroker(InThreadBroker):
    """The RustLog personality in a background thread (see InThreadBroker)."""

    client_class = Client
    timeout = DEADLINE

    def __init__(self, faults=(), data_dir: Path | None = None, max_frame: int | None = None,
                 max_connections: int = 64, idle_timeout: float = 30.0, **config):
        """``config``: more BrokerConfig fields (segment_records, retention_records, ...)."""
        super().__init__(BrokerConfig(data_dir=data_dir, faults=frozenset(faults),
                                      max_frame=max_frame, max_connections=max_connections,
                                      idle_timeout=idle_timeout, **config))

    def create_personality(self, config):
        return create(config)


class ProcessBroker:
    """``python -m wirecheck.broker`` as a child process (for restarts, signals and crashes)."""

    def __init__(self, *args: str, workdir: Path | None = None):
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="rustlog-broker-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.ready = self.workdir / "ready.json"
        self.ready.unlink(missing_ok=True)
        argv = [sys.executable, "-m", "wirecheck.broker", "--protocols", "rustlog", "--rustlog-port", "0",
                "--ready-file", str(self.ready), *args]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.log = open(self.workdir / "broker.log", "ab")
        self.process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while not self.ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"broker did not start: {self.log_text()}")
            time.sleep(0.02)
        self.info = json.loads(self.ready.read_text())
        self.port = self.info["ports"]["rustlog"]

    def log_text(self) -> str:
        self.log.flush()
        return (self.workdir / "broker.log").read_text(errors="replace")[-3000:]

    def client(self, timeout: float = DEADLINE) -> Client:
        return Client(self.port, timeout)

    def terminate(self, timeout: float = 10.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def create_topic(client: Client, name: str, partitions: int = 1) -> None:
    response = client.request({"type": "CreateTopic", "topic": name, "partition_count": partitions})
    assert response == {"type": "CreateTopicResponse", "success": True, "partitions_created": partitions}, response


def produce(client: Client, topic: str, payloads: list[bytes], partition: int = 0) -> dict:
    return client.request({"type": "Produce", "topic": topic, "partition": partition,
                           "records": [base64.b64encode(p).decode() for p in payloads]})


def fetch(client: Client, topic: str, offset: int, max_bytes: int = 1 << 20, partition: int = 0,
          group_id: str = "") -> dict:
    return client.request({"type": "Fetch", "group_id": group_id, "topic": topic, "partition": partition,
                           "offset": offset, "max_bytes": max_bytes})


def payloads_of(response: dict) -> list[bytes]:
    return [base64.b64decode(record["payload"]) for record in response["records"]]
