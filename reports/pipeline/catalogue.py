"""Clause catalogues as a DataFrame: ``protocols.<name>.clauses.CATALOGUE`` for each protocol.

A protocol whose catalogue does not exist yet (or fails to import) is listed with one row whose clause is null,
so coverage can still count what its records exercise.
"""

from __future__ import annotations

import importlib

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

#: Protocols of the suite (docs/report-schema.md); records may name others, which are added at load time.
KNOWN_PROTOCOLS = ("kafka", "fluvio", "pravega", "barco", "rustlog")

CATALOGUE_ROW = StructType([
    StructField("protocol", StringType()),
    StructField("clause", StringType()),
    StructField("level", StringType()),
    StructField("requirement", StringType()),
    StructField("source", StringType()),
])


def load_catalogue(protocol: str):
    """The protocol's Catalogue, or None when it does not exist (yet)."""
    try:
        module = importlib.import_module(f"protocols.{protocol}.clauses")
    except Exception:  # a catalogue being written may not import yet: report it as missing
        return None
    return getattr(module, "CATALOGUE", None)


def catalogue_rows(protocols) -> list[tuple]:
    rows = []
    for protocol in sorted(set(protocols)):
        catalogue = load_catalogue(protocol)
        if catalogue is None:
            rows.append((protocol, None, None, None, None))
            continue
        for clause in catalogue:
            rows.append((protocol, clause.id, clause.level.value, clause.requirement, clause.source))
    return rows


def catalogue_frame(spark: SparkSession, extra_protocols=()) -> DataFrame:
    return spark.createDataFrame(catalogue_rows([*KNOWN_PROTOCOLS, *extra_protocols]), CATALOGUE_ROW)
