"""How long a safety run's plot takes (reports/safety/plot.py) over a large history, and how big the SVG gets: the
report writes it at the end of every run, so it must stay small beside the checker.

The history is bench/safety.py's synthetic one (shaped like a run's), with a fault window every 30 s of its
clock; reading it is the baseline, as in bench/safety.py.

    python bench/safety_plot.py [--ops 100000] [--keys 4] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import machine_info  # noqa: E402
from safety import synthetic  # noqa: E402

from wirecheck.reports.safety import history, plot  # noqa: E402


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
        started = time.perf_counter()
        ops = history.read(path)
        loaded = time.perf_counter()
        end = max(op["time"] for op in ops)
        windows = [{"fault": "delay", "start": float(t), "end": t + 3.0} for t in range(0, int(end), 30)]
        plot.write(ops, windows, "bench", Path(tmp) / "plot.svg")
        plotted = time.perf_counter()
        size = (Path(tmp) / "plot.svg").stat().st_size
    print(f"{count} operations over {end:.0f} s of history clock: read {loaded - started:.2f} s, "
          f"plotted {plotted - loaded:.2f} s, plot.svg {size // 1024} kB ({len(windows)} fault windows)")


if __name__ == "__main__":
    main()
