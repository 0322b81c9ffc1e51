"""The fault schedule (Jepsen's nemesis): what goes wrong while the clients run, each window recorded in the
history as a ``fault`` start and end.

Every ``restart_every`` seconds the target restarts (when it can). Between restarts, every few seconds one of the
other faults it supports opens a window of one to three seconds: the proxy delays, drops, resets or black-holes
connections, or the target's process is stopped (SIGSTOP, then SIGCONT). Healing (:meth:`Nemesis.heal`) ends any
open window before the final read.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time

from wirecheck.targets.safety.proxy import FaultProxy
from wirecheck.targets.safety.run import Run

PROXY_FAULTS = ("delay", "drop", "reset", "blackhole")


class Nemesis:
    def __init__(self, run: Run, target, proxy: FaultProxy | None, rng: random.Random, restart_every: float | None,
                 pause: bool, gap: tuple[float, float] = (2.0, 5.0)):
        self.run, self.target, self.proxy, self.rng = run, target, proxy, rng
        self.restart_every = restart_every if restart_every and target.restartable else None
        self.pause = pause and target.pid is not None
        self.gap = gap
        self.kinds = [*(PROXY_FAULTS if proxy else ()), *(("pause",) if self.pause else ())]
        self._stop = threading.Event()
        self._open: str | None = None
        self.error: str | None = None
        self.restarts = 0
        self._thread = threading.Thread(target=self._loop, name="safety-nemesis", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def heal(self) -> None:
        self._stop.set()
        self._thread.join(120)
        self._end_window()

    def _loop(self) -> None:
        try:
            next_restart = time.monotonic() + self.restart_every if self.restart_every else None
            while not self._stop.is_set():
                wait = self.rng.uniform(*self.gap)
                if next_restart is not None and time.monotonic() + wait >= next_restart:
                    if self._stop.wait(max(0.0, next_restart - time.monotonic())):
                        break
                    self._restart()
                    next_restart = time.monotonic() + self.restart_every
                    continue
                if self._stop.wait(wait) or not self.kinds:
                    continue
                self._window(self.rng.choice(self.kinds), self.rng.uniform(1.0, 3.0))
        except Exception as exc:  # the run reports it: a schedule that stopped is not a clean run
            self.error = f"{type(exc).__name__}: {exc}"

    def _restart(self) -> None:
        name = self.target.restart_kind
        self.run.fault(name, "start")
        self.target.restart()
        self.restarts += 1
        self.run.fault(name, "end")

    def _window(self, kind: str, seconds: float) -> None:
        self._open = kind
        if kind == "pause":
            self.run.fault("pause", "start", pid=self.target.pid)
            os.kill(self.target.pid, signal.SIGSTOP)
        else:
            assert self.proxy is not None
            delay = self.rng.uniform(0.2, 1.0) if kind == "delay" else 0.0
            self.run.fault(kind, "start", **({"delay": round(delay, 3)} if delay else {}))
            self.proxy.set_mode(kind, delay)
        self._stop.wait(seconds)
        self._end_window()

    def _end_window(self) -> None:
        kind, self._open = self._open, None
        if kind is None:
            return
        if kind == "pause":
            try:
                os.kill(self.target.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        else:
            assert self.proxy is not None
            self.proxy.set_mode("pass")
        self.run.fault(kind, "end")
