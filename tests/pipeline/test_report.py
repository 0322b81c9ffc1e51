"""The report's views across runs: trend, two-run comparison, case history, run metadata, bounded pages."""

from __future__ import annotations

import json

import pytest

from wirecheck.reports.pipeline.__main__ import main


def _summary(out):
    return json.loads((out / "summary.json").read_text())


def test_trend_and_run_metadata(report):
    summary = _summary(report)
    vendor = {r["run_id"]: r for r in summary["trend"] if r["target"] == "127.0.0.1:9092"}
    assert vendor["r1"]["passing"] == 2 and vendor["r1"]["executed"] == 3  # OK, OK, FAILED
    assert vendor["r2"]["pass_rate"] == 0.75  # OK, NON-STRICT, OK pass; FAILED does not
    info = {r["run_id"]: r for r in summary["run_info"]}
    assert info["r3"]["targets"]["kafka"]["reference"] is True and info["r1"]["profile"] == "ci"
    per_run = {(r["run_id"], r["verdict"]): r["records"] for r in summary["verdict_totals"]}
    assert per_run[("r2", "OK")] == 2 and per_run[("r2", "FAILED")] == 1


def test_comparison_of_each_targets_two_newest_runs(report):
    changes = {(c["nodeid"].split("::")[1], c["change"]) for c in _summary(report)["comparison"]}
    assert changes == {("test_oversize", "regressed"), ("test_utf8", "fixed"), ("test_zero[b]", "new")}
    page = (report / "compare.html").read_text()
    assert "Regressed (1)" in page and "Fixed (1)" in page and "test_oversize" in page


@pytest.fixture(scope="module")
def bounded(spark, history, tmp_path_factory):
    """One more report: an explicit pair of runs to compare and one case page per run."""
    out = tmp_path_factory.mktemp("bounded") / "site"
    assert main(["report", "--warehouse", str(history / "wh"), "--out", str(out), "--compare", "r1", "r2",
                 "--max-case-pages", "1"], spark=spark) == 0
    return out


def test_explicit_comparison_ignores_target_names(bounded):
    changes = {(c["target"], c["nodeid"].split("::")[1], c["change"]) for c in _summary(bounded)["comparison"]}
    assert ("*", "test_oversize", "regressed") in changes and ("*", "test_utf8", "fixed") in changes


def test_case_pages_are_bounded_per_run_and_show_history(bounded):
    out = bounded
    summary = _summary(out)
    vendor = [f for f in summary["failing"] if f["run_id"] == "r2"]
    assert len(vendor) == 1 and summary["failing_total"]["127.0.0.1:9092 r2"] == 2
    assert len(list((out / "cases").glob("*.html"))) == len(summary["failing"])
    assert "2 failing" in (out / "index.html").read_text()  # the note that pages were cut
    page = (out / vendor[0]["page"]).read_text()
    assert "<h2>History</h2>" in page and "<th>r1</th>" in page


def test_blocked_clause_shows_what_blocked_it(report):
    from tests.pipeline.runs import BLOCKED_BY, FETCH, VENDOR

    (cell,) = [m for m in _summary(report)["matrix"] if m["clause"] == FETCH and m["target"] == VENDOR]
    assert cell["latest_verdict"] == "BLOCKED" and cell["blocked_by"] == BLOCKED_BY
    assert cell["executed"] == 0 and cell["pass_rate"] is None  # never reached: not a pass and not a failure
    page = (report / "index.html").read_text()
    assert 'class="cell v-BLOCKED"' in page and f"BLOCKED by {BLOCKED_BY}" in page
    assert "not run against this target" not in page.split(FETCH, 1)[1].split("</tr>", 1)[0]


def test_regressions_are_listed_up_to_a_bound_with_their_total(spark, tmp_path, monkeypatch):
    """A target that died mid-run regresses every later case: the report lists the first ones, counts them all."""
    from wirecheck.reports.pipeline import report, warehouse
    from tests.pipeline.runs import case, write_run

    nodes = [f"suites/rustlog/test_framing.py::test_zero[{i}]" for i in range(5)]
    write_run(tmp_path / "runs", "before", [case("before", n, "OK") for n in nodes], started_at="2026-11-21T10:00:00Z")
    write_run(tmp_path / "runs", "after", [case("after", n, "TARGET-DOWN") for n in nodes],
              started_at="2026-11-21T11:00:00Z")
    wh, out = str(tmp_path / "wh"), tmp_path / "site"
    warehouse.ingest(spark, [str(tmp_path / "runs" / "*")], wh)
    monkeypatch.setattr(report, "MAX_LIST_ROWS", 2)
    summary = report.build_report(spark, wh, str(out))
    assert [r["nodeid"] for r in summary["regressions"]] == nodes[:2]
    assert list(summary["regressions_total"].values()) == [5]
    assert "5 regressions, the first 2 listed" in (out / "index.html").read_text()
