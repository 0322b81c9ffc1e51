"""The client scenarios can fail: against the reference broker with each fault of ``ProtocolSpec.client_faults``,
every client scenario the fault is declared to break is FAILED under its own clause (only those cases run).

That every client scenario passes against the clean broker is the suites' run in the test command itself, where
WIRECHECK_REQUIRE_CLIENTS=1 (CI) makes a missing client an ERROR instead of NOT-RUN."""

from __future__ import annotations

import pytest

from tests.quality.expected import EXTRA_ARGS
from tests.quality.harness import run_suite
from wirecheck.protocols.registry import all_specs

SPECS = all_specs()
#: fault -> how the suite logs in itself where its default login (PLAIN, empty authzid) is what the fault breaks
OWN_LOGIN = {"kafka.sasl-plain-authzid-required": ["--target-option", "kafka.sasl-mechanism=SCRAM-SHA-256"]}
CLIENT_FAULTS = [(name, fault) for name, spec in sorted(SPECS.items()) for fault in sorted(spec.client_faults)]


def test_every_client_clause_has_a_fault():
    for name, spec in SPECS.items():
        clauses = {c.id for c in spec.catalogue if c.id.startswith(f"{name}.clients.")}
        broken = {clause for clauses_of in spec.client_faults.values() for clause in clauses_of}
        assert clauses == broken, (name, sorted(clauses ^ broken))


@pytest.mark.parametrize(("protocol", "fault"), CLIENT_FAULTS, ids=[fault for _, fault in CLIENT_FAULTS])
def test_a_client_fault_fails_each_scenario_it_breaks(tmp_path, protocol, fault):
    broken = set(SPECS[protocol].client_faults[fault])
    # a SASL fault needs a SASL broker (EXTRA_ARGS), as in test_faults.py
    run = run_suite(f"{protocol}/test_clients.py", tmp_path, faults=[fault], timeout=600,
                    extra=[*EXTRA_ARGS.get(fault, ()), *OWN_LOGIN.get(fault, ()), "-k", " or ".join(sorted(broken))])
    assert broken <= run.clauses_with("FAILED"), (sorted(broken - run.clauses_with("FAILED")), run.by_verdict())
