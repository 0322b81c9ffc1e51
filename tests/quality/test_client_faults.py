"""The client scenarios can fail: against the reference broker with each fault of ``ProtocolSpec.client_faults``,
every client scenario the fault is declared to break is FAILED under its own clause; against the clean broker,
every client scenario runs and passes (a missing client is a failure here: CI installs them all)."""

from __future__ import annotations

import pytest

from tests.quality.harness import run_suite
from wirecheck.protocols.registry import all_specs

SPECS = all_specs()
CLIENT_FAULTS = [(name, fault) for name, spec in sorted(SPECS.items()) for fault in sorted(spec.client_faults)]


def client_suite(protocol: str) -> str:
    return f"{protocol}/test_clients.py"


@pytest.mark.parametrize("protocol", sorted(name for name, spec in SPECS.items() if spec.clients))
def test_every_client_scenario_runs_and_passes_against_the_clean_broker(tmp_path, protocol):
    run = run_suite(client_suite(protocol), tmp_path, strict=True, timeout=600)
    verdicts = {r["case"]: r["verdict"] for r in run.records}
    expected = {c.id for c in SPECS[protocol].catalogue if c.id.startswith(f"{protocol}.clients.")}
    assert set(verdicts) == expected and set(verdicts.values()) == {"OK"}, (verdicts, run.output)


@pytest.mark.parametrize(("protocol", "fault"), CLIENT_FAULTS, ids=[fault for _, fault in CLIENT_FAULTS])
def test_a_client_fault_fails_each_scenario_it_breaks(tmp_path, protocol, fault):
    broken = set(SPECS[protocol].client_faults[fault])
    run = run_suite(client_suite(protocol), tmp_path, faults=[fault], timeout=600)
    assert broken <= run.clauses_with("FAILED"), (sorted(broken - run.clauses_with("FAILED")), run.by_verdict())
