"""RustLog under kill -9 with ``--data-dir``: every acknowledged Produce is fetched back after the restart, once,
in order. The long version is ``python bench/crash_durability.py --protocol rustlog``."""

from __future__ import annotations

from tests.crash_support import CrashableBroker, rustlog_scenario


def test_nothing_acknowledged_is_lost_across_a_kill(tmp_path):
    with CrashableBroker("rustlog", tmp_path / "data") as broker:
        verdict = rustlog_scenario(broker, kill_after=5_000)
    assert not verdict.problems(), f"{verdict.line()}: {verdict.problems()}"
    assert len(verdict.acknowledged) >= 5_000 and broker.starts == 2
