"""Capture conformance on real loopback traffic of the reference broker and on captures with planted violations."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reports.pipeline.__main__ import main
from reports.pipeline.captures.job import run_capture_job
from tests.pipeline.injected import EXPECTED, write_injected
from tests.pipeline.loopback import TCPDUMP, capture_broker_traffic

CAPTURES = Path(__file__).resolve().parents[1] / "captures"


def _violations(spark, out: Path) -> set[tuple]:
    return {(r.protocol, r.side, r.clause) for r in spark.read.parquet(str(out / "violations.parquet")).collect()}


def test_planted_violations_are_all_reported_and_bad_files_never_crash(spark, tmp_path):
    paths = write_injected(tmp_path / "captures")
    out = tmp_path / "out"
    result = run_capture_job(spark, [str(tmp_path / "captures" / "*.pcap")], str(out))
    assert _violations(spark, out) == EXPECTED
    files = {Path(r.file).name: r for r in spark.read.parquet(str(out / "files.parquet")).collect()}
    assert set(files) == {p.name for p in paths.values()}
    assert not files["garbage.pcap"].ok and "unreadable" in files["garbage.pcap"].problems
    assert not files["truncated.pcap"].ok and files["truncated.pcap"].packets > 0
    flows = {Path(r.file).name: r for r in spark.read.parquet(str(out / "flows.parquet")).collect()}
    assert flows["unknown-protocol.pcap"].protocol is None
    assert "unknown protocol" in flows["unknown-protocol.pcap"].problems
    assert result["violations"] >= len(EXPECTED)
    violations = spark.read.parquet(str(out / "violations.parquet"))
    row = violations.filter("clause = 'kafka.header.correlation-id'").first()
    assert row.frame_index == 4 and row.flow == "127.0.0.1:53211 > 127.0.0.1:9092" and row.hex.startswith("000000")
    html = (out / "index.html").read_text()
    assert "kafka.capture.error-code-known" in html and "https://" not in html
    summary = json.loads((out / "summary.json").read_text())
    assert {c["clause"] for c in summary["by_clause"]} == {clause for _, _, clause in EXPECTED}


def test_committed_loopback_captures(spark, tmp_path):
    """Real tcpdump captures kept in tests/captures (made by test_live_loopback_capture's helper)."""
    out = tmp_path / "out"
    assert main(["captures", str(CAPTURES / "rustlog-loopback*.pcap"), "--out", str(out)], spark=spark) == 0
    flows = {Path(r.file).name: r for r in spark.read.parquet(str(out / "flows.parquet")).collect()}
    clean, faulted = flows["rustlog-loopback.pcap"], flows["rustlog-loopback-next-offset-fault.pcap"]
    for flow in (clean, faulted):
        assert (flow.protocol, flow.detected_by, flow.state) == ("rustlog", "bytes", "complete")
        assert (flow.client_frames, flow.server_frames) == (5, 5)
    assert clean.violations == 0 and faulted.violations == 1
    assert _violations(spark, out) == {("rustlog", "server", "rustlog.fetch.next-offset")}


@pytest.mark.skipif(TCPDUMP is None, reason="tcpdump is not installed (apt-get install tcpdump)")
@pytest.mark.skipif(os.geteuid() != 0, reason="capturing on lo needs root (or CAP_NET_RAW for tcpdump)")
def test_live_loopback_capture(spark, tmp_path):
    clean, clean_port, answers = capture_broker_traffic(tmp_path / "clean.pcap")
    assert answers[3]["next_offset"] == 3
    faulted, faulted_port, answers = capture_broker_traffic(tmp_path / "faulted.pcap", ["next-offset-off-by-one"])
    assert answers[3]["next_offset"] == 2  # the fault is live: the passive check must see it
    out = tmp_path / "out"
    run_capture_job(spark, [str(clean), str(faulted)], str(out), {clean_port: "rustlog", faulted_port: "rustlog"})
    flows = {Path(r.file).name: r for r in spark.read.parquet(str(out / "flows.parquet")).collect()}
    assert {name: (f.protocol, f.detected_by, f.state, f.client_frames, f.server_frames, f.violations)
            for name, f in flows.items()} == {"clean.pcap": ("rustlog", "port", "complete", 5, 5, 0),
                                              "faulted.pcap": ("rustlog", "port", "complete", 5, 5, 1)}
    assert _violations(spark, out) == {("rustlog", "server", "rustlog.fetch.next-offset")}
