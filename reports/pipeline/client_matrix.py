"""The real-client matrix across targets and nights: target x protocol x client x scenario, with the latest verdict,
the client's version, the last verdicts (newest first) and when it failed first and since when it fails.

Only the real-client cases are read (case ids ``<protocol>.clients.<client>.<scenario>``), and only the columns
this view needs, with an explicit schema: warehouse files written before case records had ``facts`` read as null
there instead of hiding the column from every file. The rows are summed per (target, client, scenario, run) and
ranked in Spark; what is collected is one row per client and scenario (a few hundred at most).

Definitions (SCHEMA.md, ``clients``): several records of one scenario in one run give the worst verdict; a run
**failed** a scenario when its verdict is executed and not passing (``schema.EXECUTED``, ``schema.PASSING``); the
**failing streak** is the newest runs back to the last passing one (runs that did not execute, such as NOT-RUN or
TARGET-DOWN, neither break it nor count).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import MapType, StringType, StructField, StructType, TimestampType

from wirecheck.reports.pipeline import fs, warehouse
from wirecheck.reports.pipeline.conformance import severity
from wirecheck.reports.pipeline.schema import EXECUTED, PASSING

#: The warehouse columns the view reads (partition columns included, as Spark requires with a given schema).
CLIENT_COLUMNS = StructType([
    StructField("case", StringType()),
    StructField("verdict", StringType()),
    StructField("facts", MapType(StringType(), StringType())),
    StructField("run_ts", TimestampType()),
    StructField("date", StringType()),
    StructField("target", StringType()),
    StructField("run_id", StringType()),
])
CLIENT_CASE = r"^[^.]+\.clients\.[^.]+\.[^.]+$"
KEYS = ["target", "protocol", "client", "scenario"]


def read_client_cases(spark: SparkSession, warehouse_path: str) -> DataFrame:
    """The warehouse's real-client case rows, with only ``CLIENT_COLUMNS``."""
    return (spark.read.schema(CLIENT_COLUMNS).parquet(fs.join(warehouse_path, warehouse.CASES))
            .filter(F.col("case").rlike(CLIENT_CASE)))


def client_matrix(clients: DataFrame, history: int) -> DataFrame:
    """One row per (target, protocol, client, scenario): ``client_version``, ``latest_verdict``,
    ``latest_run_id``, ``latest_date`` (the newest run that has the scenario), ``history`` (the last ``history``
    runs, newest first: ``{date, run_id, verdict, client_version}``), ``runs``, ``failed_runs``,
    ``first_failed_date``/``first_failed_run_id`` (the oldest run that failed it) and
    ``failing_since_date``/``failing_since_run_id`` (the oldest run of the current failing streak; null when
    the newest executed run passed)."""
    parts = F.split("case", r"\.")
    per_run = (clients
               .select("target", parts[0].alias("protocol"), parts[2].alias("client"), parts[3].alias("scenario"),
                       "run_id", "run_ts", "date", "verdict", F.col("facts")["client_version"].alias("version"))
               .groupBy(*KEYS, "run_id")
               .agg(F.max_by("verdict", severity()).alias("verdict"), F.min("run_ts").alias("run_ts"),
                    F.min("date").alias("date"), F.max("version").alias("client_version")))
    newest_first = Window.partitionBy(*KEYS).orderBy(F.col("run_ts").desc_nulls_last(), F.col("run_id").desc())
    passed = F.col("verdict").isin(*PASSING)
    failed = F.col("verdict").isin(*EXECUTED) & ~passed
    ranked = (per_run.withColumn("n", F.row_number().over(newest_first))
              .withColumn("_last_pass", F.min(F.when(passed, F.col("n"))).over(Window.partitionBy(*KEYS))))
    in_streak = failed & (F.col("_last_pass").isNull() | (F.col("n") < F.col("_last_pass")))
    run = F.struct("date", "run_id")
    entry = F.struct("n", "date", "run_id", "verdict", "client_version")
    summed = ranked.groupBy(*KEYS).agg(
        F.min_by(F.struct("verdict", "run_id", "date", "client_version"), "n").alias("_latest"),
        # collect_list skips the nulls of runs beyond ``history``; sorting the structs sorts by n: newest first
        F.sort_array(F.collect_list(F.when(F.col("n") <= history, entry))).alias("_history"),
        F.count("*").alias("runs"),
        F.count(F.when(failed, 1)).alias("failed_runs"),
        F.max_by(run, F.when(failed, F.col("n"))).alias("_first_failed"),  # the largest n: the oldest run
        F.max_by(run, F.when(in_streak, F.col("n"))).alias("_since"))
    return summed.select(
        *KEYS, F.col("_latest.client_version").alias("client_version"),
        F.col("_latest.verdict").alias("latest_verdict"), F.col("_latest.run_id").alias("latest_run_id"),
        F.col("_latest.date").alias("latest_date"),
        F.transform("_history", lambda e: e.dropFields("n")).alias("history"), "runs", "failed_runs",
        F.col("_first_failed.date").alias("first_failed_date"),
        F.col("_first_failed.run_id").alias("first_failed_run_id"),
        F.col("_since.date").alias("failing_since_date"), F.col("_since.run_id").alias("failing_since_run_id"))
