"""One short ``wirecheck safety PROTOCOL`` run as a user starts it (the end-to-end tests' common step)."""

from __future__ import annotations

import json
import subprocess
import sys


def safety_run(tmp_path, protocol: str, seconds: int, restart_every: int, seed: int, *args: str):
    """(the finished command, its result.json or None) of a run reporting into ``tmp_path / "report"``."""
    report = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "wirecheck", "safety", protocol, "--time", str(seconds),
                           "--restart-every", str(restart_every), "--seed", str(seed), "--report-dir", str(report),
                           *args], capture_output=True, text=True, timeout=300)
    result = json.loads((report / "result.json").read_text()) if (report / "result.json").exists() else None
    return done, result
