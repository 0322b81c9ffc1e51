"""README's numbers and its failure example are facts about this checkout: the protocol table's counts (cases
collected, faults, MUST clauses with a fault, variants) come from the registry and the suites, and the "Reading
a failure" example is what the named case prints against the named fault today."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from wirecheck.protocols.registry import all_specs
from wirecheck.reports.clause_audit import audit

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TABLE_NAMES = {"RustLog": "rustlog", "Kafka": "kafka", "Fluvio": "fluvio", "Pravega": "pravega", "Barco": "barco"}


def _rows() -> dict[str, list[str]]:
    rows = {}
    for line in README.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        for word, protocol in TABLE_NAMES.items():
            if line.startswith(f"| {word}") and len(cells) == 8:  # the last column: the upstream server
                rows[protocol] = cells
    return rows


def collected(protocol: str) -> int:
    out = subprocess.run([sys.executable, "-m", "pytest", f"suites/{protocol}", "--collect-only", "-q",
                          "-p", "no:cacheprovider", "-o", "addopts="], cwd=ROOT, capture_output=True, text=True,
                         timeout=300).stdout
    return int(re.search(r"(\d+) tests? collected", out).group(1))


@pytest.mark.parametrize("protocol", sorted(TABLE_NAMES.values()))
def test_the_protocol_table_counts_are_current(protocol):
    spec = all_specs()[protocol]
    summary = audit(spec).summary
    row = _rows()[protocol]
    cases = int(re.match(r"(\d+) cases", row[2]).group(1))
    breakable = summary.must - summary.must_unbreakable
    current = (collected(protocol), str(len(spec.faults)), f"{summary.must_with_fault}/{breakable}",
               str(len(spec.variants or {})))
    assert (cases, row[4], row[5], row[6]) == current, f"README's {protocol} row is stale: write {current}"


def test_the_failure_example_is_what_the_suite_prints(tmp_path):
    example = README.split("## Reading a failure", 1)[1].split("```", 2)[1]
    reproduce = re.search(r"reproduce (pytest .*)", example).group(1).split()
    proc = subprocess.run([sys.executable, "-m", *reproduce, "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-o", "addopts=", "--report-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    printed = proc.stdout
    for line in example.strip().splitlines()[:7]:  # verdict, clause, source, expected, actual, target, reproduce
        shown = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line.strip())
        assert shown in re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", printed), (shown, printed[-3000:])
