"""Client scenarios as clauses: ``<protocol>.clients.<client>.<scenario>``, one per scenario a real client supports.

A protocol declares the real clients its ``clients`` cases drive and the scenarios they run (a table of plain
data); each pair becomes a MUST clause of its catalogue: a server that a widely used client cannot work with is
not compatible with it, whatever the wire-level clauses say. Which reference-broker faults must break which
scenarios is declared beside (``ProtocolSpec.client_faults``), so that every such clause is shown able to fail.

A scenario also declares the protocol clauses it depends on (``ProtocolSpec.client_depends_on``: scenario -> clause
ids, what the clients do in it that the server must get right): when one of them FAILED in the same run, a scenario
that failed is BLOCKED by it instead of reported as a second defect (``reports.rootcause.reattribute``); a scenario
failing with every dependency holding stays FAILED under its own clause.

A client's own defect is declared too (``ProtocolSpec.client_defects``): what a client version cannot read although
the protocol permits it, and how its traffic shows that the server sent it. A scenario of that client that fails
with its traffic showing it is XFAIL, the client's known defect, not the server's (targets.clients.client_scenario).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from wirecheck.protocols.clauses import Clause, Level

if TYPE_CHECKING:
    from wirecheck.protocols.spec import ProtocolSpec

AREA = "clients"


@dataclass(frozen=True)
class ClientDefect:
    """A client's own defect: something the protocol permits a server to send that these client versions cannot
    read. ``shown_by(exchanges)`` reads the client's captured (request, answer) frames and says where the server
    sent it (None: it did not, so a failure is not this defect's)."""

    name: str
    clients: tuple[str, ...]  # the clients (RealClient.name) it is seen in
    versions: tuple[str, ...]  # the versions seen to have it, as the run records them (a substring of the fact)
    what: str  # what the client does wrong, and what the protocol permits instead
    source: str  # where it was seen (an upstream issue, or how to reproduce it here)
    shown_by: Callable[[Sequence[tuple[bytes, bytes]]], str | None]

    def affects(self, client: str, version: str | None) -> bool:
        return client in self.clients and version is not None and any(seen in version for seen in self.versions)

    def describe(self) -> str:
        return f"{self.what} ({self.source})"


@dataclass(frozen=True)
class RealClient:
    name: str  # the ID part: kafka-python, confluent-kafka, ...
    description: str  # what it is, for the clause's requirement
    scenarios: tuple[str, ...]  # the scenarios it supports


def clause_id(protocol: str, client: str, scenario: str) -> str:
    return f"{protocol}.{AREA}.{client}.{scenario}"


def scenario_of(clause: str) -> tuple[str, str, str] | None:
    """(protocol, client, scenario) of a scenario clause (``<protocol>.clients.<client>.<scenario>``), or None."""
    parts = clause.split(".")
    return (parts[0], parts[2], parts[3]) if len(parts) == 4 and parts[1] == AREA else None


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


def scenario_dependencies(protocol: str, clients: Mapping[str, RealClient],
                          depends_on: Mapping[str | tuple[str, str], Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """Each client scenario clause -> the protocol clauses it depends on. ``depends_on``: scenario -> clause ids,
    and (client, scenario) -> clause ids where one client does the scenario another way; a scenario the table does
    not name depends on nothing."""
    found = {}
    for client in clients.values():
        for scenario in client.scenarios:
            clauses = depends_on.get((client.name, scenario), depends_on.get(scenario, ()))
            if clauses:
                found[clause_id(protocol, client.name, scenario)] = tuple(clauses)
    return found


def dependencies(specs: Iterable[ProtocolSpec]) -> dict[str, tuple[str, ...]]:
    """Every registered protocol's client scenario clause -> the clauses it depends on (``ProtocolSpec.clients`` and
    ``client_depends_on``), for the run's end."""
    found: dict[str, tuple[str, ...]] = {}
    for spec in specs:
        clients = cast("Mapping[str, RealClient]", spec.clients)
        found.update(scenario_dependencies(spec.name, clients, spec.client_depends_on))
    return found
