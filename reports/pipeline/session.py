"""One place that builds the SparkSession every job and test uses.

The master is, in order: ``--master`` of our command line, the one spark-submit (or its
``spark-defaults.conf``) was given, else ``local[*]``. Every setting below is a default: under spark-submit a
key that ``--conf`` or ``spark-defaults.conf`` already set is never overridden. The local-mode settings
(loopback driver, no UI, small shuffles) apply only when the master is ``local``; a cluster keeps its own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: What the jobs rely on, whatever the master: UTC dates, string partition values, no Arrow.
JOB_CONF = {
    # Arrow needs pandas and pyarrow, which this project does not install.
    "spark.sql.execution.pythonUDF.arrow.enabled": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    # Partition values stay strings: "2026-11-21" and "127.0.0.1:9092" are names here, not dates or numbers.
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    # A partitioned write keeps a few files open per task instead of sorting its rows by partition first.
    "spark.sql.maxConcurrentOutputFileWriters": "16",
}

#: Settings for one machine: loopback only, no UI or progress bars, shuffles sized for 2 cores.
LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    # Listing thousands of run directories on the driver's own disk beats a listing job with a task per path.
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "100000",
}


def is_local(master: str | None) -> bool:
    return master is None or master.startswith("local")


def prepare_environment(master: str | None = None) -> None:
    """Environment the JVM and the Python workers need; call before the first session."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers start fresh interpreters: let local ones import this project's packages (on a cluster,
    # ship them with spark-submit --py-files).
    root = str(Path(__file__).resolve().parents[2])
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *[p for p in paths if p]])


def given_conf() -> dict[str, str]:
    """Under spark-submit: the settings it was given (--master, --conf, spark-defaults.conf); else none.

    Run directly, our own command line is the interface (``--master``); the JVM pyspark starts for itself
    carries shell defaults (console progress on) that nobody chose.
    """
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):
        return {}
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connects to spark-submit's JVM
    return dict(SparkConf(loadDefaults=True).getAll())


def session_conf(master: str | None, given: dict[str, str], extra: dict | None = None) -> tuple[str, dict]:
    """(master, settings to add): our defaults for what ``given`` leaves unset, plus ``extra`` (a caller's)."""
    master = master or given.get("spark.master") or "local[*]"
    defaults = {**JOB_CONF, **(LOCAL_CONF if is_local(master) else {})}
    conf = {key: value for key, value in defaults.items() if key not in given}
    return master, {**conf, **(extra or {})}


def get_session(master: str | None = None, app_name: str = "wirecheck-pipeline", conf: dict | None = None):
    """A SparkSession; ``master`` None keeps spark-submit's choice, or local[*] when run directly."""
    prepare_environment(master)
    from pyspark.sql import SparkSession

    master, settings = session_conf(master, given_conf(), conf)
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
