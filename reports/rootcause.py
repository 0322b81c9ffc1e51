"""One defect, one failure, under its own clause: the run-level half of the isolation rule, and the failures
grouped by root cause.

A divergence FAILs only the case whose own clause it is; in any other case it BLOCKs (``runner.verdicts``).
So that a divergence is never only BLOCKED, :func:`carry` runs once every case is recorded: each clause that
blocked a case and has no reported case of its own (none ran, or its own cases did not meet the defect) is
carried by the first case it blocked, which takes that clause's verdict (FAILED for a MUST, NON-STRICT for a
SHOULD outside --strict). :func:`by_clause` is what the summaries show: each clause that broke, its failed
cases (parametrized cases of one case ID collapsed into one entry) and how many cases it blocked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: verdicts that report a clause's divergence (the clause needs no carrier)
REPORTED = {"FAILED", "NON-STRICT", "XFAIL", "FLAKY", "DIVERGENT"}
#: verdicts listed under "failures by clause"
LISTED = REPORTED | {"ERROR"}


def carry(records: list[dict], strict: bool) -> list[dict]:
    """Make each clause that blocked a case without a reported case of its own fail in its first blocked case
    (``records`` is changed in place); the carriers."""
    reported = {r["clause"] for r in records if r["verdict"] in REPORTED}
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


@dataclass
class Group:
    """One clause that broke: its listed cases and the cases it blocked."""

    clause: str
    level: str
    requirement: str
    verdicts: dict[str, int] = field(default_factory=dict)  # FAILED / NON-STRICT / ... -> cases
    cases: dict[str, list[str]] = field(default_factory=dict)  # case id -> its parametrizations that failed
    blocked: int = 0
    blocked_cases: list[str] = field(default_factory=list)  # the first few, for the reader
    example: dict | None = None  # the first listed record: expected, actual, reproducer

    def line(self) -> str:
        """``kafka.fetch.max-wait: FAILED (1 case); 20 cases BLOCKED by it``."""
        verdicts = ", ".join(f"{v} ({n} case{'s' if n != 1 else ''})" for v, n in sorted(self.verdicts.items()))
        text = f"{self.clause}: {verdicts or 'no case of its own'}"
        if self.blocked:
            text += f"; {self.blocked} case{'s' if self.blocked != 1 else ''} BLOCKED by it"
        return text

    def to_dict(self) -> dict:
        return {"clause": self.clause, "level": self.level, "requirement": self.requirement,
                "verdicts": self.verdicts, "cases": self.cases, "blocked": self.blocked,
                "blocked_cases": self.blocked_cases,
                "expected": (self.example or {}).get("expected"), "actual": (self.example or {}).get("actual"),
                "reproduce": (self.example or {}).get("reproduce")}


BLOCKED_CASES_SHOWN = 5


def by_clause(records: list[dict]) -> list[Group]:
    """The clauses that broke in a run, FAILED first, then by how many cases they touched."""
    groups: dict[str, Group] = {}

    def group(clause: str, level: str, requirement: str) -> Group:
        return groups.setdefault(clause, Group(clause, level, requirement))

    for record in records:
        verdict = record["verdict"]
        if verdict in LISTED:
            found = group(record["clause"], record.get("level", ""), record.get("requirement", ""))
            found.verdicts[verdict] = found.verdicts.get(verdict, 0) + 1
            found.cases.setdefault(record["case"], []).append(_parameters(record["nodeid"]))
            found.example = found.example or record
        elif verdict == "BLOCKED" and record.get("blocked_by"):
            blocker = record["blocked_by"]
            found = group(blocker["clause"], blocker.get("level", ""), blocker.get("requirement", ""))
            found.blocked += 1
            if len(found.blocked_cases) < BLOCKED_CASES_SHOWN:
                found.blocked_cases.append(record["case"])
    return sorted(groups.values(), key=lambda g: ("FAILED" not in g.verdicts and "ERROR" not in g.verdicts,
                                                  -(sum(g.verdicts.values()) + g.blocked), g.clause))


def _parameters(nodeid: str) -> str:
    """``test_x[v3-fetch]`` -> ``v3-fetch``; a case without parameters -> its test name."""
    name = nodeid.rsplit("::", 1)[-1]
    return name[name.index("[") + 1:-1] if name.endswith("]") and "[" in name else name
