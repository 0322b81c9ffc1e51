"""A target that dies is one failure, not hundreds.

After a failed (or hostile) case the liveness probe runs once. A target that no longer answers (refused,
closed, reset, silent) is *down*: the case whose traffic preceded the death fails naming the step, and every
later case for that target is TARGET-DOWN without touching the network, until ``--target-restart`` brings it
back. The down state is a file in the run directory, so every pytest-xdist worker sees it.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from wirecheck.reports.transcript import Transcript

DOWN_PREFIX = "TARGET-DOWN"
RESTART_TIMEOUT = 120.0  # the restart command itself
COME_BACK_TIMEOUT = 30.0  # the liveness probe after it
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


def restart(command: str, log: Path, alive) -> tuple[bool, str]:
    """Run ``--target-restart`` (its output to ``log``), then wait for ``alive() -> (ok, what)``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        try:
            done = subprocess.run(command, shell=True, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=RESTART_TIMEOUT)
        except subprocess.TimeoutExpired:
            return False, f"--target-restart did not finish within {RESTART_TIMEOUT:g} s"
    if done.returncode != 0:
        return False, f"--target-restart exited with status {done.returncode} (output in {log})"
    end = time.monotonic() + COME_BACK_TIMEOUT
    what = ""
    while time.monotonic() < end:
        ok, what = alive()
        if ok:
            return True, ""
        time.sleep(0.2)
    return False, f"the target did not answer within {COME_BACK_TIMEOUT:g} s of --target-restart: {what}"
