"""Run a protocol's conformance suite against the reference broker, optionally faulted, and collect verdicts.

The suite runs as a separate pytest process, exactly as a user runs it (forked from a process that has done the
heavy imports: tests/quality/warm_pytest.py), and its per-case records are read back.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from tests.quality.warm_pytest import ROOT, run_pytest


@dataclass
class SuiteRun:
    returncode: int
    records: list[dict]
    output: str  # all of it: the terminal summary comes before a long failure's dump

    def tail(self) -> str:
        """The end of the output, short enough for an assertion message."""
        return self.output[-6000:]

    def clauses_with(self, *verdicts: str) -> set[str]:
        return {r["clause"] for r in self.records if r["verdict"] in verdicts}

    def by_verdict(self) -> dict[str, list[str]]:
        out = defaultdict(list)
        for r in self.records:
            out[r["verdict"]].append(f"{r['case']} -> {r['clause']}")
        return dict(out)


def run_suite(suite: str, report_dir: Path, faults: list[str] = (), expect: str | None = None,
              extra: list[str] = (), timeout: float = 300, strict: bool = True, clients: bool = False) -> SuiteRun:
    """Run ``suites/<suite>`` (a protocol folder or one module in it); with ``expect``, stop as soon as that
    clause is reported FAILED. ``strict=False`` leaves out --strict: a SHOULD another path satisfies is then
    NON-STRICT, not FAILED. The real-client cases (``<p>.clients.*``, seconds each, and up to their time limit
    against a broken server) run only with ``clients``: their own proof is tests/quality/test_client_faults.py
    (an explicit ``-k`` in ``extra`` wins over this selection)."""
    # A short deadline and --maxfail keep a thoroughly broken broker (every answer silent) from costing minutes
    # (the reference broker answers on loopback in milliseconds); a small fuzz budget keeps each run to seconds:
    # every fault must be caught by a deterministic case, not by luck of the fuzzer.
    argv = [f"suites/{suite}", "-q", "-p", "no:cacheprovider",
            *(["--strict"] if strict else []), "--report-dir", str(report_dir), "-o", "addopts=", "--deadline",
            "0.5", "--maxfail", "40", "--fuzz", "5"]
    for fault in faults:
        argv += ["--reference-fault", fault]
    if expect:
        argv += ["--stop-at-clause", expect]
    if not clients:
        argv += ["-k", "not clients"]
    argv += list(extra)
    proc = run_pytest(argv, ROOT, timeout)  # a new process, its imports done once (warm_pytest)
    records = [json.loads(line) for path in report_dir.glob("*/cases-*.jsonl")
               for line in path.read_text().splitlines() if line.strip()]
    return SuiteRun(proc.returncode, records, proc.stdout + proc.stderr[-3000:])


def broker_faults(protocol: str) -> set[str]:
    """The namespaced faults of the reference broker's personality for ``protocol`` (none if it has none)."""
    from wirecheck.broker.personality import discover

    info = discover().get(protocol)
    # the safety faults (".safety-") break no conformance clause: tests/safety proves them
    return {fault for fault in info.faults if ".safety-" not in fault} if info else set()
