"""Capture conformance on real loopback traffic of the reference broker and on captures with planted violations."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from wirecheck.reports.pipeline.__main__ import main
from wirecheck.reports.pipeline.captures.job import run_capture_job
from tests.pipeline.injected import EXPECTED, write_injected
from tests.pipeline.loopback import TCPDUMP, capture_broker_traffic

CAPTURES = Path(__file__).resolve().parents[1] / "captures"


def _violations(spark, out: Path) -> set[tuple]:
    return {(r.protocol, r.side, r.clause) for r in spark.read.parquet(str(out / "violations.parquet")).collect()}


@pytest.fixture(scope="module")
def analysed(spark, tmp_path_factory):
    """One capture job (through the CLI) over the planted captures and the committed loopback captures."""
    root = tmp_path_factory.mktemp("captures")
    paths = write_injected(root / "injected")
    out = root / "out"
    assert main(["captures", str(root / "injected" / "*.pcap"), str(CAPTURES / "*-loopback*.pcap"),
                 "--out", str(out)], spark=spark) == 0
    return paths, out, json.loads((out / "summary.json").read_text())


def _planted(spark, out: Path):
    return spark.read.parquet(str(out / "violations.parquet")).filter(~F.col("file").contains("loopback"))


def test_planted_violations_are_all_reported_and_bad_files_never_crash(spark, analysed):
    paths, out, result = analysed
    assert {(r.protocol, r.side, r.clause) for r in _planted(spark, out).collect()} == EXPECTED
    files = {Path(r.file).name: r for r in spark.read.parquet(str(out / "files.parquet")).collect()}
    assert {p.name for p in paths.values()} <= set(files)
    assert not files["garbage.pcap"].ok and "unreadable" in files["garbage.pcap"].problems
    assert not files["truncated.pcap"].ok and files["truncated.pcap"].packets > 0
    flows = {Path(r.file).name: r for r in spark.read.parquet(str(out / "flows.parquet")).collect()}
    assert flows["unknown-protocol.pcap"].protocol is None
    assert "unknown protocol" in flows["unknown-protocol.pcap"].problems
    assert result["violations"] >= len(EXPECTED)
    violations = _planted(spark, out)
    row = violations.filter("clause = 'kafka.header.correlation-id'").first()
    assert row.frame_index == 4 and row.flow == "127.0.0.1:53211 > 127.0.0.1:9092" and row.hex.startswith("000000")
    html = (out / "index.html").read_text()
    assert "kafka.capture.error-code-known" in html and "https://" not in html
    assert {c["clause"] for c in result["by_clause"]} == {clause for _, _, clause in EXPECTED}


def test_committed_loopback_captures(spark, analysed):
    """Real tcpdump captures kept in tests/captures (made by tests/pipeline/loopback.py)."""
    _, out, _ = analysed
    flows = {Path(r.file).name: r for r in spark.read.parquet(str(out / "flows.parquet")).collect()}
    clean, faulted = flows["rustlog-loopback.pcap"], flows["rustlog-loopback-next-offset-fault.pcap"]
    for flow in (clean, faulted):
        assert (flow.protocol, flow.detected_by, flow.state) == ("rustlog", "bytes", "complete")
        assert (flow.client_frames, flow.server_frames) == (5, 5)
    assert clean.violations == 0 and faulted.violations == 1
    loopback = spark.read.parquet(str(out / "violations.parquet")).filter(F.col("file").contains("loopback"))
    assert sorted((Path(r.file).name, r.side, r.frame_index, r.clause) for r in loopback.collect()) == [
        ("kafka-loopback-correlation-fault.pcap", "server", 0, "kafka.header.correlation-id"),
        ("kafka-loopback-correlation-fault.pcap", "server", 1, "kafka.header.correlation-id"),
        ("rustlog-loopback-next-offset-fault.pcap", "server", 3, "rustlog.fetch.next-offset")]


def test_committed_kafka_python_capture_is_clean(spark, analysed):
    """kafka-python creating a topic, producing and consuming through the reference Kafka broker."""
    _, out, _ = analysed
    flows = [r for r in spark.read.parquet(str(out / "flows.parquet")).collect()
             if Path(r.file).name == "kafka-loopback.pcap"]
    assert len(flows) >= 3
    assert {(f.protocol, f.detected_by, f.state) for f in flows} == {("kafka", "bytes", "complete")}
    assert sum(f.client_frames for f in flows) >= 10 and sum(f.violations for f in flows) == 0


@pytest.mark.skipif(TCPDUMP is None, reason="tcpdump is not installed (apt-get install tcpdump)")
@pytest.mark.skipif(os.geteuid() != 0, reason="capturing on lo needs root (or CAP_NET_RAW for tcpdump)")
def test_live_loopback_capture(spark, tmp_path):
    clean, clean_port, answers = capture_broker_traffic(tmp_path / "clean.pcap")
    assert answers[3]["next_offset"] == 3
    faulted, faulted_port, answers = capture_broker_traffic(tmp_path / "faulted.pcap", ["rustlog.next-offset-off-by-one"])
    assert answers[3]["next_offset"] == 2  # the fault is live: the passive check must see it
    out = tmp_path / "out"
    run_capture_job(spark, [str(clean), str(faulted)], str(out), {clean_port: "rustlog", faulted_port: "rustlog"})
    flows = {Path(r.file).name: r for r in spark.read.parquet(str(out / "flows.parquet")).collect()}
    assert {name: (f.protocol, f.detected_by, f.state, f.client_frames, f.server_frames, f.violations)
            for name, f in flows.items()} == {"clean.pcap": ("rustlog", "port", "complete", 5, 5, 0),
                                              "faulted.pcap": ("rustlog", "port", "complete", 5, 5, 1)}
    assert _violations(spark, out) == {("rustlog", "server", "rustlog.fetch.next-offset")}


def test_a_capture_pattern_that_matches_nothing_fails_naming_it(spark, tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere/x.pcap"):
        run_capture_job(spark, [str(tmp_path / "nowhere" / "x.pcap")], str(tmp_path / "out"))


def test_outputs_go_to_a_uri_and_files_are_named_by_uri(spark, analysed, tmp_path):
    paths, _, _ = analysed
    out = f"file://{tmp_path}/uri out"
    run_capture_job(spark, [str(next(iter(paths.values())))], out)
    files = spark.read.parquet(f"{out}/files.parquet").collect()
    assert len(files) == 1 and files[0].file.startswith("file:")
    assert (tmp_path / "uri out" / "index.html").is_file() and (tmp_path / "uri out" / "summary.json").is_file()


def test_flows_are_dealt_out_evenly_to_the_checking_partitions():
    from wirecheck.reports.pipeline.captures.job import _deal

    items = [("file", "a.pcap"), *[("flow", n) for n in range(3)], ("file", "b.pcap"), *[("flow", n) for n in range(3, 6)]]
    dealt = list(_deal(1, iter(items), 4))
    assert [part for part, (kind, _) in dealt if kind == "flow"] == [1, 2, 3, 0, 1, 2]
    assert {part for part, (kind, _) in dealt if kind == "file"} == {1}
    assert [item for _, item in dealt] == items  # nothing lost or reordered
