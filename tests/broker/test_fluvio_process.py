"""The Fluvio personality through the CLI, as the suite starts it; and its independence from the suite's code."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wirecheck.broker import fluvio
from tests.broker.fluvio_support import Client, api_versions_body, batch, decode_api_versions

ROOT = Path(__file__).resolve().parents[2]


def test_package_imports_nothing_from_the_suite():
    """ARCHITECTURE: broker/ never imports protocols, strategies or suites."""
    package = Path(fluvio.__file__).parent
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name.removeprefix("wirecheck.").split(".")[0] not in ("protocols", "strategies", "suites"), (path.name, name)


def test_cli_lists_faults_and_serves_until_sigterm():
    listed = subprocess.run([sys.executable, "-m", "wirecheck.broker", "--list-faults"], cwd=ROOT, timeout=30,
                            capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout
    assert {line.split()[0] for line in listed.splitlines() if line.startswith("  fluvio.")} == set(fluvio.FAULTS)
    assert fluvio.DEFAULT_PORT == 9005 and len(fluvio.FAULTS) >= 12

    ready = Path(tempfile.mkdtemp(prefix="fluvio-cli-")) / "ready.json"
    process = subprocess.Popen([sys.executable, "-m", "wirecheck.broker", "--protocols", "fluvio", "--fluvio-port",
                                "0", "--ready-file", str(ready)], cwd=ROOT,
                               env=dict(os.environ, PYTHONPATH=str(ROOT)), stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not ready.exists():
            assert process.poll() is None and time.monotonic() < deadline, "broker did not start"
            time.sleep(0.02)
        port = json.loads(ready.read_text())["ports"]["fluvio"]
        with Client(port) as c:
            assert decode_api_versions(c.call(18, 2, api_versions_body()))[0] == 0
            assert c.produce("cli", batch([b"a"])) == (0, 0)
            assert c.fetch_offsets("cli") == (0, 0, 0, 1)
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        process.stderr.close()
