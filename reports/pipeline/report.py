"""The conformance report job: warehouse -> summary.json (SCHEMA.md) + static HTML site with charts.

The case rows are summed once (``conformance.aggregate``); the window's summed rows, a few thousand, are collected
and the aggregate views are built from them (``summed_views``). The views that name single cases read only the
runs they need. The output is bounded: at most ``max_case_pages`` failing cases per run get a page (and an entry in
summary.json); the warehouse's Parquet tables keep every record.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from wirecheck.reports.pipeline import conformance, history, summed_views, warehouse
from wirecheck.reports.pipeline.catalogue import catalogue_rows, known_protocols
from wirecheck.reports.pipeline.schema import EXECUTED, PASSING

SUMMARY_SCHEMA = "wirecheck.summary/1"
MAX_CASE_PAGES = 200
#: Rows per group (target, kind of change) in the summary's long lists; the totals are always complete.
MAX_LIST_ROWS = 1000
#: The columns the views read: only these are cached (the long texts of failing cases are read by partition).
VIEW_COLUMNS = ("target", "run_id", "run_ts", "nodeid", "case", "protocol", "clause", "level", "requirement",
                "verdict", "message", "suite_version", "api", "api_version")


def _rows(frame: DataFrame) -> list[dict]:
    return _iso_rows(row.asDict(recursive=True) for row in frame.collect())


def _iso_rows(rows) -> list[dict]:
    return [{k: _iso(v) for k, v in row.items()} for row in rows]


def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if isinstance(value, dt.datetime) else value


def _bounded(frame: DataFrame, groups: list[str], order: list[str], limit: int) -> tuple[list[dict], dict]:
    """(at most ``limit`` rows per group, {"<group values>": total rows}).

    The totals are a count per group; the rows a row number filtered right above its window, which Spark
    turns into a top-``limit`` per group before the shuffle instead of sorting every row."""
    ranked = (frame.withColumn("_n", F.row_number().over(Window.partitionBy(*groups).orderBy(*order)))
              .filter(F.col("_n") <= limit))
    totals = {" ".join(str(row[g]) for g in groups): row["_total"]
              for row in _rows(frame.groupBy(*groups).agg(F.count("*").alias("_total")))}
    rows = []
    for row in _rows(ranked.orderBy(*groups, "_n")):
        row.pop("_n")
        rows.append(row)
    return rows, totals


def _pairs(spark: SparkSession, runs: list[dict], compare: tuple[str, str] | None = None) -> DataFrame:
    """(target, old_run_id, new_run_id): each target's two newest runs, or the two runs asked for."""
    if compare:
        return spark.createDataFrame([("*", *compare)], "target string, old_run_id string, new_run_id string")
    newest = {(r["target"], r["run_rank"]): r["run_id"] for r in runs}
    rows = [(t, newest[(t, 2)], run_id) for (t, rank), run_id in newest.items() if rank == 1 and (t, 2) in newest]
    return spark.createDataFrame(sorted(rows) or [("", "", "")], "target string, old_run_id string, new_run_id string")


def _of_runs(cases: DataFrame, run_ids) -> DataFrame:
    """Only the rows of these runs: ``run_id`` is a partition column, so Spark reads only their files."""
    return cases.filter(F.col("run_id").isin(*(sorted(run_ids) or [""])))


def window_of(summed: DataFrame, window: int) -> tuple[list[dict], list[dict], list[dict]]:
    """What the aggregate views read, collected from the summed frame (``conformance.aggregate``, cached):
    (each target's ``window`` newest runs with their ``run_rank``, 1 = newest; those runs' summed rows with
    their run's rank; one row per (protocol, clause) the records name, with the least ``level`` they give and
    whether any of them ``executed``). Each is small: bounded by runs, clauses and verdicts, not by cases."""
    run_times = summed.groupBy("target", "run_id").agg(F.min("run_ts").alias("run_ts"))
    ranked = [r for r in summed_views.rank_runs([row.asDict() for row in run_times.collect()])
              if r["run_rank"] <= window]
    rank_of = {(r["target"], r["run_id"]): r["run_rank"] for r in ranked}
    recent = [{**row.asDict(), "run_rank": rank_of[(row.target, row.run_id)]}
              for row in _of_runs(summed, {run_id for _, run_id in rank_of}).collect()
              if (row.target, row.run_id) in rank_of]
    clauses = summed.groupBy("protocol", "clause").agg(F.min("level").alias("level"),
                                                       F.bool_or(F.col("verdict").isin(*EXECUTED)).alias("executed"))
    return ranked, recent, [row.asDict() for row in clauses.collect()]


def summarise(spark: SparkSession, cases: DataFrame, window: int = 10, max_case_pages: int = MAX_CASE_PAGES,
              compare: tuple[str, str] | None = None, run_info: DataFrame | None = None) -> tuple[dict, list[dict]]:
    """(summary, failing case rows of each target's latest run, at most ``max_case_pages`` per run).

    The case rows are read a bounded number of times whatever the number of charts and pages: once, summed per
    (target, run, clause, verdict, ...), for every aggregate view (``window_of``); then only the runs each
    case-level view needs (the compared pairs, the window for flaky cases and histories,
    the latest runs for failing cases), which Parquet partition pruning keeps to those runs' files.
    """
    full = cases
    cases = cases.select(*VIEW_COLUMNS)
    summed = conformance.aggregate(cases).cache()
    ranked, recent, clauses = window_of(summed, window)
    summed.unpersist()
    runs = _iso_rows(ranked)
    ranks = spark.createDataFrame([(r["target"], r["run_id"], r["run_rank"]) for r in runs] or [("", "", 0)],
                                  "target string, run_id string, run_rank int")
    window_ids = {r["run_id"] for r in runs}
    latest = sorted({r["run_id"] for r in runs if r["run_rank"] == 1})
    latest_pairs = {(r["target"], r["run_id"]) for r in runs if r["run_rank"] == 1}
    protocols = sorted({r["protocol"] for r in clauses if r["protocol"]})
    catalogue = catalogue_rows([*known_protocols(), *protocols])

    # One frame of what changed between each target's two newest runs: the comparison and the regressions.
    pairs = _pairs(spark, runs)
    pair_ids = {r["run_id"] for r in runs if r["run_rank"] <= 2}
    changes = history.compare(_of_runs(cases, pair_ids), pairs).cache()
    regressions = (changes.filter((F.col("old_verdict") == "OK")
                                  & ~F.col("new_verdict").isin(*PASSING, *conformance.NO_ANSWER))
                   .select("target", "protocol", "clause", "case", "nodeid",
                           F.col("old_run_id").alias("baseline_run_id"),
                           F.col("old_verdict").alias("baseline_verdict"), F.col("new_run_id").alias("run_id"),
                           F.col("new_verdict").alias("verdict"), "message")
                   .orderBy("target", "nodeid"))
    compared = changes
    if compare:  # an explicit pair compares the same cases whatever their targets are called
        compared = history.compare(_of_runs(cases, compare).withColumn("target", F.lit("*")), _pairs(spark, runs, compare))
    summary = {
        "schema": SUMMARY_SCHEMA,
        "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "window": window,
        "targets": sorted({r["target"] for r in runs}),
        "runs": runs,
        "run_info": [] if run_info is None else _rows(_of_runs(run_info, window_ids)
                                                      .orderBy(F.col("started_ts").desc_nulls_last())),
        "trend": _iso_rows(summed_views.trend(recent)),
        "verdict_totals": summed_views.verdict_totals(recent),
        "matrix": summed_views.matrix(recent),
        "coverage": summed_views.coverage(clauses, catalogue),
        "uncatalogued": summed_views.uncatalogued(clauses, catalogue),
        "regressions": _rows(regressions),
        "versions": summed_views.version_matrix(recent),
        "failing_total": summed_views.failing_totals(recent, conformance.FAILING, latest_pairs),
    }
    summary["comparison"], summary["comparison_total"] = _bounded(
        compared.drop("case", "message"), ["target", "change"], ["nodeid"], MAX_LIST_ROWS)
    changes.unpersist()
    # flaky cases: within the window's runs, like every other view of the report
    in_window = _of_runs(cases, window_ids).join(F.broadcast(ranks.drop("run_rank")), ["target", "run_id"],
                                                 "left_semi")
    flaky = conformance.flaky(conformance.flaky_candidates(in_window)).cache()
    summary["flaky"], summary["flaky_total"] = _bounded(flaky, ["target"], ["nodeid"], MAX_LIST_ROWS)
    flaky.unpersist()
    # the failing cases of each target's latest run: a top-N per run (no sort of every failing row); how many
    # there are comes from the summed frame
    by_run = Window.partitionBy("target", "run_id").orderBy("protocol", "clause", "nodeid")
    failing_rows = (conformance.failing_cases(full, latest).withColumn("_n", F.row_number().over(by_run))
                    .filter(F.col("_n") <= max_case_pages).drop("_n"))
    failing = [row for row in _rows(failing_rows.orderBy("target", "protocol", "clause", "nodeid"))
               if (row["target"], row["run_id"]) in latest_pairs]
    keys = sorted({(row["target"], row["nodeid"]) for row in failing})
    case_runs: dict[tuple, list[dict]] = {}
    if keys:
        keyframe = spark.createDataFrame(keys, "target string, nodeid string")
        for row in _rows(history.case_history(_of_runs(cases, window_ids), keyframe, ranks).orderBy("run_rank")):
            case_runs.setdefault((row["target"], row["nodeid"]), []).append(row)
    for row in failing:
        row["history"] = case_runs.get((row["target"], row["nodeid"]), [])
    summary["failing"] = [{k: row[k] for k in ("target", "run_id", "nodeid", "case", "clause", "verdict")}
                          for row in failing]
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
