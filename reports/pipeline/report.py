"""The conformance report job: warehouse -> summary.json (SCHEMA.md) + static HTML site."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from reports.pipeline import conformance, warehouse
from reports.pipeline.catalogue import catalogue_frame

SUMMARY_SCHEMA = "wirecheck.summary/1"


def _rows(frame: DataFrame) -> list[dict]:
    return [row.asDict(recursive=True) for row in frame.collect()]


def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if isinstance(value, dt.datetime) else value


def summarise(spark: SparkSession, cases: DataFrame, window: int = 10) -> tuple[dict, list[dict]]:
    """(summary, failing case rows of each target's latest run)."""
    cases = cases.cache()
    protocols = [r.protocol for r in cases.select("protocol").distinct().collect() if r.protocol]
    catalogue = catalogue_frame(spark, protocols)
    runs = _rows(conformance.runs_of(cases).filter(F.col("run_rank") <= window).orderBy("target", "run_rank"))
    for run in runs:
        run["run_ts"] = _iso(run["run_ts"])
    latest = sorted({r["run_id"] for r in runs if r["run_rank"] == 1})
    regressions = []
    for run_id in latest:
        regressions += _rows(conformance.regressions(cases, run_id))
    summary = {
        "schema": SUMMARY_SCHEMA,
        "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "window": window,
        "targets": sorted({r["target"] for r in runs}),
        "runs": runs,
        "matrix": _rows(conformance.matrix(cases, window).orderBy("protocol", "clause", "target")),
        "coverage": _rows(conformance.coverage(cases, catalogue)),
        "uncatalogued": _rows(conformance.uncatalogued(cases, catalogue).orderBy("protocol", "clause")),
        "regressions": regressions,
        "flaky": _rows(conformance.flaky(cases)),
        "versions": _rows(conformance.version_matrix(cases, window).orderBy("target", "protocol", "api",
                                                                              "api_version")),
    }
    latest_pairs = {(r["target"], r["run_id"]) for r in runs if r["run_rank"] == 1}
    failing = [row for row in _rows(conformance.failing_cases(cases, latest)) if (row["target"], row["run_id"])
               in latest_pairs]
    summary["failing"] = [{k: row[k] for k in ("target", "run_id", "nodeid", "case", "clause", "verdict")}
                          for row in failing]
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


def build_report(spark: SparkSession, warehouse_path: str, out_dir: str, window: int = 10) -> dict:
    """Write summary.json and the site to ``out_dir`` (a local directory or any Hadoop URI)."""
    from reports.html.conformance import case_page_name, write_site
    from reports.pipeline import fs

    summary, failing = summarise(spark, warehouse.load_cases(spark, warehouse_path), window)
    _attach_transcripts(spark, warehouse_path, failing)
    for entry, row in zip(summary["failing"], failing):
        entry["page"] = case_page_name(row)
    with fs.local_output(spark, out_dir) as local:
        out = Path(local)
        (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
        write_site(summary, failing, out)
    return summary
