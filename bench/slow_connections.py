"""A flood of slow connections against each listener of the reference broker: is a fresh client still answered?

For each protocol, starts the broker with that personality alone on ephemeral 127.0.0.1 ports, measures the
time a fresh client takes to get a correct answer to the protocol's hello (the liveness request: a new
connection, one request, its answer) with no flood (the baseline), then opens ``--connections`` connections to
the primary listener that each send one byte of a frame and stall, and measures the fresh client again, several
times. Prints the broker's resident memory (VmRSS, and its peak VmHWM) before and with the flood, and how many
slow connections the broker closed. Goal (the "nothing lost" issue): with 1,000 slow connections, a fresh client
is answered within 1 s and memory stays bounded.

    python bench/slow_connections.py [--connections 1000] [--protocols kafka,rustlog,fluvio,pravega,barco]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import machine_info  # noqa: E402
from wirecheck.protocols.registry import all_specs  # noqa: E402
from wirecheck.targets.launcher import launch  # noqa: E402
from wirecheck.targets.probe import hello_answered  # noqa: E402

ANSWER_DEADLINE = 15.0  # far above the goal, so a slow answer is measured rather than cut off
SAMPLES = 5


def fresh_client_seconds(address: tuple[str, int], spec) -> float:
    """Seconds until a new connection's hello is answered correctly; infinity if it is not answered at all."""
    started = time.perf_counter()
    answered, why = hello_answered(address, spec, ANSWER_DEADLINE)
    if not answered:
        print(f"  {spec.name}: a fresh client was not answered: {why}", flush=True)
        return float("inf")
    return time.perf_counter() - started


def ms(seconds: float) -> str:
    return "not answered" if seconds == float("inf") else f"{seconds * 1000:6.1f} ms"


def memory_kib(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def open_slow(address: tuple[str, int], count: int, first_byte: bytes) -> list[socket.socket]:
    """``count`` connections, each holding one byte of a frame that never completes."""
    peers = []
    for _ in range(count):
        peer = socket.create_connection(address, timeout=5)
        peer.sendall(first_byte)
        peers.append(peer)
    return peers


def closed_by_broker(peers: list[socket.socket]) -> int:
    closed = 0
    for peer in peers:
        peer.setblocking(False)
        try:
            closed += peer.recv(1) == b""
        except BlockingIOError:
            pass
        except ConnectionResetError:
            closed += 1
    return closed


def measure(protocol: str, connections: int) -> str:
    spec = all_specs()[protocol]
    broker = launch([protocol])
    try:
        address = broker.address(protocol)
        baseline = statistics.median(fresh_client_seconds(address, spec) for _ in range(SAMPLES))
        before = memory_kib(broker.process.pid)
        peers = open_slow(address, connections, spec.endpoints[0].hello()[:1])
        try:
            time.sleep(0.5)  # let the broker accept them all
            flooded = [fresh_client_seconds(address, spec) for _ in range(SAMPLES)]
            during = memory_kib(broker.process.pid)
            closed = closed_by_broker(peers)
        finally:
            for peer in peers:
                peer.close()
        return (f"{protocol:8} slow={connections:5}  fresh client: baseline {ms(baseline)}, "
                f"flooded median {ms(statistics.median(flooded))}, max {ms(max(flooded))}  "
                f"RSS {before['VmRSS'] // 1024} -> {during['VmRSS'] // 1024} MiB (peak {during['VmHWM'] // 1024} MiB)  "
                f"slow peers closed by the broker: {closed}")
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--protocols", default="kafka,rustlog,fluvio,pravega,barco")
    args = parser.parse_args()
    print(machine_info())
    print(f"command: python bench/slow_connections.py --connections {args.connections} --protocols {args.protocols}")
    for protocol in args.protocols.split(","):
        print(measure(protocol, args.connections), flush=True)


if __name__ == "__main__":
    main()
