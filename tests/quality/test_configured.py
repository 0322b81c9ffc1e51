"""Section "configured servers": every suite that declares a configured mode (suites/<name>/configured.py) passes
against the reference broker provisioned the way users' servers are — resources created beforehand and named
with --target-option, shared by every case — run twice against one broker, so the second run meets resources the
first one filled. Only OK, UNIMPLEMENTED and BLOCKED are acceptable there."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIGURED = sorted(p.parent.name for p in (ROOT / "suites").glob("*/configured.py"))


def test_some_suites_declare_a_configured_mode():
    assert {"rustlog", "kafka", "pravega", "barco"} <= set(CONFIGURED)


@pytest.mark.parametrize("protocol", CONFIGURED)
def test_suite_passes_against_a_configured_server(tmp_path, protocol):
    argv = [sys.executable, "scripts/configured.py", protocol, "--repeat", "2", "--", "-q", "-p", "no:cacheprovider",
            "-o", "addopts=", "--report-dir", str(tmp_path), "--fuzz", "5",
            "--random-order-bucket=global"]  # as users run it: every case must pass in any order (seed printed)
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    output = proc.stdout[-6000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, output
    runs = sorted(tmp_path.glob("*/run.json"))
    assert len(runs) == 2, output
    for run in runs:
        targets = json.loads(run.read_text())["targets"]
        assert protocol in targets and not targets[protocol]["reference"], targets  # a given target, not launched
        records = [json.loads(line) for path in run.parent.glob("cases-*.jsonl")
                   for line in path.read_text().splitlines() if line.strip()]
        verdicts = {r["verdict"] for r in records}
        assert verdicts <= {"OK", "UNIMPLEMENTED", "BLOCKED"}, \
            [f"{r['case']}: {r['verdict']} {r.get('message', '')}"[:300] for r in records
             if r["verdict"] not in ("OK", "UNIMPLEMENTED", "BLOCKED")]
        assert sum(r["verdict"] == "OK" for r in records) > 100, output
