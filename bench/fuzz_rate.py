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
from wirecheck.targets.fuzz_workers import Share, run_workers  # noqa: E402
from wirecheck.targets.fuzzing import WINDOW, MutantFailed, run  # noqa: E402
from wirecheck.targets.launcher import launch  # noqa: E402
from wirecheck.targets.session import Session  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from machine import machine_info  # noqa: E402

MAX_REPLAYS = 20_000
GOAL = 20_000  # cases/s per protocol on a 2-core machine (issue 43)


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


CORES = len(os.sched_getaffinity(0))  # the machine's share, read before --pin narrows this process's


def main() -> None:
    specs = all_specs()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", required=True, choices=sorted(specs))
    parser.add_argument("--mutants", type=int, default=20_000)
    parser.add_argument("--target", action="append",
                        help="host:port of a running server (repeatable: the workers share them out; default: start "
                             "the reference broker)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--window", type=int, default=WINDOW, help="batches in flight at once, per worker")
    parser.add_argument("--workers", type=int, default=1, help="fuzzer processes (targets/fuzz_workers.py)")
    parser.add_argument("--brokers", type=int, default=1,
                        help="reference broker processes started, one port each (the workers share them out)")
    parser.add_argument("--pin", action="store_true",
                        help="one worker and one broker: this process on one core, the broker on another")
    parser.add_argument("--cprofile", help="write a cProfile of the measured fuzz run to this file (one worker)")
    parser.add_argument("--guided", action="store_true", help="a guided run (the nightly mode) instead of blind")
    args = parser.parse_args()
    if (args.pin or args.cprofile) and (args.workers > 1 or args.brokers > 1):
        parser.error("--pin and --cprofile measure one worker against one broker")

    spec = specs[args.protocol]
    module = importlib.import_module(f"wirecheck.strategies.{spec.name}")
    endpoint_name = getattr(module, "FUZZ_ENDPOINT", None)
    endpoint = spec.endpoint(endpoint_name)
    print(f"machine: {machine_info()}")
    print(f"command: {' '.join(sys.argv)}")
    brokers = []
    try:
        if args.target:
            addresses = [(host, int(port)) for host, port in (t.rsplit(":", 1) for t in args.target)]
        else:
            brokers = [launch([spec.name]) for _ in range(args.brokers)]
            addresses = [b.address(spec.name, None if endpoint is spec.primary else endpoint_name) for b in brokers]
        if args.pin:
            cpus = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {cpus[0]})
            if brokers and len(cpus) > 1:
                os.sched_setaffinity(brokers[0].process.pid, {cpus[1]})
        transcript = Transcript(spec.name, spec.describe)

        def connector(address):
            def connect():
                return Session(address, endpoint, transcript, deadline=2.0)
            return connect

        shares = []
        for address in addresses:  # each target prepared alike (same topic names: the same mutants)
            connect = connector(address)
            adapter = prepare(module, connect, f"bench-{os.getpid()}-fuzz")
            run(connect, adapter, adapter.mutants(random.Random(args.seed + 1)), 1_000, window=args.window)  # warm-up
            shares.append(Share(connect, adapter))
        first = shares[0]
        rt_per_s = raw_replay(first.connect, first.adapter.seeds(), min(args.mutants, MAX_REPLAYS))
        transcript.events.clear()  # what the workers inherit: the measured run's transcript starts empty

        broker_cpu = sum(cpu_seconds(b.process.pid) for b in brokers)
        profiler = None
        if args.cprofile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        model = spec.states if args.guided else None
        try:
            progress = run_workers(shares, args.seed, args.mutants, args.workers, model=model, guided=args.guided,
                                   window=args.window)
        except MutantFailed as failed:
            raise SystemExit(f"{spec.name}: divergence at {failed.mutant.label()}: {failed.divergence}")
        finally:
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(args.cprofile)
        cases_per_s = progress.cases / progress.seconds
        print(f"{spec.name}: {cases_per_s:,.0f} cases/s, raw replay {rt_per_s:,.0f} rt/s")
        where = f"{args.workers} fuzzer process(es), {len(addresses)} target process(es)"
        cpu = f"fuzzer CPU {progress.cpu_s / progress.seconds:.0%}"
        per_case = {"fuzzer": progress.cpu_s / progress.cases}
        if brokers:
            broker_cpu = sum(cpu_seconds(b.process.pid) for b in brokers) - broker_cpu
            cpu += f", broker CPU {broker_cpu / progress.seconds:.0%}"
            per_case["broker"] = broker_cpu / progress.cases
        print(f"  {cases_per_s / rt_per_s:.0%} of raw replay; {progress.cases} mutants in {progress.seconds:.2f} s, "
              f"{progress.connections} connections, {progress.batches} batches, generating "
              f"{progress.generate_s / progress.seconds:.0%} of the time; {cpu} (of one core); "
              f"{len(progress.non_strict)} SHOULD-level divergences; {where}; window {args.window}"
              f"{'; guided' if args.guided else ''}{'; pinned one core each' if args.pin else ''}")
        costs = ", ".join(f"{side} {seconds * 1e6:.0f} us" for side, seconds in per_case.items())
        print(f"  CPU time per case: {costs}; the fuzzer alone on a free core: "
              f"{1 / per_case['fuzzer']:,.0f} cases/s")
        if brokers:
            both = sum(per_case.values())
            print(f"  fuzzer and broker share {CORES} cores: at most {CORES / both:,.0f} cases/s "
                  f"({both * 1e6:.0f} us of CPU a case); {GOAL:,} cases/s would take {both * GOAL:.1f} cores")
            print(f"  broker peak RSS (VmHWM): {max(peak_rss_mb(b.process.pid) for b in brokers):.1f} MB")
    finally:
        for broker in brokers:
            broker.stop()


if __name__ == "__main__":
    main()
