"""Safety runs (``wirecheck safety``) in the warehouse and the report: one row per run and anomaly kind, and the
views per target and night.

A safety run's directory holds ``result.json`` (reports/safety/report.py, ``"schema": "wirecheck.safety/1"``);
``ingest`` reads it beside the conformance runs' files. Result files written before the schema string existed
(no ``schema``, but a ``protocol`` and ``anomaly_counts``) are read too: their run id is the directory's name and
their time the file's.

Table ``safety/date=YYYY-MM-DD/target=<name>/run_id=<id>/``: for every kind the checker knows
(reports/safety/checker.py ``KINDS``) and any other kind the result names, one row with its count (0 included, so
a clean night is a row of zeros, not a gap) and its witnesses, plus the run's facts repeated (a dozen rows a run).
``target`` is named as in ``cases``: the address when the run named one, else ``reference`` or
``reference+<fault>,...``.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from wirecheck.reports.pipeline import fs, warehouse
from wirecheck.reports.pipeline.schema import SAFETY_RESULT
from wirecheck.reports.safety.checker import KINDS

SAFETY = "safety"
SCHEMA = "wirecheck.safety/1"
RESULT_FILE = "result.json"
ISO = "yyyy-MM-dd'T'HH:mm:ssXXX"
#: The per-run columns the report lists (the kind's own are ``kind``, ``anomalies``, ``witnesses``).
RUN_COLUMNS = ("target", "protocol", "run_id", "date", "run_ts", "target_address", "valid", "ok", "fail", "info",
               "acknowledged", "read_values", "restarts", "client_crashes", "seconds", "seed", "faults", "notes",
               "run_dir")


def _read(spark: SparkSession, files: list[str]) -> DataFrame:
    """Every file as read, safety result or not: ``_corrupt_record`` set for one that is not JSON, ``_safety``
    for a safety result; the run id of an older result is its directory's name, its ``finished_at`` the file's
    time (an older file is finished when written: a second ingestion skips it)."""
    schema = StructType([*SAFETY_RESULT.fields, StructField("_corrupt_record", StringType())])
    frame = (spark.read.schema(schema).option("multiLine", True).json(files)
             .withColumn("_file", F.col("_metadata.file_path"))
             .withColumn("_modified", F.col("_metadata.file_modification_time")))
    older = F.col("schema").isNull() & F.col("protocol").isNotNull() & F.col("anomaly_counts").isNotNull()
    return (frame.withColumn("_safety", F.coalesce((F.col("schema") == SCHEMA) | older, F.lit(False)))
            .withColumn("run_id", F.coalesce("run_id", F.regexp_extract(warehouse.dir_of(F.col("_file")),
                                                                         r"([^/]+)$", 1)))
            .withColumn("finished_at", F.coalesce("finished_at", F.date_format("_modified", ISO))))


def read_results(spark: SparkSession, files: list[str]) -> DataFrame:
    """The safety result files among ``files`` (result.json of any tool), with ``_file`` and ``_modified``."""
    return _read(spark, files).filter("_safety").drop("_safety", "_corrupt_record")


def identities(spark: SparkSession, files: list[str]) -> list[dict]:
    """(run_id, finished_at, file) of each safety result among ``files``, in one Spark job: what ``plan``
    decides on. A result.json that is not JSON fails naming it (it may be a safety run's, cut short: nothing is
    skipped unseen)."""
    if not files:
        return []
    rows = _read(spark, files).select("run_id", "finished_at", "_file", "_corrupt_record", "_safety").collect()
    for row in rows:
        if row._corrupt_record is not None:
            raise ValueError(f"{warehouse.hadoop_name(row._file)} is not valid JSON")
    return [{"run_id": r.run_id, "finished_at": r.finished_at, "file": warehouse.hadoop_name(r._file)}
            for r in rows if r._safety]


def stored(spark: SparkSession, warehouse_path: str) -> dict[str, str | None]:
    """run_id -> finished_at of the safety runs already in the warehouse."""
    table = fs.join(warehouse_path, SAFETY)
    if not fs.exists(spark, table):
        return {}
    rows = spark.read.parquet(table).select("run_id", "finished_at").distinct().collect()
    return {r.run_id: r.finished_at for r in rows}


def rows(results: DataFrame, ingested_at) -> DataFrame:
    """One row per run and anomaly kind (``read_results`` frames in)."""
    run_ts = F.coalesce(F.try_to_timestamp("started_at"), F.try_to_timestamp("finished_at"), F.col("_modified"))
    is_address = F.coalesce(F.col("target").rlike(warehouse.HOST_PORT), F.lit(False))
    kinds = F.array_distinct(F.concat(F.array(*[F.lit(k) for k in KINDS]),
                                      F.coalesce(F.map_keys("anomaly_counts"), F.array().cast("array<string>"))))
    counts = F.coalesce(F.col("counts"), F.create_map().cast("map<string,bigint>"))
    return (results
            .withColumn("run_ts", run_ts)
            .select("run_id", F.date_format("run_ts", "yyyy-MM-dd").alias("date"),
                    F.when(is_address, F.col("target")).otherwise(warehouse.reference_name(F.col("reference_faults")))
                    .alias("target"),
                    F.col("target").alias("target_address"), "protocol", "run_ts", "started_at", "finished_at",
                    "valid", *[F.coalesce(counts[t], F.lit(0)).alias(t) for t in ("ok", "fail", "info")],
                    "acknowledged", "read_values", "restarts", "client_crashes", "seconds", "seed",
                    F.col("fault_counts").alias("faults"), "notes", warehouse.dir_of(F.col("_file")).alias("run_dir"),
                    F.explode(kinds).alias("kind"), "anomaly_counts", F.col("anomalies").alias("_witnesses"))
            .withColumn("anomalies", F.coalesce(F.col("anomaly_counts")[F.col("kind")], F.lit(0)))
            .withColumn("witnesses", F.col("_witnesses")[F.col("kind")])  # the first ones, as JSON text
            .drop("anomaly_counts", "_witnesses")
            .withColumn("ingested_at", ingested_at))


# -- the report's views -------------------------------------------------------------------------------------------

def load(spark: SparkSession, warehouse_path: str) -> DataFrame | None:
    table = fs.join(warehouse_path, SAFETY)
    return spark.read.parquet(table) if fs.exists(spark, table) else None


def _in_window(frame: DataFrame, window: int) -> DataFrame:
    """The rows of each target's ``window`` newest nights (dates), with ``night_rank`` (1 = newest)."""
    newest = Window.partitionBy("target").orderBy(F.col("date").desc())
    return frame.withColumn("night_rank", F.dense_rank().over(newest)).filter(F.col("night_rank") <= window)


def nights(table: DataFrame, window: int) -> DataFrame:
    """One row per target, protocol, night and anomaly kind of each target's ``window`` newest nights: ``runs``,
    ``anomalies`` (summed over the night's runs) and ``runs_with`` (runs that had at least one)."""
    return (_in_window(table, window)
            .groupBy("target", "protocol", "date", "night_rank", "kind")
            .agg(F.count_distinct("run_id").alias("runs"), F.sum("anomalies").alias("anomalies"),
                 F.count_distinct(F.when(F.col("anomalies") > 0, F.col("run_id"))).alias("runs_with")))


def runs(table: DataFrame, window: int) -> DataFrame:
    """One row per safety run of the window: its facts, ``anomalies`` (total) and ``by_kind`` (kind -> count,
    the kinds that occurred)."""
    kept = _in_window(table, window)
    facts = [F.first(c).alias(c) for c in RUN_COLUMNS if c not in ("target", "run_id")]
    return (kept.groupBy("target", "run_id")
            .agg(*facts, F.sum("anomalies").alias("anomalies"),
                 F.map_from_entries(F.filter(F.collect_list(F.struct("kind", "anomalies")),
                                             lambda e: e["anomalies"] > 0)).alias("by_kind")))
