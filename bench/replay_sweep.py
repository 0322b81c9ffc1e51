"""Replay every failure of every fault: how many reproduce, how many say they cannot be replayed standalone, and
how many wrongly say "does not reproduce" (goal: 0).

    python bench/replay_sweep.py [--protocol kafka] [--faults 'kafka.txn-*'] [--show]
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import machine_info  # noqa: E402
from tests.quality.replay_sweep import faults_of, sweep  # noqa: E402
from wirecheck.protocols.registry import all_specs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", action="append", default=[])
    parser.add_argument("--faults", default="*", help="a glob over the namespaced fault names")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--show", action="store_true", help="print every replay that did not reproduce")
    args = parser.parse_args()
    protocols = args.protocol or sorted(all_specs())
    faults = [f for p in protocols for f in faults_of(p) if fnmatch.fnmatch(f, args.faults)]
    print(machine_info())
    print(f"command: python bench/replay_sweep.py {' '.join(sys.argv[1:])}")
    with ThreadPoolExecutor(args.jobs) as pool:
        results = [r for found in pool.map(sweep, faults) for r in found]
    for protocol in protocols:
        mine = [r for r in results if r.fault.startswith(protocol + ".")]
        counts = Counter(r.verdict for r in mine)
        print(f"{protocol:8} failures replayed {len(mine):4}: reproduced {counts['FAILED']}, not replayable "
              f"{counts['NOT REPLAYABLE']}, did not reproduce {counts['OK']}, error {counts['ERROR']}")
    for r in results:
        if args.show and r.verdict != "FAILED":
            print(f"  {r.fault} {r.case}: {r.line[:400]}")
    sys.exit(1 if any(r.verdict in ("OK", "ERROR") for r in results) else 0)


if __name__ == "__main__":
    main()
