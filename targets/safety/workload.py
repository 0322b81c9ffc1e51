"""What every protocol's safety workload shares (ProtocolSpec.safety names the module of one): where its clients
start, the run they record into, their random stream and slot; how long a client lives and how it paces its
operations; a role run by name."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

from wirecheck.targets.safety.run import Run

PACE_S = (0.005, 0.03)  # between one client's operations: a few hundred operations a second in all
LIFE = (50, 300)  # operations before a client is closed and replaced


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

    def _pace(self) -> bool:
        """Wait a moment before the next operation; False once the run stops."""
        return not self.run.stop.wait(self.rng.uniform(*PACE_S))
