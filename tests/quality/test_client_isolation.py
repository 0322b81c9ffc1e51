"""One defect, one failure, across the real-client matrix (ARCHITECTURE.md, "the isolation rule"): against a broker
that does not store committed offsets, the protocol clause is the one FAILED clause, and each client scenario
that fails because of it is BLOCKED by it (``reports.rootcause.reattribute``), in run.json, the terminal summary
and JUnit alike.

The client scenarios run before the clause's own case (test_clients.py is collected before
test_topics_groups.py), so the decision can only be the run's end's, as it is with xdist workers or random order.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from tests.quality.harness import run_suite
from wirecheck.protocols.kafka import SPEC

FAULT = "kafka.commit-not-stored"
CLAUSE = SPEC.faults[FAULT]  # kafka.commit.round-trip
#: the scenarios that read a committed offset back at once (seconds each, no waiting for records): every client's
#: group-admin, and kcat's group-consume (its second run resumes at the first one's commit)
SCENARIOS = sorted(c for c in SPEC.client_faults[FAULT] if c.endswith((".group-admin", ".kcat.group-consume")))


def test_a_protocol_defect_is_one_failure_and_the_client_scenarios_it_broke_are_blocked_by_it(tmp_path):
    junit = tmp_path / "junit.xml"
    run = run_suite("kafka", tmp_path / "reports", faults=[FAULT], clients=True, timeout=900,
                    extra=["-k", " or ".join([CLAUSE, *SCENARIOS]), "-p", "no:randomly", "--junitxml", str(junit),
                           "--maxfail", "100000"])
    assert run.returncode == 1, run.tail()
    ran = [r for r in run.records if r["verdict"] not in ("NOT-RUN",)]
    assert {r["clause"] for r in ran if r["verdict"] == "FAILED"} == {CLAUSE}, run.by_verdict()
    scenarios = {r["case"]: r for r in ran if r["case"] in SCENARIOS}  # of the clients installed here
    assert scenarios, run.by_verdict()
    for record in scenarios.values():
        assert record["verdict"] == "BLOCKED" and record["blocked_by"]["clause"] == CLAUSE, record
        assert record["own_failure"]["clause"] == record["case"] and record["own_failure"]["actual"], record
    # run.json, the terminal and JUnit say the same: one clause broke, and how many client scenarios it broke
    (run_json,) = (tmp_path / "reports").glob("*/run.json")
    (group,) = [g for g in json.loads(run_json.read_text())["failures_by_clause"] if g["clause"] == CLAUSE]
    assert sorted(group["client_scenarios"]) == sorted(scenarios) and "FAILED" in group["verdicts"]
    line = f"{CLAUSE}: FAILED ("
    shown = [text for text in run.output.splitlines() if text.startswith(line)]
    assert shown and shown[0].endswith(f"; {len(scenarios)} client scenario{'s' if len(scenarios) != 1 else ''} "
                                       f"broken by it"), run.tail()
    failed = len([r for r in ran if r["verdict"] == "FAILED"])
    totals = re.findall(r"^(?:=+ )?(\d+) failed\b.* in [\d.]+s", run.output, re.MULTILINE)
    assert totals == [str(failed)], run.tail()[-800:]  # pytest's own "N failed" line counts the clause's case only
    suite = ET.parse(junit).getroot().find("testsuite")
    failures = suite.findall("testcase/failure")
    assert int(suite.get("failures")) == len(failures) == failed
    blocked = [case for case in suite.iter("testcase") if "[" in case.get("name")
               and case.get("name").rsplit("[", 1)[1].rstrip("]") in {s.split(".")[2] for s in scenarios}
               and "test_clients" in case.get("classname")]
    assert blocked and all(case.find("skipped") is not None and f"BLOCKED: {CLAUSE}" in
                           case.find("skipped").get("message") for case in blocked)
