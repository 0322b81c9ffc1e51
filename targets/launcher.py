"""Start and stop the bundled reference broker as a child process on ephemeral 127.0.0.1 ports.

A separate process, not a thread: a crash, a hang or runaway memory in the broker shows up as exactly that,
and the liveness probe can tell a dead broker from a slow one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError


@dataclass
class BrokerProcess:
    process: subprocess.Popen
    host: str
    ports: dict[str, int]  # personality -> its primary port
    faults: list[str] = field(default_factory=list)
    log_path: Path | None = None
    endpoints: dict[str, dict[str, int]] = field(default_factory=dict)  # personality -> extra endpoint -> port

    def address(self, protocol: str, endpoint: str | None = None) -> tuple[str, int] | None:
        """The primary endpoint's address, or the named extra endpoint's (None when not listening)."""
        port = self.ports.get(protocol) if endpoint is None else self.endpoints.get(protocol, {}).get(endpoint)
        return None if port is None else (self.host, port)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def exit_status(self) -> str:
        code = self.process.poll()
        if code is None:
            return "running"
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exited with status {code}"

    def log_tail(self, lines: int = 20) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 10.0) -> None:
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def ephemeral_ports(names: list[str]) -> list[str]:
    """The broker's arguments that put each named personality's every endpoint on an ephemeral port."""
    from wirecheck.broker.personality import discover

    available = discover()
    options = [option for name in names
               for option in (f"--{name}-port", *(f"--{name}-{endpoint}-port" for endpoint in available[name].endpoints))]
    return [arg for option in options for arg in (option, "0")]


def launch(protocols: list[str] | None = None, faults: list[str] | None = None, extra_args: list[str] | None = None,
           workdir: Path | None = None, startup_timeout: float = 30.0,
           variants: list[str] | None = None) -> BrokerProcess:
    """Start ``python -m wirecheck.broker`` with every (or the named) personality on port 0.

    ``faults`` are namespaced (``kafka.crc-ieee``); a named protocol the broker has no personality for is left out.
    """
    from wirecheck.broker.personality import discover

    available = discover()
    names = [n for n in protocols if n in available] if protocols else list(available)
    if not names:
        raise HarnessError(f"the reference broker has no personality for {protocols}")
    workdir = Path(workdir or tempfile.mkdtemp(prefix="wirecheck-broker-"))
    workdir.mkdir(parents=True, exist_ok=True)
    ready = workdir / "ready.json"
    log_path = workdir / "broker.log"
    argv = [sys.executable, "-m", "wirecheck.broker", "--host", "127.0.0.1", "--protocols", ",".join(names),
            "--ready-file", str(ready), "--log-level", "INFO"]
    argv += ephemeral_ports(names)
    for fault in faults or []:
        argv += ["--fault", fault]
    for variant in variants or []:
        argv += ["--variant", variant]
    argv += extra_args or []
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    broker = BrokerProcess(process, "127.0.0.1", {}, list(faults or []), log_path)
    end = time.monotonic() + startup_timeout
    while time.monotonic() < end:
        if ready.exists():
            bound = json.loads(ready.read_text())
            broker.ports, broker.endpoints = bound["ports"], bound.get("endpoints", {})
            return broker
        if not broker.alive:
            raise HarnessError(f"reference broker {broker.exit_status()} at start-up:\n{broker.log_tail()}")
        time.sleep(0.02)
    broker.stop()
    raise HarnessError(f"reference broker not ready after {startup_timeout}s:\n{broker.log_tail()}")
