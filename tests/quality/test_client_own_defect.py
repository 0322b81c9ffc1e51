"""A client's own defect is reported as the client's (issue: "a client version that cannot parse what the protocol
permits"): against the reference broker's variant kafka.tagged-defaults-written (every tagged field written, also at
its default value, as KIP-482 permits), librdkafka 2.16.0 (confluent-kafka) now and then misreads the Produce and
Fetch answers after a CurrentLeader of -1/-1 and crashes, while the Java client, franz-go, Sarama and kcat read them.

The variant passes the whole protocol suite (tests/quality/test_variants.py). Here the confluent-kafka scenarios run
against it: none is FAILED; one whose client tripped is XFAIL naming the defect (protocols/kafka/client_defects.py)
with where its traffic shows the trigger; and the client's captured traffic shows the trigger in every run, whether
or not the client tripped on it this time, so the recognizer is proven on a real capture.
"""

from __future__ import annotations

from tests.quality.harness import run_suite
from wirecheck.protocols.kafka import SPEC
from wirecheck.protocols.kafka.client_defects import default_tags_sent
from wirecheck.reports.pipeline.captures.flows import read_capture
from wirecheck.targets.client_capture import exchanges_of
from wirecheck.targets.launcher import launch

DEFECT = "librdkafka-default-tags"
SCENARIOS = "confluent-kafka and (produce_consume or compression or consumer_group_protocol or group_rebalance)"


def test_a_client_that_cannot_read_a_permitted_answer_is_reported_as_the_clients(tmp_path):
    broker = launch(["kafka"], variants=["kafka.tagged-defaults-written"], workdir=tmp_path / "broker")
    port = broker.ports["kafka"]
    try:
        run = run_suite("kafka/test_clients.py", tmp_path / "reports", clients=True, timeout=900,
                        extra=[f"--target=kafka=127.0.0.1:{port}", "-k", SCENARIOS, "--keep-transcripts",
                               "--maxfail", "100000"])
    finally:
        broker.stop()
    scenarios = [r for r in run.records if r["case"].startswith("kafka.clients.confluent-kafka.")]
    assert len(scenarios) == 4, run.by_verdict()
    assert not [r for r in scenarios if r["verdict"] not in ("OK", "XFAIL")], run.by_verdict()
    for record in scenarios:
        if record["verdict"] == "XFAIL":
            assert record["message"].startswith(f"the client's own known defect {DEFECT}: "), record["message"]
            assert "at their default values" in record["message"], record["message"]
    assert run.returncode == 0, run.tail()
    (pcap,) = (tmp_path / "reports").glob("*/transcripts/kafka.clients.confluent-kafka.produce-consume.*.pcap")
    exchanges = [pair for flow in read_capture(pcap.read_bytes(), {port}).flows
                 for pair in exchanges_of(SPEC.primary, flow)]
    assert exchanges and "CurrentLeader" in (default_tags_sent(exchanges) or ""), len(exchanges)
