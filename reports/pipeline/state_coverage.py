"""The state-coverage maps of the runs (run.json ``coverage``, strategies/coverage.py) across nights.

Table ``coverage/date=YYYY-MM-DD/target=<name>/run_id=<id>/``: per run and protocol, one row per reached cell
(``kind`` = ``cell``: ``state``, ``request``, ``reaction``, ``count``) and one per cell the clause catalogue names
(``kind`` = ``catalogue``: ``clause``, ``request``, ``reaction``, ``reached``, ``count``), each with the map's
``mutants`` and distinct ``transitions``. ``target`` is named as the protocol's cases are (run.json ``targets``:
the protocol's entry or ``"*"``; the reference broker as ``reference`` or ``reference+<fault>,...``).

The report's views: per target, protocol and night (date) the cells reached, the catalogue's cells reached of
those it names, mutants and transitions; and per catalogue cell the nights that reached it, and whether any night
in the warehouse ever did (the cells never reached are the spec's states no run drove the target into).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from wirecheck.reports.pipeline import fs, warehouse
from wirecheck.reports.pipeline.schema import NO_TARGET, RUN_COVERAGE

COVERAGE = "coverage"
CELL_KEY = ("clause", "request", "reaction")


def rows(spark: SparkSession, run_files: list[str]) -> DataFrame:
    """The coverage rows of these run.json files (runs without a ``coverage`` map give none)."""
    runs = (spark.read.schema(RUN_COVERAGE).option("multiLine", True).json(run_files)
            .filter(F.col("coverage").isNotNull()))
    per_protocol = runs.select("run_id", F.try_to_timestamp("started_at").alias("run_ts"), "targets",
                               F.explode("coverage").alias("protocol", "map"))
    info = F.coalesce(F.col("targets")[F.col("protocol")], F.col("targets")[F.lit("*")])
    named = per_protocol.select(
        "run_id", "run_ts", F.coalesce(F.date_format("run_ts", "yyyy-MM-dd"), F.lit("unknown")).alias("date"),
        F.coalesce(F.when(F.coalesce(info["reference"], F.lit(False)), warehouse.reference_name(info["faults"]))
                   .otherwise(info["address"]), F.lit(NO_TARGET)).alias("target"),
        "protocol", F.col("map.mutants").alias("mutants"), F.col("map.distinct.transitions").alias("transitions"),
        "map")
    base = ["run_id", "run_ts", "date", "target", "protocol", "mutants", "transitions"]
    cells = (named.select(*base, F.explode("map.cells").alias("c"))
             .select(*base, F.lit("cell").alias("kind"), F.col("c.state").alias("state"), "c.request", "c.reaction",
                     F.lit(None).cast("string").alias("clause"), F.lit(True).alias("reached"), "c.count"))
    catalogue = (named.select(*base, F.explode("map.catalogue").alias("c"))
                 .select(*base, F.lit("catalogue").alias("kind"), F.lit(None).cast("string").alias("state"),
                         "c.request", "c.reaction", "c.clause", F.coalesce("c.reached", F.lit(False)).alias("reached"),
                         "c.count"))
    return cells.unionByName(catalogue)


def load(spark: SparkSession, warehouse_path: str) -> DataFrame | None:
    table = fs.join(warehouse_path, COVERAGE)
    return spark.read.parquet(table) if fs.exists(spark, table) else None


def _night_ranks(table: DataFrame) -> DataFrame:
    newest = Window.partitionBy("target").orderBy(F.col("date").desc())
    return table.withColumn("night_rank", F.dense_rank().over(newest))


def nights(table: DataFrame, window: int) -> DataFrame:
    """Per target, protocol and night of each target's ``window`` newest: ``runs``, ``mutants`` (summed over the
    night's runs), ``transitions`` (the most one run reached), ``cells`` (distinct cells reached by any of them),
    ``catalogue_reached`` and ``catalogue`` (the catalogue's cells reached / named)."""
    recent = _night_ranks(table).filter(F.col("night_rank") <= window)
    keys = ["target", "protocol", "date", "night_rank"]
    per_run = recent.groupBy(*keys, "run_id").agg(F.max("mutants").alias("mutants"),
                                                  F.max("transitions").alias("transitions"))
    totals = per_run.groupBy(*keys).agg(F.count("*").alias("runs"), F.sum("mutants").alias("mutants"),
                                        F.max("transitions").alias("transitions"))
    cell = F.when(F.col("kind") == "cell", F.struct("state", "request", "reaction"))
    named = F.struct(*CELL_KEY)
    is_catalogue = F.col("kind") == "catalogue"
    counted = recent.groupBy(*keys).agg(
        F.count_distinct(cell).alias("cells"),
        F.count_distinct(F.when(is_catalogue & F.col("reached"), named)).alias("catalogue_reached"),
        F.count_distinct(F.when(is_catalogue, named)).alias("catalogue"))
    return totals.join(counted, keys)


def catalogue_cells(table: DataFrame, window: int) -> DataFrame:
    """Per target, protocol and catalogue cell: ``ever_reached`` (by any night in the warehouse), ``nights``
    (how many of the window's nights named it) and ``reached_on`` (the window's nights that reached it, newest
    first), ``latest_reached`` (the newest night that named it reached it)."""
    ranked = _night_ranks(table.filter(F.col("kind") == "catalogue"))
    in_window = F.col("night_rank") <= window
    keys = ["target", "protocol", *CELL_KEY]
    per_night = ranked.groupBy(*keys, "date", "night_rank").agg(F.bool_or("reached").alias("reached"))
    return (per_night.groupBy(*keys)
            .agg(F.bool_or("reached").alias("ever_reached"),
                 F.count(F.when(in_window, 1)).alias("nights"),
                 F.sort_array(F.collect_list(F.when(in_window & F.col("reached"), F.col("date"))), asc=False)
                 .alias("reached_on"),
                 F.min_by("reached", "night_rank").alias("latest_reached")))
