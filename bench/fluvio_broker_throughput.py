"""Produce throughput of the reference broker's Fluvio SPU personality, in records per second.

Starts ``python -m wirecheck.broker`` (Fluvio only) on an ephemeral 127.0.0.1 port and drives it with 1 and 8
connections. Each connection sends Produce v25 requests holding one batch (default 100 records of 100 bytes)
to its own topic (auto-created on its first produce, one partition) and waits for each answer before the next,
as the Rust producer does per partition. Request frames are encoded once up front so that the client's cost
stays small next to the broker's; every answer is checked (error 0, base offset advancing by the batch).

    python bench/fluvio_broker_throughput.py [--seconds 3] [--batch 100] [--record-size 100]
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import sys
import threading
import time
from pathlib import Path

import crc32c

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import machine_info  # noqa: E402
from wirecheck.targets.launcher import launch  # noqa: E402

TIMEOUT = 30.0


def varint(n: int) -> bytes:
    z = ((n << 1) ^ (n >> 63)) & ((1 << 64) - 1)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def record_batch(values: list[bytes]) -> bytes:
    """A Fluvio RecordBatch (notes §4.2): i32 record count, Option-tagged null keys, CRC-32C."""
    records = bytearray(struct.pack(">i", len(values)))
    for i, value in enumerate(values):
        body = b"\x00" + varint(0) + varint(i) + b"\x00" + varint(len(value)) + value + b"\x00"
        records += varint(len(body)) + body
    now = int(time.time() * 1000)
    covered = struct.pack(">hiqqqhi", 0, len(values) - 1, now, now, -1, -1, -1) + bytes(records)
    return struct.pack(">qiibI", 0, 9 + len(covered), -1, 2, crc32c.crc32c(covered)) + covered


def produce_frame(topic: str, batch: bytes) -> bytes:
    name = topic.encode()
    body = (b"\x00" + struct.pack(">hi", 1, 1500) + struct.pack(">ih", 1, len(name)) + name
            + struct.pack(">iIi", 1, 0, len(batch)) + batch + struct.pack(">i", 0))
    header = struct.pack(">Hhih", 0, 25, 1, 6) + b"wc-bch"
    return struct.pack(">i", len(header) + len(body)) + header + body


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return bytes(data)


def produce(sock: socket.socket, frame: bytes, topic_len: int) -> tuple[int, int]:
    """(error code, base offset) of the one partition in the answer."""
    sock.sendall(frame)
    (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    body = recv_exactly(sock, size)
    pos = 4 + 4 + 2 + topic_len + 4 + 4  # correlation, topic count, name, partition count, partition index
    return struct.unpack_from(">hq", body, pos)


def run_load(port: int, stem: str, connections: int, seconds: float, batch: int, record_size: int) -> float:
    """Records per second over ``seconds`` with ``connections`` producers (one thread each)."""
    payload = record_batch([os.urandom(record_size // 2).hex().encode()[:record_size] for _ in range(batch)])
    counts = [0] * connections
    errors: list[str] = []
    start_gate = threading.Barrier(connections + 1)
    stop_at = [0.0]

    def producer(index: int) -> None:
        topic = f"{stem}-{index}"
        frame = produce_frame(topic, payload)
        expected = 0
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            start_gate.wait()
            while time.monotonic() < stop_at[0]:
                error, base = produce(sock, frame, len(topic))
                if error or base != expected:
                    errors.append(f"error {error}, base {base}, expected {expected}")
                    return
                expected += batch
                counts[index] += batch

    threads = [threading.Thread(target=producer, args=(i,), daemon=True) for i in range(connections)]
    for thread in threads:
        thread.start()
    stop_at[0] = time.monotonic() + seconds + 0.05
    start_gate.wait()
    started = time.monotonic()
    for thread in threads:
        thread.join(seconds + TIMEOUT)
    elapsed = time.monotonic() - started
    if errors:
        raise SystemExit(f"produce failed: {errors[0]}")
    return sum(counts) / elapsed


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc), to tell whether the broker is the bottleneck."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement (default 3)")
    parser.add_argument("--batch", type=int, default=100, help="records per Produce (default 100)")
    parser.add_argument("--record-size", type=int, default=100, help="bytes per record value (default 100)")
    parser.add_argument("--connections", default="1,8", help="comma-separated (default 1,8)")
    args = parser.parse_args()

    print(f"# Fluvio reference broker: produce throughput ({args.batch} records x {args.record_size} B per batch, "
          f"Produce v25, in memory)")
    print(f"# {machine_info()}")
    print()
    print("broker busy = broker CPU seconds / wall seconds (1.0: the broker's one core is the bottleneck)")
    print()
    print("| connections | records/s | batches/s | broker busy |")
    print("|---:|---:|---:|---:|")
    broker = launch(["fluvio"])
    try:
        for connections in (int(n) for n in args.connections.split(",")):
            cpu, wall = cpu_seconds(broker.process.pid), time.monotonic()
            rate = run_load(broker.ports["fluvio"], f"bench-{connections}", connections, args.seconds, args.batch,
                            args.record_size)
            busy = (cpu_seconds(broker.process.pid) - cpu) / (time.monotonic() - wall)
            print(f"| {connections} | {rate:,.0f} | {rate / args.batch:,.0f} | {busy:.2f} |", flush=True)
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
