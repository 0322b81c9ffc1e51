"""result.json names itself and its run, so the run warehouse can file it (reports/pipeline/safety.py)."""

import datetime as dt

from wirecheck.reports.safety import checker, report


def test_a_result_has_a_schema_a_run_id_and_its_times():
    built = report.build(checker.check([]), [], {"protocol": "kafka", "seconds": 90.4})
    assert built["schema"] == report.SCHEMA == "wirecheck.safety/1"
    started = dt.datetime.fromisoformat(built["started_at"].replace("Z", "+00:00"))
    finished = dt.datetime.fromisoformat(built["finished_at"].replace("Z", "+00:00"))
    assert finished - started == dt.timedelta(seconds=90)
    assert built["run_id"].startswith(started.strftime("%Y%m%dT%H%M%SZ-"))
    other = report.build(checker.check([]), [], {"protocol": "kafka", "seconds": 90.4})
    assert other["run_id"] != built["run_id"]  # a random suffix: two runs in one second stay apart


def test_facts_that_name_the_run_win():
    facts = {"run_id": "night-1", "started_at": "2026-11-21T02:00:00Z", "finished_at": "2026-11-21T02:30:00Z"}
    built = report.build(checker.check([]), [], facts)
    assert {k: built[k] for k in facts} == facts
