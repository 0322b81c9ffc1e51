"""Clauses: the requirements the conformance cases check, kept as data.

A clause is one sentence of requirement, where the spec says it, and a level. Where the source documents
disagree or are silent, the clause carries the decision we took (``decision``) and the permitted outcomes are
encoded in the cases: an implementation-defined clause is checked at SHOULD level, so a target taking another
permitted path is NON-STRICT, never FAILED.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Level(enum.Enum):
    MUST = "MUST"
    SHOULD = "SHOULD"


@dataclass(frozen=True)
class Clause:
    id: str  # stable, hierarchical: "<protocol>.<area>.<slug>"
    requirement: str  # one sentence
    source: str  # seed section, upstream file, protocol guide section or KIP
    level: Level = Level.MUST
    decision: str = ""  # why we read the spec this way, where it is ambiguous
    #: why no server-side fault can break this clause (it judges what a client sent, say); such a clause is left
    #: out of the "every MUST can fail" share (reports/clause_audit.py) instead of counted as never failing
    unbreakable: str = ""
    #: why the spec permits no other reading of this clause's decision (the decision settles which of two texts a
    #: real client needs, say), so no reference-broker variant can take one; every other decision has a variant
    sole_reading: str = ""

    @property
    def protocol(self) -> str:
        return self.id.split(".", 1)[0]


def differential_clause_id(protocol: str) -> str:
    return f"{protocol}.differential.same-answer"


def engine_clauses(protocol: str) -> list[Clause]:
    """Clauses the engine checks for every protocol, added to each catalogue."""
    return [Clause(differential_clause_id(protocol),
                   "Given the same conversation, the server answers as the reference broker does, but for the fields "
                   "the protocol declares volatile (ids, hosts, ports, times, messages).",
                   "wirecheck differential mode (--differential)", Level.SHOULD,
                   decision="SHOULD, and evidence rather than a verdict: the reference broker is one conforming "
                            "reading of the spec, and a correct server may answer otherwise wherever the spec "
                            "permits (the broker's variants). The case's own checks judge the target; a difference "
                            "is noted beside the verdict, and fails a case that passed its checks only under "
                            "--strict (DIVERGENT), under the clause covering the field when there is one.")]


class Catalogue:
    """The clauses of one protocol, looked up by ID."""

    def __init__(self, protocol: str, clauses: list[Clause]):
        self.protocol = protocol
        self._by_id: dict[str, Clause] = {}
        for clause in [*clauses, *engine_clauses(protocol)]:
            if clause.protocol != protocol:
                raise ValueError(f"clause {clause.id!r} does not belong to protocol {protocol!r}")
            if clause.id in self._by_id:
                raise ValueError(f"duplicate clause id {clause.id!r}")
            self._by_id[clause.id] = clause

    def __getitem__(self, clause_id: str) -> Clause:
        try:
            return self._by_id[clause_id]
        except KeyError:
            raise KeyError(f"unknown clause {clause_id!r} in the {self.protocol} catalogue") from None

    def __iter__(self):
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, clause_id: str) -> bool:
        return clause_id in self._by_id
