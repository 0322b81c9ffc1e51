"""Barco under kill -9 with ``--data-dir``: every record the HTTP producer acknowledged (200, fsync batch) is read
back after the restart, once, in order. The long version is ``python bench/crash_durability.py --protocol barco``."""

from __future__ import annotations

from tests.crash_support import CrashableBroker, barco_scenario


def test_nothing_acknowledged_is_lost_across_a_kill(tmp_path):
    with CrashableBroker("barco", tmp_path / "data") as broker:
        verdict = barco_scenario(broker, kill_after=2_000)
    assert not verdict.problems(), f"{verdict.line()}: {verdict.problems()}"
    assert len(verdict.acknowledged) >= 2_000 and broker.starts == 2
