"""What a client scenario depends on is declared as data (``ProtocolSpec.client_depends_on``), and only a failure of
one of those clauses re-attributes a failed scenario (reports.rootcause.reattribute): so every declared dependency
must be a clause of the protocol's own catalogue, never a client scenario, and name a scenario its clients run.
Kafka, whose clients share most of the protocol, declares every scenario."""

from __future__ import annotations

import pytest

from wirecheck.protocols.clients import AREA, dependencies
from wirecheck.protocols.registry import all_specs

SPECS = all_specs()
WITH_TABLE = sorted(name for name, spec in SPECS.items() if spec.client_depends_on)


@pytest.mark.parametrize("name", WITH_TABLE)
def test_every_dependency_is_a_protocol_clause_of_the_catalogue(name):
    spec = SPECS[name]
    known = {clause.id for clause in spec.catalogue}
    for key, clauses in spec.client_depends_on.items():
        assert clauses, key
        assert set(clauses) <= known, (key, sorted(set(clauses) - known))
        assert not [c for c in clauses if c.split(".")[1] == AREA], key  # a scenario is never another's cause
        assert len(set(clauses)) == len(clauses), (key, "listed twice")


@pytest.mark.parametrize("name", WITH_TABLE)
def test_every_key_names_a_scenario_its_clients_run(name):
    spec = SPECS[name]
    runs = {(client, scenario) for client, real in spec.clients.items() for scenario in real.scenarios}
    for key in spec.client_depends_on:
        if isinstance(key, tuple):
            assert key in runs, key
        else:
            assert key in {scenario for _, scenario in runs}, key


def test_every_kafka_scenario_declares_what_it_depends_on():
    spec = SPECS["kafka"]
    scenario_clauses = {clause.id for clause in spec.catalogue if clause.id.startswith(f"kafka.{AREA}.")}
    assert scenario_clauses == set(dependencies([spec])), sorted(scenario_clauses ^ set(dependencies([spec])))


def test_a_kafka_client_idempotent_by_default_depends_on_init_producer_id_wherever_it_produces():
    from wirecheck.protocols.kafka.clients import CLIENT_APIS, SCENARIO_APIS

    spec = SPECS["kafka"]
    needs = dependencies([spec])
    for client, apis in CLIENT_APIS.items():
        for scenario in spec.clients[client].scenarios:
            produces = 0 in SCENARIO_APIS[scenario]
            expected = produces and (22 in apis or scenario in ("idempotent", "transactions"))
            assert ("kafka.idempotence.init-producer-id" in needs[f"kafka.clients.{client}.{scenario}"]) == \
                expected, (client, scenario)
