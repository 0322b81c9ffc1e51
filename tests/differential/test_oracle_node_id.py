"""--differential with a server of our choosing as the oracle (--oracle kafka=HOST:PORT): a second reference broker
whose node.id is 111 (--kafka-node-id), while the target is the launched reference broker, node 0.

Two conforming brokers that chose different node ids answer Metadata and FindCoordinator differently in that id
alone. The comparison maps the ids (ProtocolSpec.chosen_fields) and goes on comparing every later answer, so the
run compares every answer it exchanged and, under --strict, no case is DIVERGENT; the oracle really is node 111
(asked directly), and a DescribeConfigs of the target's broker resource ("0", learnt from its Metadata) reaches the
oracle as "111" (else the oracle refuses it with INVALID_REQUEST and the case is DIVERGENT).
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from wirecheck.protocols.kafka import messages
from wirecheck.targets.launcher import launch

ROOT = Path(__file__).resolve().parents[2]
#: cases whose conversations carry broker ids: Metadata (brokers, leaders, replicas), FindCoordinator, the group
#: and commit cases that go on after them on the same connections, and a broker's config resource
CASES = "metadata or coordinator or commit or group or describe_broker"


def _metadata_node_ids(port: int) -> list[int]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(messages.encode_request(3, 12, 1, "wc-test", {
            "Topics": None, "AllowAutoTopicCreation": False, "IncludeTopicAuthorizedOperations": False}))
        length = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        frame = struct.pack(">i", length) + sock.recv(length, socket.MSG_WAITALL)
    return [broker["NodeId"] for broker in messages.decode_response(3, 12, frame)["body"]["Brokers"]]


@pytest.fixture
def oracle(tmp_path):
    broker = launch(protocols=["kafka"], extra_args=["--kafka-node-id", "111"], workdir=tmp_path / "oracle")
    try:
        yield broker
    finally:
        broker.stop()


def test_an_oracle_with_another_node_id_is_compared_past_metadata(tmp_path, oracle):
    port = oracle.ports["kafka"]
    assert _metadata_node_ids(port) == [111]
    report = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-p", "no:xdist", "-o", "addopts=", "suites/kafka/test_topics_groups.py", "suites/kafka/test_configs.py", "-k", CASES,
                           "--report-dir", str(report), "--differential", "--strict",
                           "--oracle", f"kafka=127.0.0.1:{port}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    output = proc.stdout[-4000:] + proc.stderr[-2000:]
    records = [json.loads(line) for path in report.glob("*/cases-*.jsonl")
               for line in path.read_text().splitlines() if line.strip()]
    assert proc.returncode == 0 and records, output
    assert not [r for r in records if r["verdict"] != "OK"], output
    tallies = {r["nodeid"]: r["differential"] for r in records}
    assert all(t["compared"] == t["exchanged"] for t in tallies.values()), tallies
    assert sum(t["compared"] for t in tallies.values()) > 2 * len(tallies)  # well past each first answer
    broker_configs = [t for nodeid, t in tallies.items() if nodeid.endswith("test_describe_broker")]
    assert broker_configs and broker_configs[0]["compared"] >= 2, tallies
    run = json.loads(next(report.glob("*/run.json")).read_text())
    assert run["differential"]["compared"] == run["differential"]["exchanged"] > 0
    assert "compared" in proc.stdout and "answers (100.0%)" in proc.stdout, output


def test_oracle_misuse_stops_the_run_with_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-o", "addopts=", "suites/kafka/test_topics_groups.py", "--report-dir",
                           str(tmp_path), "--oracle", "127.0.0.1:9"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "--oracle 127.0.0.1:9: expected PROTOCOL=HOST:PORT" in proc.stdout + proc.stderr
