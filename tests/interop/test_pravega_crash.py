"""Pravega under kill -9 with ``--data-dir``: the ``pravega`` client's flushed events, and the scope, stream and
reader-group metadata of the controller, survive the kill; a new reader group reads every acknowledged event once,
in order. The long version is ``python bench/crash_durability.py --protocol pravega``."""

from __future__ import annotations

import pytest

from tests.crash_support import CrashableBroker, pravega_scenario

pytest.importorskip("pravega_client", reason="the pravega client (interop extra)")
pytestmark = pytest.mark.interop


def test_nothing_acknowledged_is_lost_across_a_kill(tmp_path):
    with CrashableBroker("pravega", tmp_path / "data") as broker:
        verdict = pravega_scenario(broker, kill_after=2_000)
    assert not verdict.problems(), f"{verdict.line()}: {verdict.problems()}"
    assert len(verdict.acknowledged) >= 2_000 and broker.starts == 2
