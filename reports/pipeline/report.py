"""The conformance report job: warehouse -> summary.json (SCHEMA.md) + static HTML site with charts.

The rows of each target's ``window`` newest runs are computed once and cached; every view reads them. The
output is bounded: at most ``max_case_pages`` failing cases per run get a page (and an entry in
summary.json); the warehouse's Parquet tables keep every record.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from wirecheck.reports.pipeline import conformance, history, warehouse
from wirecheck.reports.pipeline.catalogue import catalogue_frame

SUMMARY_SCHEMA = "wirecheck.summary/1"
MAX_CASE_PAGES = 200
#: Rows per group (target, kind of change) in the summary's long lists; the totals are always complete.
MAX_LIST_ROWS = 1000
#: The columns the views read: only these are cached (the long texts of failing cases are read by partition).
VIEW_COLUMNS = ("target", "run_id", "run_ts", "nodeid", "case", "protocol", "clause", "level", "requirement",
                "verdict", "message", "suite_version", "api", "api_version")


def _rows(frame: DataFrame) -> list[dict]:
    return [{k: _iso(v) for k, v in row.asDict(recursive=True).items()} for row in frame.collect()]


def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if isinstance(value, dt.datetime) else value


def _bounded(frame: DataFrame, groups: list[str], order: list[str], limit: int) -> tuple[list[dict], dict]:
    """(at most ``limit`` rows per group, {"<group values>": total rows}) in one job."""
    by_group = Window.partitionBy(*groups)
    ranked = (frame.withColumn("_n", F.row_number().over(by_group.orderBy(*order)))
              .withColumn("_total", F.count("*").over(by_group)).filter(F.col("_n") <= limit))
    rows, totals = [], {}
    for row in _rows(ranked.orderBy(*groups, "_n")):
        totals[" ".join(str(row[g]) for g in groups)] = row.pop("_total")
        row.pop("_n")
        rows.append(row)
    return rows, totals


def _pairs(spark: SparkSession, runs: list[dict], compare: tuple[str, str] | None):
    """(target, old_run_id, new_run_id): each target's two newest runs, or the two runs asked for."""
    if compare:
        return spark.createDataFrame([("*", *compare)], "target string, old_run_id string, new_run_id string")
    newest = {(r["target"], r["run_rank"]): r["run_id"] for r in runs}
    rows = [(t, newest[(t, 2)], run_id) for (t, rank), run_id in newest.items() if rank == 1 and (t, 2) in newest]
    return spark.createDataFrame(sorted(rows) or [("", "", "")], "target string, old_run_id string, new_run_id string")


def summarise(spark: SparkSession, cases: DataFrame, window: int = 10, max_case_pages: int = MAX_CASE_PAGES,
              compare: tuple[str, str] | None = None, run_info: DataFrame | None = None) -> tuple[dict, list[dict]]:
    """(summary, failing case rows of each target's latest run, at most ``max_case_pages`` per run)."""
    full = cases
    cases = cases.select(*VIEW_COLUMNS).cache()
    recent = conformance.in_window(cases, window).cache()
    protocols = [r.protocol for r in cases.select("protocol").distinct().collect() if r.protocol]
    catalogue = catalogue_frame(spark, protocols)
    runs = _rows(conformance.runs_of(cases).filter(F.col("run_rank") <= window).orderBy("target", "run_rank"))
    latest = sorted({r["run_id"] for r in runs if r["run_rank"] == 1})
    latest_pairs = {(r["target"], r["run_id"]) for r in runs if r["run_rank"] == 1}
    regressions = []
    for run_id in latest:
        regressions += _rows(conformance.regressions(cases, run_id))
    compared = cases
    if compare:  # an explicit pair compares the same cases whatever their targets are called
        compared = cases.filter(F.col("run_id").isin(*compare)).withColumn("target", F.lit("*"))
    summary = {
        "schema": SUMMARY_SCHEMA,
        "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "window": window,
        "targets": sorted({r["target"] for r in runs}),
        "runs": runs,
        "run_info": [] if run_info is None else _rows(run_info.filter(F.col("run_id").isin(
            *{r["run_id"] for r in runs} or {""})).orderBy(F.col("started_ts").desc_nulls_last())),
        "trend": _rows(history.trend(recent).orderBy("target", "run_rank")),
        "verdict_totals": _rows(history.verdict_totals(recent).orderBy("target", "run_rank", "protocol", "verdict")),
        "matrix": _rows(conformance.matrix(cases, window).orderBy("protocol", "clause", "target")),
        "coverage": _rows(conformance.coverage(cases, catalogue)),
        "uncatalogued": _rows(conformance.uncatalogued(cases, catalogue).orderBy("protocol", "clause")),
        "regressions": regressions,
        "flaky": _rows(conformance.flaky(cases)),
        "versions": _rows(conformance.version_matrix(cases, window).orderBy("target", "protocol", "api",
                                                                              "api_version")),
    }
    summary["comparison"], summary["comparison_total"] = _bounded(
        history.compare(compared, _pairs(spark, runs, compare)), ["target", "change"], ["nodeid"], MAX_LIST_ROWS)
    summary["flaky"], summary["flaky_total"] = _bounded(conformance.flaky(cases), ["target"], ["nodeid"],
                                                        MAX_LIST_ROWS)
    by_run = Window.partitionBy("target", "run_id").orderBy("protocol", "clause", "nodeid")
    failing_rows = (conformance.failing_cases(full, latest)
                    .withColumn("_n", F.row_number().over(by_run))
                    .withColumn("_total", F.count("*").over(Window.partitionBy("target", "run_id"))))
    failing = [row for row in _rows(failing_rows.filter(F.col("_n") <= max_case_pages)
                                    .orderBy("target", "protocol", "clause", "nodeid"))
               if (row["target"], row["run_id"]) in latest_pairs]
    summary["failing_total"] = {f"{row['target']} {row['run_id']}": row["_total"] for row in failing}
    keys = sorted({(row["target"], row["nodeid"]) for row in failing})
    case_runs: dict[tuple, list[dict]] = {}
    if keys:
        keyframe = spark.createDataFrame(keys, "target string, nodeid string")
        for row in _rows(history.case_history(recent, keyframe).orderBy("run_rank")):
            case_runs.setdefault((row["target"], row["nodeid"]), []).append(row)
    for row in failing:
        row["history"] = case_runs.get((row["target"], row["nodeid"]), [])
    summary["failing"] = [{k: row[k] for k in ("target", "run_id", "nodeid", "case", "clause", "verdict")}
                          for row in failing]
    recent.unpersist()
    cases.unpersist()
    return summary, failing


def _attach_transcripts(spark: SparkSession, warehouse_path: str, failing: list[dict]) -> None:
    """Add ``transcript_json`` to the failing rows, reading only their runs' transcripts."""
    wanted = {(row["run_id"], row["transcript"]) for row in failing if row.get("transcript")}
    texts = {}
    if wanted:
        keys = spark.createDataFrame(sorted(wanted), "run_id string, transcript string")
        found = warehouse.with_transcripts(spark, warehouse_path, keys)
        texts = {(r.run_id, r.transcript): r.transcript_json for r in found.collect()}
    for row in failing:
        row["transcript_json"] = texts.get((row["run_id"], row.get("transcript")))


def build_report(spark: SparkSession, warehouse_path: str, out_dir: str, window: int = 10,
                 max_case_pages: int = MAX_CASE_PAGES, compare: tuple[str, str] | None = None) -> dict:
    """Write summary.json and the site to ``out_dir`` (a local directory or any Hadoop URI)."""
    from wirecheck.reports.html.conformance import case_page_name, write_site
    from wirecheck.reports.pipeline import fs

    runs = warehouse.load_runs(spark, warehouse_path)
    run_info = None if runs is None else runs.select("run_id", "suite_version", "started_at", "finished_at",
                                                     "started_ts", "profile", "strict", "argv", "targets", "totals")
    summary, failing = summarise(spark, warehouse.load_cases(spark, warehouse_path), window, max_case_pages,
                                 compare, run_info)
    _attach_transcripts(spark, warehouse_path, failing)
    for entry, row in zip(summary["failing"], failing):
        entry["page"] = case_page_name(row)
    with fs.local_output(spark, out_dir) as local:
        out = Path(local)
        (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
        write_site(summary, failing, out)
    return summary
