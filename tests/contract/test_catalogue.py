"""Every clause of a catalogue is checked somewhere, every case names a clause that exists, and the catalogue
is well formed."""

from __future__ import annotations

from wirecheck.protocols.clauses import Level, engine_clauses
from tests.contract.sources import case_ids, module_files, protocol_sources, text_of
from wirecheck.reports.clause_audit import audit


def test_every_case_names_a_known_clause(spec):
    named = case_ids(module_files(spec.suite))
    assert named, f"{spec.suite} has no cases"
    assert sorted(named - {c.id for c in spec.catalogue}) == []


def test_every_clause_is_exercised(spec):
    """A clause is exercised when a case names it, a check in the suite or strategies raises it, or the
    protocol's capture checks report it. The liveness clause is the runner's: it is checked after every hostile
    case, so a protocol with a hostile case exercises it. The engine's own clauses (differential mode) are raised
    by the engine for every protocol (tests/quality/test_differential.py)."""
    text = text_of(protocol_sources(spec))
    if "hostile=True" in text:
        text += f'"{spec.name}.robustness.survives"'
    text += "".join(f'"{clause.id}"' for clause in engine_clauses(spec.name))
    client_cases = {row.id for row in audit(spec).rows if ".clients." in row.id and row.cases}  # clients_case
    assert [c.id for c in spec.catalogue if f'"{c.id}"' not in text and c.id not in client_cases] == []


def test_clause_ids_belong_to_the_protocol(spec):
    assert [c.id for c in spec.catalogue if not c.id.startswith(f"{spec.name}.")] == []


def test_should_clauses_carry_their_decision(spec):
    assert [c.id for c in spec.catalogue if c.level is Level.SHOULD and not c.decision] == []


def test_the_liveness_clause_exists(spec):
    """The runner reports a target that stops answering after a hostile case under <name>.robustness.survives."""
    assert f"{spec.name}.robustness.survives" in spec.catalogue


def test_every_decision_has_a_variant_or_says_why_not(spec):
    """Variants are the dual of faults: a decision (another reading was possible) is proven harmless to correct
    servers by a reference-broker variant taking the other reading, which the whole suite passes
    (tests/quality/test_variants.py). A decision the spec leaves no room on says why in ``sole_reading``."""
    variants = set(spec.variants.values())
    undecided = [c.id for c in spec.catalogue
                 if c.decision and c.id not in {e.id for e in engine_clauses(spec.name)}
                 and c.id not in variants and not c.sole_reading]
    assert undecided == []


def test_a_sole_reading_belongs_to_a_decision_without_variant(spec):
    variants = set(spec.variants.values())
    assert [c.id for c in spec.catalogue if c.sole_reading and (not c.decision or c.id in variants)] == []
