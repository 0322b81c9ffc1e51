"""Fluvio under kill -9 with ``--data-dir``: the ``fluvio`` client's acknowledged records, and the topic created
through the SC, survive the kill; a consumer reads every acknowledged record once, in order. The long version is
``python bench/crash_durability.py --protocol fluvio``."""

from __future__ import annotations

import pytest

from tests.crash_support import CrashableBroker, fluvio_scenario

pytest.importorskip("fluvio", reason="the fluvio client (interop extra)")
pytestmark = pytest.mark.interop


def test_nothing_acknowledged_is_lost_across_a_kill(tmp_path):
    with CrashableBroker("fluvio", tmp_path / "data") as broker:
        verdict = fluvio_scenario(broker, kill_after=2_000)
    assert not verdict.problems(), f"{verdict.line()}: {verdict.problems()}"
    assert len(verdict.acknowledged) >= 2_000 and broker.starts == 2
