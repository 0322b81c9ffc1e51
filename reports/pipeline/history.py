"""Case-level views across runs for the report: the two-run comparison and a case's history (the trend and the
verdict totals are built from the summed rows, in ``summed_views``)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from wirecheck.reports.pipeline.schema import PASSING

#: Verdicts that mean "this case did not hold" when comparing two runs (any verdict we do not know counts too).
NOT_HOLDING_KNOWN = ("FAILED", "ERROR", "XPASS")
NEUTRAL = ("NOT-RUN", "UNIMPLEMENTED")


def _kind(verdict):
    return (F.when(verdict.isNull(), F.lit("absent"))
            .when(verdict.isin(*PASSING), F.lit("holds"))
            .when(verdict.isin(*NEUTRAL), F.lit("not run"))
            .otherwise(F.lit("does not hold")))


def compare(cases: DataFrame, pairs: DataFrame) -> DataFrame:
    """What changed between two runs of each target, per case.

    ``pairs``: (target, old_run_id, new_run_id), a few rows. Rows: (target, old_run_id, new_run_id, nodeid,
    protocol, clause, case, message (the new run's), old_verdict, new_verdict, change) where change is ``regressed`` (held, now does not: FAILED, ERROR,
    XPASS or any other verdict such as TARGET-DOWN or BLOCKED), ``fixed`` (did not hold, holds now), ``new`` (not
    in the old run), ``gone`` (not in the new run); unchanged cases are left out.
    """
    cols = ["target", "run_id", "nodeid", "case", "protocol", "clause", "verdict", "message"]
    old = (cases.select(*cols).join(F.broadcast(pairs.withColumnRenamed("old_run_id", "run_id")), ["target", "run_id"])
           .select("target", "nodeid", F.col("protocol").alias("_p0"), F.col("clause").alias("_c0"),
                   F.col("case").alias("_case0"), F.col("verdict").alias("old_verdict"),
                   F.col("run_id").alias("old_run_id"), "new_run_id"))
    new = (cases.select(*cols).join(F.broadcast(pairs.withColumnRenamed("new_run_id", "run_id")), ["target", "run_id"])
           .select("target", "nodeid", "protocol", "clause", "case", "message",
                   F.col("verdict").alias("new_verdict"), F.col("run_id").alias("_new"),
                   F.col("old_run_id").alias("_old")))
    joined = old.join(new, ["target", "nodeid"], "full_outer")
    before, after = _kind(F.col("old_verdict")), _kind(F.col("new_verdict"))
    change = (F.when((before == "holds") & (after == "does not hold"), F.lit("regressed"))
              .when((before == "does not hold") & (after == "holds"), F.lit("fixed"))
              .when(before == "absent", F.lit("new"))
              .when(after == "absent", F.lit("gone")))
    return (joined.select("target", F.coalesce("old_run_id", "_old").alias("old_run_id"),
                          F.coalesce("_new", "new_run_id").alias("new_run_id"), "nodeid",
                          F.coalesce("protocol", "_p0").alias("protocol"), F.coalesce("clause", "_c0").alias("clause"),
                          F.coalesce("case", "_case0").alias("case"), "message",
                          "old_verdict", "new_verdict", change.alias("change"))
            .filter(F.col("change").isNotNull()))


def case_history(recent: DataFrame, keys: DataFrame, ranks: DataFrame | None = None) -> DataFrame:
    """(target, nodeid, run_id, run_ts, run_rank, verdict) of the given (target, nodeid) keys (a few).

    ``recent``: case rows with ``run_rank``, or case rows and ``ranks`` (target, run_id, run_rank) apart."""
    rows = recent.join(F.broadcast(keys), ["target", "nodeid"], "left_semi")
    if ranks is not None:
        rows = rows.join(F.broadcast(ranks), ["target", "run_id"])
    return rows.select("target", "nodeid", "run_id", "run_ts", "run_rank", "verdict")
