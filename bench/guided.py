"""Benchmark: does guidance pay? Distinct reaction states and transitions reached by guided and blind bulk fuzzing
at the same budget, and the mutants each needs to hit a fault hidden behind a session state.

    python bench/guided.py [--protocol NAME ...] [--mutants N] [--seeds K] [--target host:port]

For each protocol (default: all) and seed 1..K, three runs of N mutants each against the reference broker (or
``--target``), each with its own state-coverage map (strategies/coverage.py):

* guided: strategies/guided.py, the nightly budget's mode;
* blind: the protocol's mutator alone, as the ci budget sends it;
* blind+steps: the guided run's ingredients (its session-state step requests and operators) drawn without reading
  the map: what the feedback alone is worth.

Distinct transitions are distinct pairs of consecutive reaction states on one connection (AFLNet's measure).
Then, for each state-hidden fault of the protocol (``HIDDEN``: a reference-broker fault whose defect shows only in a
session state), a broker with that fault and the same three modes per seed, each run stopped at the first
divergence: the mutant index that found it (a run that never finds it counts N, shown as ">N").

It ends with one line per protocol:
``P: transitions guided N / blind M = R x; hidden faults found with G / B mutants (guided / blind, median)``
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wirecheck.protocols.registry import all_specs  # noqa: E402
from wirecheck.protocols.transcript import Transcript  # noqa: E402
from wirecheck.strategies.coverage import CoverageMap  # noqa: E402
from wirecheck.strategies.engine import Progress  # noqa: E402
from wirecheck.strategies.guided import guided  # noqa: E402
from wirecheck.targets.fuzzing import MutantFailed, TargetLost, run  # noqa: E402
from wirecheck.targets.launcher import launch  # noqa: E402
from wirecheck.targets.session import Session  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from fuzz_rate import prepare  # noqa: E402
from machine import machine_info  # noqa: E402

#: protocol -> reference-broker faults that hide behind a session state (protocols/<name>/faults.py lists them
#: with their clause; each one's description in broker/<name>/faults.py says which state)
HIDDEN = {"pravega": ("pravega.writer-read-size-closes",),
          "kafka": ("kafka.txn-producer-malformed-answered", "kafka.in-transaction-malformed-stalls"),
          "fluvio": ("fluvio.stream-open-compression-wrong",)}
MODES = ("guided", "blind", "blind+steps")


class Target:
    """One broker (started here, or ``--target``) and what the runs need of it."""

    def __init__(self, name: str, address: str | None, faults=()):
        self.spec = all_specs()[name]
        self.module = importlib.import_module(f"wirecheck.strategies.{name}")
        endpoint_name = getattr(self.module, "FUZZ_ENDPOINT", None)
        self.endpoint = self.spec.endpoint(endpoint_name)
        self.broker = None
        if address:
            host, port = address.rsplit(":", 1)
            self.address = (host, int(port))
        else:
            self.broker = launch([name], faults=list(faults))
            self.address = self.broker.address(name, None if self.endpoint is self.spec.primary else endpoint_name)
        self.transcript = Transcript(name, self.spec.describe)

    def connect(self) -> Session:
        return Session(self.address, self.endpoint, self.transcript, deadline=2.0)

    def run(self, mode: str, seed: int, mutants: int) -> tuple[Progress, int | None]:
        """One run: its progress (and coverage map), and the index of the mutant that diverged (None: none did)."""
        adapter = prepare(self.module, self.connect, f"bench-{os.getpid()}-{mode}-{seed}".replace("+", "-"))
        coverage = CoverageMap(self.spec.states)
        progress = Progress(coverage=coverage)
        drawn = adapter.mutants(random.Random(seed))
        if mode != "blind":
            drawn = guided(adapter, drawn, coverage, feedback=mode == "guided")
        self.transcript.events.clear()  # a long run's transcript is not what is measured
        try:
            run(self.connect, adapter, drawn, mutants, progress=progress)
        except MutantFailed as failed:
            return progress, failed.mutant.index
        except TargetLost as lost:
            return progress, lost.suspects[0].index if lost.suspects else 0
        return progress, None

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def coverage_runs(name: str, args) -> dict[str, list[dict]]:
    target = Target(name, args.target)
    found: dict[str, list[dict]] = {mode: [] for mode in MODES}
    try:
        for seed in range(1, args.seeds + 1):
            for mode in MODES:
                progress, failed = target.run(mode, seed, args.mutants)
                if failed is not None:
                    raise SystemExit(f"{name}: the clean target diverged in the {mode} run, seed {seed}, "
                                     f"mutant #{failed}")
                distinct = progress.coverage.to_dict()["distinct"]
                rate = progress.cases / progress.seconds
                found[mode].append({**distinct, "rate": rate})
                print(f"  {name} seed {seed} {mode:12}: {distinct['transitions']:6} transitions, "
                      f"{distinct['cells']:5} reaction states, catalogue cells {distinct['catalogue_reached']}/"
                      f"{distinct['catalogue']}, {rate:,.0f} cases/s", flush=True)
    finally:
        target.stop()
    return found


def hidden_runs(name: str, fault: str, args) -> dict[str, list[int]]:
    target = Target(name, None, faults=[fault])
    needed: dict[str, list[int]] = {mode: [] for mode in MODES}
    try:
        for seed in range(1, args.seeds + 1):
            for mode in MODES:
                _, failed = target.run(mode, seed, args.mutants)
                needed[mode].append(args.mutants if failed is None else failed + 1)
                print(f"  {fault} seed {seed} {mode:12}: "
                      f"{'not found in ' + str(args.mutants) if failed is None else f'found at mutant {failed + 1}'}",
                      flush=True)
    finally:
        target.stop()
    return needed


def shown(value: float, budget: int) -> str:
    return f">{budget:,}" if value >= budget else f"{value:,.0f}"


def main() -> None:
    specs = all_specs()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", action="append", choices=sorted(specs), help="default: every protocol")
    parser.add_argument("--mutants", type=int, default=100_000, help="mutants per run (the budget)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--target", help="host:port of a running server for the coverage runs (default: start "
                                         "the reference broker); the hidden-fault runs always start their own")
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    print(f"command: {' '.join(sys.argv)}")
    started = time.perf_counter()
    lines = []
    for name in args.protocol or sorted(specs):
        found = coverage_runs(name, args)
        transitions = {mode: median([r["transitions"] for r in found[mode]]) for mode in MODES}
        cells = {mode: median([r["cells"] for r in found[mode]]) for mode in MODES}
        rates = {mode: median([r["rate"] for r in found[mode]]) for mode in MODES}
        hidden = {fault: hidden_runs(name, fault, args) for fault in HIDDEN.get(name, ())}
        needed = {mode: [median(runs[mode]) for runs in hidden.values()] for mode in MODES}
        faults = ("; hidden faults found with " + ", ".join(
            f"{shown(g, args.mutants)} / {shown(b, args.mutants)}" for g, b in zip(needed["guided"], needed["blind"]))
            + " mutants (guided / blind, median)") if hidden else "; no state-hidden fault declared"
        lines.append(f"{name}: transitions guided {transitions['guided']:,.0f} / blind {transitions['blind']:,.0f} = "
                     f"{transitions['guided'] / transitions['blind']:.2f} x{faults}")
        print(f"  {name} medians over {args.seeds} seeds of {args.mutants:,} mutants: "
              + "; ".join(f"{mode} {transitions[mode]:,.0f} transitions, {cells[mode]:,.0f} reaction states, "
                          f"{rates[mode]:,.0f} cases/s" for mode in MODES)
              + "".join(f"; {fault}: " + ", ".join(f"{mode} {shown(median(runs[mode]), args.mutants)}"
                                                   for mode in MODES) for fault, runs in hidden.items()), flush=True)
    print(f"({time.perf_counter() - started:.0f} s)")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
