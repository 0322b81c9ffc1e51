"""The checker against histories written by hand from each anomaly's definition (reports/safety/checker.py), and a
clean history with every legitimate irregularity (markers' offset gaps, indeterminate writes, interleaved
producers, re-assignment) that must pass."""

import json

import pytest

from wirecheck.reports.safety import checker, history
from wirecheck.reports.safety.history import HistoryError

K, K2 = "t/0", "t/1"


class H:
    """A hand-written history: invoke/complete pairs with a clock that ticks once per event."""

    def __init__(self):
        self.ops, self.t = [], 0.0

    def _add(self, type_, process, f, value, **extra):
        self.t += 1
        self.ops.append({"type": type_, "process": process, "time": self.t, "f": f, "value": value, **extra})

    def send(self, process, key, *pairs, type_="ok", f="send", **extra):
        self._add("invoke", process, f, [["send", key, v] for _, v in pairs])
        self._add(type_, process, f, [["send", key, [o, v]] for o, v in pairs], **extra)
        return self

    def txn(self, process, key, *pairs, type_="ok", commit=True, **extra):
        self._add("invoke", process, "txn", [["send", key, v] for _, v in pairs])
        if commit:
            extra["commit_time"] = self.t + 0.5
        return self.send_completion(process, key, pairs, type_, **extra)

    def send_completion(self, process, key, pairs, type_, **extra):
        self._add(type_, process, "txn", [["send", key, [o, v]] for o, v in pairs], **extra)
        return self

    def poll(self, process, reads, type_="ok"):
        self._add("invoke", process, "poll", [["poll"]])
        self._add(type_, process, "poll", [["poll", {k: [list(p) for p in v] for k, v in reads.items()}]])
        return self

    def assign(self, process):
        self._add("invoke", process, "assign", [K, K2])
        self._add("ok", process, "assign", [K, K2])
        return self

    def check(self):
        return checker.check(history.parse(self.ops))


def kinds(result):
    return set(result.anomaly_counts)


def test_clean_history_with_gaps_indeterminate_and_interleaving_passes():
    h = H()
    h.send(1, K, (0, 1), (1, 2))
    h.txn(2, K, (3, 3))  # offset 2 is a marker or an aborted record: no value there
    h.send(1, K, (None, 4), type_="info")  # indeterminate, never read: owed to nobody
    h.txn(2, K, (4, 5), type_="fail", commit=False, abort=True)  # aborted, never read
    h.send(3, K, (6, 6))
    h.send(1, K2, (0, 7))
    h.send(4, K, (None, 8), type_="info")  # indeterminate, read later at 7: proven
    h.poll(5, {K: [(0, 1), (1, 2)]}).poll(5, {K: [(3, 3), (6, 6), (7, 8)], K2: [(0, 7)]})
    h.assign(5).poll(5, {K: [(0, 1)]})  # re-assigned to the start: reading backwards is fine
    result = h.check()
    assert result.valid, result.as_dict()
    assert result.counts == {"ok": 8, "info": 2, "fail": 1}


def test_lost_write():
    h = H().send(1, K, (0, 1)).send(1, K, (1, 2)).poll(2, {K: [(1, 2)]})
    result = h.check()
    assert "lost-write" in kinds(result)
    assert result.anomalies["lost-write"][0]["value"] == 1


def test_unseen():
    h = H().send(1, K, (0, 1)).send(1, K, (1, 2)).poll(2, {K: [(0, 1)]})
    assert kinds(h.check()) == {"unseen"}


def test_acknowledged_without_offset_never_read_is_unseen():
    assert kinds(H().send(1, K, (None, 1)).check()) == {"unseen"}


def test_duplicate():
    h = H().send(1, K, (0, 1)).poll(2, {K: [(0, 1), (1, 1)]})
    result = h.check()
    assert "duplicate" in kinds(result)
    assert result.anomalies["duplicate"][0]["offsets"] == [0, 1]


def test_inconsistent_offsets():
    h = H().send(1, K, (0, 1)).send(3, K, (0, 2)).poll(2, {K: [(0, 1)]})
    assert "inconsistent-offsets" in kinds(h.check())


def test_nonmonotonic_poll_across_operations():
    h = H().send(1, K, (0, 1), (1, 2)).poll(2, {K: [(0, 1), (1, 2)]}).poll(2, {K: [(1, 2)]})
    assert kinds(h.check()) == {"nonmonotonic-poll"}


def test_int_nonmonotonic_poll():
    h = H().send(1, K, (0, 1), (1, 2)).poll(2, {K: [(1, 2), (0, 1)]})
    assert kinds(h.check()) == {"int-nonmonotonic-poll"}


def test_poll_skip_across_operations():
    h = H().send(1, K, (0, 1), (1, 2), (2, 3)).poll(2, {K: [(0, 1)]}).poll(2, {K: [(2, 3)]}).poll(4, {K: [(1, 2)]})
    result = h.check()
    assert kinds(result) == {"poll-skip"}
    assert result.anomalies["poll-skip"][0]["skipped"] == 1


def test_int_poll_skip():
    h = H().send(1, K, (0, 1), (1, 2), (5, 3)).poll(2, {K: [(0, 1), (5, 3)]}).poll(4, {K: [(1, 2)]})
    assert kinds(h.check()) == {"int-poll-skip"}


def test_other_consumers_do_not_make_a_skip():
    h = H().send(1, K, (0, 1), (1, 2)).poll(2, {K: [(0, 1)]}).poll(3, {K: [(1, 2)]})
    assert h.check().valid


def test_nonmonotonic_send_within_one_producer():
    h = H().send(1, K, (5, 1)).send(1, K, (3, 2)).poll(2, {K: [(3, 2), (5, 1)]})
    assert "nonmonotonic-send" in kinds(h.check())


def test_int_nonmonotonic_send():
    h = H().send(1, K, (5, 1), (3, 2)).poll(2, {K: [(3, 2), (5, 1)]})
    assert "int-nonmonotonic-send" in kinds(h.check())


def test_nonmonotonic_send_across_clients_in_real_time():
    # producer 1's send is acknowledged at offset 5 before producer 3's begins, which then lands at 3
    h = H().send(1, K, (5, 1)).send(3, K, (3, 2)).poll(2, {K: [(3, 2), (5, 1)]})
    result = h.check()
    assert kinds(result) == {"nonmonotonic-send-realtime"}
    assert result.anomalies["nonmonotonic-send-realtime"][0]["ops"] == [1, 3]


def test_concurrent_sends_may_land_in_either_order():
    h = H()
    h._add("invoke", 1, "send", [["send", K, 1]])
    h._add("invoke", 3, "send", [["send", K, 2]])
    h._add("ok", 1, "send", [["send", K, [1, 1]]])
    h._add("ok", 3, "send", [["send", K, [0, 2]]])
    h.poll(2, {K: [(0, 2), (1, 1)]})
    assert h.check().valid


def test_aborted_read():
    h = H().txn(1, K, (0, 1), type_="fail", commit=False, abort=True).send(3, K, (2, 2))
    h.poll(2, {K: [(0, 1), (2, 2)]})
    assert kinds(h.check()) == {"aborted-read"}


def test_read_of_a_transaction_never_committed_is_aborted():
    h = H().txn(1, K, (0, 1), type_="info", commit=False).poll(2, {K: [(0, 1)]})
    assert kinds(h.check()) == {"aborted-read"}


def test_a_crashed_transaction_may_have_committed():
    h = H().txn(1, K, (0, 1), type_="info", commit=False, crashed=True).poll(2, {K: [(0, 1)]})
    assert h.check().valid


def test_precommitted_read():
    h = H()
    h._add("invoke", 1, "txn", [["send", K, 1]])
    h.poll(2, {K: [(0, 1)]})  # completes at t=3, the commit is requested at t=4
    h._add("ok", 1, "txn", [["send", K, [0, 1]]], commit_time=4.0)
    assert kinds(h.check()) == {"precommitted-read"}


def test_read_after_the_commit_request_is_fine():
    h = H()
    h._add("invoke", 1, "txn", [["send", K, 1]])
    h._add("invoke", 2, "poll", [["poll"]])
    h._add("ok", 2, "poll", [["poll", {K: [[0, 1]]}]])  # t=3: after the commit request at 2.5
    h._add("ok", 1, "txn", [["send", K, [0, 1]]], commit_time=2.5)
    assert h.check().valid


def test_witnesses_are_bounded_and_counts_whole():
    h = H()
    for value in range(checker.MAX_WITNESSES + 5):
        h.send(1, K, (value, value))
    result = h.check()
    assert result.anomaly_counts == {"unseen": checker.MAX_WITNESSES + 5}
    assert len(result.anomalies["unseen"]) == checker.MAX_WITNESSES


@pytest.mark.parametrize(("line", "says"), [
    ("[1]", "not a JSON object"),
    ('{"type": "done", "process": 1, "time": 0, "f": "send", "value": []}', "type 'done'"),
    ('{"type": "ok", "process": "x", "time": 0, "f": "send", "value": []}', "process 'x'"),
    ('{"type": "ok", "process": 1, "time": 0, "f": "send", "value": [["send", "t/0", 5]]}', "a completed send"),
    ('{"type": "ok", "process": 1, "time": 0, "f": "poll", "value": [["poll", {"t/0": [5]}]]}', "a completed poll"),
    ("{", "not JSON"),
])
def test_a_bad_history_line_is_named(tmp_path, line, says):
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps({"type": "invoke", "process": 1, "time": 0, "f": "poll", "value": [["poll"]]})
                    + "\n" + line + "\n")
    with pytest.raises(HistoryError, match=f"line 2: .*{says}" if says != "not a JSON object" else "line 2: not a"):
        history.read(path)


def test_recorder_round_trip(tmp_path):
    clock = iter(range(10))
    recorder = history.Recorder(tmp_path / "h.jsonl", lambda: next(clock))
    recorder.record("invoke", 1, "send", [["send", K, 1]])
    recorder.record("ok", 1, "send", [["send", K, [0, 1]]])
    recorder.record("info", history.NEMESIS, "fault", {"fault": "kill", "phase": "start"})
    recorder.close()
    ops = history.read(tmp_path / "h.jsonl")
    assert [op["index"] for op in ops] == [0, 1, 2]
    assert checker.check(ops).counts == {"ok": 1}


def test_kinds_a_workload_cannot_show_are_skipped_exactly():
    """A workload's UNJUDGED kinds (its clients are never told an offset, or it has no transactions) are not
    reported; every other kind still is; an unknown kind is a mistake, not a silent no-op."""
    ops = history.parse([
        {"type": "invoke", "process": 1, "time": 0, "f": "send", "value": [["send", "k", 1]]},
        {"type": "ok", "process": 1, "time": 1, "f": "send", "value": [["send", "k", [0, 1]]]},
        {"type": "invoke", "process": 2, "time": 2, "f": "poll", "value": [["poll"]]},
        {"type": "ok", "process": 2, "time": 3, "f": "poll", "value": [["poll", {"k": [[0, 2]]}]]},
    ])
    assert set(checker.check(ops).anomaly_counts) == {"unseen", "inconsistent-offsets"}
    assert set(checker.check(ops, ["unseen"]).anomaly_counts) == {"inconsistent-offsets"}
    with pytest.raises(ValueError, match="no-such-kind"):
        checker.check(ops, ["no-such-kind"])
