"""The history of a safety run: one JSON object per line, one line per operation event, in the order they happened.

Every line has ``index`` (its position, from 0), ``type``, ``process``, ``time`` (seconds since the run began, one
monotonic clock for the whole run) and ``f``:

- ``type``: ``invoke`` (a client starts an operation), then one completion by the same process: ``ok`` (it took
  effect, with what the broker answered), ``fail`` (it certainly took no effect: an aborted transaction, a refused
  request) or ``info`` (indeterminate: a timeout, a lost connection, a crash; it may or may not have taken effect).
- ``process``: an integer, one per client incarnation (a client torn down and replaced gets a new one, as in
  Jepsen), or ``"nemesis"`` for fault events.
- ``f``: ``send`` (an idempotent producer's records), ``txn`` (a transactional producer's records, then a commit
  or an abort), ``poll`` (a consumer's read), ``assign`` (a consumer's assignment and start position; its polls'
  order checks restart there), ``crash`` (``info``: the client was torn down without closing) and, for the
  nemesis, ``fault`` (``value``: ``{"fault": NAME, "phase": "start"|"end", ...}``: a fault window).
- ``value`` of send/txn/poll: a list of micro-operations. Invoked: ``["send", KEY, VALUE]`` and ``["poll"]``.
  Completed: ``["send", KEY, [OFFSET, VALUE]]`` (OFFSET null when the broker gave none) and
  ``["poll", {KEY: [[OFFSET, VALUE], ...]}]``. KEY names a partition ("topic/partition"); VALUE is an integer
  unique over the run.
- optional: ``error`` (the client's words for a fail or info), ``commit_time`` (a txn completion: when the commit
  was requested; absent when it never was), ``abort`` (true: the workload chose to abort the transaction),
  ``crashed`` (true: an ``info`` the recorder's client never wrote, because its process died in the middle of the
  operation; what it did before dying, a commit request included, is unknown).

The same format serves every protocol: a "key" is whatever ordered log the target gives offsets in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

TYPES = frozenset({"invoke", "ok", "fail", "info"})
FUNCTIONS = frozenset({"send", "txn", "poll", "assign", "crash", "fault"})
NEMESIS = "nemesis"


class HistoryError(ValueError):
    """A history line that does not follow the format: the line number and what is wrong."""


def validate(op: object, line: int) -> dict:
    """``op`` as a history operation, or a HistoryError naming the line and the field."""
    if not isinstance(op, dict):
        raise HistoryError(f"line {line}: not a JSON object")
    if op.get("type") not in TYPES:
        raise HistoryError(f"line {line}: type {op.get('type')!r} is not one of {sorted(TYPES)}")
    if op.get("f") not in FUNCTIONS:
        raise HistoryError(f"line {line}: f {op.get('f')!r} is not one of {sorted(FUNCTIONS)}")
    process = op.get("process")
    if not (isinstance(process, int) and not isinstance(process, bool)) and process != NEMESIS:
        raise HistoryError(f"line {line}: process {process!r} is neither an integer nor {NEMESIS!r}")
    if not isinstance(op.get("time"), (int, float)):
        raise HistoryError(f"line {line}: time {op.get('time')!r} is not a number")
    value = op.get("value")
    if op["f"] in ("send", "txn", "poll"):
        if not isinstance(value, list) or not all(isinstance(m, list) and m and m[0] in ("send", "poll")
                                                  for m in value):
            raise HistoryError(f"line {line}: value of {op['f']} must be a list of send/poll micro-operations")
        if op["type"] == "ok":
            for mop in value:
                _validate_completed(mop, line)
    return op


def _validate_completed(mop: list, line: int) -> None:
    if mop[0] == "send":
        if len(mop) != 3 or not isinstance(mop[2], list) or len(mop[2]) != 2:
            raise HistoryError(f"line {line}: a completed send is [\"send\", KEY, [OFFSET, VALUE]], not {mop!r}")
    elif len(mop) != 2 or not isinstance(mop[1], dict) or not all(
            isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs)
            for pairs in mop[1].values()):
        raise HistoryError(f"line {line}: a completed poll is [\"poll\", {{KEY: [[OFFSET, VALUE], ...]}}], "
                           f"not {mop!r}")


def read(path: Path | str) -> list[dict]:
    """Every operation of a history file, validated; ``index`` set to the line's position when absent."""
    ops = []
    with open(path, encoding="utf-8") as lines:
        for number, text in enumerate(lines, 1):
            if not text.strip():
                continue
            try:
                op = json.loads(text)
            except json.JSONDecodeError as exc:
                raise HistoryError(f"line {number}: not JSON ({exc.msg})") from None
            op = validate(op, number)
            op.setdefault("index", len(ops))
            ops.append(op)
    return ops


def parse(ops: Iterable[dict]) -> list[dict]:
    """Operations given as objects (tests, other recorders), validated and indexed as :func:`read` does."""
    out = []
    for number, op in enumerate(ops, 1):
        op = validate(dict(op), number)
        op.setdefault("index", len(out))
        out.append(op)
    return out


class Recorder:
    """Appends operations to a history file as they happen (one writer; callers serialise)."""

    def __init__(self, path: Path, clock):
        self.path, self.clock = Path(path), clock
        # line-buffered: a recorder killed with -9 leaves every line it wrote whole (at most the last one torn)
        self._file = open(self.path, "w", encoding="utf-8", buffering=1)
        self.count = 0

    def record(self, type_: str, process: int | str, f: str, value=None, **extra) -> dict:
        op = {"index": self.count, "type": type_, "process": process, "time": round(self.clock(), 6), "f": f,
              "value": value, **extra}
        self._file.write(json.dumps(op, separators=(",", ":")) + "\n")
        self.count += 1
        return op

    def close(self) -> None:
        self._file.close()


def completions(ops: Iterable[dict]) -> Iterator[tuple[dict, dict]]:
    """(invocation, completion) of every completed client operation: a process's completion ends its last
    invocation."""
    open_ops: dict[int, dict] = {}
    for op in ops:
        if op["process"] == NEMESIS:
            continue
        if op["type"] == "invoke":
            open_ops[op["process"]] = op
        else:
            invoked = open_ops.pop(op["process"], None)
            if invoked is not None and invoked["f"] == op["f"]:
                yield invoked, op
