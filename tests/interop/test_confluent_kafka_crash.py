"""Kafka under kill -9 with ``--data-dir``: every record confluent-kafka got acknowledged (acks=all) is consumed
back after the restart, once, in order. The long version is ``python bench/crash_durability.py --protocol kafka``."""

from __future__ import annotations

import pytest

from tests.crash_support import CrashableBroker, kafka_scenario

pytest.importorskip("confluent_kafka", reason="confluent-kafka (interop extra)")
pytestmark = pytest.mark.interop


def test_nothing_acknowledged_is_lost_across_a_kill(tmp_path):
    with CrashableBroker("kafka", tmp_path / "data") as broker:
        verdict = kafka_scenario(broker, kill_after=2_000)
    assert not verdict.problems(), f"{verdict.line()}: {verdict.problems()}"
    assert len(verdict.acknowledged) >= 2_000 and broker.starts == 2
