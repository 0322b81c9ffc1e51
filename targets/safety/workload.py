"""What every protocol's safety workload shares (ProtocolSpec.safety names the module of one): where its clients
start, the run they record into, their random stream and slot; how long a client lives and how it paces its
operations; a role run by name."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

from wirecheck.targets.safety.run import Run

PACE_S = (0.005, 0.03)  # between one client's operations: a few hundred operations a second in all
LIFE = (50, 300)  # operations before a client is closed and replaced
FINAL_IDLE_S = 0.1  # the final read's wait after a read that came back empty (answered at once: no busy loop)
FINAL_SETTLE_S = 5.0  # at the end of every log this long with values still owed: they are not there


class Backoff:
    """How long a client replaced after a failed operation waits before it connects again, for the workloads whose
    clients are our own (RustLog's, Barco's over httpx): from 50 ms, doubled after each failure in a row up to 1 s,
    as librdkafka's reconnect.backoff.ms and reconnect.backoff.max.ms default to. Without it a client in a drop
    window reconnects at once, and every attempt is one more indeterminate operation."""

    FIRST_S, MOST_S = 0.05, 1.0

    def __init__(self, run: Run):
        self.run = run
        self._next = self.FIRST_S
        self._owed = False

    def failed(self) -> None:
        self._owed = True

    def succeeded(self) -> None:
        self._next, self._owed = self.FIRST_S, False

    def wait(self) -> None:
        """Before a new client: wait if the last one ended in a failure (cut short when the run stops)."""
        if self._owed:
            self.run.stop.wait(self._next)
            self._next, self._owed = min(self._next * 2, self.MOST_S), False


class FinalRead:
    """The final read's clock: reads go on until every owed value is seen and a read came back empty, or the
    timeout passed, or the reads have been at the end for FINAL_SETTLE_S with values still owed (the producers have
    stopped, so nothing more comes)."""

    def __init__(self, owed: set, timeout: float):
        self.owed = owed
        self._end = time.monotonic() + timeout
        self._at_end = False
        self._settled = float("inf")  # when the reads first reached the end

    def going(self) -> bool:
        return time.monotonic() < min(self._end, self._settled + FINAL_SETTLE_S) and bool(self.owed or not self._at_end)

    def saw(self, reads: dict) -> None:
        """One read's values (key -> [(offset, value)]); an empty read is the end."""
        for pairs in reads.values():
            self.owed.difference_update(value for _, value in pairs)
        self._at_end = not reads
        if self._at_end:
            self._settled = min(self._settled, time.monotonic())
            time.sleep(FINAL_IDLE_S)


class ClientWorkload:
    def __init__(self, bootstrap: str, topic: str, run: Run, rng: random.Random, log: logging.Logger, slot: int = 0):
        self.bootstrap, self.topic, self.run, self.rng, self.log = bootstrap, topic, run, rng, log
        self.slot = slot  # which of a role's concurrent clients this is

    def loops(self) -> dict[str, Callable[[], None]]:
        """Role name -> the client loop that runs it until the run stops."""
        raise NotImplementedError

    def role(self, name: str) -> None:
        """Run one role's client loop until the run stops (in a child process: client.py)."""
        self.loops()[name]()

    def _life(self) -> int:
        return self.rng.randint(*LIFE)

    def _live(self, backoff: Backoff, operation: Callable[..., object], *args) -> None:
        """One client's life: up to LIFE paced operations ``operation(*args)``; one that fails (returns False or
        None) ends it, and the next client waits ``backoff`` first."""
        for _ in range(self._life()):
            if not self._pace():
                return
            done = operation(*args)
            if done is False or done is None:
                backoff.failed()
                return
            backoff.succeeded()

    def _pace(self) -> bool:
        """Wait a moment before the next operation; False once the run stops."""
        return not self.run.stop.wait(self.rng.uniform(*PACE_S))
