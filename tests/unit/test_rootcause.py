"""The isolation rule: a divergence FAILs only its own clause's case and BLOCKs any other; a clause that blocked
cases without a reported case of its own is carried by the first case it blocked; summaries group by clause."""

from __future__ import annotations

from wirecheck.protocols.clauses import Clause, Level
from wirecheck.protocols.verdicts import Blocked, Divergence, TargetDied, Verdict
from wirecheck.reports.rootcause import by_clause, carry
from wirecheck.targets.runner.verdicts import classify

MUST = Clause("p.fetch.max-wait", "Fetch waits up to MaxWaitMs.", "spec", Level.MUST)
SHOULD = Clause("p.fetch.prefer", "A preferred reading.", "spec", Level.SHOULD)
SURVIVES = Clause("p.robustness.survives", "Still answers.", "spec", Level.MUST)


def test_a_divergence_fails_its_own_case_and_blocks_any_other():
    own = classify(Divergence(MUST, "records", "none"), "call", None, False, "p.fetch.max-wait")
    other = classify(Divergence(MUST, "records", "none"), "call", None, False, "p.txn.commit")
    assert own.verdict is Verdict.FAILED
    assert other.verdict is Verdict.BLOCKED and other.blocking.clause is MUST
    assert "p.fetch.max-wait holds" in other.message


def test_what_stays_where_it_appears():
    # a dead target fails the case that killed it; a SHOULD outside --strict is a warning under its own clause
    died = classify(TargetDied(SURVIVES, "frame x", "cannot connect"), "call", None, False, "p.fetch.records")
    assert died.verdict is Verdict.FAILED
    warned = classify(Divergence(SHOULD, "a", "b"), "call", None, False, "p.fetch.records")
    assert warned.verdict is Verdict.NON_STRICT
    assert classify(Divergence(SHOULD, "a", "b"), "call", None, True, "p.fetch.records").verdict is Verdict.BLOCKED


def test_a_withheld_permission_blocks_without_a_divergence_to_carry():
    denied = classify(Blocked("CreateTopics authorized", Divergence(MUST, "an answer", "error 29"), carries=False),
                      "call", None, False, "p.topics.create")
    assert denied.verdict is Verdict.BLOCKED and denied.blocking is None


def record(case, verdict, clause=None, blocked_by=None, at="1", nodeid=None):
    out = {"case": case, "nodeid": nodeid or f"t.py::test_{case}", "verdict": verdict, "clause": clause or case,
           "level": "MUST", "requirement": "r", "source": "s", "expected": None, "actual": None, "finished_at": at,
           "message": ""}
    if blocked_by:
        out["blocked_by"] = {"clause": blocked_by, "level": "MUST", "requirement": "req", "source": "src",
                             "expected": "e", "actual": "a"}
    return out


def test_a_clause_that_only_blocked_is_carried_by_the_first_case_it_blocked():
    records = [record("p.txn.commit", "BLOCKED", blocked_by="p.fetch.max-wait", at="2"),
               record("p.txn.abort", "BLOCKED", blocked_by="p.fetch.max-wait", at="1"),
               record("p.fetch.max-wait", "OK")]
    (carrier,) = carry(records, strict=False)
    assert carrier["case"] == "p.txn.abort" and carrier["verdict"] == "FAILED" and carrier["carried"]
    assert carrier["clause"] == "p.fetch.max-wait" and carrier["expected"] == "e" and carrier["actual"] == "a"
    assert records[0]["verdict"] == "BLOCKED"


def test_nothing_is_carried_when_the_clause_failed_in_its_own_case():
    records = [record("p.txn.commit", "BLOCKED", blocked_by="p.fetch.max-wait"),
               record("p.fetch.max-wait", "FAILED")]
    assert carry(records, strict=False) == [] and records[0]["verdict"] == "BLOCKED"


def test_failures_are_grouped_by_clause_with_parameters_collapsed():
    records = [record("p.fetch.max-wait", "FAILED", nodeid="t.py::test_wait[v4]"),
               record("p.fetch.max-wait", "FAILED", nodeid="t.py::test_wait[v5]"),
               *[record(f"p.txn.c{n}", "BLOCKED", blocked_by="p.fetch.max-wait") for n in range(20)],
               record("p.other", "OK")]
    (group,) = by_clause(records)
    assert group.line() == "p.fetch.max-wait: FAILED (2 cases); 20 cases BLOCKED by it"
    assert group.cases == {"p.fetch.max-wait": ["v4", "v5"]}
