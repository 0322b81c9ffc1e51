"""The run warehouse: per-case records of many runs, as Parquet, one directory per run and partition.

Layout under the warehouse root (any URI Hadoop can write)::

    cases/date=YYYY-MM-DD/target=<name>/run_id=<id>/part-*.parquet   one row per (run_id, nodeid)
    transcripts/run_id=<id>/part-*.parquet                            one row per transcript file
    runs/ingest=<id>/part-*.parquet                                   the runs one ingestion read (one file)
    safety/date=.../target=.../run_id=<id>/part-*.parquet              safety runs: one row per anomaly kind
    coverage/date=.../target=.../run_id=<id>/part-*.parquet            run.json coverage maps: one row per cell

Ingestion is incremental: a run whose run.json (``run_id`` and a non-null ``finished_at``) is already in the
warehouse is skipped, unless ``reingest``; directories without run.json are always read. Each ingested run is
written to a staging directory first and then moved into place, replacing every directory the run had before,
so ingesting a run twice leaves the same rows and a run never needs a merge with the rest of the table (no
shuffle, no checkpoint). ``runs/`` is written last: a run that is in ``runs/`` is complete in ``cases/``.

Concurrent ingestions (a CI matrix ingesting several targets' runs at once) lose nothing: each one only adds
directories it alone names (its runs' directories, its own ``runs/ingest=<id>``) and never rewrites a file
another may be writing. Readers take the union of ``runs/``, the newest ingestion of a run winning. Nothing
relies on a lock or on an atomic rename of a directory that may exist, so the same holds on an object store.

Facts of a run (its directory, start time, suite version aside, when it was ingested) are stored once, in
``runs/``, not on every case row: each constant column cost about 0.4 s per million rows to write, a sixth of
the ingestion. ``suite_version`` and ``run_ts`` stay on the rows because the report groups and orders by them.

``target`` is a stable name, not the address: the bundled reference broker listens on an ephemeral port, so
its address changes every run. A case whose run.json marks its protocol's target as the reference broker gets
``reference`` (``reference+<fault>,...`` when faults were injected, a different target on purpose); any other
target keeps its ``host:port``. The raw address stays in ``target_address``.
"""

from __future__ import annotations

import re
import uuid
from contextlib import contextmanager
from urllib.parse import unquote

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import MapType, StringType, StructField, StructType
from pyspark.sql.window import Window

from wirecheck.reports.pipeline import fs
from wirecheck.reports.pipeline.schema import CASE_RECORD, NO_TARGET, RUN_RECORD

CASES = "cases"
RUNS = "runs"
TRANSCRIPTS = "transcripts"
CASE_PARTITIONS = ["date", "target", "run_id"]


def _table(warehouse: str, name: str) -> str:
    return fs.join(warehouse, name)


# -- finding run directories (driver, Hadoop FS: one glob per input and kind of file) --------------------------

def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0]


def hadoop_name(path: str) -> str:
    """Hadoop's spelling of a file name Spark gives (``file:///x%20y`` -> ``file:/x y``)."""
    path = unquote(path)
    return "file:/" + path[len("file:///"):] if path.startswith("file:///") else path


#: What ``plan`` reads of each run.json: its identity, and whether it has state-coverage maps (left unparsed: only
#: runs that have them cost the coverage table a job).
RUN_IDS = StructType([StructField("run_id", StringType()), StructField("finished_at", StringType()),
                      StructField("coverage", MapType(StringType(), StringType()))])


def _read_run_ids(spark: SparkSession, run_files: list[str]) -> list[dict]:
    """run_id, finished_at and whether it has ``coverage`` of every run.json, in one Spark job; a file without
    run_id fails naming it."""
    if not run_files:
        return []
    rows = (spark.read.schema(RUN_IDS).option("multiLine", True).json(run_files)
            .select("run_id", "finished_at", F.col("coverage").isNotNull().alias("coverage"),
                    F.col("_metadata.file_path").alias("file")).collect())
    runs = []
    for row in rows:
        if not row.run_id:
            raise ValueError(f"{hadoop_name(row.file)} is not valid JSON or has no run_id")
        path = hadoop_name(row.file)
        runs.append({"run_id": row.run_id, "finished_at": row.finished_at, "run_dir": _parent(path),
                     "run_file": path, "coverage": row.coverage})
    return runs


def _stored_runs(spark: SparkSession, warehouse: str) -> dict[str, str | None]:
    runs = load_runs(spark, warehouse)
    return {} if runs is None else {r.run_id: r.finished_at for r in runs.select("run_id", "finished_at").collect()}


def plan(spark: SparkSession, inputs: list[str], warehouse: str, reingest: bool = False) -> dict:
    """Which run directories to read: {"runs": run.json dicts, "case_files", "transcript_dirs", "skipped",
    "safety": safety result files, "safety_skipped": their run ids already in the warehouse}."""
    from wirecheck.reports.pipeline import safety

    run_files, case_files, transcript_dirs, result_files = set(), set(), set(), set()
    for root in inputs:
        run_files.update(fs.expand(spark, fs.join(root, "run.json")))
        result_files.update(fs.expand(spark, fs.join(root, safety.RESULT_FILE)))
        case_files.update(fs.expand(spark, fs.join(root, "cases-*.jsonl")))
        transcript_dirs.update(fs.expand(spark, fs.join(root, "transcripts")))
    # One directory per run id: the same run given twice (or copied) is read once, the last directory wins.
    by_id = {run["run_id"]: run for run in sorted(_read_run_ids(spark, sorted(run_files)), key=lambda r: r["run_dir"])}
    stored = {} if reingest else _stored_runs(spark, warehouse)
    skipped = {run_id for run_id, run in by_id.items()
               if run_id in stored and stored[run_id] is not None and stored[run_id] == run.get("finished_at")}
    runs = [run for run_id, run in sorted(by_id.items()) if run_id not in skipped]
    dirs_with_run = {_parent(f) for f in run_files}
    wanted = {run["run_dir"] for run in runs} | ({_parent(f) for f in case_files} - dirs_with_run)
    # safety runs: the same rules (one directory per run id, a finished run already there skipped)
    results = {r["run_id"]: r for r in sorted(safety.identities(spark, sorted(result_files)), key=lambda r: r["file"])}
    stored_safety = {} if reingest else safety.stored(spark, warehouse)
    safety_skipped = {run_id for run_id, r in results.items()
                      if stored_safety.get(run_id) is not None and stored_safety[run_id] == r["finished_at"]}
    return {"runs": runs, "skipped": sorted(skipped),
            "safety": sorted(r["file"] for run_id, r in results.items() if run_id not in safety_skipped),
            "safety_skipped": sorted(safety_skipped),
            "case_files": sorted(f for f in case_files if _parent(f) in wanted),
            "transcript_dirs": sorted(d for d in transcript_dirs if _parent(d) in wanted)}


# -- shaping rows ----------------------------------------------------------------------------------------------

def dir_of(column):
    """The run directory a file belongs to: strip the file name (and ``/transcripts`` for transcripts)."""
    path = F.regexp_replace(column, "^file:///", "file:/")
    return F.regexp_replace(F.regexp_replace(path, "/[^/]+$", ""), "/transcripts$", "")


HOST_PORT = r"^[^:\s]+:[0-9]+$"


def reference_name(faults):
    """The stable name of the reference broker run with these faults: ``reference``, or ``reference+<fault>,...``
    (sorted) when faults were injected (a different target on purpose)."""
    joined = F.array_join(F.array_sort(F.coalesce(faults, F.array().cast("array<string>"))), ",")
    return F.when(joined == "", F.lit("reference")).otherwise(F.concat(F.lit("reference+"), joined))


def _target_names(targets):
    """run.json ``targets`` -> protocol -> how its cases' target is named (computed per run, not per record).

    An address that is not host:port (e.g. "reference broker", written before the ephemeral ports were known)
    marks the protocol's target as the reference broker whatever address its records name.
    """
    def name(_, info):
        return F.struct(info["address"].alias("address"),
                        F.coalesce(info["reference"], F.lit(False)).alias("reference"),
                        (~F.coalesce(info["address"].rlike(HOST_PORT), F.lit(False))).alias("any_address"),
                        reference_name(info["faults"]).alias("name"))

    return F.transform_values(targets, name)


def runs_frame(spark: SparkSession, run_files: list[str], ingested_at) -> DataFrame:
    """The run.json files (already checked on the driver), read by Spark: no Python worker involved."""
    frame = (spark.read.schema(RUN_RECORD).option("multiLine", True).json(run_files)
             .withColumn("run_dir", dir_of(F.col("_metadata.file_path")))
             .withColumn("_names", _target_names(F.col("targets"))))
    return (frame.withColumn("started_ts", F.try_to_timestamp("started_at"))
            .withColumn("date", F.coalesce(F.date_format("started_ts", "yyyy-MM-dd"), F.lit("unknown")))
            .withColumn("ingested_at", ingested_at))


def _message_and_version(cases: DataFrame) -> DataFrame:
    """``wirecheck.case/2`` records name a versioned message ``message_type``/``version``; ``/1`` records
    ``api``/``api_version``. The warehouse stores both kinds under ``api``/``api_version``."""
    return (cases.withColumn("api", F.coalesce(F.col("message_type"), F.col("api")))
            .withColumn("api_version", F.coalesce(F.col("version"), F.col("api_version")))
            .drop("message_type", "version"))


def prepare_cases(cases: DataFrame, runs: DataFrame | None) -> DataFrame:
    """Case rows with their run's suite version and time and a stable target name (runs are few: a broadcast
    join)."""
    cases = _message_and_version(cases.filter(F.col("run_id").isNotNull() & F.col("nodeid").isNotNull()))
    if runs is not None:
        run_cols = runs.select("run_id", "suite_version", F.col("started_ts").alias("_run_ts"),
                               F.when(F.col("started_ts").isNotNull(), F.col("date")).alias("_run_date"), "_names")
        cases = cases.join(F.broadcast(run_cols), "run_id", "left")
    else:
        cases = (cases.withColumn("suite_version", F.lit(None).cast("string"))
                 .withColumn("_run_ts", F.lit(None).cast("timestamp"))
                 .withColumn("_run_date", F.lit(None).cast("string"))
                 .withColumn("_names", F.lit(None).cast(
                     "map<string,struct<address:string,reference:boolean,any_address:boolean,name:string>>")))
    # run.json names targets per protocol; a "*" entry (one target for every protocol) is the fallback.
    cases = cases.withColumn("_info", F.coalesce(F.col("_names")[F.col("protocol")], F.col("_names")[F.lit("*")]))
    info = F.col("_info")
    is_reference = info["reference"] & (info["any_address"] | (info["address"] == F.col("target")))
    run_ts = F.coalesce(F.col("_run_ts"), F.try_to_timestamp(F.col("finished_at")))
    return (cases
            .withColumn("target_address", F.col("target"))
            .withColumn("target", F.when(F.col("target").isNull(), F.lit(NO_TARGET))
                        .when(F.coalesce(is_reference, F.lit(False)), info["name"])
                        .otherwise(F.col("target")))
            .withColumn("run_ts", run_ts)
            # the run's date is formatted once per run; only records without run.json format their own
            .withColumn("date", F.coalesce(F.col("_run_date"), F.date_format(run_ts, "yyyy-MM-dd"), F.lit("unknown")))
            .drop("_names", "_info", "_run_ts", "_run_date"))


def read_cases(spark: SparkSession, case_files: list[str]) -> DataFrame:
    return spark.read.schema(CASE_RECORD).json(case_files)


def read_transcripts(spark: SparkSession, transcript_dirs: list[str], runs: DataFrame | None) -> DataFrame:
    """(run_id, transcript, transcript_json, run_dir); the run id of a directory without run.json is its name."""
    frame = (spark.read.format("binaryFile").option("pathGlobFilter", "*.json").load(transcript_dirs)
             .select(dir_of(F.col("path")).alias("run_dir"),
                     F.regexp_extract("path", r"(transcripts/[^/]+)$", 1).alias("transcript"),
                     F.col("content").cast("string").alias("transcript_json")))
    if runs is not None:
        frame = frame.join(F.broadcast(runs.select("run_dir", "run_id")), "run_dir", "left")
    else:
        frame = frame.withColumn("run_id", F.lit(None).cast("string"))
    return frame.withColumn("run_id", F.coalesce("run_id", F.regexp_extract("run_dir", r"([^/]+)$", 1)))


# -- writing: stage, then move each run's directories into place ----------------------------------------------

_GLOB_SPECIAL = re.compile(r"([\\{}\[\]*?,])")


def _swap_runs(spark: SparkSession, staged: str, table: str, depth: int) -> None:
    """Move the run directories (``.../run_id=X``, ``depth`` levels down) of ``staged`` into ``table``,
    deleting every directory those runs had in ``table`` before."""
    staged_dirs = fs.expand(spark, fs.join(staged, *["*"] * depth))
    if not staged_dirs:
        return
    names = sorted({d.rsplit("/", 1)[1] for d in staged_dirs})
    if fs.exists(spark, table):
        choice = ",".join(_GLOB_SPECIAL.sub(r"\\\1", name) for name in names)
        for old in fs.expand(spark, fs.join(table, *["*"] * (depth - 1), "{" + choice + "}")):
            fs.delete(spark, old)
    # Directory by directory, never the staged table as a whole: another ingestion may create the table at the
    # same moment, and moving onto it would replace what that one wrote.
    for directory in staged_dirs:
        fs.move(spark, directory, fs.join(table, *directory.split("/")[-depth:]))


def _write_runs(spark: SparkSession, rows: DataFrame, staging: str, warehouse: str, table: str) -> None:
    """A table partitioned like ``cases`` (date, target, run): staged, then each run's directories moved in."""
    with _small_files(spark):
        rows.write.partitionBy(*CASE_PARTITIONS).parquet(fs.join(staging, table))
    _swap_runs(spark, fs.join(staging, table), _table(warehouse, table), len(CASE_PARTITIONS))


def _add_runs(spark: SparkSession, new: DataFrame, staging: str, table: str, ingestion: str) -> None:
    """This ingestion's rows of the runs table, in a directory of its own: nothing another ingestion wrote is
    read or rewritten (readers keep the newest row of each run: :func:`load_runs`)."""
    new.drop("_names").coalesce(1).write.parquet(staging)
    fs.move(spark, staging, fs.join(table, f"ingest={ingestion}"))


def ingest(spark: SparkSession, inputs: list[str], warehouse: str, reingest: bool = False) -> dict:
    """Load run directories (paths or globs, any URI) into the warehouse; returns counts of what was done."""
    from wirecheck.reports.pipeline import safety, state_coverage

    todo = plan(spark, inputs, warehouse, reingest)
    if not any(todo[k] for k in ("runs", "case_files", "skipped", "safety", "safety_skipped")):
        raise FileNotFoundError(f"no run.json, cases-*.jsonl or safety result.json under {inputs}")
    stats = {"runs": len(todo["runs"]) + len(todo["safety"]), "cases": 0,
             "skipped": len(todo["skipped"]) + len(todo["safety_skipped"])}
    if not todo["runs"] and not todo["case_files"] and not todo["safety"]:
        return stats
    ingested_at = F.current_timestamp()
    ingestion = uuid.uuid4().hex
    staging = _table(warehouse, f"_staging/{ingestion}")
    runs = None
    if todo["runs"]:  # read once: the case and transcript joins and the runs table all use it
        runs = runs_frame(spark, [run["run_file"] for run in todo["runs"]], ingested_at).cache()
    try:
        if todo["case_files"]:
            cases = prepare_cases(read_cases(spark, todo["case_files"]), runs)
            with _even_splits(spark):
                cases.write.partitionBy(*CASE_PARTITIONS).parquet(fs.join(staging, CASES))
            stats["cases"] = spark.read.parquet(fs.join(staging, CASES)).count()  # Parquet footers only
            _swap_runs(spark, fs.join(staging, CASES), _table(warehouse, CASES), len(CASE_PARTITIONS))
        if todo["transcript_dirs"]:
            transcripts = read_transcripts(spark, todo["transcript_dirs"], runs)
            with _small_files(spark):
                transcripts.write.partitionBy("run_id").parquet(fs.join(staging, TRANSCRIPTS))
            _swap_runs(spark, fs.join(staging, TRANSCRIPTS), _table(warehouse, TRANSCRIPTS), 1)
        mapped = [run["run_file"] for run in todo["runs"] if run["coverage"]]
        if mapped:  # the runs' state-coverage maps (none when no bulk case ran)
            _write_runs(spark, state_coverage.rows(spark, mapped), staging, warehouse, state_coverage.COVERAGE)
        if todo["safety"]:
            _write_runs(spark, safety.rows(safety.read_results(spark, todo["safety"]), ingested_at), staging,
                        warehouse, safety.SAFETY)
        if runs is not None:
            _add_runs(spark, runs, fs.join(staging, RUNS), _table(warehouse, RUNS), ingestion)
    finally:
        fs.delete(spark, staging)
        if runs is not None:
            runs.unpersist()
    return stats


#: Transcripts are small files (a few kB): Spark's default cost of opening one (4 MB) packs only 32 of them
#: into a task, which made 80,000 transcripts 2,500 tasks. At this cost a task reads about 2,000 of them.
TRANSCRIPT_OPEN_COST = str(64 * 1024)


@contextmanager
def _setting(spark: SparkSession, key: str, value: str):
    """``key`` set to ``value`` for the block, unless the user set it themselves (spark-submit --conf)."""
    if spark.sparkContext.getConf().get(key, None) is not None:
        yield
        return
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:  # a setting without a default
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _small_files(spark: SparkSession):
    """Read many small files per task."""
    return _setting(spark, "spark.sql.files.openCostInBytes", TRANSCRIPT_OPEN_COST)


def _even_splits(spark: SparkSession):
    """About four read tasks per core: Spark's default 128 MB splits give 5 tasks for five 75 MB files, and
    on 2 cores the last one runs alone (a sixth of the time with one core idle). Spark sizes its splits as
    the input's bytes over this number (between the open cost and 128 MB), from the listing it makes anyway."""
    return _setting(spark, "spark.sql.files.minPartitionNum", str(4 * spark.sparkContext.defaultParallelism))


# -- reading the warehouse -------------------------------------------------------------------------------------

def load_cases(spark: SparkSession, warehouse: str) -> DataFrame:
    return spark.read.parquet(_table(warehouse, CASES))


def load_runs(spark: SparkSession, warehouse: str) -> DataFrame | None:
    """One row per run: the union of every ingestion's rows, the newest ingestion of a run winning. Files of
    older layouts (one file at the root, or a directory per date) are read too."""
    path = _table(warehouse, RUNS)
    if not fs.exists(spark, path):
        return None
    rows = spark.read.option("recursiveFileLookup", "true").option("mergeSchema", "true").parquet(path)
    # a table written by date kept the date in its directory names only
    from_start = F.coalesce(F.date_format("started_ts", "yyyy-MM-dd"), F.lit("unknown"))
    rows = rows.withColumn("date", F.coalesce("date", from_start) if "date" in rows.columns else from_start)
    newest = Window.partitionBy("run_id").orderBy(F.col("ingested_at").desc_nulls_last())
    return rows.withColumn("_newest", F.row_number().over(newest)).filter("_newest = 1").drop("_newest")


def with_transcripts(spark: SparkSession, warehouse: str, cases: DataFrame) -> DataFrame:
    """``cases`` (a few rows, e.g. the failing ones) with ``transcript_json`` from the transcripts table."""
    path = _table(warehouse, TRANSCRIPTS)
    if not fs.exists(spark, path):
        return cases.withColumn("transcript_json", F.lit(None).cast("string"))
    transcripts = spark.read.parquet(path).select("run_id", "transcript", "transcript_json")
    return cases.join(transcripts, ["run_id", "transcript"], "left")
