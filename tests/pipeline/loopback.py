"""Capture real loopback traffic: the reference RustLog broker, tcpdump on lo, and a client talking to it.

Everything is bounded: the broker and tcpdump are started by us and stopped by their own pids, tcpdump stops
by itself after a packet count, and every socket read has a deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wirecheck.protocols.rustlog.layers import decode_frame, encode_frame
from wirecheck.reports.pipeline.captures.flows import read_capture

TCPDUMP = shutil.which("tcpdump")
REPO = Path(__file__).resolve().parents[2]


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"{what} not ready within {timeout}s")


def _recv_frame(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError("broker closed the connection")
            data += chunk
        return data

    header = exactly(4)
    return header + exactly(int.from_bytes(header, "big"))


def client_conversation(port: int) -> list[dict]:
    """Create a topic, produce twice, fetch, ping; returns the decoded responses."""
    requests = [
        {"type": "CreateTopic", "topic": "captured", "partition_count": 1},
        {"type": "Produce", "topic": "captured", "partition": 0, "records": ["YQ==", "Yg=="]},
        {"type": "Produce", "topic": "captured", "partition": 0, "records": ["Yw=="]},
        {"type": "Fetch", "group_id": "", "topic": "captured", "partition": 0, "offset": 0, "max_bytes": 1000},
        {"type": "Ping"},
    ]
    answers = []
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.settimeout(5)
        for req in requests:
            sock.sendall(encode_frame(req))
            answers.append(decode_frame(_recv_frame(sock)))
        sock.shutdown(socket.SHUT_WR)
        try:
            sock.recv(1)  # wait for the broker's FIN so the capture holds a complete close
        except OSError:
            pass
    return answers


def capture_broker_traffic(out: Path, faults: list[str] = (), protocol: str = "rustlog",
                           client=client_conversation) -> tuple[Path, int, list]:
    """(pcap path, broker port, what the client got back)."""
    ready = Path(tempfile.mkdtemp(prefix="wirecheck-broker-")) / "ready.json"
    broker_cmd = [sys.executable, "-m", "wirecheck.broker", "--protocols", protocol, f"--{protocol}-port", "0",
                  "--ready-file", str(ready)] + [arg for f in faults for arg in ("--fault", f)]
    broker = subprocess.Popen(broker_cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dump = None
    try:
        port = _wait_for(lambda: ready.exists() and json.loads(ready.read_text())["ports"][protocol], 20, "broker")
        dump = subprocess.Popen([TCPDUMP, "-i", "lo", "-n", "-U", "--immediate-mode", "-s", "0", "-c", "2000", "-w", str(out),
                                 f"tcp port {port}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _wait_for(lambda: dump.poll() is not None or _listening(dump), 10, "tcpdump")
        if dump.poll() is not None:
            raise RuntimeError(f"tcpdump exited: {dump.stderr.read()}")
        time.sleep(0.5)  # "listening" is printed as the filter is attached; give it a moment
        answers = client(port)
        # the conversation's last packets reach the file: a quiet spell is no proof on a busy machine
        _wait_for(lambda: _ended(out, port), 20, "both sides' FIN or a reset in the capture file")
        return out, port, answers
    finally:
        if dump is not None and dump.poll() is None:
            dump.send_signal(signal.SIGINT)  # tcpdump flushes and exits on SIGINT
            try:
                dump.wait(5)
            except subprocess.TimeoutExpired:
                dump.kill()
        broker.send_signal(signal.SIGTERM)
        try:
            broker.wait(5)
        except subprocess.TimeoutExpired:
            broker.kill()


def _ended(path: Path, port: int) -> bool:
    """Has every connection to ``port`` in the capture file so far ended on both sides (FIN, or a reset)?"""
    try:
        flows = read_capture(path.read_bytes(), {port}).flows
    except Exception:  # noqa: BLE001 - a record still being written: not yet
        return False
    return bool(flows) and all((flow.to_server.fin and flow.to_client.fin) or flow.to_server.rst
                               or flow.to_client.rst for flow in flows)


def _listening(dump: subprocess.Popen) -> bool:
    """tcpdump prints 'listening on lo' to stderr once its capture is armed."""
    os.set_blocking(dump.stderr.fileno(), False)
    line = dump.stderr.readline()
    return "listening on" in (line or "")

