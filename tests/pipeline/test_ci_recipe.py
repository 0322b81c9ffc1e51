"""docs/ci.md's nightly recipe cannot rot: its script runs one night against a faulted reference broker (the run
fails, and every artifact is still written), and every ``wirecheck`` command line of the GitHub Actions and GitLab
CI examples is one of the script's. (The gate's regression logic has its own tests in test_conformance.py; one
night keeps this test to three JVM starts.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "ci" / "nightly.sh"
DOC = ROOT / "docs" / "ci.md"


def commands(lines) -> list[str]:
    """The ``wirecheck ...`` commands of some shell or YAML lines, without their ``|| ...`` / ``&& ...`` tails."""
    found = []
    for line in lines:
        line = re.sub(r"^\s*(- |run: )?", "", line)
        if line.startswith("wirecheck "):
            found.append(re.split(r" (\|\||&&) ", line)[0].strip())
    return found


def test_the_examples_run_the_scripts_commands():
    script = commands(SCRIPT.read_text().splitlines())
    assert len(script) == 5, script  # run, safety (optional), ingest, report, gate
    for name in ("GitHub Actions", "GitLab CI"):
        block = DOC.read_text().split(f"## {name}", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
        assert commands(block.splitlines()) == script, name


@pytest.fixture
def broker(tmp_path):
    """The reference broker as a vendor's server: a separate process on an ephemeral port."""
    started = []

    def start(*faults: str) -> str:
        ready = tmp_path / f"ready-{len(started)}.json"
        process = subprocess.Popen([sys.executable, "-m", "wirecheck.broker", "--protocols", "rustlog",
                                    "--rustlog-port", "0", "--ready-file", str(ready),
                                    *(f"--fault={fault}" for fault in faults)])
        started.append(process)
        deadline = time.monotonic() + 30
        while not ready.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        return f"rustlog=127.0.0.1:{json.loads(ready.read_text())['ports']['rustlog']}"

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=10)


def nightly(target: str, out: Path) -> subprocess.CompletedProcess:
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "wirecheck").exists(), "the wirecheck command is missing: pip install -e '.[pipeline]'"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", WIRECHECK_TARGET=target,
               WIRECHECK_SUITES="rustlog", WIRECHECK_PROFILE="ci", WIRECHECK_OUT=str(out))
    return subprocess.run(["sh", str(SCRIPT)], cwd=out.parent, env=env, capture_output=True, text=True,
                          timeout=600)


def test_a_failing_night_fails_and_still_writes_every_artifact(broker, tmp_path):
    out = tmp_path / "wirecheck-out"
    night = nightly(broker("rustlog.next-offset-off-by-one"), out)
    assert night.returncode == 1, night.stdout[-4000:] + night.stderr[-4000:]
    assert "wirecheck verdicts:" in night.stdout and "FAILED" in night.stdout
    assert "ingested 1 run(s)" in night.stdout and "0 regression(s)" in night.stdout  # the gate's first night
    assert (out / "site" / "index.html").is_file()
    assert any((out / "allure").glob("*-result.json"))
    [run] = (out / "runs").iterdir()
    assert "rustlog.fetch" in (run / "summary.html").read_text()
