"""Benchmark: how far one defect spreads. Each protocol's whole suite runs against the reference broker once per
fault, as users run it (no --stop-at-clause; --strict so a SHOULD fault fails too), real-client scenarios
included, and the per-case records are counted.

    python bench/fanout.py [--protocol P] [--faults GLOB] [--client-faults] [--no-clients] [--jobs N] [--json FILE]

Per fault: FAILED cases, FAILED clauses, **stray** FAILED cases (a clause other than the one the fault breaks; a
client scenario FAILED under its own clause is stray too), BLOCKED cases, of them the client scenarios BLOCKED by
a clause they depend on (``clients``: reports.rootcause.reattribute), whether the fault's own clause was FAILED,
wall time; then the totals per protocol. Goal (the isolation rule, ARCHITECTURE.md "Cases, clauses and
verdicts"): stray = 0 for at least 95 % of the faults, no fault with more than 2 stray, every fault caught under
its own clause. ``--client-faults`` measures only the faults ``ProtocolSpec.client_faults`` declares (those that
break a client scenario: a run with clients takes minutes per fault); ``--no-clients`` skips the client cases, as
the measurements before them did.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import machine_info  # noqa: E402
from tests.quality.expected import EXPECTED, EXTRA_ARGS  # noqa: E402
from tests.quality.harness import run_suite  # noqa: E402
from wirecheck.protocols.registry import all_specs  # noqa: E402


@dataclass
class Spread:
    protocol: str
    fault: str
    clause: str
    failed: int
    failed_clauses: int
    stray: int
    blocked: int
    clients: int  # client scenarios BLOCKED by a clause they depend on (counted in ``blocked`` too)
    caught: bool
    seconds: float
    stray_clauses: list[str]
    stray_cases: list[str]  # "nodeid: message", for the reader


def measure(protocol: str, fault: str, clients: bool = True) -> Spread:
    clause = EXPECTED[protocol][fault]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fanout-") as tmp:
        run = run_suite(protocol, Path(tmp), faults=[fault], extra=[*EXTRA_ARGS.get(fault, []), "--maxfail",
                                                                    "100000"], timeout=2400, clients=clients)
    failed = [r for r in run.records if r["verdict"] == "FAILED"]
    stray = [r for r in failed if r["clause"] != clause]
    blocked = [r for r in run.records if r["verdict"] == "BLOCKED"]
    return Spread(protocol, fault, clause, len(failed), len({r["clause"] for r in failed}), len(stray),
                  len(blocked), sum(bool(r.get("own_failure")) for r in blocked),
                  any(r["clause"] == clause for r in failed),
                  round(time.monotonic() - started, 1), sorted({r["clause"] for r in stray}),
                  [f"{r['nodeid']}: {r['message'][:300]}" for r in stray])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", action="append", default=[], help="only this protocol (repeatable)")
    parser.add_argument("--faults", default="*", help="only faults matching this glob (e.g. 'barco.*')")
    parser.add_argument("--client-faults", action="store_true",
                        help="only the faults that ProtocolSpec.client_faults declares (they break client scenarios)")
    parser.add_argument("--no-clients", action="store_true", help="skip the real-client cases")
    parser.add_argument("--jobs", type=int, default=1, help="suite runs at once (default 1)")
    parser.add_argument("--json", default=None, help="also write every row as JSON here")
    parser.add_argument("--show-stray", action="store_true", help="print each stray case and its message")
    args = parser.parse_args(argv)
    protocols = args.protocol or sorted(EXPECTED)
    specs = all_specs()
    work = [(p, f) for p in protocols for f in sorted(EXPECTED.get(p, {})) if fnmatch.fnmatch(f, args.faults)
            and (not args.client_faults or f in specs[p].client_faults)]
    if not work:
        print("no fault matches", file=sys.stderr)
        return 2
    print(machine_info())
    print(f"{'fault':<52} {'failed':>6} {'clauses':>7} {'stray':>5} {'blocked':>7} {'clients':>7} {'caught':>6} "
          f"{'s':>6}")
    rows: list[Spread] = []
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for row in pool.map(lambda pf: measure(*pf, clients=not args.no_clients), work):
            rows.append(row)
            print(f"{row.fault:<52} {row.failed:>6} {row.failed_clauses:>7} {row.stray:>5} {row.blocked:>7} "
                  f"{row.clients:>7} {'yes' if row.caught else 'NO':>6} {row.seconds:>6}"
                  + (f"   stray: {', '.join(row.stray_clauses)}" if row.stray_clauses else ""), flush=True)
            if args.show_stray:
                for line in row.stray_cases:
                    print(f"    {line}")
    print()
    print(f"{'protocol':<10} {'faults':>6} {'stray=0':>8} {'max stray':>9} {'caught':>7} {'failed':>7} "
          f"{'blocked':>7} {'clients':>7} {'wall s':>7}")
    for protocol in protocols:
        mine = [r for r in rows if r.protocol == protocol]
        if mine:
            print(f"{protocol:<10} {len(mine):>6} {sum(r.stray == 0 for r in mine):>8} "
                  f"{max(r.stray for r in mine):>9} {sum(r.caught for r in mine):>7} "
                  f"{sum(r.failed for r in mine):>7} {sum(r.blocked for r in mine):>7} {sum(r.clients for r in mine):>7} "
                  f"{sum(r.seconds for r in mine):>7.0f}")
    clean = sum(r.stray == 0 for r in rows)
    print(f"all: {len(rows)} faults, stray = 0 for {clean} ({100 * clean / len(rows):.0f} %), "
          f"max stray {max(r.stray for r in rows)}, caught {sum(r.caught for r in rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    raise SystemExit(main())
