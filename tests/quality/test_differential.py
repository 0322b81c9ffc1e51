"""Differential mode (--differential): the bundled reference broker is the oracle, every conversation goes to
both servers, and answers that differ outside each protocol's declared volatile fields are noted beside the case's
own verdict (DIVERGENT only under --strict, for a case that passed its checks).

Properties: a clean target agrees with the clean oracle on every case of every suite (no difference at all); a
faulted reference broker is FAILED under the fault's clause, as without --differential, with the first differing
field noted; a server we did not write gets the same verdicts with and without it. The variants (other permitted
readings) pass with --differential in tests/quality/test_variants.py.
"""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.quality import independent
from tests.quality.expected import EXPECTED
from tests.quality.harness import ROOT, run_suite
from tests.quality.independent_expected import EXPECTED as INDEPENDENT
from wirecheck.protocols.registry import all_specs
from wirecheck.protocols.verdicts import ANSWERED_OTHERWISE

#: protocol -> a fault the differential mode runs against (the reference broker faulted as the target) and the
#: suite module it runs: the case's own check reports the fault under its clause, and the difference is noted
FAULTED = {
    "rustlog": ("rustlog.error-details-missing", "suites/rustlog/test_requests.py"),
    "kafka": ("kafka.hw-off-by-one", "suites/kafka/test_produce_fetch.py"),
    "fluvio": ("fluvio.correlation-id-wrong", "suites/fluvio/test_framing.py"),
    "pravega": ("pravega.error-request-id-zero", "suites/pravega/test_framing.py"),
    "barco": ("barco.stream-id-wrong", "suites/barco/test_producer.py"),
}


def run_suites(tmp_path: Path, *args: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess, list[dict]]:
    report = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                           "--report-dir", str(report), "--differential", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    records = [json.loads(line) for path in report.glob("*/cases-*.jsonl")
               for line in path.read_text().splitlines() if line.strip()]
    return proc, records


def noted_differences(report: Path) -> list[str]:
    return [event["detail"] for path in report.glob("*/transcripts/*.json")
            for event in json.loads(path.read_text())["events"]
            if event["kind"] == "note" and event["detail"].startswith("differential: first difference at")]


def test_every_protocol_has_a_faulted_differential_case():
    assert set(FAULTED) == set(all_specs())


def test_a_clean_target_agrees_with_the_clean_oracle_everywhere(tmp_path):
    """Every suite, clean reference broker against clean reference broker: no difference at all (--strict would
    make one DIVERGENT and fail the run). A volatile field missing from a protocol's list shows up here."""
    # the real-client cases are never compared (their traffic is not mirrored): left out
    proc, records = run_suites(tmp_path, "suites", "-n", "2", "--strict", "-k", "not clients", timeout=900)
    differing = [f"{r['case']}: {r['message'][:300]}" for r in records
                 if r["verdict"] == "DIVERGENT" or r["message"].startswith(ANSWERED_OTHERWISE)]
    assert not differing, differing
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert sum(r["verdict"] == "OK" for r in records) > 1000


@pytest.mark.parametrize("protocol", sorted(FAULTED))
def test_a_faulted_target_fails_its_clause_and_the_difference_is_noted(tmp_path, protocol):
    """The differential mode changes no verdict: the fault is FAILED under its own clause by the case's check, as
    without --differential, and the transcripts name the first differing field."""
    fault, module = FAULTED[protocol]
    clause = EXPECTED[protocol][fault]
    proc, records = run_suites(tmp_path, module, "-p", "no:xdist", "--reference-fault", fault)
    output = proc.stdout[-4000:] + proc.stderr[-2000:]
    must = all_specs()[protocol].catalogue[clause].level.value == "MUST"
    reported = {r["clause"] for r in records if r["verdict"] == ("FAILED" if must else "NON-STRICT")}
    assert clause in reported, (reported, output)
    assert not [r for r in records if r["verdict"] in ("DIVERGENT", "ERROR")], output
    assert proc.returncode == (1 if must else 0), output  # a SHOULD clause fails the run only with --strict
    notes = noted_differences(tmp_path / "reports")
    assert notes and all(re.search(r"first difference at \S+: target .+, reference broker .+", n) for n in notes), notes


def test_strict_makes_a_difference_that_passed_the_checks_divergent(tmp_path):
    """RustLog's error details missing pass the hostile frames' own checks (they judge the code); the answer
    still differs from the reference broker's: noted without --strict, DIVERGENT with it."""
    args = ("suites/rustlog/test_robustness.py", "-p", "no:xdist", "-k", "test_hostile_frames_property",
            "--reference-fault", "rustlog.error-details-missing")
    proc, records = run_suites(tmp_path / "lenient", *args)
    assert proc.returncode == 0 and any(r["message"].startswith(ANSWERED_OTHERWISE) for r in records), proc.stdout
    proc, records = run_suites(tmp_path / "strict", *args, "--strict")
    divergent = [r for r in records if r["verdict"] == "DIVERGENT"]
    assert divergent and divergent[0]["message"].startswith("rustlog.differential.same-answer:"), proc.stdout[-3000:]
    assert proc.returncode == 1


#: CI compares on the independent Kafka server; the full quality profile (WIRECHECK_QUALITY=full) on Pravega's too
INDEPENDENT_DIFFERENTIAL = ["kafka", "pravega"] if os.environ.get("WIRECHECK_QUALITY") == "full" else ["kafka"]


@pytest.mark.parametrize("protocol", INDEPENDENT_DIFFERENTIAL)
def test_an_independent_server_gets_the_same_verdicts_with_and_without_differential(tmp_path, protocol):
    """A server we did not write, with a deliberate defect: --differential reports the same FAILED clauses as a
    plain run, with no ERROR (a difference never crashes the tool or stops a case at its first frame)."""
    defect, clause = sorted(INDEPENDENT[protocol].items())[0]
    server = independent.start(protocol, tmp_path / "server", [defect])
    try:
        plain = run_suite(protocol, tmp_path / "plain", extra=["--target", server.target], strict=False)
        proc, records = run_suites(tmp_path / "differential", f"suites/{protocol}", "--target", server.target,
                                   "-o", "addopts=", "-k", "not clients")
    finally:
        server.stop()
    verdicts = {(r["nodeid"], r["verdict"]) for r in records if r["verdict"] in ("FAILED", "BLOCKED", "ERROR")}
    assert clause in plain.clauses_with("FAILED"), plain.by_verdict()
    assert verdicts == {(r["nodeid"], r["verdict"]) for r in plain.records
                        if r["verdict"] in ("FAILED", "BLOCKED", "ERROR")}, proc.stdout[-3000:]
