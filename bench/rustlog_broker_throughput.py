"""Produce throughput of the reference broker's RustLog personality, in records per second.

Starts ``python -m wirecheck.broker`` (RustLog only) on an ephemeral 127.0.0.1 port, once per storage mode,
and drives it with 1 and 8 connections, each sending Produce batches (default 100 records of 100 bytes) to its
own partition and waiting for each answer (the protocol has one request in flight per connection). Request
frames are encoded once up front so that the client's cost stays small next to the broker's.

    python bench/rustlog_broker_throughput.py [--seconds 3] [--batch 100] [--record-size 100]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import machine_info  # noqa: E402
from wirecheck.targets.launcher import launch  # noqa: E402

TIMEOUT = 30.0


def frame(obj) -> bytes:
    payload = json.dumps(obj).encode()
    return struct.pack(">I", len(payload)) + payload


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return bytes(data)


def request(sock: socket.socket, data: bytes) -> dict:
    sock.sendall(data)
    (length,) = struct.unpack(">I", recv_exactly(sock, 4))
    return json.loads(recv_exactly(sock, length))


def run_load(port: int, topic: str, connections: int, seconds: float, batch: int, record_size: int) -> float:
    """Records per second over ``seconds`` with ``connections`` producers (one thread each)."""
    records = [base64.b64encode(os.urandom(record_size)).decode() for _ in range(batch)]
    counts = [0] * connections
    errors: list[str] = []
    start_gate = threading.Barrier(connections + 1)
    stop_at = [0.0]

    def producer(index: int) -> None:
        data = frame({"type": "Produce", "topic": topic, "partition": index, "records": records})
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            start_gate.wait()
            while time.monotonic() < stop_at[0]:
                answer = request(sock, data)
                if answer.get("record_count") != batch:
                    errors.append(repr(answer))
                    return
                counts[index] += batch

    threads = [threading.Thread(target=producer, args=(i,), daemon=True) for i in range(connections)]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    stop_at[0] = started + seconds
    start_gate.wait()
    started = time.monotonic()
    for thread in threads:
        thread.join(seconds + TIMEOUT)
    elapsed = time.monotonic() - started
    if errors:
        raise SystemExit(f"produce failed: {errors[0]}")
    return sum(counts) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement (default 3)")
    parser.add_argument("--batch", type=int, default=100, help="records per Produce (default 100)")
    parser.add_argument("--record-size", type=int, default=100, help="bytes per record (default 100)")
    parser.add_argument("--connections", default="1,8", help="comma-separated (default 1,8)")
    args = parser.parse_args()
    connection_counts = [int(n) for n in args.connections.split(",")]

    modes = {"memory": [], "data-dir, fsync=batch": ["--fsync", "batch"], "data-dir, fsync=none": ["--fsync", "none"]}
    print(f"# RustLog reference broker: produce throughput ({args.batch} records x {args.record_size} B per batch)")
    print(f"# {machine_info()}")
    print()
    print("| storage | connections | records/s | batches/s |")
    print("|---|---:|---:|---:|")
    for mode, extra in modes.items():
        workdir = Path(tempfile.mkdtemp(prefix="rustlog-bench-"))
        if mode != "memory":
            extra = [*extra, "--data-dir", str(workdir / "data")]
        broker = launch(["rustlog"], extra_args=extra, workdir=workdir)
        port = broker.ports["rustlog"]
        try:
            for connections in connection_counts:
                topic = f"bench-{connections}"
                with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
                    answer = request(sock, frame({"type": "CreateTopic", "topic": topic,
                                                  "partition_count": max(connection_counts)}))
                    assert answer.get("success"), answer
                rate = run_load(port, topic, connections, args.seconds, args.batch, args.record_size)
                print(f"| {mode} | {connections} | {rate:,.0f} | {rate / args.batch:,.0f} |", flush=True)
        finally:
            broker.stop()
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
