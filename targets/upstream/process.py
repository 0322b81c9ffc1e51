"""An upstream server (the real thing a suite describes) running as a child process on loopback.

Started in its own process group, so that stopping it stops whatever it started; its output goes to a log file in
the run's report directory; it is ready when its protocol's hello is answered and, where the server says so in its
log, when it has finished starting. Nothing here knows a protocol or a server.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError

HOST = "127.0.0.1"  # loopback only: an upstream server never listens anywhere else


def free_port() -> int:
    """A port the kernel just handed out on loopback (servers whose configuration names every port cannot bind
    port 0 themselves); a bind that loses the race fails the start with the server's own message."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def cache_root() -> Path:
    """Where resolved upstream builds are kept between runs: $WIRECHECK_UPSTREAM_CACHE, else the user's cache."""
    given = os.environ.get("WIRECHECK_UPSTREAM_CACHE")
    if given:
        return Path(given)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "wirecheck" / "upstream"


@dataclass
class UpstreamProcess:
    name: str  # e.g. "Apache Kafka 4.4.0"
    process: subprocess.Popen
    ports: dict[str, int]  # endpoint -> port on HOST
    log_path: Path
    workdir: Path
    options: dict[str, str] = field(default_factory=dict)  # --target-option KEY=VALUE the suite needs for it
    argv: list[str] = field(default_factory=list)  # how it was started: a restart starts it so again
    env: dict[str, str] = field(default_factory=dict)

    @property
    def address(self) -> tuple[str, int]:
        return HOST, self.ports["primary"]

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM to the group (a JVM shuts down cleanly on it), SIGKILL after ``timeout``."""
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            if not self.alive:
                return
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(wait)
            except subprocess.TimeoutExpired:
                continue


def spawn(name: str, argv: list[str], workdir: Path, ports: dict[str, int], env: dict[str, str] | None = None,
          options: dict[str, str] | None = None) -> UpstreamProcess:
    """Start ``argv`` in ``workdir`` with its output in ``workdir/server.log``."""
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "server.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(argv, cwd=workdir, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, **(env or {})}, start_new_session=True)
    return UpstreamProcess(name, process, ports, log_path, workdir, dict(options or {}), list(argv), dict(env or {}))


def respawn(server: UpstreamProcess) -> UpstreamProcess:
    """Kill ``server`` (SIGKILL to its group: a crash, nothing flushed on the way out), then start it again as it
    was started, in the same work directory (its data) and on the same ports; its log goes on in the same file."""
    try:
        os.killpg(server.process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    server.process.wait(30)
    return spawn(server.name, server.argv, server.workdir, server.ports, server.env, server.options)


def wait_ready(server: UpstreamProcess, ready: Callable[[], bool], timeout: float) -> None:
    """Poll ``ready`` until it holds; a server that exits or is not ready in ``timeout`` seconds is stopped and
    raises with the last lines of its log."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not server.alive:
                raise HarnessError(f"{server.name} exited with status {server.process.returncode} while starting; "
                                   f"its log ({server.log_path}) ends:\n{server.log_tail()}")
            if ready():
                return
            time.sleep(0.2)
    except BaseException:  # interrupted while it starts: it runs in a group of its own, so stop it here
        server.stop()
        raise
    server.stop()
    raise HarnessError(f"{server.name} was not ready after {timeout:.0f} s; its log ({server.log_path}) ends:\n"
                       f"{server.log_tail()}")
