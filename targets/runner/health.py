"""A target that dies is one failure, not hundreds.

After a failed (or hostile) case the liveness probe runs once. A target that no longer answers (refused,
closed, reset, silent) is *down*: the case whose traffic preceded the death fails naming the step, and every
later case for that target is TARGET-DOWN without touching the network, until ``--target-restart`` brings it
back. The down state is a file in the run directory, so every pytest-xdist worker sees it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

from wirecheck.protocols.transcript import Transcript

DOWN_PREFIX = "TARGET-DOWN"
RESTART_TIMEOUT = 120.0  # from starting --target-restart until the target answers the liveness probe
RESTARTED = "target-restart.pids"  # in the run directory: the process groups --target-restart started
_MUTANT = re.compile(r"mutants? #\d+[^;]*")


def stopped_answering(what: str) -> bool:
    """The liveness probe found no answer at all: refused, closed, reset or silent with not a byte sent. A wrong,
    malformed or incomplete answer means the target is alive (a divergence, not a death)."""
    return what.startswith("cannot connect") or what in (
        "the connection closed", "the connection reset", "silence until the deadline")


def last_step(transcript: Transcript, note: str = "") -> str:
    """What preceded the death: the bulk engine's mutant when the case names one, else the last frame sent."""
    mutant = _MUTANT.search(note or "")
    if mutant:
        return mutant.group(0).strip()[:300]
    for event in reversed(transcript.events):
        if event.kind == "send":
            shown = transcript.describe(event.data) if event.decode else ""
            shown = shown if shown and not shown.startswith("<cannot decode") else event.data[:32].hex()
            return f"frame ({len(event.data)} bytes) {shown[:160]}"
        if event.kind == "http-request":
            return f"request {event.detail[:160]}"
    return "connecting (nothing was sent)"


class DownBoard:
    """protocol -> why its target is down. A death is a file in ``directory`` (every worker of the run sees it,
    and sees it cleared when one of them restarted the target); ``shared=False`` marks stay in this process."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._local: dict[str, str] = {}

    def path(self, protocol: str) -> Path:
        return self.directory / f"{protocol}.down"

    def mark(self, protocol: str, reason: str, shared: bool = True) -> None:
        if not shared:
            self._local[protocol] = reason
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path(protocol).write_text(reason)

    def reason(self, protocol: str) -> str | None:
        if protocol in self._local:
            return self._local[protocol]
        try:
            return self.path(protocol).read_text()
        except FileNotFoundError:
            return None

    def clear(self, protocol: str) -> None:
        self._local.pop(protocol, None)
        self.path(protocol).unlink(missing_ok=True)


def restart(command: str, run_dir: Path, alive) -> tuple[bool, str]:
    """Run ``--target-restart`` and wait until ``alive() -> (ok, what)`` says the target answers.

    The contract: the command runs detached, in a process group of its own, its output appended to
    ``target-restart.log``. It may stay in the foreground (a broker started as it would be in a shell) or return
    once it has asked something else to restart the target (``docker restart``, ``systemctl restart``); a
    non-zero exit before the target answers is a failed restart. The target has ``RESTART_TIMEOUT`` seconds to
    answer the liveness probe. Whatever the command left running is stopped before the next restart and at the
    end of the run (:func:`stop_restarted`), so no broker outlives the run that started it."""
    stop_restarted(run_dir)  # a previous restart's instance, hung or dead, lets go of its port first
    run_dir.mkdir(parents=True, exist_ok=True)
    log = run_dir / "target-restart.log"
    with open(log, "ab") as out:
        process = subprocess.Popen(command, shell=True, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    with open(run_dir / RESTARTED, "a") as pids:
        pids.write(f"{process.pid}\n")
    end, what = time.monotonic() + RESTART_TIMEOUT, ""
    while time.monotonic() < end:
        ok, what = alive()
        if ok:
            return True, ""
        code = process.poll()
        if code:
            return False, f"--target-restart exited with status {code} before the target answered (output in {log})"
        time.sleep(0.2)
    return False, f"the target did not answer within {RESTART_TIMEOUT:g} s of --target-restart: {what}"


def stop_restarted(run_dir: Path) -> None:
    """Stop every process group ``--target-restart`` started in this run (TERM, then KILL after 5 s)."""
    path = run_dir / RESTARTED
    if not path.exists():
        return
    groups = [int(pid) for pid in path.read_text().split()]
    path.unlink()
    for signal_number in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for group in groups:
            try:
                os.killpg(group, signal_number)
                alive.append(group)
            except ProcessLookupError:
                pass
        end = time.monotonic() + 5
        while alive and time.monotonic() < end:
            alive = [group for group in alive if _group_exists(group)]
            time.sleep(0.05)
        groups = alive


def _group_exists(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a leader that exited but was not reaped yet still counts: reap it if it is our child
        os.waitpid(group, os.WNOHANG)
    except ChildProcessError:
        pass
    return True
