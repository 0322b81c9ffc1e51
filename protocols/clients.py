"""Client scenarios as clauses: ``<protocol>.clients.<client>.<scenario>``, one per scenario a real client supports.

A protocol declares the real clients its ``clients`` cases drive and the scenarios they run (a table of plain
data); each pair becomes a MUST clause of its catalogue: a server that a widely used client cannot work with is
not compatible with it, whatever the wire-level clauses say. Which reference-broker faults must break which
scenarios is declared beside (``ProtocolSpec.client_faults``), so that every such clause is shown able to fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from wirecheck.protocols.clauses import Clause, Level

AREA = "clients"


@dataclass(frozen=True)
class RealClient:
    name: str  # the ID part: kafka-python, confluent-kafka, ...
    description: str  # what it is, for the clause's requirement
    scenarios: tuple[str, ...]  # the scenarios it supports


def clause_id(protocol: str, client: str, scenario: str) -> str:
    return f"{protocol}.{AREA}.{client}.{scenario}"


def scenario_clauses(protocol: str, clients: Mapping[str, RealClient], scenario: str) -> dict[str, str]:
    """client -> the clause of ``scenario`` for each client that supports it."""
    return {name: clause_id(protocol, name, scenario) for name, client in clients.items()
            if scenario in client.scenarios}


def client_clauses(protocol: str, clients: Mapping[str, RealClient], scenarios: Mapping[str, str]) -> list[Clause]:
    """One MUST clause per (client, scenario it supports); ``scenarios`` maps a scenario to what the server lets
    the client do, as a verb phrase."""
    return [Clause(clause_id(protocol, client.name, scenario),
                   f"{client.description} {scenarios[scenario]}, against the server.",
                   f"{client.description}: what its users need from a compatible server (the client's exact "
                   f"version is recorded with each run)", Level.MUST)
            for client in clients.values() for scenario in client.scenarios]


def all_client_clauses(protocol: str, clients: Mapping[str, RealClient], scenarios: Mapping[str, str]) -> list[str]:
    """Every client scenario clause id of a protocol."""
    return [clause.id for clause in client_clauses(protocol, clients, scenarios)]
