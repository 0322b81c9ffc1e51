"""Differential mode (--differential): the bundled reference broker is the oracle, every conversation goes to
both servers, and answers that differ outside each protocol's declared volatile fields are DIVERGENT.

Two properties, for every registered protocol: a clean target agrees with the clean oracle on every case of every
suite (no false DIVERGENT, even under --strict), and a faulted reference broker as the target is found, named by
the first differing field, under the clause that covers it, with Hypothesis' shrunk example in the transcript.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.quality.harness import ROOT
from wirecheck.protocols.registry import all_specs

#: protocol -> (fault, case selection, clause the difference is reported under, the shrunk example must match)
FAULTED = {
    "rustlog": ("rustlog.error-details-missing", "test_hostile_frames_property", "rustlog.differential.same-answer",
                r"mutant=Mutant\("),
    "kafka": ("kafka.hw-off-by-one", "test_stateful", "kafka.fetch.high-watermark",
              None),  # a state machine: checked by its number of steps below
    "fluvio": ("fluvio.correlation-id-wrong", "test_hostile_frames_property", "fluvio.differential.same-answer",
               r"seed=0,"),
    "pravega": ("pravega.error-request-id-zero", "test_hostile_frames_property", "pravega.request-id.echo",
                r"seed=0,"),
    "barco": ("barco.stream-id-wrong", "test_hostile_frames_property", "barco.framing.stream-id-echo", r"seed=0,"),
}
MAX_STATE_STEPS = 5  # a machine that fails on its first fetch shrinks to a topic, a check and that fetch


def run_suites(tmp_path: Path, *args: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess, list[dict]]:
    report = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                           "--report-dir", str(report), "--differential", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    records = [json.loads(line) for path in report.glob("*/cases-*.jsonl")
               for line in path.read_text().splitlines() if line.strip()]
    return proc, records


def shrunk_example(report: Path, nodeid_part: str) -> str:
    for path in report.glob("*/transcripts/*.json"):
        transcript = json.loads(path.read_text())
        if nodeid_part in transcript["nodeid"]:
            for event in transcript["events"]:
                if event["kind"] == "note" and event["detail"].startswith("Hypothesis' shrunk example"):
                    return event["detail"]
    return ""


def test_every_protocol_has_a_faulted_differential_case():
    assert set(FAULTED) == set(all_specs())


def test_a_clean_target_agrees_with_the_clean_oracle_everywhere(tmp_path):
    """Every suite, clean reference broker against clean reference broker: no DIVERGENT at all (--strict would
    fail the run for a SHOULD-level one too). A volatile field missing from a protocol's list shows up here."""
    proc, records = run_suites(tmp_path, "suites", "-n", "2", "--strict", timeout=900)
    divergent = [f"{r['case']}: {r['message'][:300]}" for r in records if r["verdict"] == "DIVERGENT"]
    assert not divergent, divergent
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert sum(r["verdict"] == "OK" for r in records) > 1000


@pytest.mark.parametrize("protocol", sorted(FAULTED))
def test_a_faulted_target_diverges_from_the_oracle_and_shrinks(tmp_path, protocol):
    fault, selection, clause, example_pattern = FAULTED[protocol]
    proc, records = run_suites(tmp_path, f"suites/{protocol}", "-p", "no:xdist", "-k", selection,
                               "--reference-fault", fault)
    output = proc.stdout[-4000:] + proc.stderr[-2000:]
    divergent = [r for r in records if r["verdict"] == "DIVERGENT"]
    assert divergent, output
    first = divergent[0]
    assert re.search(r"first difference at \S+: target .+, reference broker .+", first["message"]), first["message"]
    assert first["message"].startswith(f"{clause}:"), first["message"]
    must = all_specs()[protocol].catalogue[clause].level.value == "MUST"
    assert proc.returncode == (1 if must else 0), output  # a SHOULD-level difference fails only with --strict
    example = shrunk_example(tmp_path / "reports", selection)
    assert example, "no shrunk Hypothesis example in the transcript"
    if example_pattern is not None:
        assert re.search(example_pattern, example), example
    else:
        steps = re.findall(r"^state\.(?!teardown)\w+\(", example, flags=re.M)  # rules and invariants
        assert 0 < len(steps) <= MAX_STATE_STEPS, example
