"""One defect, one failure, against an independent server too: a deliberate defect that breaks a real client's
scenario is FAILED under the protocol clause whose own case checks the rule, and the client scenarios it broke are
BLOCKED by that clause (``ProtocolSpec.client_depends_on``, ``reports.rootcause.reattribute``), not FAILED a second
time under their client clauses.

Barco's HTTP producer answering 204 to a POST that adds to a topic breaks every client's group-resume (its second
POST); barco.http-producer.produce's own case posts twice to one topic (suites/barco/test_http.py).
"""

from __future__ import annotations

from tests.quality import independent
from tests.quality.harness import run_suite
from tests.quality.independent_expected import EXPECTED

DEFECT = "http-producer-existing-topic-204"
CLAUSE = EXPECTED["barco"][DEFECT]  # barco.http-producer.produce
SCENARIO = "group-resume"


def test_a_client_scenario_broken_by_a_protocol_defect_is_blocked_by_its_clause(tmp_path):
    server = independent.start("barco", tmp_path / "server", [DEFECT])
    try:
        run = run_suite("barco", tmp_path / "reports", clients=True, timeout=600,
                        extra=["--target", server.target, "-p", "no:randomly", "--maxfail", "100000",
                               "-k", "test_http_produce_to_a_topic_with_records or test_group_resume"])
    finally:
        server.stop()
    ran = [r for r in run.records if r["verdict"] != "NOT-RUN"]
    assert {r["clause"] for r in ran if r["verdict"] == "FAILED"} == {CLAUSE}, run.by_verdict()
    scenarios = [r for r in ran if r["case"].startswith("barco.clients.") and r["case"].endswith(f".{SCENARIO}")]
    assert scenarios, run.by_verdict()  # of the clients installed here (curl with zstd, httpx)
    for record in scenarios:
        assert record["verdict"] == "BLOCKED" and record["blocked_by"]["clause"] == CLAUSE, record
        assert record["own_failure"]["clause"] == record["case"] and "204" in record["own_failure"]["actual"], record
    assert run.returncode == 1, run.tail()
