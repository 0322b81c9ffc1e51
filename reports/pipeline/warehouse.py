"""The run warehouse: per-case records of many runs, as Parquet partitioned by date and target.

Layout under the warehouse root (any path Spark can write)::

    cases/date=YYYY-MM-DD/target=<name>/part-*.parquet   one row per (run_id, nodeid)
    runs/date=YYYY-MM-DD/part-*.parquet                   one row per run_id

Ingesting a run directory twice leaves the same rows: rows are keyed by (run_id, nodeid), the newest ingestion
wins, and only the partitions the ingested runs touch are rewritten (dynamic partition overwrite).

``target`` is a stable name, not the address: the bundled reference broker listens on an ephemeral port, so
its address changes every run. A case whose run.json marks its protocol's target as the reference broker gets
``reference`` (``reference+<fault>,...`` when faults were injected, a different target on purpose); any other
target keeps its ``host:port``. The raw address stays in ``target_address``.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from reports.pipeline.schema import CASE_RECORD, NO_TARGET, RUN_RECORD

CASES = "cases"
RUNS = "runs"
CASE_PARTITIONS = ["date", "target"]


# -- file system helpers (Hadoop's, so that any Spark-readable path works) ------------------------------------

def _fs_path(spark: SparkSession, path: str):
    jvm = spark.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hpath


def expand(spark: SparkSession, pattern: str) -> list[str]:
    """Paths matching a glob (or the path itself if it exists); empty when nothing matches."""
    fs, hpath = _fs_path(spark, pattern)
    statuses = fs.globStatus(hpath)
    return [] if statuses is None else sorted(str(s.getPath().toString()) for s in statuses)


def exists(spark: SparkSession, path: str) -> bool:
    fs, hpath = _fs_path(spark, path)
    return bool(fs.exists(hpath))


def _table(warehouse: str, name: str) -> str:
    return f"{warehouse.rstrip('/')}/{name}"


# -- reading run directories -----------------------------------------------------------------------------------

def _dir_of(column: str):
    """The run directory a file belongs to: strip the file name (and ``/transcripts`` for transcripts).

    input_file_name() spells local files ``file:///x`` and the binaryFile source ``file:/x``: normalise.
    """
    path = F.regexp_replace(F.col(column), "^file:///", "file:/")
    return F.regexp_replace(F.regexp_replace(path, "/[^/]+$", ""), "/transcripts$", "")


def read_run_dirs(spark: SparkSession, inputs: list[str]) -> tuple[DataFrame | None, DataFrame | None, DataFrame | None]:
    """(cases, runs, transcripts) found under run directories or globs of them; None where no file matched."""
    def files(suffix: str) -> list[str]:
        return [f for root in inputs for f in expand(spark, f"{root.rstrip('/')}/{suffix}")]

    case_files, run_files, transcript_files = files("cases-*.jsonl"), files("run.json"), files("transcripts/*.json")
    cases = runs = transcripts = None
    if case_files:
        cases = (spark.read.schema(CASE_RECORD).json(case_files)
                 .withColumn("_file", F.input_file_name())
                 .withColumn("run_dir", _dir_of("_file")).drop("_file"))
    if run_files:
        runs = (spark.read.schema(RUN_RECORD).option("multiLine", True).json(run_files)
                .withColumn("_file", F.input_file_name())
                .withColumn("run_dir", _dir_of("_file")).drop("_file"))
    if transcript_files:
        transcripts = (spark.read.format("binaryFile").load(transcript_files)
                       .select(_dir_of("path").alias("run_dir"),
                               F.regexp_extract("path", r"(transcripts/[^/]+)$", 1).alias("transcript"),
                               F.col("content").cast("string").alias("transcript_json")))
    return cases, runs, transcripts


def _timestamp(column):
    return F.to_timestamp(column)


def prepare_runs(runs: DataFrame, ingested_at) -> DataFrame:
    return (runs.filter(F.col("run_id").isNotNull())
            .withColumn("started_ts", _timestamp("started_at"))
            .withColumn("date", F.coalesce(F.date_format("started_ts", "yyyy-MM-dd"), F.lit("unknown")))
            .withColumn("ingested_at", ingested_at))


def prepare_cases(cases: DataFrame, runs: DataFrame | None, transcripts: DataFrame | None, ingested_at) -> DataFrame:
    """Case rows enriched with their run's metadata, a stable target name and the transcript text."""
    cases = cases.filter(F.col("run_id").isNotNull() & F.col("nodeid").isNotNull())
    if runs is not None:
        run_cols = runs.select("run_id", "suite_version", F.col("started_at").alias("run_started_at"),
                               F.col("targets").alias("_targets")).dropDuplicates(["run_id"])
        cases = cases.join(run_cols, "run_id", "left")
    else:
        cases = (cases.withColumn("suite_version", F.lit(None).cast("string"))
                 .withColumn("run_started_at", F.lit(None).cast("string"))
                 .withColumn("_targets", F.lit(None).cast("map<string,struct<address:string,reference:boolean,faults:array<string>>>")))
    # run.json names targets per protocol; a "*" entry (one target for every protocol) is the fallback. An
    # address that is not host:port (e.g. "reference broker", written before the ephemeral ports were known)
    # still marks the protocol's target as the reference broker.
    info = F.coalesce(F.col("_targets")[F.col("protocol")], F.col("_targets")[F.lit("*")])
    is_reference = info["reference"] & ((info["address"] == F.col("target"))
                                        | ~info["address"].rlike(r"^[^:\s]+:[0-9]+$"))
    faults = F.array_join(F.array_sort(F.coalesce(info["faults"], F.array().cast("array<string>"))), ",")
    reference_name = F.when(faults == "", F.lit("reference")).otherwise(F.concat(F.lit("reference+"), faults))
    cases = (cases
             .withColumn("target_address", F.col("target"))
             .withColumn("target", F.when(F.col("target").isNull(), F.lit(NO_TARGET))
                         .when(F.coalesce(is_reference, F.lit(False)), reference_name)
                         .otherwise(F.col("target")))
             .drop("_targets"))
    if transcripts is not None:
        cases = cases.join(transcripts.dropDuplicates(["run_dir", "transcript"]), ["run_dir", "transcript"], "left")
    else:
        cases = cases.withColumn("transcript_json", F.lit(None).cast("string"))
    run_ts = F.coalesce(_timestamp("run_started_at"), _timestamp("finished_at"))
    return (cases.withColumn("run_ts", run_ts)
            .withColumn("date", F.coalesce(F.date_format(run_ts, "yyyy-MM-dd"), F.lit("unknown")))
            .withColumn("ingested_at", ingested_at))


# -- idempotent merge ------------------------------------------------------------------------------------------

def _merge_into(spark: SparkSession, new: DataFrame, path: str, keys: list[str], partitions: list[str]) -> None:
    """Upsert ``new`` into the Parquet table at ``path``, rewriting only the partitions that change.

    New rows win over stored rows with the same key (an anti-join, no sort of the whole table); duplicates
    inside one ingestion (the same run directory given twice) are dropped.
    """
    merged = new.dropDuplicates(keys)
    if exists(spark, path):
        old = spark.read.parquet(path)
        # Partitions holding the new rows, and any older home of the same runs (a run whose date changed).
        touched = (new.select(*partitions)
                   .unionByName(old.join(new.select("run_id").distinct(), "run_id", "left_semi").select(*partitions))
                   .distinct())
        kept = old.join(touched, partitions, "left_semi").join(new.select(*keys), keys, "left_anti")
        merged = kept.unionByName(merged, allowMissingColumns=True)
    # Spark reads lazily: never overwrite a table from a plan that still reads it. Materialise the merged rows
    # first (a local checkpoint cuts the lineage to the old files), then swap them in.
    merged = merged.localCheckpoint(eager=True)
    (merged.write.mode("overwrite").partitionBy(*partitions)
     .option("partitionOverwriteMode", "dynamic").parquet(path))
    merged.unpersist()


def ingest(spark: SparkSession, inputs: list[str], warehouse: str) -> dict:
    """Load run directories (paths or globs) into the warehouse; returns counts of what was read."""
    cases, runs, transcripts = read_run_dirs(spark, inputs)
    if cases is None and runs is None:
        raise FileNotFoundError(f"no run.json or cases-*.jsonl under {inputs}")
    ingested_at = F.current_timestamp()
    stats = {"runs": 0, "cases": 0}
    if runs is not None:
        runs = prepare_runs(runs, ingested_at).drop("run_dir").localCheckpoint(eager=True)
        stats["runs"] = runs.count()
        _merge_into(spark, runs, _table(warehouse, RUNS), ["run_id"], ["date"])
    if cases is not None:
        prepared = prepare_cases(cases, runs, transcripts, ingested_at).localCheckpoint(eager=True)
        stats["cases"] = prepared.count()
        _merge_into(spark, prepared, _table(warehouse, CASES), ["run_id", "nodeid"], CASE_PARTITIONS)
        prepared.unpersist()
    if runs is not None:
        runs.unpersist()
    return stats


def load_cases(spark: SparkSession, warehouse: str) -> DataFrame:
    return spark.read.parquet(_table(warehouse, CASES))


def load_runs(spark: SparkSession, warehouse: str) -> DataFrame | None:
    path = _table(warehouse, RUNS)
    return spark.read.parquet(path) if exists(spark, path) else None
