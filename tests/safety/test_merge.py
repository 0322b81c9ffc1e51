"""Merging the client processes' history files (targets/safety/supervisor.py): time order, a torn last line left
out, a dead client's open operation closed as a crashed ``info``."""

import json

import pytest

from wirecheck.reports.safety import checker, history
from wirecheck.targets.safety.supervisor import acknowledged, merge

K = "t/0"


def write(path, ops, torn=""):
    path.write_text("".join(json.dumps(op) + "\n" for op in ops) + torn)


def test_merge_orders_by_time_and_closes_what_a_dead_client_left_open(tmp_path):
    write(tmp_path / "a.jsonl", [
        {"type": "invoke", "process": 1, "time": 1.0, "f": "send", "value": [["send", K, 10]]},
        {"type": "ok", "process": 1, "time": 3.0, "f": "send", "value": [["send", K, [0, 10]]]},
        {"type": "invoke", "process": 1, "time": 4.0, "f": "txn", "value": [["send", K, 11]]},
    ], torn='{"type": "ok", "proc')
    write(tmp_path / "b.jsonl", [
        {"type": "invoke", "process": 2, "time": 2.0, "f": "poll", "value": [["poll"]]},
        {"type": "ok", "process": 2, "time": 6.0, "f": "poll", "value": [["poll", {K: [[0, 10], [2, 11]]}]]},
    ])
    ops = merge([(tmp_path / "a.jsonl", 5.0), (tmp_path / "b.jsonl", None)], tmp_path / "history.jsonl")
    assert [op["time"] for op in ops] == [1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 6.0]
    crashed = ops[4]
    assert (crashed["type"], crashed["f"], crashed["crashed"]) == ("info", "txn", True)
    assert ops[5]["f"] == "crash"
    assert history.read(tmp_path / "history.jsonl") == ops
    assert acknowledged(ops) == {10}
    assert checker.check(ops).valid  # the crashed transaction may have committed: reading 11 is no anomaly


def test_a_torn_line_in_the_middle_is_an_error(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"type": "ok"\n{}\n')
    with pytest.raises(history.HistoryError, match="line 1"):
        merge([(tmp_path / "a.jsonl", None)], tmp_path / "history.jsonl")
