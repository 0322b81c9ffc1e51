"""Conformance views and the CI gate over a small, known history (tests/pipeline/runs.py::write_history)."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from wirecheck.reports.pipeline import conformance, warehouse
from wirecheck.reports.pipeline.__main__ import main
from wirecheck.reports.pipeline.catalogue import catalogue_frame
from tests.pipeline.runs import FRAMING, OVERSIZE, UTF8, VENDOR, ZERO, case, write_run


def _cases(spark, history):
    return warehouse.load_cases(spark, str(history / "wh"))


def test_matrix_latest_verdict_worst_of_parameters_and_pass_rate(spark, history):
    m = conformance.matrix(_cases(spark, history), window=10).filter(F.col("target") == VENDOR)
    expected = spark.createDataFrame(
        [(OVERSIZE, "FAILED", "r2", 0.5, 2), (UTF8, "OK", "r2", 0.5, 2), (ZERO, "NON-STRICT", "r2", 1.0, 2)],
        "clause string, latest_verdict string, latest_run_id string, pass_rate double, runs long")
    assertDataFrameEqual(m.select("clause", "latest_verdict", "latest_run_id", "pass_rate", "runs"), expected,
                         checkRowOrder=False)


def test_window_of_one_run_forgets_older_runs(spark, history):
    m = conformance.matrix(_cases(spark, history), window=1).filter(F.col("clause") == UTF8)
    assert [(r.pass_rate, r.runs) for r in m.collect()] == [(1.0, 1)]


def test_regressions_are_ok_then_failed_only(spark, history):
    reg = conformance.regressions(_cases(spark, history), "r2")
    assert [(r.nodeid, r.baseline_run_id, r.baseline_verdict, r.verdict) for r in reg.collect()] == [
        (f"{FRAMING}::test_oversize", "r1", "OK", "FAILED")]
    # against itself nothing regresses
    assert conformance.regressions(_cases(spark, history), "r2", baseline_run_id="r2").count() == 0


def test_flaky_cases_have_mixed_verdicts(spark, history):
    flaky = conformance.flaky(_cases(spark, history))
    assert sorted((r.nodeid, tuple(sorted(r.verdicts.items()))) for r in flaky.collect()) == [
        (f"{FRAMING}::test_oversize", (("FAILED", 1), ("OK", 1))),
        (f"{FRAMING}::test_utf8", (("FAILED", 1), ("OK", 1)))]


def test_version_matrix_and_reference_target_name(spark, history):
    versions = conformance.version_matrix(_cases(spark, history))
    expected = spark.createDataFrame([("reference", "Produce", 3, "OK"), ("reference", "Produce", 9, "FAILED")],
                                     "target string, api string, api_version long, latest_verdict string")
    assertDataFrameEqual(versions.select("target", "api", "api_version", "latest_verdict"), expected,
                         checkRowOrder=False)


def test_coverage_per_level_tolerates_missing_catalogues(spark, history):
    cases = _cases(spark, history)
    catalogue = catalogue_frame(spark, ["barco", "nosuchprotocol"])
    rows = {(r.protocol, r.level): r for r in conformance.coverage(cases, catalogue).collect()}
    must = rows[("rustlog", "MUST")]
    assert must.catalogue_present and must.catalogued > 3
    n_must = catalogue.filter("protocol = 'rustlog' and level = 'MUST'").count()
    exercised_must = catalogue.filter(F.col("clause").isin(ZERO, OVERSIZE, UTF8) & (F.col("level") == "MUST")).count()
    assert (must.catalogued, must.exercised) == (n_must, exercised_must)
    assert rows[("barco", "MUST")].catalogued is None or rows[("barco", "MUST")].catalogue_present
    assert not any(p == "nosuchprotocol" for p, _ in rows)  # no records, nothing to count


def test_gate_fails_on_regression_and_on_an_empty_run(spark, history, capsys):
    wh = str(history / "wh")
    assert main(["gate", "--warehouse", wh, "--run", "r2"], spark=spark) == 1
    assert "REGRESSION (FAILED) 127.0.0.1:9092" in capsys.readouterr().out
    assert main(["gate", "--warehouse", wh, "--run", "r3"], spark=spark) == 0
    assert main(["gate", "--warehouse", wh], spark=spark) == 1  # newest is r4: only NOT-RUN
    assert "executed no case" in capsys.readouterr().out
    assert main(["gate", "--warehouse", wh, "--run", "no-such-run"], spark=spark) == 1


def test_report_writes_summary_and_pages(report):
    out = report
    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema"] == "wirecheck.summary/1"
    assert summary["targets"] == ["127.0.0.1:9092", "none", "reference"]  # barco and kafka: both reference
    assert [r["nodeid"] for r in summary["regressions"]] == [f"{FRAMING}::test_oversize"]
    failing = {f["nodeid"]: f for f in summary["failing"]}
    assert set(failing) == {f"{FRAMING}::test_oversize", f"{FRAMING}::test_zero[b]",
                            "suites/kafka/test_produce.py::test_v[9]"}
    page = (out / failing[f"{FRAMING}::test_oversize"]["page"]).read_text()
    assert "stayed open after an oversize frame" in page and "0000000f7b" in page  # message and transcript hex
    assert (out / failing[f"{FRAMING}::test_oversize"]["page"]).with_suffix(".pcap").exists()
    index = (out / "index.html").read_text()
    assert "http://" not in index and "https://" not in index


def test_gate_with_an_explicit_baseline_compares_the_same_cases_whatever_the_target(spark, tmp_path, capsys):
    """A run against a faulted reference broker, gated against a clean one: the targets' names differ."""
    from tests.pipeline.runs import REFERENCE_ADDRESS

    clean = {"*": {"address": "reference broker", "reference": True, "faults": []}}
    faulted = {"*": {"address": "reference broker", "reference": True, "faults": ["zero-ok"]}}
    nodes = [f"{FRAMING}::test_{n}" for n in ("a", "b", "c")]
    write_run(tmp_path / "runs", "clean", [case("clean", n, "OK", target=REFERENCE_ADDRESS) for n in nodes],
              started_at="2026-11-21T10:00:00Z", targets=clean)
    write_run(tmp_path / "runs", "faulted",
              [case("faulted", nodes[0], "FAILED", target=REFERENCE_ADDRESS),
               case("faulted", nodes[1], "ERROR", target=REFERENCE_ADDRESS),
               case("faulted", nodes[2], "OK", target=REFERENCE_ADDRESS)],
              started_at="2026-11-21T11:00:00Z", targets=faulted)
    wh = str(tmp_path / "wh")
    warehouse.ingest(spark, [str(tmp_path / "runs" / "*")], wh)
    capsys.readouterr()
    assert main(["gate", "--warehouse", wh, "--run", "faulted", "--baseline", "clean"], spark=spark) == 1
    out = capsys.readouterr().out
    assert "2 regression(s)" in out
    assert f"REGRESSION (FAILED) reference+zero-ok {nodes[0]}" in out
    assert f"REGRESSION (ERROR) reference+zero-ok {nodes[1]}" in out


def test_ok_then_error_or_target_down_is_a_regression_not_run_is_not(spark, tmp_path, capsys):
    nodes = [f"{FRAMING}::test_{n}" for n in ("a", "b", "c")]
    write_run(tmp_path / "runs", "before", [case("before", n, "OK") for n in nodes], started_at="2026-11-21T10:00:00Z")
    write_run(tmp_path / "runs", "after", [case("after", nodes[0], "ERROR"), case("after", nodes[1], "TARGET-DOWN"),
                                           case("after", nodes[2], "NOT-RUN")], started_at="2026-11-21T11:00:00Z")
    wh = str(tmp_path / "wh")
    warehouse.ingest(spark, [str(tmp_path / "runs" / "*")], wh)
    capsys.readouterr()
    assert main(["gate", "--warehouse", wh], spark=spark) == 1
    out = capsys.readouterr().out
    assert "(ERROR)" in out and "(TARGET-DOWN)" in out and nodes[2] not in out


def test_gate_without_java_exits_3_with_one_line(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    result = subprocess.run([sys.executable, "-m", "wirecheck.reports.pipeline", "gate", "--warehouse", str(tmp_path / "wh")],
                            env=env, capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 3, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("wirecheck-pipeline:")]
    assert len(lines) == 1 and "Java" in lines[0] and "Traceback" not in result.stderr
