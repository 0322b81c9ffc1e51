"""Spark schemas of the run directory (docs/report-schema.md, version 1) and of the warehouse tables.

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
])

TARGET_INFO = StructType([
    StructField("address", StringType()),
    StructField("reference", BooleanType()),
    StructField("faults", ArrayType(StringType())),
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
])

#: Verdicts that mean the case ran against a target and produced an answer about it.
EXECUTED = ("OK", "NON-STRICT", "FAILED", "ERROR", "XFAIL", "XPASS")
#: Verdicts counted as passing in pass rates: the case held, or failed only as the vendor said it would.
PASSING = ("OK", "NON-STRICT", "XFAIL")
#: Severity, to pick one verdict when several records of one clause meet in one run (the worst wins).
SEVERITY = {
    "NOT-RUN": 0,
    "UNIMPLEMENTED": 1,
    "OK": 2,
    "XFAIL": 3,
    "NON-STRICT": 4,
    "XPASS": 5,
    "ERROR": 6,
    "FAILED": 7,
}

#: Placeholder partition value for records with no target (NOT-RUN cases).
NO_TARGET = "none"
