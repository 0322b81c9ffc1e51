"""Benchmark: bulk-fuzz cases per second for any registered protocol, against its raw valid-replay rate.

    python bench/fuzz_rate.py --protocol NAME --mutants N [--target host:port] [--pin] [--seed S] [--window W]
                              [--guided]

Prints ``NAME: <cases/s> cases/s, raw replay <rt/s> rt/s``, then the ratio and where the time went.

* cases/s: N seeded mutants through the bulk engine (strategies/engine.py + targets/fuzzing.py), each reaction
  judged, pipelining, reconnecting and bisecting as the suite's bulk case does.
* raw replay: the protocol's valid seed requests sent one at a time on one connection, each waiting for its
  answer (one round trip per request), for as many requests as there are mutants (at most 20,000). This is the
  baseline the speed goal is relative to: the engine must reach at least half of it, measured in the same run.

Without ``--target`` the bundled reference broker is started (targets.launcher) with only that personality.
``--guided`` sends the mutants of a guided run (strategies/guided.py, the nightly budget's mode: its coverage map
filled as batches are judged) instead of blind ones. ``--pin`` puts this process on one core and the broker on another. The CPU time per case of both processes is
printed, with the rate they would reach with a full core each: on a shared machine the wall-clock rate depends
on the neighbours, the CPU time per case much less. ``--cprofile FILE`` writes a profile of the fuzzer side.

A protocol takes part through ``strategies/<name>`` (its adapter): ``fuzz_setup(name)`` (requests that prepare the target),
``fuzz_adapter(name, answers)`` (the engine's adapter) and the adapter's ``seeds()`` (the raw-replay requests).
A protocol with several endpoints names the framed one it fuzzes in ``FUZZ_ENDPOINT`` (default: the primary);
``--target`` is then that endpoint's address.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
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
from wirecheck.targets.fuzzing import WINDOW, MutantFailed, run  # noqa: E402
from wirecheck.targets.launcher import launch  # noqa: E402
from wirecheck.targets.session import Session  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from machine import machine_info  # noqa: E402

MAX_REPLAYS = 20_000


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def raw_replay(connect, seeds: list[bytes], count: int) -> float:
    """Round trips per second: valid requests, one at a time, each answer awaited."""
    session = connect()
    try:
        started = time.perf_counter()
        for index in range(count):
            reply = session.request(seeds[index % len(seeds)])
            if not reply.is_frame:
                raise SystemExit(f"raw replay: seed request {index % len(seeds)} got {reply}")
        return count / (time.perf_counter() - started)
    finally:
        session.close()


def prepare(module, connect, name: str):
    """The protocol's adapter, after sending the requests it needs (a topic, the advertised versions)."""
    session = connect()
    try:
        answers = []
        for frame in module.fuzz_setup(name):
            reply = session.request(frame)
            answers.append(reply.frame)
        return module.fuzz_adapter(name, answers)
    finally:
        session.close()


def main() -> None:
    specs = all_specs()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", required=True, choices=sorted(specs))
    parser.add_argument("--mutants", type=int, default=20_000)
    parser.add_argument("--target", help="host:port of a running server (default: start the reference broker)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--window", type=int, default=WINDOW, help="batches in flight at once")
    parser.add_argument("--pin", action="store_true", help="this process on one core, the broker on another")
    parser.add_argument("--cprofile", help="write a cProfile of the measured fuzz run to this file")
    parser.add_argument("--guided", action="store_true", help="a guided run (the nightly mode) instead of blind")
    args = parser.parse_args()

    spec = specs[args.protocol]
    module = importlib.import_module(f"wirecheck.strategies.{spec.name}")
    endpoint_name = getattr(module, "FUZZ_ENDPOINT", None)
    endpoint = spec.endpoint(endpoint_name)
    print(f"machine: {machine_info()}")
    broker = None
    if args.target:
        host, port = args.target.rsplit(":", 1)
        address = (host, int(port))
    else:
        broker = launch([spec.name])
        address = broker.address(spec.name, None if endpoint is spec.primary else endpoint_name)
    try:
        if args.pin:
            cpus = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {cpus[0]})
            if broker is not None and len(cpus) > 1:
                os.sched_setaffinity(broker.process.pid, {cpus[1]})
        transcript = Transcript(spec.name, spec.describe)

        def connect():
            return Session(address, endpoint, transcript, deadline=2.0)

        adapter = prepare(module, connect, f"bench-{os.getpid()}-fuzz")
        run(connect, adapter, adapter.mutants(random.Random(args.seed + 1)), 1_000, window=args.window)  # warm-up
        rt_per_s = raw_replay(connect, adapter.seeds(), min(args.mutants, MAX_REPLAYS))

        broker_cpu = cpu_seconds(broker.process.pid) if broker is not None else None
        own_cpu = time.process_time()
        profiler = None
        if args.cprofile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        mutants = adapter.mutants(random.Random(args.seed))
        coverage = CoverageMap(spec.states) if args.guided and spec.states is not None else None
        if coverage is not None:
            mutants = guided(adapter, mutants, coverage)
        try:
            progress = run(connect, adapter, mutants, args.mutants, window=args.window,
                           progress=Progress(coverage=coverage))
        except MutantFailed as failed:
            raise SystemExit(f"{spec.name}: divergence at {failed.mutant.label()}: {failed.divergence}")
        finally:
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(args.cprofile)
        own_cpu = time.process_time() - own_cpu
        cases_per_s = progress.cases / progress.seconds
        print(f"{spec.name}: {cases_per_s:,.0f} cases/s, raw replay {rt_per_s:,.0f} rt/s")
        cpu = f"fuzzer CPU {own_cpu / progress.seconds:.0%}"
        per_case = {"fuzzer": own_cpu / progress.cases}
        if broker is not None:
            broker_cpu = cpu_seconds(broker.process.pid) - broker_cpu
            cpu += f", broker CPU {broker_cpu / progress.seconds:.0%}"
            per_case["broker"] = broker_cpu / progress.cases
        print(f"  {cases_per_s / rt_per_s:.0%} of raw replay; {progress.cases} mutants in {progress.seconds:.2f} s, "
              f"{progress.connections} connections, {progress.batches} batches, generating "
              f"{progress.generate_s / progress.seconds:.0%} of the time; {cpu}; "
              f"{len(progress.non_strict)} SHOULD-level divergences; window {args.window}"
              f"{'; guided' if coverage is not None else ''}"
              f"{'; pinned one core each' if args.pin else ''}")
        costs = ", ".join(f"{side} {seconds * 1e6:.0f} us" for side, seconds in per_case.items())
        print(f"  CPU time per case: {costs}; with a full core each: {1 / max(per_case.values()):,.0f} cases/s "
              f"(the {max(per_case, key=per_case.get)} is the bound)")
        if broker is not None:
            print(f"  broker peak RSS (VmHWM): {peak_rss_mb(broker.process.pid):.1f} MB")
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
