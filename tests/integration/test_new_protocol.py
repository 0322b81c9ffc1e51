"""A protocol that registers is picked up everywhere without touching shared code.

The toy protocol (tests/toy/) registers through WIRECHECK_PROTOCOLS; its cases run through the plugin against
its own server, the prober recognises it, the run records name it, and the contract tests run for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from wirecheck.protocols.registry import all_specs
from wirecheck.targets import probe
from tests.toy.server import ToyServer

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, WIRECHECK_PROTOCOLS="tests.toy.spec", PYTHONPATH=str(ROOT))


def _pytest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)


def test_the_prober_recognises_a_registered_protocol(monkeypatch):
    monkeypatch.setenv("WIRECHECK_PROTOCOLS", "tests.toy.spec")
    specs = all_specs()
    assert "toy" in specs
    with ToyServer() as server:
        assert probe.detect(("127.0.0.1", server.port), specs, deadline=1.0) == ["toy"]


def test_cases_and_records_of_a_registered_protocol(tmp_path):
    with ToyServer() as server:
        done = _pytest("tests/toy/cases.py", f"--target=127.0.0.1:{server.port}", f"--report-dir={tmp_path}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (run_dir,) = tmp_path.iterdir()
    records = [json.loads(line) for path in run_dir.glob("cases-*.jsonl") for line in path.read_text().splitlines()]
    assert [(r["protocol"], r["case"], r["verdict"]) for r in records] == [("toy", "toy.ping.pong", "OK")]


def test_a_failing_target_of_a_registered_protocol_is_reported(tmp_path):
    """A toy target with nothing listening: said once, up front, naming the target (the run cannot start)."""
    with ToyServer() as server:
        port = server.port
    done = _pytest("tests/toy/cases.py", f"--target=toy=127.0.0.1:{port}", f"--report-dir={tmp_path}")
    assert done.returncode == 4, done.stdout[-3000:]
    assert f"127.0.0.1:{port}: connection refused" in done.stderr


def test_contract_tests_run_for_a_registered_protocol():
    """The catalogue, probe and layer contracts pick the toy up (it has no bulk mutation, which a real protocol
    must have, and no reference-broker personality)."""
    done = _pytest("tests/contract/test_catalogue.py", "tests/contract/test_layers.py", "tests/contract/test_probe.py",
                   "-k", "toy and not personality", "-q")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "12 passed" in done.stdout, done.stdout[-2000:]
