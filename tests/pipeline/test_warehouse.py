"""Ingestion: run directories -> Parquet partitioned by date and target, idempotent on (run_id, nodeid)."""

from __future__ import annotations

from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from reports.pipeline import warehouse
from tests.pipeline.runs import REFERENCE_ADDRESS, VENDOR, case, transcript, write_run


def _two_runs(root):
    write_run(root, "r1", [case("r1", "suites/rustlog/test_framing.py::test_zero[a]", "OK"),
                           case("r1", "suites/rustlog/test_framing.py::test_zero[b]", "FAILED",
                                transcript="transcripts/zero-b.json")],
              transcripts={"transcripts/zero-b.json": transcript("suites/rustlog/test_framing.py::test_zero[b]")},
              workers=2)
    write_run(root, "r2", [case("r2", "suites/rustlog/test_framing.py::test_zero[a]", "OK",
                                target=REFERENCE_ADDRESS)],
              started_at="2026-11-22T01:00:00Z",
              # one "*" entry written before the ephemeral ports were known, as the run writer does
              targets={"*": {"address": "reference broker", "reference": True, "faults": ["zero-ok"]}})


def test_ingest_partitions_by_date_and_stable_target_and_reingest_is_idempotent(spark, tmp_path):
    _two_runs(tmp_path / "runs")
    wh = str(tmp_path / "wh")
    stats = warehouse.ingest(spark, [str(tmp_path / "runs" / "*")], wh)
    assert stats == {"runs": 2, "cases": 3}
    partitions = sorted(p.name for p in (tmp_path / "wh" / "cases").glob("date=*"))
    assert partitions == ["date=2026-11-21", "date=2026-11-22"]
    expected = spark.createDataFrame(
        [("r1", "suites/rustlog/test_framing.py::test_zero[a]", "2026-11-21", VENDOR, VENDOR, False),
         ("r1", "suites/rustlog/test_framing.py::test_zero[b]", "2026-11-21", VENDOR, VENDOR, True),
         ("r2", "suites/rustlog/test_framing.py::test_zero[a]", "2026-11-22", "reference+zero-ok", REFERENCE_ADDRESS,
          False)],
        "run_id string, nodeid string, date string, target string, target_address string, has_transcript boolean not null")

    def current():
        return warehouse.load_cases(spark, wh).select(
            "run_id", "nodeid", "date", "target", "target_address",
            F.col("transcript_json").isNotNull().alias("has_transcript"))

    assertDataFrameEqual(current(), expected)
    warehouse.ingest(spark, [str(tmp_path / "runs" / "r1")], wh)  # again, one run of the two
    assertDataFrameEqual(current(), expected)
    assert warehouse.load_runs(spark, wh).count() == 2


def test_reingest_replaces_a_rewritten_record(spark, tmp_path):
    root = tmp_path / "runs"
    wh = str(tmp_path / "wh")
    write_run(root, "r1", [case("r1", "n::a", "FAILED")])
    warehouse.ingest(spark, [str(root / "r1")], wh)
    write_run(root, "r1", [case("r1", "n::a", "OK")])  # the writer finished the run after a crash
    warehouse.ingest(spark, [str(root / "r1")], wh)
    assert [r.verdict for r in warehouse.load_cases(spark, wh).collect()] == ["OK"]


def test_ingest_of_nothing_is_an_error(spark, tmp_path):
    import pytest

    with pytest.raises(FileNotFoundError):
        warehouse.ingest(spark, [str(tmp_path / "missing")], str(tmp_path / "wh"))
