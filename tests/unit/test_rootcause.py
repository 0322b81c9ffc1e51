"""The isolation rule: a divergence FAILs only its own clause's case and BLOCKs any other; a clause that blocked
cases without a reported case of its own is carried by the first case it blocked; summaries group by clause."""

from __future__ import annotations

from wirecheck.protocols.clauses import Clause, Level
from wirecheck.protocols.verdicts import Blocked, Divergence, TargetDied, Verdict
from wirecheck.reports.rootcause import by_clause, carry, reattribute
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


# -- a case that depends on other clauses (a real client's scenario): reattribute -------------------------------

NEEDS = {"p.clients.c.group": ("p.framing.size", "p.commit.round-trip")}


def scenario(verdict="FAILED", at="1"):
    out = record("p.clients.c.group", verdict, at=at, nodeid="t.py::test_group[c]")
    out.update(expected="each record once", actual="record 3 twice", message="p.clients.c.group: record 3 twice")
    return out


def failed(clause, at="2"):
    out = record(clause, "FAILED", at=at)
    out.update(expected="offset 5", actual="offset -1")
    return out


def test_a_scenario_that_failed_beside_a_failed_dependency_is_blocked_by_it_with_its_own_failure_kept():
    records = [scenario(at="1"), failed("p.commit.round-trip", at="9")]  # the clause's case ran after the scenario
    (moved,) = reattribute(records, NEEDS)
    assert moved is records[0] and moved["verdict"] == "BLOCKED" and moved["clause"] == "p.clients.c.group"
    assert moved["blocked_by"]["clause"] == "p.commit.round-trip" and moved["blocked_by"]["actual"] == "offset -1"
    assert moved["own_failure"]["actual"] == "record 3 twice" and moved["expected"] is None
    assert "p.commit.round-trip FAILED in this run" in moved["message"] and "record 3 twice" in moved["message"]
    (group,) = by_clause(records)
    assert group.line() == "p.commit.round-trip: FAILED (1 case); 1 client scenario broken by it"
    assert group.to_dict()["client_scenarios"] == ["p.clients.c.group"] and group.blocked == 0


def test_a_scenario_with_no_failed_dependency_stays_failed():
    # its dependency passed, another clause it does not depend on failed, a dependency only blocked a case
    records = [scenario(), record("p.commit.round-trip", "OK"), failed("p.fetch.max-wait"),
               record("p.txn.commit", "BLOCKED", blocked_by="p.framing.size")]
    assert reattribute(records, NEEDS) == [] and records[0]["verdict"] == "FAILED"
    assert "own_failure" not in records[0]
    assert reattribute([scenario()], {}) == []  # a scenario declaring no dependency


def test_only_a_failure_counts_as_evidence():
    # a SHOULD divergence outside --strict, a flaky one, the harness's error: the scenario keeps its failure (a known
    # divergence, XFAIL, is evidence: test_an_expected_divergence_blocks_the_client_scenarios_it_breaks)
    for verdict in ("NON-STRICT", "FLAKY", "ERROR"):
        records = [scenario(), record("p.commit.round-trip", verdict)]
        assert reattribute(records, NEEDS) == [] and records[0]["verdict"] == "FAILED", verdict
    # and only a FAILED scenario moves (an ERROR is the harness's, a FLAKY one passed once)
    records = [scenario("ERROR"), failed("p.commit.round-trip")]
    assert reattribute(records, NEEDS) == [] and records[0]["verdict"] == "ERROR"


def test_a_clause_carried_into_a_blocked_case_is_evidence_too():
    records = [scenario(at="1"), record("p.txn.commit", "BLOCKED", blocked_by="p.commit.round-trip", at="2")]
    carry(records, strict=False)
    (moved,) = reattribute(records, NEEDS)
    assert moved["blocked_by"]["clause"] == "p.commit.round-trip" and records[1]["verdict"] == "FAILED"


def test_the_first_declared_dependency_that_failed_names_the_cause_and_the_others_are_said():
    records = [scenario(), failed("p.commit.round-trip"), failed("p.framing.size")]
    (moved,) = reattribute(records, NEEDS)
    assert moved["blocked_by"]["clause"] == "p.framing.size" and "p.commit.round-trip failed too" in moved["message"]


def test_a_dependent_case_is_never_evidence_for_another():
    needs = {"p.clients.c.group": ("p.clients.d.group",), "p.clients.d.group": ("p.commit.round-trip",)}
    records = [scenario(), record("p.clients.d.group", "FAILED")]
    assert reattribute(records, needs) == [] and records[0]["verdict"] == "FAILED"


def test_an_expected_divergence_blocks_the_client_scenarios_it_breaks():
    from wirecheck.reports.rootcause import reattribute

    records = [{"case": "p.api", "clause": "p.api", "verdict": "XFAIL", "finished_at": "1", "expected": "a",
                "actual": "b", "level": "MUST", "requirement": "r", "source": "s", "nodeid": "x::t"},
               {"case": "p.clients.c.s", "clause": "p.clients.c.s", "verdict": "FAILED", "finished_at": "2",
                "message": "failed", "nodeid": "x::u"}]
    moved = reattribute(records, {"p.clients.c.s": ("p.api",)})
    assert [r["verdict"] for r in records] == ["XFAIL", "BLOCKED"] and moved == [records[1]]
    assert records[1]["message"].startswith("p.api XFAIL in this run")
