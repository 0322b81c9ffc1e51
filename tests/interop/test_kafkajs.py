"""kafkajs 2.2.4 (Node) through the reference broker: produce and a consumer group, the admin client (topics,
configs, records, partitions, groups, offsets, cluster) and a transactional producer with sendOffsets.

The scenarios live in tests/interop/kafkajs/scenarios.js; each prints what it observed as JSON. Install the npm
package first: ``npm ci --prefix tests/interop/kafkajs``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.interop
HERE = Path(__file__).resolve().parent / "kafkajs"
NODE = shutil.which("node")


@pytest.fixture
def run_scenario(kafka_bootstrap, unique):
    # a missing client is a failure, never a skip: CI installs it (.ci/run)
    if NODE is None:
        pytest.fail("node is not installed (Node 20+)")
    if not (HERE / "node_modules" / "kafkajs").is_dir():
        pytest.fail("kafkajs is not installed: npm ci --prefix tests/interop/kafkajs")

    def run(name: str) -> dict:
        proc = subprocess.run([NODE, str(HERE / "scenarios.js"), name, kafka_bootstrap, unique("kjs")],
                              capture_output=True, text=True, timeout=90)
        assert proc.returncode == 0, proc.stderr[-4000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])
    return run


def test_produce_and_group_consume(run_scenario):
    result = run_scenario("produce-consume")
    assert result["baseOffset"] == "0"
    assert result["values"] == ["a", "b", "c"]
    assert result["committed"] == "3"


def test_admin_client(run_scenario):
    result = run_scenario("admin")
    assert result["created"] is True
    assert dict(result["before"]) == {"retention.ms": "604800000", "cleanup.policy": "delete"}
    assert dict(result["after"]) == {"retention.ms": "3600000", "cleanup.policy": "delete"}
    assert result["unknownConfig"] == "INVALID_CONFIG"
    assert [(o["low"], o["high"]) for o in result["offsetsBefore"]] == [("0", "3")]
    assert [(o["low"], o["high"]) for o in result["offsetsAfter"]] == [("2", "3")]
    assert result["partitions"] == [0, 1, 2]
    assert result["groupsBefore"] and not result["groupsAfter"]
    assert result["deleted"][0][1] == 0
    assert len(result["brokers"]) == 1 and result["brokers"][0][1] == "127.0.0.1"
    assert result["topicsAfter"] == []


def test_transactional_producer_with_send_offsets(run_scenario):
    result = run_scenario("transaction")
    assert result["sourceOffset"] == "7"
    assert result["values"] == ["kept-1", "kept-2", "kept-3"]  # read_committed: the aborted record is skipped
