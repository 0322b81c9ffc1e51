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

#: Verdicts that mean the case ran against a target and produced an answer about it.
EXECUTED = ("OK", "NON-STRICT", "FAILED", "ERROR", "XFAIL", "XPASS", "FLAKY", "DIVERGENT")
#: Verdicts counted as passing in pass rates: the case held, or failed only as the vendor said it would, or
#: failed once and passed when run again (FLAKY: counted among the flaky cases too).
PASSING = ("OK", "NON-STRICT", "XFAIL", "FLAKY")
#: Severity, to pick one verdict when several records of one clause meet in one run (the worst wins).
#: Each value is distinct: the worst severity is mapped back to its verdict.
SEVERITY = {
    "NOT-RUN": 0,
    "TARGET-DOWN": 1,
    "UNIMPLEMENTED": 2,
    "BLOCKED": 3,
    "OK": 4,
    "XFAIL": 5,
    "FLAKY": 6,
    "NON-STRICT": 7,
    "DIVERGENT": 8,  # answered otherwise than the reference broker (--differential)
    "XPASS": 9,
    "ERROR": 10,
    "FAILED": 11,
}

#: Placeholder partition value for records with no target (NOT-RUN cases).
NO_TARGET = "none"
