"""Spark schemas of the run directory (docs/report-schema.md, version 2) and of the warehouse tables.

Reading with an explicit schema keeps ingestion independent of which optional fields a file happens to
contain, and makes a record of a newer minor version (extra fields) load without failing.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from wirecheck.protocols.verdicts import Verdict

# the verdict classes of the one verdict table (protocols/verdicts.py), as the column filters the jobs use
EXECUTED = Verdict.names(lambda verdict: verdict.executed)
PASSING = Verdict.names(lambda verdict: verdict.passing)
SEVERITY = {verdict.value: verdict.severity for verdict in Verdict}

CASE_RECORD = StructType([
    StructField("schema", StringType()),
    StructField("run_id", StringType()),
    StructField("case", StringType()),
    StructField("nodeid", StringType()),
    StructField("protocol", StringType()),
    StructField("clause", StringType()),
    StructField("requirement", StringType()),
    StructField("source", StringType()),
    StructField("level", StringType()),
    StructField("verdict", StringType()),
    StructField("message", StringType()),
    StructField("expected", StringType()),
    StructField("actual", StringType()),
    StructField("duration_s", DoubleType()),
    StructField("target", StringType()),
    StructField("api_version", LongType()),
    StructField("api", StringType()),
    # wirecheck.case/2 names the versioned message "message_type"/"version" (the warehouse reads both kinds)
    StructField("message_type", StringType()),
    StructField("version", LongType()),
    StructField("transcript", StringType()),
    StructField("reproduce", StringType()),
    StructField("worker", StringType()),
    StructField("finished_at", StringType()),
    StructField("attempts", LongType()),  # report schema version 2: runs of the case under --confirm
    StructField("facts", MapType(StringType(), StringType())),  # what the case learnt (a real client's version)
])

TARGET_INFO = StructType([
    StructField("address", StringType()),
    StructField("reference", BooleanType()),
    StructField("faults", ArrayType(StringType())),
    StructField("found", StringType()),  # report schema version 2: what the probe found at the start
    StructField("probed_as", StringType()),
])

RUN_RECORD = StructType([
    StructField("schema", StringType()),
    StructField("run_id", StringType()),
    StructField("suite_version", StringType()),
    StructField("started_at", StringType()),
    StructField("finished_at", StringType()),
    StructField("profile", StringType()),
    StructField("strict", BooleanType()),
    StructField("baseline", StringType()),
    StructField("targets", MapType(StringType(), TARGET_INFO)),
    StructField("argv", ArrayType(StringType())),
    StructField("totals", MapType(StringType(), LongType())),
    StructField("headline", StringType()),  # report schema version 2: "target died at case X ...; N cases not run"
])

#: Placeholder partition value for records with no target (NOT-RUN cases).
NO_TARGET = "none"

#: result.json of a safety run (reports/safety/report.py, ``wirecheck.safety/1``); the witnesses of each anomaly
#: kind are read as their JSON text (a string column given an array keeps the array's text).
SAFETY_RESULT = StructType([
    StructField("schema", StringType()),
    StructField("run_id", StringType()),
    StructField("started_at", StringType()),
    StructField("finished_at", StringType()),
    StructField("protocol", StringType()),
    StructField("target", StringType()),
    StructField("seed", LongType()),
    StructField("time", DoubleType()),
    StructField("restart_every", DoubleType()),
    StructField("reference_faults", ArrayType(StringType())),
    StructField("restarts", LongType()),
    StructField("client_crashes", LongType()),
    StructField("seconds", DoubleType()),
    StructField("notes", ArrayType(StringType())),
    StructField("valid", BooleanType()),
    StructField("counts", MapType(StringType(), LongType())),
    StructField("acknowledged", LongType()),
    StructField("read_values", LongType()),
    StructField("anomaly_counts", MapType(StringType(), LongType())),
    StructField("anomalies", MapType(StringType(), StringType())),
    StructField("fault_counts", MapType(StringType(), LongType())),
])

#: The state-coverage maps of run.json (``coverage``: protocol -> map, docs/report-schema.md), only what the
#: warehouse keeps: the reached cells and the catalogue's cells with whether they were reached.
COVERAGE_MAP = StructType([
    StructField("mutants", LongType()),
    StructField("cells", ArrayType(StructType([
        StructField("state", StringType()), StructField("request", StringType()),
        StructField("reaction", StringType()), StructField("count", LongType())]))),
    StructField("catalogue", ArrayType(StructType([
        StructField("clause", StringType()), StructField("request", StringType()),
        StructField("reaction", StringType()), StructField("reached", BooleanType()),
        StructField("count", LongType())]))),
    StructField("distinct", StructType([StructField("transitions", LongType())])),
])
RUN_COVERAGE = StructType([
    StructField("run_id", StringType()),
    StructField("started_at", StringType()),
    StructField("targets", MapType(StringType(), TARGET_INFO)),
    StructField("coverage", MapType(StringType(), COVERAGE_MAP)),
])
