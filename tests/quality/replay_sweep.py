"""The replay sweep: every case that FAILED against a faulted reference broker, replayed from its replay file
against a fresh broker with the same fault, must reproduce (FAILED) or say why it cannot be replayed standalone
(NOT REPLAYABLE, with the server-chosen values it could not carry over). "OK, does not reproduce" against the
very server that failed it is a bug in the replay. Used by tests/quality/test_replay.py and bench/replay_sweep.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.quality.expected import EXPECTED, EXTRA_ARGS, SCOPES
from tests.quality.harness import ROOT
from wirecheck.targets.launcher import launch
from wirecheck.targets.runner.run import REFERENCE_ARGS


@dataclass
class Replay:
    fault: str
    case: str
    verdict: str  # FAILED (reproduced), NOT REPLAYABLE, OK (did not reproduce: a replay bug), ERROR
    line: str


def _failed_records(protocol: str, fault: str, report: Path) -> list[dict]:
    scope = SCOPES.get(fault)
    suite = f"suites/{protocol}/{scope}.py" if scope else f"suites/{protocol}"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=",
                    suite, "--reference-fault", fault, "--report-dir", str(report), "--fuzz", "5",
                    # as the fault runs (tests/quality/harness.py): a broken broker must not cost minutes
                    "--deadline", "0.5", "--maxfail", "40",
                    *EXTRA_ARGS.get(fault, [])], cwd=ROOT, capture_output=True, text=True, timeout=600)
    records = [dict(json.loads(line), run_dir=str(path.parent)) for path in report.glob("*/cases-*.jsonl")
               for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r["verdict"] == "FAILED" and r.get("replay")]


def sweep(fault: str) -> list[Replay]:
    protocol = fault.split(".")[0]
    broker_args = [*REFERENCE_ARGS, *(arg.split("=", 1)[1] for arg in EXTRA_ARGS.get(fault, [])
                                      if arg.startswith("--reference-arg="))]
    with tempfile.TemporaryDirectory(prefix="wirecheck-sweep-") as scratch:
        failed = _failed_records(protocol, fault, Path(scratch) / "reports")
        if not failed:
            return []
        # where the failing run's broker listened: an answer the layers cannot decode is compared byte for byte,
        # and may hold the server's own port (a Metadata answer in the wrong layout), as a vendor's server keeps it
        broker_args += ["--" + protocol + "-port", failed[0]["target"].rpartition(":")[2]]
        broker = launch([protocol], faults=[fault], workdir=Path(scratch) / "broker", extra_args=broker_args)
        try:
            results = []
            for n, record in enumerate(failed):
                if not broker.alive:  # the previous replay reproduced a crash: the next one needs a broker again
                    broker = launch([protocol], faults=[fault], workdir=Path(scratch) / f"broker-{n}",
                                    extra_args=broker_args)
                path = Path(record["run_dir"]) / record["replay"]
                endpoints = [arg for name, port in broker.endpoints.get(protocol, {}).items()
                             for arg in ("--endpoint", f"{name}=127.0.0.1:{port}")]
                done = subprocess.run([sys.executable, "-m", "wirecheck", "replay", str(path), "--target",
                                       f"{protocol}=127.0.0.1:{broker.ports[protocol]}", *endpoints,
                                       # the failing run waited 0.5 s: a loaded machine must not turn a late
                                       # answer into a silence here (a recorded silence costs this wait once)
                                       "--deadline", "3"],
                                      cwd=ROOT, capture_output=True, text=True, timeout=120)
                line = next((text.split(": ", 1)[1] for text in done.stdout.splitlines() if str(path) in text),
                            done.stdout.strip() or done.stderr.strip())
                verdict = next((v for v in ("FAILED", "NOT REPLAYABLE", "OK") if line.startswith(v)), "ERROR")
                results.append(Replay(fault, record["case"], verdict, line))
            return results
        finally:
            broker.stop()


def faults_of(protocol: str) -> list[str]:
    return sorted(EXPECTED.get(protocol, {}))
