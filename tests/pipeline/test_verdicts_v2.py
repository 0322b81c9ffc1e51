"""Report schema version 2 in the pipeline: a run's FLAKY verdict counts among the flaky cases, and the new
run.json and case fields load."""

from __future__ import annotations

from wirecheck.reports.pipeline import conformance, warehouse
from tests.pipeline.runs import FRAMING, OVERSIZE, case, write_run


def test_a_flaky_verdict_of_one_run_is_a_flaky_case(spark, tmp_path):
    flaky = dict(case("f1", f"{FRAMING}::test_oversize", "FLAKY", clause=OVERSIZE), attempts=2,
                 schema="wirecheck.case/2")
    down = dict(case("f1", f"{FRAMING}::test_utf8", "TARGET-DOWN"), message="target died at case x after frame y")
    targets = {"rustlog": {"address": "127.0.0.1:9092", "reference": False, "faults": [],
                           "found": "answers like rustlog", "probed_as": "rustlog"}}
    write_run(tmp_path / "runs", "f1", [flaky, down], targets=targets)
    warehouse.ingest(spark, [str(tmp_path / "runs" / "*")], str(tmp_path / "wh"))
    cases = warehouse.load_cases(spark, str(tmp_path / "wh"))
    rows = conformance.flaky(cases).collect()
    assert [(r.nodeid, dict(r.verdicts)) for r in rows] == [(f"{FRAMING}::test_oversize", {"FLAKY": 1})]
    assert conformance.executed_count(cases, "f1") == 1  # TARGET-DOWN is not an executed verdict
