"""The committed clause audit tables (docs/clauses/*.md) are what ``wirecheck clauses`` generates today.

A catalogue, a faults table or a suite that changes without its table regenerated fails here, naming the file and
the command that brings it up to date. Only the protocols shipped under ``protocols/`` have a committed table; one
registered through WIRECHECK_PROTOCOLS (tests/toy/, tests/verdicts/) is left out.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from wirecheck.protocols.registry import all_specs
from wirecheck.reports import clause_audit
from wirecheck.targets.upstream import known_divergences

DOCS = Path(__file__).resolve().parents[2] / "docs" / "clauses"


def shipped_specs() -> dict:
    """The registry's protocols whose SPEC comes from a package of wirecheck.protocols."""
    specs = all_specs()
    return {name: spec for name, spec in specs.items()
            if getattr(sys.modules.get(f"wirecheck.protocols.{name}"), "SPEC", None) is spec}


SHIPPED = shipped_specs()


def test_no_table_without_a_protocol():
    assert sorted(p.name for p in DOCS.glob("*.md")) == sorted(f"{name}.md" for name in SHIPPED), (
        f"docs/clauses/ does not match the shipped protocols: run `{clause_audit.REGENERATE}` "
        "and remove the tables of protocols that are gone")


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_committed_table_is_up_to_date(name):
    path = DOCS / f"{name}.md"
    expected = clause_audit.to_markdown(clause_audit.audit(SHIPPED[name], divergences=known_divergences().get(name, ())))
    committed = path.read_text(encoding="utf-8") if path.exists() else ""
    assert committed == expected, (f"docs/clauses/{name}.md is out of date with the {name} catalogue, faults or "
                                   f"suite: regenerate it with `{clause_audit.REGENERATE}`")


def test_cases_column_counts_the_suite():
    """Cases come from the suite's decorators, also ``@case(CONSTANT)`` naming a module-level string."""
    rows = {row.id: row for row in clause_audit.audit(SHIPPED["kafka"]).rows}
    assert rows["kafka.produce.crc-mismatch"].cases >= 1
    assert rows["kafka.api-versions.advertised-implemented"].cases >= 1


def test_case_decorators_are_read_without_importing():
    source = ('import pytest\ncase = pytest.mark.case\nCLAUSE = "p.a.b"\n'
              '@case("p.a.b", hostile=True)\ndef test_one(): ...\n'
              '@pytest.mark.case("p.a.c")\ndef test_two(): ...\n'
              '@case(CLAUSE)\n@pytest.mark.parametrize("x", [1, 2])\ndef test_three(x): ...\n'
              '@pytest.mark.other("p.a.b")\ndef test_not_a_case(): ...\n')
    assert clause_audit.count_cases(source) == {"p.a.b": 2, "p.a.c": 1}


def test_cells_stay_on_one_line_and_escape_pipes():
    assert clause_audit.markdown_cell("a | b\n  c") == "a \\| b c"


def test_variants_column_reads_the_spec_when_it_has_them():
    """``ProtocolSpec.variants`` (variant name -> clause id) may be added later; the column is filled from it."""
    from types import SimpleNamespace

    kafka = SHIPPED["kafka"]
    spec = SimpleNamespace(name="kafka", catalogue=kafka.catalogue, faults={}, suite=kafka.suite,
                           variants={"strict-crc": "kafka.produce.crc-mismatch"})
    rows = {row.id: row for row in clause_audit.audit(spec, case_counts={}).rows}
    assert rows["kafka.produce.crc-mismatch"].variants == ("strict-crc",)
