"""Kill -9 mid-stream, restart on the same ``--data-dir``, read everything back: how many acknowledged records
were lost, recovered twice or out of order.

For each protocol, a real client produces with acknowledgements (``--fsync batch``: the broker syncs before it
acknowledges) into one partition or segment; the broker gets SIGKILL once ``--records`` are acknowledged, restarts
on the same ports and data directory, and a reader reads the whole partition back. The bounded version of each
is a test (tests/broker/test_<protocol>_crash.py). Goal: lost 0, duplicated 0, in order.

    python bench/crash_durability.py --protocol barco [--records 50000] [--kills 3]
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
from tests import crash_support  # noqa: E402

SCENARIOS = {"barco": crash_support.barco_scenario, "kafka": crash_support.kafka_scenario,
             "pravega": crash_support.pravega_scenario, "rustlog": crash_support.rustlog_scenario,
             "fluvio": crash_support.fluvio_scenario}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=sorted(SCENARIOS), required=True)
    parser.add_argument("--records", type=int, default=50_000, help="acknowledged records before each kill")
    parser.add_argument("--kills", type=int, default=3, help="independent runs, each with a fresh data directory")
    args = parser.parse_args()
    print(machine_info())
    print(f"command: python bench/crash_durability.py --protocol {args.protocol} --records {args.records} "
          f"--kills {args.kills}")
    failed = False
    for run in range(args.kills):
        with tempfile.TemporaryDirectory(prefix="wirecheck-crash-") as scratch:
            started = time.monotonic()
            with crash_support.CrashableBroker(args.protocol, Path(scratch) / "data") as broker:
                verdict = SCENARIOS[args.protocol](broker, kill_after=args.records)
            problems = verdict.problems()
            failed |= bool(problems)
            print(f"{args.protocol} run {run + 1}: {verdict.line()} ({time.monotonic() - started:.1f} s)"
                  f"{'  ' + '; '.join(problems) if problems else ''}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
