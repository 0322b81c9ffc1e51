"""One defect, one failure, under its own clause: the run-level half of the isolation rule, and the failures
grouped by root cause.

A divergence FAILs only the case whose own clause it is; in any other case it BLOCKs (``runner.verdicts``).
So that a divergence is never only BLOCKED, :func:`carry` runs once every case is recorded: each clause that
blocked a case and has no reported case of its own (none ran, or its own cases did not meet the defect) is
carried by the first case it blocked, which takes that clause's verdict (FAILED for a MUST, NON-STRICT for a
SHOULD outside --strict). :func:`reattribute` then applies the rule to what a case only depends on: a case that
declares the clauses it depends on (a real client's scenario: ``protocols.clients``) and FAILED under its own clause
in a run where one of those clauses FAILED is BLOCKED by that clause, its own failure kept as evidence
(``own_failure``); with no failed dependency it stays FAILED. Both run once every case is recorded, because the
case of the clause may run after the scenario (random order, xdist workers). :func:`by_clause` is what the
summaries show: each clause that broke, its failed cases (parametrized cases of one case ID collapsed into one
entry), the client scenarios it broke and how many other cases it blocked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wirecheck.protocols.verdicts import Verdict

#: verdicts that report a clause's divergence (the clause needs no carrier)
_REPORTED = Verdict.names(lambda verdict: verdict.divergence)
#: verdicts listed under "failures by clause": those, and the harness's own errors
_LISTED = Verdict.names(lambda verdict: verdict.divergence or verdict is Verdict.ERROR)


def carry(records: list[dict], strict: bool) -> list[dict]:
    """Make each clause that blocked a case without a reported case of its own fail in its first blocked case
    (``records`` is changed in place); the carriers."""
    reported = {r["clause"] for r in records if r["verdict"] in _REPORTED}
    firsts: dict[str, dict] = {}
    for record in sorted(records, key=lambda r: r.get("finished_at") or ""):
        blocker = record.get("blocked_by")
        if record["verdict"] == "BLOCKED" and blocker and blocker["clause"] not in reported:
            firsts.setdefault(blocker["clause"], record)
    for clause, record in firsts.items():
        blocker = record["blocked_by"]
        verdict = "FAILED" if blocker["level"] == "MUST" or strict else "NON-STRICT"
        record.update(verdict=verdict, clause=clause, requirement=blocker["requirement"], source=blocker["source"],
                      level=blocker["level"], expected=blocker["expected"], actual=blocker["actual"],
                      carried=True,
                      message=f"{clause}: expected {blocker['expected']}; got {blocker['actual']} (carried: no case "
                              f"of {clause} reported it in this run; this case met it first, on the way to "
                              f"{record['case']})")
    return list(firsts.values())


def _blocker(record: dict) -> dict:
    """A FAILED record's clause and divergence, as ``blocked_by`` holds them."""
    return {key: record.get(key) for key in ("clause", "requirement", "source", "level", "expected", "actual")}


def reattribute(records: list[dict], depends_on: Mapping[str, Sequence[str]]) -> list[dict]:
    """Make each case FAILED under its own clause BLOCKED by a clause it depends on (``depends_on``: the case's
    clause -> the clauses it needs, most telling first) when that clause FAILED in this run (``records`` is changed
    in place, after :func:`carry`); the re-attributed cases.

    The evidence is a FAILED record of the dependency, never a guess: a case whose dependencies all held (or did
    not run) keeps its failure. A dependency only counts through a case of its own, so a case that itself depends
    on others never stands as evidence. A SHOULD-level divergence outside --strict (NON-STRICT) re-attributes
    nothing: the run would pass while a case failed. An expected divergence (XFAIL: the baseline's, or an upstream
    server's own) is evidence like a failure: the scenarios it breaks are BLOCKED by it, not new defects."""
    failed: dict[str, dict] = {}
    for record in sorted(records, key=lambda r: r.get("finished_at") or ""):
        if record["verdict"] in ("FAILED", "XFAIL") and record["clause"] not in depends_on:
            failed.setdefault(record["clause"], record)
    moved = []
    for record in records:
        broken = [clause for clause in depends_on.get(record["clause"], ()) if clause in failed]
        if record["verdict"] != "FAILED" or record["case"] != record["clause"] or not broken:
            continue  # a carrier (its clause is another's) keeps what it carries
        evidence = failed[broken[0]]
        also = f"; {', '.join(broken[1:])} failed too" if broken[1:] else ""
        record["own_failure"] = {key: record.get(key) for key in ("clause", "requirement", "source", "level",
                                                                   "expected", "actual", "message")}
        record.update(verdict="BLOCKED", blocked_by=_blocker(evidence), expected=None, actual=None,
                      message=f"{broken[0]} {evidence['verdict']} in this run ({evidence['case']}: expected "
                              f"{evidence.get('expected')}; got {evidence.get('actual')}){also}, and "
                              f"{record['case']} depends on it; its own failure: {record.get('message') or ''}"
                              [:2000])
        moved.append(record)
    return moved


@dataclass
class Group:
    """One clause that broke: its listed cases and the cases it blocked."""

    clause: str
    level: str
    requirement: str
    verdicts: dict[str, int] = field(default_factory=dict)  # FAILED / NON-STRICT / ... -> cases
    cases: dict[str, list[str]] = field(default_factory=dict)  # case id -> its parametrizations that failed
    blocked: int = 0  # cases BLOCKED by it, the client scenarios it broke left out
    blocked_cases: list[str] = field(default_factory=list)  # the first few, for the reader
    #: cases that failed in their own right and depend on it (``reattribute``): real clients' scenarios
    client_scenarios: list[str] = field(default_factory=list)
    example: Mapping[str, Any] | None = None  # the first listed record: expected, actual, reproducer

    def consequences(self) -> str:
        """``14 client scenarios broken by it; 20 cases BLOCKED by it`` (empty when it broke nothing else)."""
        parts = []
        if self.client_scenarios:
            count = len(self.client_scenarios)
            parts.append(f"{count} client scenario{'s' if count != 1 else ''} broken by it")
        if self.blocked:
            parts.append(f"{self.blocked} case{'s' if self.blocked != 1 else ''} BLOCKED by it")
        return "; ".join(parts)

    def line(self) -> str:
        """``kafka.commit.round-trip: FAILED (1 case); 14 client scenarios broken by it; 20 cases BLOCKED by it``."""
        verdicts = ", ".join(f"{v} ({n} case{'s' if n != 1 else ''})" for v, n in sorted(self.verdicts.items()))
        text = f"{self.clause}: {verdicts or 'no case of its own'}"
        consequences = self.consequences()
        return f"{text}; {consequences}" if consequences else text

    def to_dict(self) -> dict:
        return {"clause": self.clause, "level": self.level, "requirement": self.requirement,
                "verdicts": self.verdicts, "cases": self.cases, "blocked": self.blocked,
                "blocked_cases": self.blocked_cases, "client_scenarios": self.client_scenarios,
                "expected": (self.example or {}).get("expected"), "actual": (self.example or {}).get("actual"),
                "reproduce": (self.example or {}).get("reproduce")}


BLOCKED_CASES_SHOWN = 5


def by_clause(records: Sequence[Mapping[str, Any]]) -> list[Group]:
    """The clauses that broke in a run, FAILED first, then by how many cases they touched."""
    groups: dict[str, Group] = {}

    def group(clause: str, level: str, requirement: str) -> Group:
        return groups.setdefault(clause, Group(clause, level, requirement))

    for record in records:
        verdict = record["verdict"]
        if verdict in _LISTED:
            found = group(record["clause"], record.get("level", ""), record.get("requirement", ""))
            found.verdicts[verdict] = found.verdicts.get(verdict, 0) + 1
            found.cases.setdefault(record["case"], []).append(_parameters(record["nodeid"]))
            found.example = found.example or record
        elif verdict == "BLOCKED" and record.get("blocked_by"):
            blocker = record["blocked_by"]
            found = group(blocker["clause"], blocker.get("level", ""), blocker.get("requirement", ""))
            if record.get("own_failure"):
                found.client_scenarios.append(record["case"])
                continue
            found.blocked += 1
            if len(found.blocked_cases) < BLOCKED_CASES_SHOWN:
                found.blocked_cases.append(record["case"])
    return sorted(groups.values(), key=lambda g: ("FAILED" not in g.verdicts and "ERROR" not in g.verdicts,
                                                  -(sum(g.verdicts.values()) + g.blocked + len(g.client_scenarios)),
                                                  g.clause))


def _parameters(nodeid: str) -> str:
    """``test_x[v3-fetch]`` -> ``v3-fetch``; a case without parameters -> its test name."""
    name = nodeid.rsplit("::", 1)[-1]
    return name[name.index("[") + 1:-1] if name.endswith("]") and "[" in name else name
