"""Self-validation: every suite fails against each faulted reference broker, naming the clause the fault breaks,
and passes against the clean broker (every suite, --strict: tests/quality/test_differential.py, which compares it
with a second clean broker too). The suites run as users run them (a separate pytest process that starts
the broker through its CLI); only their per-case records are read back."""

import pytest

from tests.quality.expected import EXPECTED, EXTRA_ARGS, SCOPES
from tests.quality.harness import broker_faults, run_suite

FAULTS = [(protocol, fault) for protocol, table in sorted(EXPECTED.items()) for fault in sorted(table)]


@pytest.mark.parametrize("protocol", sorted(EXPECTED))
def test_every_broker_fault_has_an_expected_clause(protocol):
    assert broker_faults(protocol) == set(EXPECTED[protocol])


@pytest.mark.parametrize(("protocol", "fault"), FAULTS, ids=[f for _, f in FAULTS])
def test_fault_is_caught_naming_its_clause(tmp_path, protocol, fault):
    clause, scope = EXPECTED[protocol][fault], SCOPES.get(fault)
    run = run_suite(f"{protocol}/{scope}.py" if scope else protocol, tmp_path, faults=[fault], expect=clause,
                    extra=EXTRA_ARGS.get(fault, []))
    failed = run.clauses_with("FAILED")
    assert run.returncode == 1, run.tail()
    assert clause in failed, f"{fault}: expected {clause} among failed clauses {sorted(failed)}"
    assert not run.clauses_with("ERROR"), run.by_verdict().get("ERROR")


@pytest.mark.parametrize("protocol", sorted(EXPECTED))
def test_every_expected_clause_is_in_the_catalogue(protocol):
    from wirecheck.protocols.registry import spec_for

    catalogue = spec_for(protocol).catalogue
    for fault, clause in EXPECTED[protocol].items():
        assert catalogue[clause].id == clause, fault


def test_every_scope_names_a_known_fault_and_suite_module():
    from pathlib import Path

    known = {fault: protocol for protocol, table in EXPECTED.items() for fault in table}
    for fault, module in SCOPES.items():
        assert fault in known, fault
        assert (Path(__file__).resolve().parents[2] / "suites" / known[fault] / f"{module}.py").exists(), fault
