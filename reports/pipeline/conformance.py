"""Conformance views over the warehouse's case rows (Spark built-in functions only, no Python UDFs): the case
rows summed for the report's aggregate views (built by ``summed_views``), regressions, flaky and failing cases.

Definitions (documented in SCHEMA.md):
- A run's time is its run.json ``started_at`` (the case's ``finished_at`` when run.json is missing).
- The window is the ``window`` most recent runs of each target.
- When several records of one clause (parametrized cases) meet in one run, the worst verdict wins
  (``schema.SEVERITY``): one failing parameter fails the clause.
- Pass rate = passing records (``schema.PASSING``) / executed records (``schema.EXECUTED``) in the window;
  null when nothing executed.
"""

from __future__ import annotations

from itertools import chain

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from wirecheck.reports.pipeline.schema import EXECUTED, PASSING, SEVERITY


def _map(pairs) -> Column:
    return F.create_map(*[F.lit(x) for x in chain.from_iterable(pairs)])


def severity(column: str = "verdict") -> Column:
    by_verdict = _map(SEVERITY.items())
    return F.coalesce(by_verdict[F.col(column)], F.lit(SEVERITY["ERROR"]))  # an unknown verdict is suspect


#: The columns a row of ``aggregate`` keeps: enough for every view that does not name single cases.
AGGREGATE_KEYS = ("target", "run_id", "suite_version", "protocol", "clause", "level", "requirement", "api",
                  "api_version", "verdict")


def aggregate(cases: DataFrame) -> DataFrame:
    """Case rows summed over the cases of each (target, run, clause, verdict, ...): a few hundred rows per run
    instead of one per case, which the report's matrix, trend, totals and coverage are built from
    (``summed_views``); ``blocked_by`` is the message of BLOCKED records (what blocked the clause)."""
    # blocked_by is a grouping key (null but for BLOCKED records), not a min(): string aggregates would make
    # Spark sort every row instead of hashing them.
    blocked_by = F.when(F.col("verdict") == "BLOCKED", F.col("message")).alias("blocked_by")
    return (cases.groupBy(*AGGREGATE_KEYS, blocked_by)
            .agg(F.count("*").alias("records"), F.min("run_ts").alias("run_ts")))


def _executed() -> Column:
    return F.col("verdict").isin(*EXECUTED)


def runs_of(cases: DataFrame) -> DataFrame:
    """One row per (target, run): the run's time and its rank within the target (1 = newest)."""
    per_run = cases.groupBy("target", "run_id").agg(F.min("run_ts").alias("run_ts"))
    order = Window.partitionBy("target").orderBy(F.col("run_ts").desc_nulls_last(), F.col("run_id").desc())
    return per_run.withColumn("run_rank", F.row_number().over(order))


def latest_run_id(cases: DataFrame) -> str | None:
    row = cases.groupBy("run_id").agg(F.min("run_ts").alias("t")).orderBy(F.col("t").desc_nulls_last(),
                                                                          F.col("run_id").desc()).first()
    return None if row is None else row["run_id"]


def baseline_runs(cases: DataFrame, run_id: str) -> DataFrame:
    """For each target of ``run_id``: the newest earlier run of that target (target, baseline_run_id)."""
    ranked = runs_of(cases)
    current = ranked.filter(F.col("run_id") == run_id).select("target", F.col("run_rank").alias("current_rank"))
    earlier = ranked.join(current, "target").filter(F.col("run_rank") == F.col("current_rank") + 1)
    return earlier.select("target", F.col("run_id").alias("baseline_run_id"))


#: Verdicts that are no answer about the target (a case not run, or not written yet): never a regression.
NO_ANSWER = ("NOT-RUN", "UNIMPLEMENTED")


def is_regression(before: str, after: str) -> Column:
    """OK in the baseline, and now any verdict but a passing one or no answer (NOT-RUN, UNIMPLEMENTED)."""
    return (F.col(before) == "OK") & ~F.col(after).isin(*PASSING, *NO_ANSWER)


def regressions(cases: DataFrame, run_id: str, baseline_run_id: str | None = None) -> DataFrame:
    """Cases that were OK in the baseline and do not hold now: FAILED, ERROR, XPASS or any other verdict
    (TARGET-DOWN, BLOCKED, ...) but a passing one or NOT-RUN/UNIMPLEMENTED. ``verdict`` says which kind.

    Without an explicit baseline each target is compared with its own previous run. An explicit baseline
    compares the same cases (by nodeid) whatever the target is called in either run: a run against a faulted
    reference broker (``reference+fault``) against a clean one (``reference``) is exactly that case.
    """
    current = cases.filter(F.col("run_id") == run_id)
    if baseline_run_id is None:
        pairs = baseline_runs(cases, run_id).withColumnRenamed("target", "_target")
        before = (cases.join(pairs, (F.col("target") == F.col("_target"))
                             & (F.col("run_id") == F.col("baseline_run_id")))
                  .select("target", "nodeid", F.col("verdict").alias("baseline_verdict"), "baseline_run_id"))
        joined = current.join(before, ["target", "nodeid"])
    else:
        before = (cases.filter(F.col("run_id") == baseline_run_id)
                  .select("nodeid", F.col("verdict").alias("baseline_verdict"),
                          F.col("run_id").alias("baseline_run_id")))
        joined = current.join(before, ["nodeid"])
    return (joined
            .filter(is_regression("baseline_verdict", "verdict"))
            .select("target", "protocol", "clause", "case", "nodeid", "baseline_run_id", "baseline_verdict",
                    F.col("run_id"), "verdict", "message")
            .orderBy("target", "nodeid"))


def executed_count(cases: DataFrame, run_id: str) -> int:
    return cases.filter((F.col("run_id") == run_id) & _executed()).count()


def flaky(cases: DataFrame) -> DataFrame:
    """Cases with mixed executed verdicts for the same suite version and target, or FLAKY in one run (it failed,
    then passed when re-run). One aggregation per case: a count per executed verdict, kept where non-zero."""
    executed = cases.filter(_executed())
    counts = [F.count(F.when(F.col("verdict") == v, 1)).alias(f"_{i}") for i, v in enumerate(EXECUTED)]
    per_case = executed.groupBy("suite_version", "target", "protocol", "nodeid").agg(
        *counts, F.count("*").alias("records"))
    verdicts = F.map_filter(F.create_map(*chain.from_iterable((F.lit(v), F.col(f"_{i}"))
                                                              for i, v in enumerate(EXECUTED))),
                            lambda _, n: n > 0)
    distinct = sum((F.col(f"_{i}") > 0).cast("long") for i in range(len(EXECUTED)))
    return (per_case.select("suite_version", "target", "protocol", "nodeid", verdicts.alias("verdicts"),
                            distinct.alias("distinct_verdicts"), "records")
            .filter((F.col("distinct_verdicts") > 1) | F.col("verdicts").getItem("FLAKY").isNotNull()))


#: Verdicts whose cases get a page of their own in the report.
FAILING = ("FAILED", "ERROR", "XPASS", "NON-STRICT", "DIVERGENT")


def flaky_candidates(cases: DataFrame) -> DataFrame:
    """The rows of cases that may be flaky, found by numbers only: per hash of (suite version, target,
    protocol, nodeid), do the executed verdicts differ or is one FLAKY? Hashing and comparing numbers is much
    cheaper than grouping every case by its strings; a hash collision only lets a few more rows through to
    ``flaky``, which decides on the strings themselves."""
    key = F.xxhash64("suite_version", "target", "protocol", "nodeid").alias("_key")
    executed = cases.filter(_executed())
    rank = severity()
    flagged = (executed.groupBy(key)
               .agg(F.min(rank).alias("_low"), F.max(rank).alias("_high"),
                    F.max((F.col("verdict") == "FLAKY").cast("int")).alias("_flaky"))
               .filter((F.col("_low") != F.col("_high")) | (F.col("_flaky") == 1))
               .select("_key"))
    return executed.withColumn("_key", key).join(F.broadcast(flagged), "_key", "left_semi").drop("_key")


def failing_cases(cases: DataFrame, run_ids: list[str]) -> DataFrame:
    """The records (with transcripts) that did not pass, in the given runs: what gets a page of its own."""
    return cases.filter(F.col("run_id").isin(*run_ids) & F.col("verdict").isin(*FAILING))
