"""How long the safety checker takes over a large history (reports/safety/checker.py): goal under 30 s for
100,000 operations.

The history is synthetic but shaped like a run's: producers sending one to five unique values to a few partitions
(some as transactions, some aborted, some indeterminate), consumers polling them back in order, re-assigned now
and then, and a final read of everything. It is written as JSON lines, then read and checked; both are timed.

    python bench/safety.py [--ops 100000] [--keys 4] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import machine_info  # noqa: E402

from wirecheck.reports.safety import checker, history  # noqa: E402


def synthetic(path: Path, operations: int, keys: int, seed: int) -> int:
    """Write a clean history of about ``operations`` operations (invocations and completions counted apart)."""
    rng = random.Random(seed)
    clock = [0.0]

    def tick() -> float:
        clock[0] += 0.001
        return clock[0]

    recorder = history.Recorder(path, tick)
    names = [f"safety/{k}" for k in range(keys)]
    logs: dict[str, list[int]] = {name: [] for name in names}  # the committed values, by offset rank
    ends = dict.fromkeys(names, 0)  # next offset
    positions: dict[int, dict[str, int]] = {}  # consumer -> key -> next rank to read
    value = 0
    while recorder.count < operations:
        process = rng.randrange(20)
        if process < 12:  # a producer
            key = rng.choice(names)
            txn = process >= 8
            values = list(range(value, value + rng.randint(1, 5)))
            value += len(values)
            recorder.record("invoke", process, "txn" if txn else "send", [["send", key, v] for v in values])
            outcome = rng.random()
            offsets = list(range(ends[key], ends[key] + len(values)))
            ends[key] += len(values) + (1 if txn else 0)  # a transaction's marker takes an offset
            sent = [["send", key, [o, v]] for o, v in zip(offsets, values)]
            if txn and outcome < 0.1:
                recorder.record("fail", process, "txn", sent, abort=True)
            elif outcome < 0.02:
                recorder.record("info", process, "send", [["send", key, [None, v]] for v in values],
                                error="timed out")
            else:
                extra = {"commit_time": clock[0] + 0.0005} if txn else {}
                recorder.record("ok", process, "txn" if txn else "send", sent, **extra)
                logs[key].extend(zip(offsets, values))
        else:
            mine = positions.setdefault(process, dict.fromkeys(names, 0))
            if rng.random() < 0.02:
                recorder.record("invoke", process, "assign", names)
                recorder.record("ok", process, "assign", names)
                mine.update(dict.fromkeys(names, 0))
                continue
            recorder.record("invoke", process, "poll", [["poll"]])
            reads = {}
            for key in names:
                got = logs[key][mine[key]:mine[key] + 10]
                if got:
                    reads[key] = [list(pair) for pair in got]
                    mine[key] += len(got)
            recorder.record("ok", process, "poll", [["poll", reads]])
    recorder.record("invoke", 99, "poll", [["poll"]])
    recorder.record("ok", 99, "poll", [["poll", {key: [list(p) for p in logs[key]] for key in names}]])
    recorder.close()
    return recorder.count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    print(machine_info())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.jsonl"
        count = synthetic(path, options.ops, options.keys, options.seed)
        size = path.stat().st_size
        started = time.perf_counter()
        ops = history.read(path)
        loaded = time.perf_counter()
        result = checker.check(ops)
        checked = time.perf_counter()
    print(f"{count} operations, {size} bytes: read {loaded - started:.2f} s, "
          f"checked {checked - loaded:.2f} s, total {checked - started:.2f} s; valid {result.valid}, "
          f"{result.acknowledged} acknowledged, {result.read_values} values read, counts {result.counts}")
    if not result.valid:
        print(f"unexpected anomalies in a clean history: {result.anomaly_counts}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
