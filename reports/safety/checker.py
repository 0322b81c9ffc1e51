"""The checker: what a history (history.py) shows a target did wrong, each anomaly with the operations that
witness it.

The definitions are those of Jepsen's Kafka queue workload (jepsen.tests.kafka, described in the Redpanda 21.10.1
and Bufstream 0.1.0 analyses at jepsen.io); the facts carry over, the code is ours. Per key (a partition):

- the version order: every offset at which a value was seen (read by a poll, or given by an acknowledged send),
  ascending; a value's *index* is its offset's rank there. Offsets no value occupies (transaction markers, aborted
  records) leave no gap, so order checks compare indices, never raw offsets.
- ``inconsistent-offsets``: two values at one offset. ``duplicate``: one value at two offsets.
- ``lost-write``: an acknowledged value never read although a value at a higher index was.
  ``unseen``: an acknowledged value never read, and none above it either (the final phase reads every partition
  from the start until every acknowledged offset is seen, so at the end this is loss too, or a log that stopped
  serving).
- ``poll-skip`` / ``nonmonotonic-poll``: one consumer (a process), between two consecutive reads of a key with no
  re-assignment between them, moved on by more than one index / did not move forward. ``int-`` versions: within one
  poll operation.
- ``nonmonotonic-send``: one producer's acknowledged sends to a key did not get ascending indices (``int-``: within
  one operation). ``nonmonotonic-send-realtime`` (across clients): a send acknowledged before another client's send
  to the same key began got a higher index than it; one log hands out offsets in the order appends happen.
- ``aborted-read``: a value of an operation that certainly failed (an aborted transaction), or of a transaction
  whose commit was never requested, was read (consumers read read_committed). A client that died mid-transaction
  (``crashed``) may or may not have requested the commit: its values are judged by neither rule.
- ``precommitted-read``: a poll completed before the commit of the transaction whose value it read was requested.

A workload whose clients cannot show some kind (a producer never told an offset cannot witness a lost write, a
protocol without transactions has no aborted read) names it in its UNJUDGED, with why; those kinds are not
reported for its runs, and the report says so.

Indeterminate (``info``) sends and transactions are not owed to anyone: never read is no loss. What a read proves
of them (their offsets) enters the version order like any read. A ``send`` Jepsen also calls ``int-send-skip``
(values of one operation not adjacent) is not an anomaly here: concurrent producers interleave legitimately.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from wirecheck.reports.safety.history import completions

#: every anomaly kind, in report order; each makes a run fail
KINDS = ("lost-write", "unseen", "duplicate", "inconsistent-offsets", "aborted-read", "precommitted-read",
         "nonmonotonic-poll", "int-nonmonotonic-poll", "poll-skip", "int-poll-skip", "nonmonotonic-send",
         "int-nonmonotonic-send", "nonmonotonic-send-realtime")
MAX_WITNESSES = 20  # per kind in the report; the count is always whole


@dataclass
class Write:
    op: int  # index of the completion
    type: str  # ok / info / fail
    key: str
    offset: int | None
    invoked: float
    completed: float
    commit_time: float | None = None
    transactional: bool = False
    crashed: bool = False  # its client died mid-operation: whether a commit was requested is unknown


@dataclass
class Result:
    #: kinds this history cannot show (its workload's UNJUDGED: e.g. a client never told an offset): never reported
    unjudged: frozenset[str] = frozenset()
    counts: dict[str, int] = field(default_factory=dict)  # ok / fail / info completions
    anomalies: dict[str, list[dict]] = field(default_factory=dict)  # kind -> witnesses (at most MAX_WITNESSES)
    anomaly_counts: dict[str, int] = field(default_factory=dict)
    acknowledged: int = 0
    read_values: int = 0

    @property
    def valid(self) -> bool:
        return not self.anomaly_counts

    def add(self, kind: str, **witness) -> None:
        if kind in self.unjudged:
            return
        self.anomaly_counts[kind] = self.anomaly_counts.get(kind, 0) + 1
        found = self.anomalies.setdefault(kind, [])
        if len(found) < MAX_WITNESSES:
            found.append(witness)

    def as_dict(self) -> dict:
        return {"valid": self.valid, "counts": self.counts, "acknowledged": self.acknowledged,
                "read_values": self.read_values,
                "anomaly_counts": {k: self.anomaly_counts[k] for k in KINDS if k in self.anomaly_counts},
                "anomalies": {k: self.anomalies[k] for k in KINDS if k in self.anomalies}}


def check(ops: list[dict], unjudged: Iterable[str] = ()) -> Result:
    """The anomalies of ``ops``; ``unjudged``: kinds the workload's clients cannot show (never reported)."""
    unknown = set(unjudged) - set(KINDS)
    if unknown:
        raise ValueError(f"unjudged anomaly kinds {sorted(unknown)} are not among {', '.join(KINDS)}")
    result = Result(unjudged=frozenset(unjudged))
    writes: dict[object, Write] = {}  # value -> its write (values are unique over the run)
    seen: dict[str, dict[int, set]] = defaultdict(lambda: defaultdict(set))  # key -> offset -> values
    where: dict[tuple[str, object], set[int]] = defaultdict(set)  # (key, value) -> offsets
    reads: list[tuple[dict, dict]] = []  # (invocation, completion) of ok polls and assigns, in history order
    sends_by_process: list[tuple[int, dict]] = []  # (process, completion) of ok sends/txns, in history order
    read_by: dict[object, int] = {}  # value -> first completion index that read it
    read_offsets: dict[str, set[int]] = defaultdict(set)  # key -> offsets some poll read
    counts = result.counts
    for invoked, done in completions(ops):
        counts[done["type"]] = counts.get(done["type"], 0) + 1
        f = done["f"]
        if f in ("send", "txn"):
            _writes(invoked, done, writes, seen, where, result)
            if done["type"] == "ok":
                sends_by_process.append((done["process"], done))
        elif f == "assign" and done["type"] == "ok":
            reads.append((invoked, done))  # the consumer's position restarts here: order checks too
        elif f == "poll" and done["type"] == "ok":
            reads.append((invoked, done))
            for mop in done["value"]:
                if mop[0] != "poll":
                    continue
                for key, pairs in mop[1].items():
                    for offset, value in pairs:
                        seen[key][offset].add(value)
                        where[key, value].add(offset)
                        read_by.setdefault(value, done["index"])
                        read_offsets[key].add(offset)
    index = {key: {offset: rank for rank, offset in enumerate(sorted(offsets))} for key, offsets in seen.items()}
    result.read_values = len(read_by)
    _offsets(seen, where, result)
    _reads(reads, writes, index, result)
    _sends(sends_by_process, index, result)
    _realtime(writes, index, result)
    highest_read = {key: max((index[key][o] for o in offsets), default=-1) for key, offsets in read_offsets.items()}
    _unread(writes, read_by, highest_read, index, result)
    return result


def _writes(invoked: dict, done: dict, writes: dict, seen, where, result: Result) -> None:
    """The values an operation wrote; an acknowledged one's offset enters the version order."""
    for mop in done["value"]:
        if mop[0] != "send":
            continue
        key, sent = mop[1], mop[2]
        offset, value = (sent if done["type"] == "ok" or isinstance(sent, list) else (None, sent))
        writes[value] = Write(done["index"], done["type"], key, offset, invoked["time"], done["time"],
                              done.get("commit_time"), done["f"] == "txn", bool(done.get("crashed")))
        if done["type"] == "ok" and offset is not None:
            result.acknowledged += 1
            seen[key][offset].add(value)
            where[key, value].add(offset)
        elif done["type"] == "ok":
            result.acknowledged += 1


def _offsets(seen, where, result: Result) -> None:
    for key, offsets in seen.items():
        for offset, values in offsets.items():
            if len(values) > 1:
                result.add("inconsistent-offsets", key=key, offset=offset, values=sorted(values, key=str))
    for (key, value), offsets in where.items():
        if len(offsets) > 1:
            result.add("duplicate", key=key, value=value, offsets=sorted(offsets))


def _reads(reads, writes: dict, index, result: Result) -> None:
    """Order within each consumer, and what each read value's writer says about it."""
    last: dict[int, dict[str, tuple[int, int]]] = defaultdict(dict)  # process -> key -> (index, op) of its last read
    for _invoked, done in reads:
        process = done["process"]
        if done["f"] == "assign":
            last.pop(process, None)
            continue
        mine = last[process]
        for mop in done["value"]:
            if mop[0] != "poll":
                continue
            for key, pairs in mop[1].items():
                ranks = index[key]
                for offset, value in pairs:
                    rank = ranks[offset]
                    before = mine.get(key)
                    if before is not None:
                        same_op = before[1] == done["index"]
                        if rank <= before[0]:
                            result.add(("int-" if same_op else "") + "nonmonotonic-poll", key=key, process=process,
                                       ops=sorted({before[1], done["index"]}), indices=[before[0], rank])
                        elif rank > before[0] + 1:
                            result.add(("int-" if same_op else "") + "poll-skip", key=key, process=process,
                                       ops=sorted({before[1], done["index"]}), indices=[before[0], rank],
                                       skipped=rank - before[0] - 1)
                    mine[key] = (rank, done["index"])
                    write = writes.get(value)
                    if write is None:
                        continue
                    never_committed = write.transactional and write.commit_time is None and not write.crashed
                    if write.type == "fail" or never_committed:
                        result.add("aborted-read", key=key, value=value, offset=offset,
                                   ops=[write.op, done["index"]])
                    elif write.transactional and write.commit_time is not None and done["time"] < write.commit_time:
                        result.add("precommitted-read", key=key, value=value, offset=offset,
                                   ops=[write.op, done["index"]], read_at=done["time"],
                                   commit_requested_at=write.commit_time)


def _sends(sends_by_process, index, result: Result) -> None:
    last: dict[tuple[int, str], tuple[int, int]] = {}
    for process, done in sends_by_process:
        for mop in done["value"]:
            if mop[0] != "send" or mop[2][0] is None:
                continue
            key, (offset, _value) = mop[1], mop[2]
            rank = index[key][offset]
            before = last.get((process, key))
            if before is not None and rank <= before[0]:
                same_op = before[1] == done["index"]
                result.add(("int-" if same_op else "") + "nonmonotonic-send", key=key, process=process,
                           ops=sorted({before[1], done["index"]}), indices=[before[0], rank])
            last[process, key] = (rank, done["index"])


def _realtime(writes: dict, index, result: Result) -> None:
    """Across clients: a send acknowledged before another began must sit below it in the log."""
    by_key: dict[str, list[Write]] = defaultdict(list)
    for write in writes.values():
        if write.type == "ok" and write.offset is not None:
            by_key[write.key].append(write)
    for key, key_writes in by_key.items():
        ranks = index[key]
        done = sorted(key_writes, key=lambda w: w.completed)
        done_times = [w.completed for w in done]
        best: list[tuple[int, Write]] = []  # running maximum of rank over acknowledgements in completion order
        top: tuple[int, Write] | None = None
        for w in done:
            rank = ranks[w.offset]
            if top is None or rank > top[0]:
                top = (rank, w)
            best.append(top)
        for w in key_writes:
            before = bisect.bisect_left(done_times, w.invoked)  # acknowledgements strictly before it began
            if before and best[before - 1][0] >= ranks[w.offset] and best[before - 1][1] is not w:
                earlier = best[before - 1][1]
                result.add("nonmonotonic-send-realtime", key=key, ops=[earlier.op, w.op],
                           indices=[best[before - 1][0], ranks[w.offset]])


def _unread(writes: dict, read_by: dict, highest_read: dict[str, int], index, result: Result) -> None:
    """Acknowledged values no poll read: lost below the highest index read of their key, unseen above it."""
    for value, write in writes.items():
        if write.type != "ok" or value in read_by:
            continue
        rank = index.get(write.key, {}).get(write.offset) if write.offset is not None else None
        top = highest_read.get(write.key, -1)
        if rank is not None and rank < top:
            result.add("lost-write", key=write.key, value=value, offset=write.offset, ops=[write.op], index=rank,
                       highest_read_index=top)
        else:
            result.add("unseen", key=write.key, value=value, offset=write.offset, ops=[write.op])
