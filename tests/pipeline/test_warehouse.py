"""Ingestion: run directories -> Parquet by date, target and run; incremental and idempotent on (run_id, nodeid)."""

from __future__ import annotations

import json
import shutil

import pytest
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from wirecheck.reports.pipeline import warehouse
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


def test_ingest_partitions_by_date_target_and_run_and_reingest_is_idempotent(spark, tmp_path):
    _two_runs(tmp_path / "runs")
    wh = str(tmp_path / "wh")
    stats = warehouse.ingest(spark, [str(tmp_path / "runs" / "*")], wh)
    assert stats == {"runs": 2, "cases": 3, "skipped": 0}
    partitions = sorted(p.name for p in (tmp_path / "wh" / "cases").glob("date=*"))
    assert partitions == ["date=2026-11-21", "date=2026-11-22"]
    assert len(list((tmp_path / "wh" / "cases").glob("date=*/target=*/run_id=r1"))) == 1
    expected = spark.createDataFrame(
        [("r1", "suites/rustlog/test_framing.py::test_zero[a]", "2026-11-21", VENDOR, VENDOR, False),
         ("r1", "suites/rustlog/test_framing.py::test_zero[b]", "2026-11-21", VENDOR, VENDOR, True),
         ("r2", "suites/rustlog/test_framing.py::test_zero[a]", "2026-11-22", "reference+zero-ok", REFERENCE_ADDRESS,
          False)],
        "run_id string, nodeid string, date string, target string, target_address string, has_transcript boolean not null")

    def current():
        cases = warehouse.load_cases(spark, wh)
        return warehouse.with_transcripts(spark, wh, cases).select(
            "run_id", "nodeid", "date", "target", "target_address",
            F.col("transcript_json").isNotNull().alias("has_transcript"))

    assertDataFrameEqual(current(), expected)
    # the same runs again: skipped (incremental), and forced: the same rows
    assert warehouse.ingest(spark, [str(tmp_path / "runs" / "*")], wh) == {"runs": 0, "cases": 0, "skipped": 2}
    assert warehouse.ingest(spark, [str(tmp_path / "runs" / "r1")], wh, reingest=True)["cases"] == 2
    assertDataFrameEqual(current(), expected)
    assert warehouse.load_runs(spark, wh).count() == 2


def test_a_new_run_is_ingested_alone_and_old_ones_stay(spark, tmp_path):
    root, wh = tmp_path / "runs", str(tmp_path / "wh")
    write_run(root, "r1", [case("r1", "n::a", "OK")])
    warehouse.ingest(spark, [str(root / "*")], wh)
    write_run(root, "r2", [case("r2", "n::a", "FAILED")], started_at="2026-11-22T01:00:00Z")
    assert warehouse.ingest(spark, [str(root / "*")], wh) == {"runs": 1, "cases": 1, "skipped": 1}
    assert sorted((r.run_id, r.verdict) for r in warehouse.load_cases(spark, wh).collect()) == [
        ("r1", "OK"), ("r2", "FAILED")]



def test_runs_tables_of_older_layouts_are_still_read(spark, tmp_path):
    """By date (the date only in directory names) and as one file at the root: both read beside new ingestions,
    which add their own directory and rewrite neither."""
    root, wh = tmp_path / "runs", tmp_path / "wh"
    write_run(root, "r1", [case("r1", "n::a", "OK")])
    warehouse.ingest(spark, [str(root / "*")], str(wh))
    runs = warehouse.load_runs(spark, str(wh))
    runs.write.partitionBy("date").parquet(str(tmp_path / "by-date"))  # the layout before one file
    shutil.rmtree(wh / "runs")
    (tmp_path / "by-date").rename(wh / "runs")
    write_run(root, "r2", [case("r2", "n::a", "OK")], started_at="2026-11-22T01:00:00Z")
    assert warehouse.ingest(spark, [str(root / "*")], str(wh))["runs"] == 1
    assert sorted((r.run_id, r.date) for r in warehouse.load_runs(spark, str(wh)).collect()) == [
        ("r1", "2026-11-21"), ("r2", "2026-11-22")]
    assert list((wh / "runs").glob("date=*")) and len(list((wh / "runs").glob("ingest=*"))) == 1


def test_an_unfinished_run_is_read_again_and_its_rows_replaced(spark, tmp_path):
    root = tmp_path / "runs"
    wh = str(tmp_path / "wh")
    write_run(root, "r1", [case("r1", "n::a", "FAILED"), case("r1", "n::b", "OK")], finished_at=None)  # crashed
    warehouse.ingest(spark, [str(root / "r1")], wh)
    for old in (root / "r1").glob("cases-*.jsonl"):
        old.unlink()
    write_run(root, "r1", [case("r1", "n::a", "OK")], started_at="2026-11-22T01:00:00Z")  # finished, other date
    assert warehouse.ingest(spark, [str(root / "r1")], wh)["runs"] == 1
    assert [(r.nodeid, r.verdict, r.date) for r in warehouse.load_cases(spark, wh).collect()] == [
        ("n::a", "OK", "2026-11-22")]
    assert [r.finished_at for r in warehouse.load_runs(spark, wh).collect()] == ["2026-11-22T01:00:00Z"]


def test_old_and_new_names_of_the_versioned_message_both_load(spark, tmp_path):
    root = tmp_path / "runs"
    old = case("r1", "k::v3", "OK", protocol="kafka", api="Produce", api_version=3, message="fine")
    new = {**case("r1", "k::v9", "FAILED", protocol="kafka"), "schema": "wirecheck.case/2", "message": "why",
           "message_type": "Fetch", "version": 9}
    for record in (new,):
        record.pop("api"), record.pop("api_version")
    write_run(root, "r1", [old, new])
    warehouse.ingest(spark, [str(root / "r1")], str(tmp_path / "wh"))
    rows = sorted((r.nodeid, r.api, r.api_version) for r in warehouse.load_cases(spark, str(tmp_path / "wh")).collect())
    assert rows == [("k::v3", "Produce", 3), ("k::v9", "Fetch", 9)]


def test_a_run_directory_with_a_space_keeps_its_transcripts(spark, tmp_path):
    root = tmp_path / "nightly runs"
    write_run(root, "r1", [case("r1", "n::a", "FAILED", transcript="transcripts/a.json")],
              transcripts={"transcripts/a.json": transcript("n::a")})
    wh = str(tmp_path / "wh")
    warehouse.ingest(spark, [str(root / "*")], wh)
    row = warehouse.with_transcripts(spark, wh, warehouse.load_cases(spark, wh)).first()
    assert json.loads(row.transcript_json)["nodeid"] == "n::a"


def test_an_unreadable_run_file_fails_the_ingestion_naming_it(spark, tmp_path):
    root = tmp_path / "runs"
    write_run(root, "r1", [case("r1", "n::a", "OK")])
    (root / "r1" / "run.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"r1/run\.json"):
        warehouse.ingest(spark, [str(root / "*")], str(tmp_path / "wh"))


def test_ingest_of_nothing_is_an_error(spark, tmp_path):
    with pytest.raises(FileNotFoundError):
        warehouse.ingest(spark, [str(tmp_path / "missing")], str(tmp_path / "wh"))


def test_records_without_run_json_are_ingested_dated_by_their_own_time(spark, tmp_path):
    root = tmp_path / "runs"
    write_run(root, "r1", [case("r1", "n::a", "OK")])
    write_run(root, "crashed", [case("crashed", "n::b", "FAILED", finished_at="2026-11-23T08:00:00Z")])
    (root / "crashed" / "run.json").unlink()  # the writer died before writing it
    wh = str(tmp_path / "wh")
    assert warehouse.ingest(spark, [str(root / "*")], wh) == {"runs": 1, "cases": 2, "skipped": 0}
    rows = {r.run_id: r for r in warehouse.load_cases(spark, wh).collect()}
    assert rows["crashed"].date == "2026-11-23" and rows["crashed"].suite_version is None
    assert rows["r1"].date == "2026-11-21" and rows["r1"].suite_version == "0.1.0"


def test_facts_of_a_run_are_stored_once_in_the_runs_table(spark, tmp_path):
    root, wh = tmp_path / "runs", str(tmp_path / "wh")
    write_run(root, "r1", [case("r1", "n::a", "OK"), case("r1", "n::b", "OK")])
    warehouse.ingest(spark, [str(root / "*")], wh)
    assert {"run_dir", "run_started_at", "ingested_at"}.isdisjoint(warehouse.load_cases(spark, wh).columns)
    (run,) = warehouse.load_runs(spark, wh).collect()
    assert run.run_dir.endswith("/runs/r1") and run.started_at and run.ingested_at is not None


def test_run_directories_are_found_whatever_their_names(spark, tmp_path):
    from wirecheck.reports.pipeline import fs

    root = tmp_path / "runs"
    for name in ("plain", "with space", "with,comma", "ünïcode"):
        write_run(root, name, [case(name, "n::a", "OK")])
    found = fs.expand(spark, str(root / "*" / "run.json"))
    assert [f.rsplit("/", 2)[1] for f in found] == sorted(["plain", "with space", "with,comma", "ünïcode"])
    assert fs.expand(spark, str(root / "*" / "nothing-*.json")) == []
    assert fs.expand(spark, str(tmp_path / "missing")) == []


def test_ingest_leaves_the_session_settings_as_it_found_them(spark, tmp_path):
    root = tmp_path / "runs"
    write_run(root, "r1", [case("r1", "n::a", "FAILED", transcript="transcripts/a.json")],
              transcripts={"transcripts/a.json": transcript("n::a")})
    keys = ("spark.sql.files.minPartitionNum", "spark.sql.files.openCostInBytes")
    before = {key: spark.conf.get(key, None) for key in keys}
    warehouse.ingest(spark, [str(root / "*")], str(tmp_path / "wh"))
    assert {key: spark.conf.get(key, None) for key in keys} == before


def test_concurrent_ingests_into_one_warehouse_lose_no_run(spark, tmp_path):
    """A nightly CI matrix: four ingest processes (each its own Spark), each with its own run, started at once
    into one new warehouse; then two of them again at once (re-ingests). Every run is there, once."""
    import subprocess
    import sys

    root, wh = tmp_path / "runs", str(tmp_path / "wh")
    names = [f"r{n}" for n in range(4)]
    for n, name in enumerate(names):
        write_run(root, name, [case(name, "n::a", "OK"), case(name, "n::b", "FAILED")],
                  started_at=f"2026-11-2{n}T01:00:00Z")

    def ingest_at_once(runs: list[str], *flags: str) -> None:
        procs = [subprocess.Popen([sys.executable, "-m", "wirecheck.reports.pipeline", "ingest", str(root / name),
                                   "--warehouse", wh, *flags], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True) for name in runs]
        outputs = [proc.communicate(timeout=600)[0] for proc in procs]
        assert [proc.returncode for proc in procs] == [0] * len(runs), "\n".join(out[-2000:] for out in outputs)

    ingest_at_once(names)
    ingest_at_once(names[:2], "--reingest")
    assert sorted(r.run_id for r in warehouse.load_runs(spark, wh).collect()) == names
    cases = warehouse.load_cases(spark, wh)
    assert sorted((r.run_id, r.nodeid) for r in cases.collect()) == [(name, n) for name in names
                                                                      for n in ("n::a", "n::b")]
