"""The target a safety run drives, and how the nemesis restarts it.

- :class:`ReferenceTarget`: the bundled reference broker, started with durable storage (``--data-dir``, fsync
  before every acknowledgement) on ephemeral ports; a restart is ``kill -9`` and a new process on the same ports
  (its other endpoints' too: clients learn them from discovery) and data directory (each incarnation's log beside the run's report). Its pid can be paused too.
- :class:`ExternalTarget`: a user's ``--target``; restarted by ``--target-restart CMD`` (run by the shell, in its
  own process group, then the target's port is awaited), paused by ``--target-pid``.
- :class:`UpstreamTarget`: the upstream server (``--upstream``, targets/upstream/), started on its own data
  directory; a restart is ``kill -9`` and the same server on the same data and ports, where its module can
  (Apache Kafka; Pravega standalone keeps its data in memory, so it is only paused); its JVM can be paused.

``restart_kind`` names the restart in the history's fault windows: ``kill`` where wirecheck kills the process
itself, ``restart`` where a user's command does whatever it does.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.launcher import BrokerProcess, launch

READY_TIMEOUT_S = 60.0


def wait_listening(address: tuple[str, int], timeout: float = READY_TIMEOUT_S) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection(address, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise HarnessError(f"{address[0]}:{address[1]} not listening {timeout:.0f} s after the restart")


class ReferenceTarget:
    restart_kind = "kill"

    def __init__(self, protocol: str, workdir: Path, faults: list[str], bootstrap: str | None = None):
        """``bootstrap``: the port clients start from when it is not the primary one (a name in the broker's ports,
        e.g. ``pravega-controller``, or one of the personality's endpoints, e.g. Fluvio's ``sc``)."""
        self.protocol, self.workdir, self.faults = protocol, Path(workdir), faults
        self.data_dir = self.workdir / "data"
        self.incarnation = 0
        self.broker = self._launch(0, {})
        address = self.broker.address(protocol)
        if bootstrap is not None:
            port = self.broker.ports.get(bootstrap) or self.broker.endpoints.get(protocol, {}).get(bootstrap)
            address = None if port is None else (self.broker.host, port)
        if address is None:
            raise HarnessError(f"the reference broker's {protocol} personality has no port {bootstrap or protocol}")
        self.address = address

    def _launch(self, port: int, endpoints: dict[str, int], ports: dict[str, int] | None = None) -> BrokerProcess:
        """``endpoints``, ``ports``: the extra endpoints' and the other listeners' ports to listen on again (a client
        may have learnt them; ``ports`` by their names in the broker's ready file, e.g. ``pravega-controller``)."""
        self.incarnation += 1
        again = [arg for endpoint, at in endpoints.items() for arg in (f"--{self.protocol}-{endpoint}-port", str(at))]
        again += [arg for name, at in (ports or {}).items() if name != self.protocol
                  for arg in (f"--{name}-port", str(at))]
        return launch([self.protocol], faults=self.faults, workdir=self.workdir / f"broker-{self.incarnation}",
                      extra_args=["--data-dir", str(self.data_dir), "--fsync", "batch",
                                  f"--{self.protocol}-port", str(port), *again], startup_timeout=READY_TIMEOUT_S)

    @property
    def pid(self) -> int:
        return self.broker.process.pid

    @property
    def restartable(self) -> bool:
        return True

    def restart(self) -> None:
        """kill -9, then the same broker on the same ports and data directory."""
        endpoints = dict(self.broker.endpoints.get(self.protocol, {}))
        ports = dict(self.broker.ports)
        self.broker.process.kill()
        self.broker.process.wait(10)
        self.broker = self._launch(ports[self.protocol], endpoints, ports)

    def alive(self) -> str | None:
        """None while it runs, else how it ended (a crash the nemesis did not cause)."""
        return None if self.broker.alive else self.broker.exit_status()

    def stop(self) -> None:
        self.broker.stop()


class ExternalTarget:
    restart_kind = "restart"

    def __init__(self, address: tuple[str, int], restart_command: str | None, pid: int | None):
        self.address, self.restart_command, self.pid = address, restart_command, pid

    @property
    def restartable(self) -> bool:
        return self.restart_command is not None

    def restart(self) -> None:
        assert self.restart_command is not None
        done = subprocess.run(self.restart_command, shell=True, start_new_session=True, timeout=READY_TIMEOUT_S,
                              capture_output=True, text=True)
        if done.returncode:
            raise HarnessError(f"--target-restart exited with status {done.returncode}: {done.stderr.strip()[-500:]}")
        wait_listening(self.address)

    def alive(self) -> str | None:
        if self.pid is None:
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return f"process {self.pid} is gone"
        return None

    def stop(self) -> None:
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGCONT)  # never leave a user's server stopped
            except ProcessLookupError:
                pass


class UpstreamTarget:
    restart_kind = "kill"

    def __init__(self, server: str, workdir: Path, bootstrap: str | None = None):
        """``server``: ``PROTOCOL[@VERSION]`` (targets/upstream); started in ``workdir``. ``bootstrap``: the server's
        port the clients start from when it is not the primary one (a name in its ``ports``: Pravega's controller)."""
        from wirecheck.targets.upstream import SERVERS, parse

        name, version = parse(server)
        self.module = SERVERS[name]
        self.server = self.module.start(Path(workdir), version)
        self.address = (self.server.address[0], self.server.ports[bootstrap or "primary"])
        self.described = self.server.name

    @property
    def pid(self) -> int:
        return self.server.process.pid

    @property
    def restartable(self) -> bool:
        return hasattr(self.module, "restart")

    def restart(self) -> None:
        self.server = self.module.restart(self.server)

    def alive(self) -> str | None:
        return None if self.server.alive else f"{self.server.name} exited with status {self.server.process.returncode}"

    def stop(self) -> None:
        self.server.stop()
