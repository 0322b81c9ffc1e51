"""Conformance views and the CI gate over a small, known history (tests/pipeline/runs.py::write_history)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from wirecheck.reports.html import conformance as html_conformance
from wirecheck.reports.pipeline import client_matrix, conformance, summed_views, warehouse
from wirecheck.reports.pipeline.__main__ import main
from wirecheck.reports.pipeline.catalogue import catalogue_rows, known_protocols
from wirecheck.reports.pipeline.report import _rows, window_of
from tests.pipeline.runs import BLOCKED_BY, FETCH, FRAMING, OVERSIZE, UTF8, VENDOR, ZERO, case, write_run


def _cases(spark, history):
    return warehouse.load_cases(spark, str(history / "wh"))


def _window(spark, history, window=10):
    """(runs, summed rows, clause rows) of the window, as the report collects them."""
    return window_of(conformance.aggregate(_cases(spark, history)), window)


def test_matrix_latest_verdict_worst_of_parameters_and_pass_rate(spark, history):
    _, recent, _ = _window(spark, history)
    columns = ["clause", "latest_verdict", "latest_run_id", "pass_rate", "runs", "blocked_by"]
    cells = {tuple(m[c] for c in columns) for m in summed_views.matrix(recent) if m["target"] == VENDOR}
    assert cells == {(OVERSIZE, "FAILED", "r2", 0.5, 2, None), (UTF8, "OK", "r2", 0.5, 2, None),
                     (ZERO, "NON-STRICT", "r2", 1.0, 2, None), (FETCH, "BLOCKED", "r2", None, 2, BLOCKED_BY)}


def test_window_of_one_run_forgets_older_runs(spark, history):
    runs, recent, _ = _window(spark, history, window=1)
    assert {r["run_rank"] for r in runs} == {1} and {r["run_rank"] for r in recent} == {1}
    cells = [m for m in summed_views.matrix(recent) if m["clause"] == UTF8]
    assert [(m["pass_rate"], m["runs"]) for m in cells] == [(1.0, 1)]


def test_runs_rank_newest_first_with_timeless_runs_last():
    t = dt.datetime(2026, 11, 21)
    runs = [{"target": "a", "run_id": "r1", "run_ts": t}, {"target": "a", "run_id": "r3", "run_ts": None},
            {"target": "a", "run_id": "r2", "run_ts": t + dt.timedelta(hours=1)},
            {"target": "a", "run_id": "r0", "run_ts": t}, {"target": "b", "run_id": "r1", "run_ts": t}]
    assert [(r["target"], r["run_id"], r["run_rank"]) for r in summed_views.rank_runs(runs)] == [
        ("a", "r2", 1), ("a", "r1", 2), ("a", "r0", 3), ("a", "r3", 4), ("b", "r1", 1)]


def test_ratios_round_half_up_like_spark():
    assert summed_views.ratio(12345, 100000) == 0.1235 and summed_views.ratio(1, 3) == 0.3333
    assert summed_views.ratio(0, 0) is None and summed_views.ratio(0, 5) == 0.0


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
    _, recent, _ = _window(spark, history)
    versions = [(v["target"], v["api"], v["api_version"], v["latest_verdict"])
                for v in summed_views.version_matrix(recent)]
    assert versions == [("reference", "Produce", 3, "OK"), ("reference", "Produce", 9, "FAILED")]


def _client_case(run_id: str, client_case: str, verdict: str, version: str | None, param: str = "") -> dict:
    protocol = client_case.split(".")[0]
    record = case(run_id, f"suites/{protocol}/test_clients.py::test_{client_case.split('.')[-1]}{param}", verdict,
                  protocol=protocol, clause=client_case,
                  target=VENDOR if protocol == "kafka" else "127.0.0.1:40003")
    record["case"] = client_case
    if version is not None:
        record["facts"] = {"client_version": version}
    return record


@pytest.fixture(scope="module")
def client_nights(spark, tmp_path_factory):
    """Three nightly runs on three dates, each against two targets: Kafka at a vendor's address and the
    reference broker's Fluvio. Ingested once, into a warehouse of their own."""
    root = tmp_path_factory.mktemp("client-nights")
    kcat, compression = "kafka.clients.kcat.produce-consume", "kafka.clients.kcat.compression"
    fluvio = "fluvio.clients.fluvio-python.produce-consume"
    nights = {
        "n1": [_client_case("n1", kcat, "OK", "1.7.0"), _client_case("n1", compression, "FAILED", "1.7.0"),
               _client_case("n1", fluvio, "OK", "0.21.0")],
        "n2": [_client_case("n2", kcat, "FAILED", "1.7.1"), _client_case("n2", compression, "OK", "1.7.1"),
               _client_case("n2", fluvio, "OK", "0.21.0", "[a]"),  # a parametrized scenario: the worst wins
               _client_case("n2", fluvio, "NON-STRICT", "0.21.0", "[b]"),
               case("n2", "suites/kafka/test_fetch.py::test_records", "FAILED", protocol="kafka",
                    clause="kafka.fetch.records")],  # not a real-client case
        "n3": [_client_case("n3", kcat, "FAILED", "1.7.1"), _client_case("n3", compression, "FAILED", "1.7.1"),
               _client_case("n3", fluvio, "TARGET-DOWN", None)],
    }
    targets = {"kafka": {"address": VENDOR, "reference": False, "faults": []},
               "fluvio": {"address": "127.0.0.1:40003", "reference": True, "faults": []}}
    for day, (run_id, records) in enumerate(sorted(nights.items()), 20):
        write_run(root / "runs", run_id, records, started_at=f"2026-11-{day}T02:00:00Z", targets=targets)
    warehouse.ingest(spark, [str(root / "runs" / "*")], str(root / "wh"))
    return str(root / "wh")


def test_client_matrix_across_targets_and_nights_has_latest_verdict_version_and_history(spark, client_nights):
    matrix = _rows(client_matrix.client_matrix(client_matrix.read_client_cases(spark, client_nights), history=2)
                   .orderBy(*client_matrix.KEYS))
    rows = {(r["target"], r["client"], r["scenario"]): r for r in matrix}
    assert sorted(rows) == [("127.0.0.1:9092", "kcat", "compression"), ("127.0.0.1:9092", "kcat", "produce-consume"),
                            ("reference", "fluvio-python", "produce-consume")]
    kcat = rows[("127.0.0.1:9092", "kcat", "produce-consume")]
    assert (kcat["protocol"], kcat["client_version"], kcat["latest_verdict"], kcat["latest_run_id"],
            kcat["latest_date"]) == ("kafka", "1.7.1", "FAILED", "n3", "2026-11-22")
    assert kcat["history"] == [  # the last two nights, newest first
        {"date": "2026-11-22", "run_id": "n3", "verdict": "FAILED", "client_version": "1.7.1"},
        {"date": "2026-11-21", "run_id": "n2", "verdict": "FAILED", "client_version": "1.7.1"}]
    assert (kcat["runs"], kcat["failed_runs"], kcat["first_failed_date"], kcat["failing_since_date"]) == (
        3, 2, "2026-11-21", "2026-11-21")
    # failed, passed, failed again: it first failed on the first night, and fails again since the last
    compression = rows[("127.0.0.1:9092", "kcat", "compression")]
    assert (compression["first_failed_run_id"], compression["failing_since_run_id"]) == ("n1", "n3")
    # never failed; the worst of a parametrized scenario's records; a night that did not run keeps no version
    fluvio = rows[("reference", "fluvio-python", "produce-consume")]
    assert [h["verdict"] for h in fluvio["history"]] == ["TARGET-DOWN", "NON-STRICT"]
    assert (fluvio["latest_verdict"], fluvio["client_version"], fluvio["protocol"]) == ("TARGET-DOWN", None, "fluvio")
    assert (fluvio["failed_runs"], fluvio["first_failed_date"], fluvio["failing_since_date"]) == (0, None, None)
    # the report page: a row per client and scenario, its last verdicts newest first
    page = html_conformance._clients({"clients": matrix})
    assert "<td>kcat</td><td>1.7.1</td><td>produce-consume</td>" in page
    assert page.index('title="2026-11-22 n3: FAILED (1.7.1)"') < page.index('title="2026-11-21 n2: FAILED (1.7.1)"')


def test_coverage_per_level_tolerates_missing_catalogues(spark, history):
    _, _, clauses = _window(spark, history)
    catalogue = catalogue_rows([*known_protocols(), "barco", "nosuchprotocol"])
    rows = {(r["protocol"], r["level"]): r for r in summed_views.coverage(clauses, catalogue)}
    must = rows[("rustlog", "MUST")]
    assert must["catalogue_present"] and must["catalogued"] > 3
    rustlog_must = {clause for protocol, clause, level, *_ in catalogue if (protocol, level) == ("rustlog", "MUST")}
    assert (must["catalogued"], must["exercised"]) == (len(rustlog_must), len(rustlog_must & {ZERO, OVERSIZE, UTF8}))
    assert rows[("barco", "MUST")]["catalogued"] is None or rows[("barco", "MUST")]["catalogue_present"]
    assert not any(p == "nosuchprotocol" for p, _ in rows)  # no records, nothing to count


def test_coverage_of_a_protocol_without_catalogue_counts_its_clauses_at_the_records_level():
    clauses = [{"protocol": "newproto", "clause": "newproto.a", "level": "MUST", "executed": True},
               {"protocol": "newproto", "clause": "newproto.b", "level": "SHOULD", "executed": True},
               {"protocol": "newproto", "clause": "newproto.c", "level": "MUST", "executed": False}]
    rows = summed_views.coverage(clauses, [("newproto", None, None, None, None)])
    assert [(r["level"], r["catalogued"], r["exercised"], r["catalogue_present"], r["coverage"]) for r in rows] == [
        ("MUST", None, 1, False, None), ("SHOULD", None, 1, False, None)]
    assert summed_views.uncatalogued(clauses, [("newproto", None, None, None, None)]) == []


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
    # the API support table across targets falls out of the per-version matrix
    assert summary["api_support"] == [{"target": "reference", "protocol": "kafka", "api": "Produce",
                                       "advertised": [3, 9], "working": [3], "failing": [9], "not_advertised": [],
                                       "untested": []}]
    [kcat] = summary["clients"]
    assert (kcat["target"], kcat["client"], kcat["client_version"], kcat["latest_verdict"], kcat["history"]) == (
        "reference", "kcat", "1.7.1", "OK",
        [{"date": "2026-11-21", "run_id": "r3", "verdict": "OK", "client_version": "1.7.1"}])
    assert "<td>kcat</td><td>1.7.1</td><td>produce-consume</td>" in index


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


@pytest.mark.parametrize("job", [
    ["ingest", "{tmp}/missing/*", "--warehouse", "{tmp}/wh"],
    ["gate", "--warehouse", "{tmp}/no-warehouse"],
    ["gate", "--warehouse", "{tmp}/wh", "--ingest", "{tmp}/missing/*"],
    ["report", "--warehouse", "{tmp}/no-warehouse", "--out", "{tmp}/site"],
    ["captures", "{tmp}/none.pcap", "--out", "{tmp}/captures"],
    ["ingest", "nosuchscheme://bucket/runs/*", "--warehouse", "{tmp}/wh"],
], ids=["ingest-nothing", "gate-no-warehouse", "gate-ingest-nothing", "report-no-warehouse", "captures-nothing",
        "unknown-file-system"])
def test_a_job_that_cannot_do_its_work_exits_3_with_one_line_never_1(spark, tmp_path, capsys, job):
    """Exit 1 is the gate's verdict: a missing input must not read as a regression in CI."""
    assert main([arg.format(tmp=tmp_path) for arg in job], spark=spark) == 3
    captured = capsys.readouterr()
    (line,) = [line for line in captured.err.splitlines() if line.startswith("wirecheck-pipeline")]
    assert line.startswith(f"wirecheck-pipeline {job[0]}: ") and "Traceback" not in captured.err
    assert any(word in line for word in ("missing", "no-warehouse", "none.pcap", "nosuchscheme")), line


def test_a_bad_port_is_a_usage_error_before_spark_starts(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["captures", "x.pcap", "--out", "out", "--port", "kafka"], spark=object())
    assert exited.value.code == 2 and "PROTOCOL=PORT" in capsys.readouterr().err
