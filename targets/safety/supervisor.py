"""The safety run's client processes (client.py): started per role, replaced when they end, killed with -9 now and
then (a client crash), stopped at the phase's end; then their history files are merged into one.

A crashed client's operation in progress has no completion in its file: the merge gives it an ``info`` one ("the
client process died") at the time of the death, and a ``crash`` event, as Jepsen does for a crashed process.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from wirecheck.reports.safety import history
from wirecheck.targets.safety.run import RANGE

ROLES = {"send": 3, "txn": 2, "poll": 2}  # role -> child processes running it at once (a workload's ROLES: its own)
CRASH_EVERY_S = (4.0, 12.0)  # between two client crashes
STOP_TIMEOUT_S = 40.0
FINAL_TIMEOUT_S = 120.0


@dataclass
class Child:
    role: str
    slot: int
    process: subprocess.Popen
    history: Path
    ended: float | None = None  # run time of its death (a kill or an exit)


class Clients:
    def __init__(self, protocol: str, bootstrap: str, topic: str, workdir: Path, started: float, rng: random.Random,
                 clock, crashes: bool = True, roles: dict[str, int] | None = None):
        self.protocol, self.bootstrap, self.topic = protocol, bootstrap, topic
        self.roles = dict(ROLES if roles is None else roles)
        self.workdir, self.started = Path(workdir), started
        self.rng, self.clock, self.crashes = rng, clock, crashes
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._bases = itertools.count(1)
        self.children: list[Child] = []
        self._running: dict[tuple[str, int], Child] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="safety-clients", daemon=True)
        self.killed = 0
        self.exits: list[str] = []  # children that ended by themselves with a failure status

    def _spawn(self, role: str, slot: int, *extra: str) -> Child:
        base = next(self._bases)
        path = self.workdir / f"client-{base}.jsonl"
        argv = [sys.executable, "-m", "wirecheck.targets.safety.client", self.protocol, role,
                "--bootstrap", self.bootstrap, "--topic", self.topic, "--history", str(path), "--started", repr(self.started),
                "--base", str(base * RANGE), "--slot", str(slot), "--seed", str(self.rng.randrange(1 << 31)), *extra]
        root = Path(__file__).resolve().parents[2]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
        with open(self.workdir / f"client-{base}.log", "wb") as log:
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        child = Child(role, slot, process, path)
        self.children.append(child)
        return child

    def start(self) -> None:
        for role, count in self.roles.items():
            for slot in range(count):
                self._running[role, slot] = self._spawn(role, slot)
        self._thread.start()

    def _supervise(self) -> None:
        next_crash = time.monotonic() + self.rng.uniform(*CRASH_EVERY_S)
        while not self._stop.wait(0.2):
            for key, child in list(self._running.items()):
                code = child.process.poll()
                if code is not None:
                    child.ended = self.clock()
                    if code not in (0, -signal.SIGKILL):
                        self.exits.append(f"{child.role} client {child.history.name} exited with status {code}")
                    self._running[key] = self._spawn(*key)
            if self.crashes and time.monotonic() >= next_crash:
                victim = self.rng.choice(list(self._running.values()))
                victim.process.kill()  # reaped and replaced on the next round
                self.killed += 1
                next_crash = time.monotonic() + self.rng.uniform(*CRASH_EVERY_S)

    def stop(self) -> None:
        """End the clients' phase: SIGTERM (each finishes its operation and closes), -9 for any that lingers."""
        self._stop.set()
        self._thread.join(10)
        for child in self._running.values():
            child.process.send_signal(signal.SIGTERM)
        end = time.monotonic() + STOP_TIMEOUT_S
        for child in self._running.values():
            try:
                child.process.wait(max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait(5)
            child.ended = self.clock()

    def final_read(self, owed: set[int]) -> bool:
        """A new consumer reads every partition from the start until every value in ``owed`` is seen."""
        path = self.workdir / "owed.txt"
        path.write_text("".join(f"{value}\n" for value in sorted(owed)))
        child = self._spawn("final", 0, "--owed", str(path))
        try:
            code = child.process.wait(FINAL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            child.process.kill()
            code = child.process.wait(5)
        child.ended = self.clock()
        return code == 0

    def files(self) -> list[tuple[Path, float | None]]:
        return [(child.history, child.ended) for child in self.children]


def load(path: Path) -> list[dict]:
    """A recorder's lines; a last line torn by a kill -9 is left out (the operation it began stays open)."""
    ops = []
    if not path.exists():
        return ops
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        try:
            ops.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):
                break
            raise history.HistoryError(f"{path}: line {number} is not JSON") from None
    return ops


def merge(files: list[tuple[Path, float | None]], out: Path) -> list[dict]:
    """Every recorder's operations in time order, each open invocation of a dead client closed as ``info``."""
    ops: list[tuple[float, int, int, dict]] = []
    for number, (path, ended) in enumerate(files):
        mine = load(path)
        open_ops: dict[object, dict] = {}
        for op in mine:
            if op["process"] == history.NEMESIS:
                continue
            if op["type"] == "invoke":
                open_ops[op["process"]] = op
            else:
                open_ops.pop(op["process"], None)
        last = mine[-1]["time"] if mine else 0.0
        died = max(ended if ended is not None else last, last)
        for process, invoked in open_ops.items():
            mine.append({"type": "info", "process": process, "time": died, "f": invoked["f"],
                         "value": invoked["value"], "error": "the client process died", "crashed": True})
            mine.append({"type": "info", "process": process, "time": died, "f": "crash", "value": None})
        ops += [(op["time"], number, position, op) for position, op in enumerate(mine)]
    ops.sort(key=lambda entry: entry[:3])
    merged = []
    with open(out, "w", encoding="utf-8") as sink:
        for index, (_, _, _, op) in enumerate(ops):
            op = {**op, "index": index}
            merged.append(op)
            sink.write(json.dumps(op, separators=(",", ":")) + "\n")
    return merged


def acknowledged(ops: list[dict]) -> set[int]:
    """Every value an ok send or transaction wrote."""
    return {mop[2][1] for op in ops if op["type"] == "ok" and op["f"] in ("send", "txn")
            for mop in op["value"] if mop[0] == "send"}
