"""The `wirecheck` command's subcommands reach what they name (each one line of cli.py, easy to leave behind when a
package moves)."""

from __future__ import annotations

import subprocess
import sys


def test_wirecheck_broker_starts_the_reference_broker_command(tmp_path):
    result = subprocess.run([sys.executable, "-m", "wirecheck", "broker", "--list-variants"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "kafka." in result.stdout and "rustlog." in result.stdout
