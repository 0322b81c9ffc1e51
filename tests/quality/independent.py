"""Start and stop the independent servers of ``tests/independent/<protocol>/`` for the quality tests.

Each one is a second reading of its protocol's spec, written without the suite's code (see its README.md and
DISPUTES.md). It runs as a child process on ephemeral 127.0.0.1 ports, optionally with deliberate defects
(``defects.py``), and says it listens by writing its ports to a ready file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ROOT / "tests" / "independent"

#: protocol -> the extra port options its server needs (all ephemeral) and the ready-file key the suite's
#: ``--target`` names (Barco: the suite reaches every endpoint through discovery)
PORT_ARGS = {
    "barco": ["--discovery-port", "0", "--producer-http-port", "0", "--consumer-port", "0",
              "--producer-binary-port", "0"],
}
TARGET_KEY = {"barco": "discovery", "fluvio": "spu", "kafka": "broker", "pravega": "segmentstore",
              "rustlog": "broker"}


class ServerDidNotStart(RuntimeError):
    pass


def available() -> list[str]:
    """The protocols that have an independent server package (``tests/independent/<name>/__main__.py``)."""
    return sorted(p.name for p in PACKAGES.iterdir() if (p / "__main__.py").exists())


def _module(protocol: str) -> str:
    return f"tests.independent.{protocol}"


def list_defects(protocol: str, timeout: float = 30) -> list[str]:
    """The defect names the server's ``--list-defects`` prints: every line that is not indented starts with one
    (the servers differ in what follows the name, and in indented continuation lines)."""
    proc = subprocess.run([sys.executable, "-m", _module(protocol), "--list-defects"], check=False,
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return [line.split()[0] for line in proc.stdout.splitlines() if line.strip() and not line[0].isspace()]


@dataclass
class IndependentServer:
    protocol: str
    process: subprocess.Popen
    ports: dict[str, int]
    stderr_path: Path

    @property
    def port(self) -> int:
        """The port the suite's ``--target`` names."""
        return self.ports[TARGET_KEY[self.protocol]]

    @property
    def target(self) -> str:
        return f"{self.protocol}=127.0.0.1:{self.port}"

    def stderr_tail(self, chars: int = 4000) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def start(protocol: str, workdir: Path, defects: list[str] = (), timeout: float = 15.0) -> IndependentServer:
    """Start ``python -m tests.independent.<protocol>`` on loopback ephemeral ports with ``defects`` switched on;
    return once its ready file names its ports. Raise ServerDidNotStart (with the server's stderr) when it exits
    or stays silent for ``timeout`` seconds."""
    workdir.mkdir(parents=True, exist_ok=True)
    ready = workdir / "ready.json"
    ready.unlink(missing_ok=True)
    argv = [sys.executable, "-m", _module(protocol), "--host", "127.0.0.1",
            *PORT_ARGS.get(protocol, ["--port", "0"]), "--ready-file", str(ready)]
    for defect in defects:
        argv += ["--defect", defect]
    stderr_path = workdir / "server.stderr"
    with open(stderr_path, "wb") as err:
        process = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    server = IndependentServer(protocol, process, {}, stderr_path)
    end = time.monotonic() + timeout
    while True:
        if ready.exists():
            try:
                server.ports = json.loads(ready.read_text())
            except ValueError:  # written in place by a server that does not rename: read it again
                pass
            else:
                if TARGET_KEY[protocol] in server.ports:
                    return server
        # waiting on the process is the pause between looks at the ready file, and notices an early exit at once
        try:
            code = process.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None:
            raise ServerDidNotStart(f"independent {protocol} server ({' '.join(argv[2:])}) exited with status "
                                    f"{code} before it was ready; its stderr:\n{server.stderr_tail()}")
        if time.monotonic() > end:
            server.stop()
            raise ServerDidNotStart(f"independent {protocol} server ({' '.join(argv[2:])}) wrote no ready file "
                                    f"{ready} within {timeout}s; its stderr:\n{server.stderr_tail()}")
