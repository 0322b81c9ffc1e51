"""One SparkSession for every pipeline test (a JVM costs ~10 s and ~500 MB; never one per xdist worker)."""

from __future__ import annotations

import pytest

pyspark = pytest.importorskip("pyspark", reason="pipeline tests need pyspark (pip install wirecheck[pipeline])")


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/pipeline/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.pipeline)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from wirecheck.reports.pipeline.session import get_session

    session = get_session(master="local[2]", app_name="wirecheck-pipeline-tests",
                          conf={"spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("spark-warehouse"))})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def history(spark, tmp_path_factory):
    """Four runs ingested once for the conformance, gate and HTML tests (see ``runs.history``)."""
    from wirecheck.reports.pipeline import warehouse
    from tests.pipeline.runs import write_history

    root = tmp_path_factory.mktemp("history")
    write_history(root / "runs")
    warehouse.ingest(spark, [str(root / "runs" / "*")], str(root / "wh"))
    return root


@pytest.fixture(scope="session")
def report(spark, history):
    """The conformance report of ``history``, written once by the CLI (``report`` job)."""
    from wirecheck.reports.pipeline.__main__ import main

    out = history / "report"
    assert main(["report", "--warehouse", str(history / "wh"), "--out", str(out)], spark=spark) == 0
    return out
