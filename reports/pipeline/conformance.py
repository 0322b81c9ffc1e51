"""Conformance views over the warehouse's case rows (Spark built-in functions only, no Python UDFs).

Definitions (documented in SCHEMA.md):
- A run's time is its run.json ``started_at`` (the case's ``finished_at`` when run.json is missing).
- The window is the ``window`` most recent runs of each target.
- When several records of one clause (parametrized cases) meet in one run, the worst verdict wins
  (``schema.SEVERITY``): one failing parameter fails the clause.
- Pass rate = passing records (OK, NON-STRICT, XFAIL) / executed records (everything but NOT-RUN and
  UNIMPLEMENTED) in the window; null when nothing executed.
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


def worst_verdict(column: str = "verdict") -> Column:
    """Aggregate: the most severe verdict of a group."""
    return _map((v, k) for k, v in SEVERITY.items())[F.max(severity(column))]


def records(frame: DataFrame) -> Column:
    """How many case records a row stands for: 1 for a case row, ``records`` for a row of ``aggregate``."""
    return F.col("records") if "records" in frame.columns else F.lit(1)


#: The columns a row of ``aggregate`` keeps: enough for every view that does not name single cases.
AGGREGATE_KEYS = ("target", "run_id", "suite_version", "protocol", "clause", "level", "requirement", "api",
                  "api_version", "verdict")


def aggregate(cases: DataFrame) -> DataFrame:
    """Case rows summed over the cases of each (target, run, clause, verdict, ...): a few hundred rows per run
    instead of one per case. The matrix, trend, totals and coverage read the same answers from it as from the
    case rows; ``blocked_by`` is the message of BLOCKED records (what blocked the clause)."""
    # blocked_by is a grouping key (null but for BLOCKED records), not a min(): string aggregates would make
    # Spark sort every row instead of hashing them.
    blocked_by = F.when(F.col("verdict") == "BLOCKED", F.col("message")).alias("blocked_by")
    return (cases.groupBy(*AGGREGATE_KEYS, blocked_by)
            .agg(F.count("*").alias("records"), F.min("run_ts").alias("run_ts")))


def _executed() -> Column:
    return F.col("verdict").isin(*EXECUTED)


def _passing() -> Column:
    return F.col("verdict").isin(*PASSING)


def runs_of(cases: DataFrame) -> DataFrame:
    """One row per (target, run): the run's time and its rank within the target (1 = newest)."""
    per_run = cases.groupBy("target", "run_id").agg(F.min("run_ts").alias("run_ts"))
    order = Window.partitionBy("target").orderBy(F.col("run_ts").desc_nulls_last(), F.col("run_id").desc())
    return per_run.withColumn("run_rank", F.row_number().over(order))


def in_window(cases: DataFrame, window: int) -> DataFrame:
    """Only the rows of each target's ``window`` newest runs, with their run rank."""
    ranks = runs_of(cases).filter(F.col("run_rank") <= window).select("target", "run_id", "run_rank")
    return cases.join(ranks, ["target", "run_id"])


def _latest_and_rate(cases: DataFrame, keys: list[str], window: int, extra: list[Column] = ()) -> DataFrame:
    """Per key: the verdict of the newest run that has the key, and the pass rate over the window."""
    recent = in_window(cases, window)
    n = records(recent)
    per_run = recent.groupBy(*keys, "run_id", "run_rank").agg(
        worst_verdict().alias("run_verdict"),
        F.sum(F.when(_passing(), n).otherwise(0)).alias("passing"),
        F.sum(F.when(_executed(), n).otherwise(0)).alias("executed"),
        *extra,
    )
    extra_names = [c for c in per_run.columns if c not in {*keys, "run_id", "run_rank", "run_verdict", "passing", "executed"}]
    newest_first = F.struct(-F.col("run_rank"), F.col("run_verdict"), F.col("run_id"), *[F.col(c) for c in extra_names])
    return (per_run.groupBy(*keys)
            .agg(F.max(newest_first).alias("_latest"),
                 F.sum("passing").alias("passing"),
                 F.sum("executed").alias("executed"),
                 F.count("run_id").alias("runs"))
            .select(*keys,
                    F.col("_latest.run_verdict").alias("latest_verdict"),
                    F.col("_latest.run_id").alias("latest_run_id"),
                    *[F.col(f"_latest.{c}").alias(c) for c in extra_names],
                    F.when(F.col("executed") > 0, F.round(F.col("passing") / F.col("executed"), 4)).alias("pass_rate"),
                    "passing", "executed", "runs"))


def matrix(cases: DataFrame, window: int = 10) -> DataFrame:
    """target x protocol x clause -> latest verdict and pass rate over the window; ``blocked_by``: when the
    latest run's records of the clause were BLOCKED, what blocked them (the precondition and its clause)."""
    blocked = (F.col("blocked_by") if "blocked_by" in cases.columns
               else F.when(F.col("verdict") == "BLOCKED", F.col("message")))
    return _latest_and_rate(cases, ["target", "protocol", "clause"], window,
                            # min, not first: the same answer whatever order the rows arrive in (MUST before SHOULD)
                            extra=[F.min("level").alias("level"), F.min("requirement").alias("requirement"),
                                   F.min(blocked).alias("blocked_by")])


def version_matrix(cases: DataFrame, window: int = 10) -> DataFrame:
    """Kafka-like protocols: target x protocol x api x api_version -> latest verdict and pass rate."""
    versioned = cases.filter(F.col("api").isNotNull() & F.col("api_version").isNotNull())
    return _latest_and_rate(versioned, ["target", "protocol", "api", "api_version"], window)


def coverage(cases: DataFrame, catalogue: DataFrame) -> DataFrame:
    """Per protocol and level: clauses exercised / catalogued.

    ``catalogue`` has (protocol, clause, level) and one row (clause null) per protocol named in the records
    whose catalogue could not be loaded: there ``catalogued`` is null and ``exercised`` counts the distinct
    clauses the records name, at the level the records give.
    """
    exercised = (cases.filter(_executed()).select("protocol", "clause", F.col("level").alias("record_level"))
                 .dropDuplicates(["protocol", "clause"]))
    known = catalogue.filter(F.col("clause").isNotNull())
    with_catalogue = (known.join(exercised.select("protocol", "clause", F.lit(1).alias("hit")),
                                 ["protocol", "clause"], "left")
                      .groupBy("protocol", "level")
                      .agg(F.count("clause").alias("catalogued"), F.count("hit").alias("exercised"))
                      .withColumn("catalogue_present", F.lit(True)))
    missing = catalogue.filter(F.col("clause").isNull()).select("protocol").distinct()
    without_catalogue = (exercised.join(missing, "protocol", "left_semi")
                         .groupBy("protocol", F.col("record_level").alias("level"))
                         .agg(F.lit(None).cast("long").alias("catalogued"), F.count("clause").alias("exercised"))
                         .withColumn("catalogue_present", F.lit(False)))
    return (with_catalogue.unionByName(without_catalogue)
            .withColumn("coverage", F.when(F.col("catalogued") > 0,
                                           F.round(F.col("exercised") / F.col("catalogued"), 4)))
            .orderBy("protocol", "level"))


def uncatalogued(cases: DataFrame, catalogue: DataFrame) -> DataFrame:
    """Clauses the records name that their protocol's catalogue does not know (a stale case or catalogue)."""
    have = catalogue.filter(F.col("clause").isNotNull()).select("protocol")
    return (cases.join(have.distinct(), "protocol", "left_semi")
            .join(catalogue.select("protocol", "clause"), ["protocol", "clause"], "left_anti")
            .select("protocol", "clause").distinct())


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
            .filter((F.col("baseline_verdict") == "OK") & ~F.col("verdict").isin(*PASSING, *NO_ANSWER))
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
