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

from wirecheck.reports.pipeline import (client_matrix, conformance, history, safety, state_coverage, summed_views,
                                       warehouse)
from wirecheck.reports.pipeline.catalogue import catalogue_rows, known_protocols
from wirecheck.reports.pipeline.schema import CASE_RECORD, EXECUTED

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


def _ranked(frame: DataFrame, groups: list[str], order: list[str], n: str = "_n", total: str = "_total") -> DataFrame:
    """``frame`` with ``n``, each row's number within its group (by ``order``), and ``total``, the rows of its
    group: filtered on ``n``, one query gives both a bounded list and the complete totals."""
    group = Window.partitionBy(*groups)
    return (frame.withColumn(n, F.row_number().over(group.orderBy(*order)))
            .withColumn(total, F.count("*").over(group)))


def _listed(rows: list[dict], groups: list[str], limit: int, columns: list[str]) -> tuple[list[dict], dict]:
    """(the rows of ``_ranked`` numbered up to ``limit``, ordered by group and number, with only ``columns``;
    {"<group values>": total rows}). Every group has a row numbered 1, so every total is seen."""
    listed = sorted((row for row in rows if row["_n"] <= limit),
                    key=lambda row: (*[(row[g] is not None, row[g]) for g in groups], row["_n"]))
    totals = {" ".join(str(row[g]) for g in groups): row["_total"] for row in listed if row["_n"] == 1}
    return [{c: row[c] for c in columns} for row in listed], totals


def _pairs(runs: list[dict]) -> list[tuple[str, str, str]]:
    """(target, old_run_id, new_run_id): each target's two newest runs."""
    newest = {(r["target"], r["run_rank"]): r["run_id"] for r in runs}
    return sorted((t, newest[(t, 2)], run_id) for (t, rank), run_id in newest.items() if rank == 1 and (t, 2) in newest)


def _changes(spark: SparkSession, cases: DataFrame, pairs: list[tuple[str, str, str]]) -> DataFrame:
    """``history.compare`` of these pairs, numbered per (target, change) by ``_ranked``, with ``_regression``
    and the regressions numbered per target (``_rn``, of ``_rtotal``): a target that died mid-run regresses
    every case after it, and the report lists the first ``MAX_LIST_ROWS`` (the gate lists them all).

    Only the pairs' runs are read; a target with a single run has no pair and adds nothing."""
    frame = spark.createDataFrame(pairs or [("", "", "")], "target string, old_run_id string, new_run_id string")
    changes = history.compare(_of_runs(cases, {run for _, *two in pairs for run in two}), frame)
    changes = (_ranked(changes, ["target", "change"], ["nodeid"])
               .withColumn("_regression", conformance.is_regression("old_verdict", "new_verdict")))
    return _ranked(changes, ["target", "_regression"], ["nodeid"], n="_rn", total="_rtotal")


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

    # What changed between each target's two newest runs, in one query: the comparison's and the regressions'
    # bounded lists, and their totals.
    changes = _rows(_changes(spark, cases, _pairs(runs))
                    .filter((F.col("_n") <= MAX_LIST_ROWS) | (F.col("_regression") & (F.col("_rn") <= MAX_LIST_ROWS))))
    regressions = sorted((row for row in changes if row["_regression"] and row["_rn"] <= MAX_LIST_ROWS),
                         key=lambda r: (r["target"], r["nodeid"]))
    if compare:  # an explicit pair compares the same cases whatever their targets are called
        compared = _rows(_changes(spark, cases.withColumn("target", F.lit("*")), [("*", *compare)])
                         .filter(F.col("_n") <= MAX_LIST_ROWS))
    else:
        compared = changes
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
        "regressions": [{"target": r["target"], "protocol": r["protocol"], "clause": r["clause"], "case": r["case"],
                         "nodeid": r["nodeid"], "baseline_run_id": r["old_run_id"],
                         "baseline_verdict": r["old_verdict"], "run_id": r["new_run_id"], "verdict": r["new_verdict"],
                         "message": r["message"]} for r in regressions],
        "regressions_total": {r["target"]: r["_rtotal"] for r in regressions if r["_rn"] == 1},
        "versions": summed_views.version_matrix(recent),
        "clients": [],  # build_report fills it: the real-client matrix reads the warehouse's client rows itself
        "failing_total": summed_views.failing_totals(recent, conformance.FAILING, latest_pairs),
    }
    summary["api_support"] = summed_views.api_support(summary["versions"])
    summary["comparison"], summary["comparison_total"] = _listed(
        compared, ["target", "change"], MAX_LIST_ROWS, ["target", "old_run_id", "new_run_id", "nodeid", "protocol",
                                                        "clause", "old_verdict", "new_verdict", "change"])
    # flaky cases: within the window's runs, like every other view of the report
    in_window = _of_runs(cases, window_ids).join(F.broadcast(ranks.drop("run_rank")), ["target", "run_id"],
                                                 "left_semi")
    flaky = conformance.flaky(conformance.flaky_candidates(in_window))
    summary["flaky"], summary["flaky_total"] = _listed(
        _rows(_ranked(flaky, ["target"], ["nodeid"]).filter(F.col("_n") <= MAX_LIST_ROWS)), ["target"],
        MAX_LIST_ROWS, flaky.columns)
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


def nights(spark: SparkSession, warehouse_path: str, window: int) -> dict:
    """The views across nights of the safety runs and of the state-coverage maps (SCHEMA.md): each table is
    summed in Spark, and what is collected is bounded by targets x nights x anomaly kinds or catalogue cells."""
    out: dict = {"safety": [], "safety_runs": [], "state_coverage": [], "state_coverage_cells": []}
    results = safety.load(spark, warehouse_path)
    if results is not None:
        order = {kind: n for n, kind in enumerate(safety.KINDS)}
        out["safety"] = sorted(_rows(safety.nights(results, window)),
                               key=lambda r: (r["target"], r["protocol"] or "", r["night_rank"],
                                              order.get(r["kind"], len(order)), r["kind"]))
        out["safety_runs"] = _rows(safety.runs(results, window)
                                   .orderBy("target", F.col("run_ts").desc_nulls_last(), "run_id"))
    maps = state_coverage.load(spark, warehouse_path)
    if maps is not None:
        out["state_coverage"] = _rows(state_coverage.nights(maps, window).orderBy("target", "protocol", "night_rank"))
        out["state_coverage_cells"] = _rows(state_coverage.catalogue_cells(maps, window)
                                            .orderBy("target", "protocol", "ever_reached", *state_coverage.CELL_KEY))
    return out


def build_report(spark: SparkSession, warehouse_path: str, out_dir: str, window: int = 10,
                 max_case_pages: int = MAX_CASE_PAGES, compare: tuple[str, str] | None = None) -> dict:
    """Write summary.json and the site to ``out_dir`` (a local directory or any Hadoop URI)."""
    from wirecheck.reports.html.conformance import case_page_name, write_site
    from wirecheck.reports.pipeline import fs

    runs = warehouse.load_runs(spark, warehouse_path)
    run_info = None if runs is None else runs.select("run_id", "suite_version", "started_at", "finished_at",
                                                     "started_ts", "profile", "strict", "argv", "targets", "totals")
    views = nights(spark, warehouse_path, window)
    # a warehouse of safety runs alone (a nightly that runs no suite) has no case table: an empty one reports them
    no_cases = (views["safety_runs"] or views["state_coverage"]) and not fs.exists(
        spark, fs.join(warehouse_path, warehouse.CASES))
    cases = (warehouse.prepare_cases(spark.createDataFrame([], CASE_RECORD), None) if no_cases
             else warehouse.load_cases(spark, warehouse_path))
    summary, failing = summarise(spark, cases, window, max_case_pages, compare, run_info)
    if not no_cases:
        clients = client_matrix.client_matrix(client_matrix.read_client_cases(spark, warehouse_path), window)
        summary["clients"] = _rows(clients.orderBy(*client_matrix.KEYS))
    summary.update(views)
    _attach_transcripts(spark, warehouse_path, failing)
    for entry, row in zip(summary["failing"], failing):
        entry["page"] = case_page_name(row)
    with fs.local_output(spark, out_dir) as local:
        out = Path(local)
        (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
        write_site(summary, failing, out)
    return summary
