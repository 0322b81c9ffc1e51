"""A real client scenario against the reference broker leaves its evidence (targets/client_capture.py): the pcap of
the client's own connections (every request naming the scenario's client id, none of the suite's), the decoded
client transcript and the client's whole log; a failing scenario's verdict names them without --keep-transcripts."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wirecheck.protocols.kafka import SPEC
from wirecheck.protocols.kafka.capture import client_id
from wirecheck.reports.pipeline.captures.flows import read_capture

ROOT = Path(__file__).resolve().parents[2]
CASE = "kafka.clients.kafka-python.produce-consume"
PRODUCE, FETCH = 0, 1

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("kafka") is None, reason="kafka-python is not installed"),
    pytest.mark.skipif(shutil.which("tcpdump") is None or os.geteuid() != 0,
                       reason="tcpdump on lo needs tcpdump and root (CI installs it and runs as root)"),
]


def scenario(tmp_path, *args) -> tuple[dict, Path, str]:
    """Run the kafka-python produce-consume scenario against the reference broker: (its record, run dir, output)."""
    report = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites/kafka/test_clients.py", "-q", "-p",
                           "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=", "-n", "0", "--report-dir",
                           str(report), "-k", "test_produce_consume and kafka-python", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    records = [json.loads(line) for path in report.glob("*/cases-*.jsonl") for line in path.read_text().splitlines()]
    assert [record["case"] for record in records] == [CASE], proc.stdout[-3000:] + proc.stderr[-3000:]
    return records[0], next(report.glob("*/run.json")).parent, proc.stdout


def requests_by_client_id(pcap: Path) -> dict[str | None, list[int]]:
    """Client id -> the api keys of the requests carrying it, over every connection of the capture."""
    seen: dict[str | None, list[int]] = {}
    for flow in read_capture(pcap).flows:
        data, problems = flow.to_server.assemble()
        assert not problems, problems
        frames, used, problem = SPEC.framing.split(data, 1 << 30)
        assert problem is None and used == len(data)
        for frame in frames:
            seen.setdefault(client_id(frame), []).append(int.from_bytes(frame[4:6], "big"))
    return seen


def test_a_passing_scenario_keeps_the_clients_pcap_decoded_frames_and_log_with_keep_transcripts(tmp_path):
    record, run_dir, out = scenario(tmp_path, "--keep-transcripts")
    assert record["verdict"] == "OK", out
    [capture] = record["client_capture"]
    assert capture["captured"] and capture["by"] == "client id" and capture["connections"] >= 1, capture
    ours = capture["client_id"]
    by_id = requests_by_client_id(run_dir / capture["pcap"])
    assert list(by_id) == [ours], by_id  # the client's connections only: none of the suite's own (wirecheck/...)
    assert PRODUCE in by_id[ours] and FETCH in by_id[ours]
    document = json.loads((run_dir / capture["transcript"]).read_text())
    decoded = [event.get("decoded", "") for event in document["events"]]
    assert any(text.startswith("Produce v") and "request" in text and ours in text for text in decoded)
    assert any(text.startswith("Produce v") and "response" in text for text in decoded)
    assert any(text.startswith("Fetch v") and "response" in text for text in decoded)
    log = (run_dir / capture["log"]).read_text()
    assert log.startswith("=== ") and "python_driver kafka-python (exit status 0" in log
    # the case's own transcript says what was kept
    transcript = json.loads((run_dir / record["transcript"]).read_text())
    assert any("client capture:" in event.get("detail", "") and ours in event.get("detail", "")
               for event in transcript["events"])


def test_a_passing_scenario_keeps_nothing_without_keep_transcripts(tmp_path):
    record, run_dir, out = scenario(tmp_path)
    assert record["verdict"] == "OK", out
    [capture] = record["client_capture"]
    assert capture["captured"] and "pcap" not in capture and not list(run_dir.glob("transcripts/*.pcap"))


def test_a_failing_scenarios_verdict_names_the_clients_capture_and_log(tmp_path):
    record, run_dir, out = scenario(tmp_path, "--reference-fault", "kafka.base-offset-echoed")
    assert record["verdict"] == "FAILED", out
    [capture] = record["client_capture"]
    for kind in ("pcap", "transcript", "log"):
        assert capture[kind] in record["message"] and (run_dir / capture[kind]).stat().st_size > 0
    assert PRODUCE in requests_by_client_id(run_dir / capture["pcap"])[capture["client_id"]]
