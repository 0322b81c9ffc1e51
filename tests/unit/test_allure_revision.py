"""A verdict the run's end revised reaches the case's Allure result of this run, and only that one: an earlier run's
result for the same test in the same --alluredir is left as it was."""

from __future__ import annotations

import json

from wirecheck.protocols.verdicts import Verdict
from wirecheck.reports.allure import NODEID_LABEL, AllureReporter
from wirecheck.reports.events import RunFinished, VerdictRevised

NODEID = "suites/kafka/test_configs.py::test_synonyms_only_when_asked[True]"


def _result(path, nodeid: str, start: int) -> None:
    path.write_text(json.dumps({"name": "t", "status": "skipped", "start": start, "stop": start + 5,
                                "statusDetails": {"message": "BLOCKED: ..."},
                                "labels": [{"name": "case", "value": "kafka.configs.synonyms"},
                                           {"name": NODEID_LABEL, "value": nodeid}]}))


def test_a_revised_verdict_changes_this_runs_result_only(tmp_path):
    reporter = AllureReporter(tmp_path)
    earlier, this, other = (tmp_path / f"{name}-result.json" for name in ("earlier", "this", "other"))
    _result(earlier, NODEID, reporter.since - 60_000)
    _result(this, NODEID, reporter.since + 10)
    _result(other, NODEID.replace("True", "False"), reporter.since + 10)
    (tmp_path / "broken-result.json").write_text("{")  # a file allure-pytest did not finish: left alone
    reporter.handle(VerdictRevised(NODEID, "kafka.configs.synonyms", Verdict.BLOCKED, Verdict.FAILED,
                                   "kafka.configs.requested-keys: expected a response; got the connection closed"))
    reporter.handle(RunFinished(controller=False))
    assert json.loads(this.read_text())["status"] == "skipped"  # a worker's end revises nothing
    reporter.handle(RunFinished(controller=True, exit_status=1))
    revised = json.loads(this.read_text())
    assert revised["status"] == "failed" and revised["statusDetails"]["message"].startswith("FAILED: kafka.configs")
    assert json.loads(earlier.read_text())["status"] == "skipped"
    assert json.loads(other.read_text())["status"] == "skipped"
    assert (tmp_path / "broken-result.json").read_text() == "{"
