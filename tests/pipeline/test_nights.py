"""Safety runs and state-coverage maps across nights: ingested beside conformance runs (one row per run and anomaly
kind; one per reached cell and catalogue cell), and the report's views per target and night (SCHEMA.md ``safety``,
``safety_runs``, ``state_coverage``, ``state_coverage_cells``) with their pages. One ingestion and one report."""

from __future__ import annotations

import json
import os

import pytest

from wirecheck.reports.pipeline import report, safety, warehouse
from wirecheck.reports.safety import checker, history
from wirecheck.reports.safety import report as safety_report
from tests.pipeline.runs import VENDOR, case, write_run

REFERENCE = "the reference broker"


def _history(lose: bool) -> list[dict]:
    """Two acknowledged sends to t/0; the poll reads both, or (``lose``) only the second: a lost write."""
    reads = [[1, 2]] if lose else [[0, 1], [1, 2]]
    return history.parse([
        {"type": "invoke", "process": 1, "time": 0.1, "f": "send", "value": [["send", "t/0", 1], ["send", "t/0", 2]]},
        {"type": "ok", "process": 1, "time": 0.2, "f": "send",
         "value": [["send", "t/0", [0, 1]], ["send", "t/0", [1, 2]]]},
        {"type": "invoke", "process": 2, "time": 0.3, "f": "poll", "value": [["poll"]]},
        {"type": "ok", "process": 2, "time": 0.4, "f": "poll", "value": [["poll", {"t/0": reads}]]},
        {"type": "info", "process": "nemesis", "time": 0.15, "f": "fault", "value": {"fault": "kill", "phase": "start"}},
        {"type": "info", "process": "nemesis", "time": 0.25, "f": "fault", "value": {"fault": "kill", "phase": "end"}},
    ])


def _safety_run(root, name: str, started_at: str | None, target: str = REFERENCE, lose: bool = False,
                faults: list[str] | None = None, **facts):
    """A safety run's directory as ``wirecheck safety`` writes it (the checker's result on a hand-made history)."""
    ops = _history(lose)
    facts = {"protocol": "kafka", "target": target, "reference_faults": faults or [], "restarts": 1,
             "client_crashes": 0, "seconds": 30.0, "seed": 7, **facts}
    if started_at is not None:
        facts.update(run_id=name, started_at=started_at, finished_at=started_at)
    directory = root / name
    directory.mkdir(parents=True)
    safety_report.write(safety_report.build(checker.check(ops), ops, facts), directory, ops)
    return directory


def _map(cells: list[str], reached: set[str], mutants: int) -> dict:
    """A state-coverage map (docs/report-schema.md ``coverage``): reached cells named ``state/request/reaction``;
    the catalogue names X, Y and Z, of which ``reached`` were reached."""
    catalogue = [{"clause": f"rustlog.errors.{c}", "request": "Produce", "reaction": f"error:{c}",
                  "reached": c in reached, "count": 3 if c in reached else 0} for c in "XYZ"]
    return {"mutants": mutants, "initial": "open", "states": {"open": mutants},
            "cells": [dict(zip(("state", "request", "reaction"), c.split("/")), count=5) for c in cells],
            "transitions": [], "catalogue": catalogue,
            "distinct": {"cells": len(cells), "transitions": len(cells) + 1, "catalogue_reached": len(reached),
                         "catalogue": 3}}


@pytest.fixture(scope="module")
def nights(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("nights")
    runs = root / "runs"
    night1, night2 = "2026-11-20T02:00:00Z", "2026-11-21T02:00:00Z"
    # conformance runs with coverage maps: a vendor's two nights, and the reference broker with a fault
    write_run(runs, "c1", [case("c1", "n::a", "OK")], started_at=night1,
              extra={"coverage": {"rustlog": _map(["open/Produce/answer", "open/Fetch/close"], {"X"}, 100)}})
    write_run(runs, "c2", [case("c2", "n::a", "OK")], started_at=night2,
              extra={"coverage": {"rustlog": _map(["open/Produce/answer", "open/Fetch/error:Y", "open/Ping/silence"],
                                                  {"Y"}, 150)}})
    write_run(runs, "c3", [case("c3", "n::a", "OK", target="127.0.0.1:40001")], started_at=night2,
              targets={"*": {"address": "reference broker", "reference": True, "faults": ["rustlog.x"]}},
              extra={"coverage": {"rustlog": _map(["open/Produce/answer"], set(), 10)}})
    # safety runs: two reference nights (the second with a clean and a lossy run), a vendor, a faulted reference
    _safety_run(runs, "s1", night1)
    _safety_run(runs, "s2", night2, lose=True)
    _safety_run(runs, "s3", "2026-11-21T05:00:00Z")
    _safety_run(runs, "s4", night2, target=VENDOR)
    _safety_run(runs, "s5", night2, faults=["kafka.safety-b", "kafka.safety-a"], lose=True)
    # a result.json written before it had a schema string and a run id: named by its directory, dated by the file
    older = _safety_run(runs, "older", None)
    text = json.loads((older / "result.json").read_text())
    for key in ("schema", "run_id", "started_at", "finished_at"):
        text.pop(key)
    (older / "result.json").write_text(json.dumps(text))
    os.utime(older / "result.json", (1763690400, 1763690400))  # 2025-11-21T02:00:00Z
    # a result.json of something else is not a safety run
    (runs / "other").mkdir()
    (runs / "other" / "result.json").write_text(json.dumps({"schema": "elsewhere/1", "run_id": "x"}))
    wh, out = str(root / "wh"), root / "site"
    stats = warehouse.ingest(spark, [str(runs / "*")], wh)
    again = warehouse.ingest(spark, [str(runs / "*")], wh)
    summary = report.build_report(spark, wh, str(out))
    return {"root": root, "wh": wh, "out": out, "stats": stats, "again": again, "summary": summary}


def test_safety_runs_enter_the_warehouse_once_per_run_and_kind(spark, nights):
    assert nights["stats"] == {"runs": 3 + 6, "cases": 3, "skipped": 0}
    assert nights["again"] == {"runs": 0, "cases": 0, "skipped": 9}  # finished runs already there
    table = safety.load(spark, nights["wh"])
    per_run = {r.run_id: (r.target, r.date, r.n) for r in
               table.groupBy("run_id", "target", "date").count().withColumnRenamed("count", "n").collect()}
    kinds = len(checker.KINDS)
    assert per_run == {"s1": ("reference", "2026-11-20", kinds), "s2": ("reference", "2026-11-21", kinds),
                       "s3": ("reference", "2026-11-21", kinds), "s4": (VENDOR, "2026-11-21", kinds),
                       "s5": ("reference+kafka.safety-a,kafka.safety-b", "2026-11-21", kinds),
                       "older": ("reference", "2025-11-21", kinds)}
    (lost,) = table.filter("run_id = 's2' and kind = 'lost-write'").collect()
    assert lost.anomalies == 1 and lost.valid is False and lost.ok == 2 and lost.faults == {"kill": 1}
    assert json.loads(lost.witnesses)[0]["value"] == 1
    assert table.filter("run_id = 's1' and anomalies > 0").count() == 0


def test_the_report_has_one_row_per_anomaly_kind_target_and_night(nights):
    summary = nights["summary"]
    rows = {(r["target"], r["date"], r["kind"]): r for r in summary["safety"]}
    night2 = rows[("reference", "2026-11-21", "lost-write")]
    assert (night2["runs"], night2["runs_with"], night2["anomalies"]) == (2, 1, 1)
    assert rows[("reference", "2026-11-20", "lost-write")]["anomalies"] == 0  # a clean night is zeros, not a gap
    assert rows[(VENDOR, "2026-11-21", "duplicate")]["runs"] == 1
    assert len([r for r in summary["safety"] if r["target"] == "reference"]) == 3 * len(checker.KINDS)
    kinds = [r["kind"] for r in summary["safety"] if r["target"] == "reference" and r["date"] == "2026-11-21"]
    assert kinds == list(checker.KINDS)  # the checker's order
    by_run = {r["run_id"]: r for r in summary["safety_runs"]}
    assert by_run["s2"]["by_kind"] == {"lost-write": 1} and by_run["s3"]["by_kind"] == {}
    assert by_run["s2"]["anomalies"] == 1 and by_run["s2"]["run_dir"].endswith("/runs/s2")
    page = (nights["out"] / "safety.html").read_text()
    assert "reference+kafka.safety-a,kafka.safety-b" in page and "lost-write 1" in page
    assert 'href="safety.html"' in (nights["out"] / "index.html").read_text()


def test_state_coverage_across_nights_and_the_cells_never_reached(nights):
    summary = nights["summary"]
    vendor = {r["date"]: r for r in summary["state_coverage"] if r["target"] == VENDOR}
    assert {d: (r["cells"], r["catalogue_reached"], r["catalogue"], r["mutants"]) for d, r in vendor.items()} == {
        "2026-11-20": (2, 1, 3, 100), "2026-11-21": (3, 1, 3, 150)}
    assert vendor["2026-11-21"]["transitions"] == 4 and vendor["2026-11-21"]["night_rank"] == 1
    assert [r["target"] for r in summary["state_coverage"] if r["target"] != VENDOR] == ["reference+rustlog.x"]
    cells = {r["clause"].rsplit(".", 1)[1]: r for r in summary["state_coverage_cells"] if r["target"] == VENDOR}
    assert cells["X"]["ever_reached"] and cells["X"]["reached_on"] == ["2026-11-20"]
    assert not cells["X"]["latest_reached"] and cells["Y"]["latest_reached"]
    assert not cells["Z"]["ever_reached"] and cells["Z"]["reached_on"] == [] and cells["Z"]["nights"] == 2
    page = (nights["out"] / "coverage.html").read_text()
    assert "1 of 3 never reached" in page and "rustlog.errors.Z" in page


def test_a_result_json_cut_short_fails_the_ingestion_naming_it(spark, tmp_path):
    """It may be a safety run's that died writing it: the ingestion says so instead of skipping it unseen."""
    (tmp_path / "runs" / "cut").mkdir(parents=True)
    (tmp_path / "runs" / "cut" / "result.json").write_text('{"schema": "wirecheck.safety/1", "run_id": "cut", "va')
    with pytest.raises(ValueError, match="runs/cut/result.json is not valid JSON"):
        warehouse.ingest(spark, [str(tmp_path / "runs" / "*")], str(tmp_path / "wh"))
    assert not (tmp_path / "wh").exists()  # nothing written


def test_a_warehouse_of_safety_runs_alone_is_reported(spark, tmp_path):
    """A nightly that runs no suite, only ``wirecheck safety``: no case table, and still a report of its runs."""
    _safety_run(tmp_path / "runs", "alone", "2026-11-21T02:00:00Z", lose=True)
    wh, out = str(tmp_path / "wh"), tmp_path / "site"
    assert warehouse.ingest(spark, [str(tmp_path / "runs" / "*")], wh) == {"runs": 1, "cases": 0, "skipped": 0}
    summary = report.build_report(spark, wh, str(out))
    assert [r["run_id"] for r in summary["safety_runs"]] == ["alone"] and summary["matrix"] == []
    assert "lost-write 1" in (out / "safety.html").read_text()
