"""The Fluvio clause catalogue: every clause is checked somewhere, every case names a clause that exists, and every
SHOULD clause says what it decided."""

import re
from pathlib import Path

from protocols.clauses import Level
from protocols.fluvio.clauses import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "suites" / "fluvio").glob("*.py")) + [ROOT / "strategies" / "fluvio.py"]


def _text() -> str:
    return "".join(p.read_text(encoding="utf-8") for p in SOURCES)


def test_every_clause_is_used_by_the_suite():
    text = _text()
    assert [c.id for c in CATALOGUE if f'"{c.id}"' not in text] == []


def test_every_case_names_a_known_clause():
    named = set(re.findall(r'@case\("([^"]+)"', _text()))
    assert named and named <= {c.id for c in CATALOGUE}


def test_should_clauses_carry_their_decision():
    assert [c.id for c in CATALOGUE if c.level is Level.SHOULD and not c.decision] == []
