"""Benchmark: mutated RustLog cases per second against the reference broker, and the broker's peak memory
while the whole fuzz profile runs.

    python bench/rustlog_fuzz_rate.py                 # cases/s (20,000 mutants), then memory under --fuzz=ci
    python bench/rustlog_fuzz_rate.py --profile nightly --mutants 100000

The fuzzer is one thread in this process, the broker its own process; the rate is measured unpinned and
then with each pinned to its own core (on a busy machine pinning loses to the scheduler). Time is split into generating mutants and waiting on the socket
(send, receive, judge). Peak memory is the broker's VmHWM (/proc/<pid>/status) after the RustLog suite has run
against it with the chosen fuzz profile.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocols.rustlog import SPEC  # noqa: E402
from reports.transcript import Transcript  # noqa: E402
from strategies.rustlog import BulkMutator  # noqa: E402
from suites.rustlog.client import RustLog  # noqa: E402
from suites.rustlog.fuzzing import run_mutants  # noqa: E402
from targets.launcher import launch  # noqa: E402
from targets.session import Session  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from machine import machine_info  # noqa: E402


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


_names = itertools.count()


class _Target:
    """Just enough of the suite's Target for the client helpers."""

    def __init__(self, address):
        self.address = address
        self.transcript = Transcript("rustlog", SPEC.describe)
        self.deadline = 2.0

    def connect(self):
        return Session(self.address, SPEC, self.transcript, self.deadline)

    def unique(self, stem):
        return f"bench-{os.getpid()}-{next(_names)}-{stem}"


def measure_rate(address, mutants: int, seed: int) -> dict:
    import random

    target = _Target(address)
    client = RustLog(target)
    topic = target.unique("fuzz")
    client.create_topic(topic, 2)
    started = time.perf_counter()
    stats = run_mutants(target.connect, BulkMutator(random.Random(seed), topic, 2), mutants)
    wall = time.perf_counter() - started
    return {"cases": stats.cases, "wall_s": wall, "cases_per_s": stats.cases / wall,
            "generate_share": stats.generate_s / wall, "socket_share": stats.io_s / wall,
            "connections": stats.reconnects, "non_strict": len(stats.non_strict)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", default="ci", help="fuzz profile for the memory run (ci, nightly, N)")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()

    cpus = sorted(os.sched_getaffinity(0))
    print(f"machine: {machine_info()}")
    broker = launch(["rustlog"], extra_args=["--retention-records", "5000"])
    try:
        address = broker.address("rustlog")
        measure_rate(address, 2_000, args.seed)  # warm-up
        for pinned in (False, True):
            if pinned:
                if len(cpus) < 2:
                    break
                os.sched_setaffinity(broker.process.pid, {cpus[1]})
                os.sched_setaffinity(0, {cpus[0]})
            result = measure_rate(address, args.mutants, args.seed)
            print(f"mutated cases ({'fuzzer and broker pinned to one core each' if pinned else 'unpinned'}): "
                  f"{result['cases']} in {result['wall_s']:.2f} s = {result['cases_per_s']:,.0f} cases/s; "
                  f"generating {result['generate_share']:.0%}, socket and judging {result['socket_share']:.0%}; "
                  f"{result['connections']} connections")
        os.sched_setaffinity(0, set(cpus))
        os.sched_setaffinity(broker.process.pid, set(cpus))
        if not args.skip_memory:
            with tempfile.TemporaryDirectory() as reports:
                started = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "pytest", "suites/rustlog", "-q", "-p", "no:cacheprovider",
                                       "-o", "addopts=", f"--fuzz={args.profile}", "--report-dir", reports,
                                       "--target", f"rustlog={address[0]}:{address[1]}"],
                                      cwd=ROOT, capture_output=True, text=True)
                took = time.perf_counter() - started
            last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
            print(f"suite with --fuzz={args.profile}: {last.strip()} ({took:.1f} s)")
            print(f"broker peak RSS (VmHWM): {peak_rss_mb(broker.process.pid):.1f} MB")
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
