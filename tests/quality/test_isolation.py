"""One defect, one failure, under its own clause (ARCHITECTURE.md, "Cases, clauses and verdicts").

- A fault of the reference broker, with the whole suite run as users run it (no --stop-at-clause), FAILs only
  cases of the fault's own clause: a sample of faults here, every fault in ``bench/fanout.py``.
- A read-back helper that crashes (DescribeConfigs by named keys, which most config cases read back with) is one
  FAILED case under the clause that owns the read, and the cases that needed it are BLOCKED by it.
- A named protocol always runs: a broken hello is one FAILED case on the hello's clause, and the rest runs.
- A Barco discovery answer without the binary port FAILs on the discovery clause and BLOCKs the binary producer
  cases, which run when ``--target-option barco.producer=HOST:PORT`` names the port.
"""

from __future__ import annotations

import pytest

from tests.quality.expected import EXPECTED
from tests.quality.harness import run_suite
from wirecheck.targets.launcher import launch

#: faults whose divergence other cases meet on the way to their own clauses (helper steps, keepalives,
#: liveness probes, the bulk engine's answers): each must FAIL its own clause only
SAMPLE = ["barco.heartbeat-wrong-op", "barco.response-crc-wrong", "barco.unknown-op-silent",
          "barco.discovery-binary-port-missing", "rustlog.pong-wrong-type", "kafka.correlation-id-wrong",
          "fluvio.correlation-id-wrong", "pravega.error-request-id-zero",
          # values every later step builds on: a helper must judge them under their own clause first
          "kafka.flexible-header-v1", "fluvio.produce-base-offset-wrong", "barco.error-code-unknown",
          # an error path that crashes at one version (the versions sweep meets it): its own clause, not "version
          # not implemented"
          "kafka.listoffsets-unknown-topic-closes-v5"]


@pytest.mark.parametrize("fault", SAMPLE)
def test_a_fault_fails_its_own_clause_only(tmp_path, fault):
    protocol = fault.split(".")[0]
    clause = EXPECTED[protocol][fault]
    run = run_suite(protocol, tmp_path, faults=[fault], extra=["--maxfail", "100000"], timeout=600)
    failed = [r for r in run.records if r["verdict"] == "FAILED"]
    assert {r["clause"] for r in failed} == {clause}, [f"{r['nodeid']}: {r['message'][:200]}" for r in failed
                                                       if r["clause"] != clause]
    assert not [r for r in run.records if r["verdict"] == "ERROR"], run.tail()


def test_every_sampled_fault_exists():
    known = {fault for table in EXPECTED.values() for fault in table}
    assert set(SAMPLE) <= known, set(SAMPLE) - known


def test_a_crashing_read_back_helper_is_one_failure_and_blocks_the_cases_that_read_back(tmp_path):
    fault = "kafka.describe-configs-named-keys-close"
    run = run_suite("kafka/test_configs.py", tmp_path, faults=[fault], extra=["--maxfail", "100000"])
    clause = EXPECTED["kafka"][fault]
    failed = [r for r in run.records if r["verdict"] == "FAILED"]
    assert [r["clause"] for r in failed] == [clause], run.by_verdict()
    blocked = [r for r in run.records if r["verdict"] == "BLOCKED"]
    # synonyms, documentation, incremental, validate-only, ...: each reads configs back by name
    assert len({r["clause"] for r in blocked}) >= 4, run.by_verdict()
    assert all(r["blocked_by"]["clause"] == clause for r in blocked), run.by_verdict()


def _against(tmp_path, protocol: str, fault: str, *extra: str):
    broker = launch([protocol], faults=[fault], workdir=tmp_path / "broker")
    try:
        run = run_suite(protocol, tmp_path / "reports", extra=[f"--target={protocol}=127.0.0.1:"
                                                                f"{broker.ports[protocol]}", *extra, "--maxfail",
                                                                "100000"], timeout=600)
    finally:
        broker.stop()
    return run


def test_a_named_protocol_whose_hello_is_wrong_is_tested_and_fails_on_the_hello_clause(tmp_path):
    run = _against(tmp_path, "rustlog", "rustlog.pong-wrong-type")
    assert run.returncode == 1, run.tail()
    assert run.clauses_with("FAILED") == {"rustlog.ping.pong"}, run.by_verdict()
    assert len(run.by_verdict()["OK"]) > 80  # every case that does not use a Ping to see the connection still open
    assert {r["blocked_by"]["clause"] for r in run.records if r["verdict"] == "BLOCKED"} <= {"rustlog.ping.pong"}


def test_a_discovery_without_the_binary_port_blocks_the_binary_cases_until_the_port_is_named(tmp_path):
    run = _against(tmp_path / "first", "barco", "barco.discovery-binary-port-missing")
    assert run.clauses_with("FAILED") == {"barco.discovery.brokers"}, run.by_verdict()
    blocked = [r for r in run.records if r["verdict"] == "BLOCKED"]
    assert blocked and all(r["blocked_by"]["clause"] == "barco.discovery.brokers" for r in blocked)
    assert any("producer" in r["nodeid"] for r in blocked)
    # the broker listens on fresh ports each time: start it again and name its binary port
    fresh = launch(["barco"], faults=["barco.discovery-binary-port-missing"], workdir=tmp_path / "second-broker")
    try:
        port = fresh.endpoints["barco"]["producer"]
        named = run_suite("barco", tmp_path / "second", extra=[f"--target=barco=127.0.0.1:{fresh.ports['barco']}",
                                                               "--target-option", f"barco.producer=127.0.0.1:{port}"])
    finally:
        fresh.stop()
    assert named.clauses_with("FAILED") == {"barco.discovery.brokers"}, named.by_verdict()
    assert "BLOCKED" not in named.by_verdict()
