"""kafkajs 2.2.4 (Node) through the reference broker: the admin calls beyond the suite case kafka.clients.kafkajs.admin
(an unknown config refused, records deleted, partitions added, group offsets set and the group deleted, the cluster
described). Producing, consuming, groups and transactions are the suite's kafka.clients.kafkajs.* cases.

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

