"""Benchmark: mutated Fluvio cases per second against the reference broker (the bulk fuzz loop of
suites/fluvio/test_robustness.py), per operator family, and the wall time of the whole suite per fuzz profile.

    python bench/fluvio_fuzz_rate.py                     # 5,000 mutants, then the suite with --fuzz=ci
    python bench/fluvio_fuzz_rate.py --mutants 50000 --profile nightly

The fuzzer is one thread in this process and the broker its own process (``python -m targets.reference``). A
mutant that must end the connection costs a new TCP connection; a mutant that must be answered reuses one, so the
rate depends on the operator mix; both are reported. Produce throughput of the Fluvio personality (records/s with
1 and 8 connections) is measured by bench/fluvio_broker_throughput.py.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocols.fluvio import SPEC  # noqa: E402
from reports.transcript import Transcript  # noqa: E402
from strategies.fluvio import BulkMutator, Expect  # noqa: E402
from suites.fluvio.client import new_topic  # noqa: E402
from suites.fluvio.fuzzing import run_mutants  # noqa: E402
from targets.launcher import launch  # noqa: E402
from targets.session import Session  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from machine import machine_info  # noqa: E402

_names = itertools.count()


class _Target:
    """Just enough of the suite's Target for the client helpers (transcript kept small: it is bounded)."""

    def __init__(self, address):
        self.address = address
        self.transcript = Transcript("fluvio", SPEC.describe)
        self.deadline = 2.0

    def connect(self, deadline=None):
        return Session(self.address, SPEC, self.transcript, deadline or self.deadline)

    def unique(self, stem):
        return f"bench-{os.getpid()}-{next(_names)}-{stem}"


def measure(address, mutants: int, seed: int, operators) -> dict:
    target = _Target(address)
    _, topic = new_topic(target, stem="fuzz")
    stats = run_mutants(target.connect, BulkMutator(random.Random(seed), topic, operators), mutants)
    return {"cases": stats.cases, "seconds": stats.seconds, "rate": stats.cases / stats.seconds,
            "connections": stats.connections, "non_strict": len(stats.non_strict)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", default="ci", help="fuzz profile of the suite run (ci, nightly, N)")
    parser.add_argument("--skip-suite", action="store_true")
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    broker = launch(["fluvio"])
    try:
        address = broker.address("fluvio")
        answered = [op for op in BulkMutator.OPERATORS
                    if BulkMutator(random.Random(0), "t").mutant(op).expect in (Expect.ANSWER, Expect.ANSWER_PREFERRED)]
        closing = [op for op in BulkMutator.OPERATORS if op not in answered]
        measure(address, 500, args.seed, BulkMutator.OPERATORS)  # warm-up
        for label, operators in (("all operators", BulkMutator.OPERATORS), ("answered (one connection)", answered),
                                 ("closing (a connection each)", closing)):
            result = measure(address, args.mutants, args.seed, operators)
            print(f"{label}: {result['cases']} mutants in {result['seconds']:.2f} s = {result['rate']:,.0f} cases/s, "
                  f"{result['connections']} connections, {result['non_strict']} NON-STRICT")
        if not args.skip_suite:
            with tempfile.TemporaryDirectory() as reports:
                started = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "pytest", "suites/fluvio", "-q", "-p", "no:cacheprovider",
                                       "-o", "addopts=", f"--fuzz={args.profile}", "--report-dir", reports,
                                       "--target", f"fluvio={address[0]}:{address[1]}"],
                                      cwd=ROOT, capture_output=True, text=True)
                took = time.perf_counter() - started
            last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
            print(f"suite with --fuzz={args.profile}: {last.strip()} ({took:.1f} s wall, pytest start-up included)")
    finally:
        broker.stop()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
