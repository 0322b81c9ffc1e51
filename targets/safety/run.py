"""What one recording process of a safety run holds: the run's clock, its history file, process numbers and unique
values from ranges of its own (each client role runs in its own child process; supervisor.py merges the files)."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

from wirecheck.reports.safety.history import NEMESIS, Recorder

#: each recording process numbers its client incarnations and values from its own base, this far apart
RANGE = 10**9


class Run:
    def __init__(self, history_path: Path, started: float, base: int = 0):
        """``started``: the run's start on the monotonic clock (CLOCK_MONOTONIC is one clock for every process
        of the machine, so the files merge by time); ``base``: this recorder's range of process ids and values."""
        self.clock = lambda: time.monotonic() - started
        self._lock = threading.Lock()
        self.recorder = Recorder(history_path, self.clock)
        self._processes = itertools.count(base)
        self._values = itertools.count(base)
        self.stop = threading.Event()  # the clients' phase is over

    def record(self, type_: str, process: int | str, f: str, value=None, **extra) -> dict:
        with self._lock:
            return self.recorder.record(type_, process, f, value, **extra)

    def fault(self, name: str, phase: str, **detail) -> None:
        """One edge of a fault window (``phase``: start or end)."""
        self.record("info", NEMESIS, "fault", {"fault": name, "phase": phase, **detail})

    def process(self) -> int:
        with self._lock:
            return next(self._processes)

    def values(self, count: int) -> list[int]:
        with self._lock:
            return [next(self._values) for _ in range(count)]

    def close(self) -> None:
        with self._lock:
            self.recorder.close()
