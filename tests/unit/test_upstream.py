"""targets/upstream: parsing ``--upstream``, the Kafka node's configuration, and expected divergences as a baseline
whose entries name the clause (a failure under another clause of the same case stays a failure)."""

from __future__ import annotations

import json

import pytest

from wirecheck.protocols.clauses import Clause, Level
from wirecheck.protocols.verdicts import Divergence, HarnessError, Verdict
from wirecheck.reports.baseline import Baseline
from wirecheck.targets import upstream
from wirecheck.targets.runner.verdicts import Classified, apply_baseline
from wirecheck.targets.upstream import kafka


def test_parse_takes_the_newest_version_by_default():
    assert upstream.parse("kafka") == ("kafka", kafka.VERSIONS[0])
    assert upstream.parse("kafka@3.9.2") == ("kafka", "3.9.2")


@pytest.mark.parametrize("text", ["kafka@0.8.2", "fluvio", ""])
def test_parse_refuses_what_has_no_build(text):
    with pytest.raises(HarnessError):
        upstream.parse(text)


def test_every_version_has_a_pinned_build_file():
    for version in kafka.VERSIONS:
        text = kafka.BUILD.pom(version).read_text()
        assert f"<artifactId>kafka_2.13</artifactId><version>{version}</version>" in text


def test_the_node_listens_on_loopback_only(tmp_path):
    text = kafka.properties(1, 9092, 9093, tmp_path)
    listeners = [line for line in text.splitlines() if "listeners=" in line or "voters=" in line]
    assert listeners and all("127.0.0.1:" in line for line in listeners)


def test_cluster_ids_are_kafkas_form():
    assert len(kafka.cluster_id()) == 22


def _clause(name: str) -> Clause:
    return Clause(name, "a requirement", "a source", Level.MUST)


def _failed(clause: str) -> Classified:
    divergence = Divergence(_clause(clause), "this", "that")
    return Classified(Verdict.FAILED, str(divergence), divergence)


def _baseline(tmp_path, **entry) -> Baseline:
    path = tmp_path / "expected.json"
    path.write_text(json.dumps({"schema": "wirecheck.baseline/1", "entries": [entry]}))
    return Baseline.load(str(path))


def test_an_expected_divergence_is_xfail_with_its_source(tmp_path):
    baseline = _baseline(tmp_path, case="kafka.x.case", clause="kafka.x.clause", reason="r", source="KAFKA-1")
    result = apply_baseline(baseline, "kafka.x.case", _failed("kafka.x.clause"))
    assert result.verdict is Verdict.XFAIL and "KAFKA-1" in result.message


def test_a_failure_under_another_clause_stays_a_failure(tmp_path):
    baseline = _baseline(tmp_path, case="kafka.x.case", clause="kafka.x.clause", reason="r", source="KAFKA-1")
    assert apply_baseline(baseline, "kafka.x.case", _failed("kafka.y.other")).verdict is Verdict.FAILED


def test_an_expected_divergence_that_passes_is_xpass(tmp_path):
    baseline = _baseline(tmp_path, case="kafka.x.case", clause="kafka.x.clause", reason="r", source="KAFKA-1")
    passed = Classified(Verdict.OK, "", None)
    assert apply_baseline(baseline, "kafka.x.case", passed).verdict is Verdict.XPASS


def test_upstream_expectations_need_a_clause_and_a_source(tmp_path, monkeypatch):
    monkeypatch.setattr(upstream, "EXPECTATIONS", tmp_path)
    (tmp_path / "kafka-4.4.0.json").write_text(json.dumps(
        {"schema": "wirecheck.baseline/1", "entries": [{"case": "kafka.x.case", "reason": "r"}]}))
    with pytest.raises(HarnessError, match="clause and its source"):
        upstream.expectations("kafka@4.4.0")


def test_every_shipped_expectation_names_a_known_clause():
    from wirecheck.protocols.registry import all_specs

    specs = all_specs()
    for path in upstream.EXPECTATIONS.glob("*.json"):
        protocol = path.name.split("-")[0]
        expected = upstream.expectations(f"{protocol}@{path.stem.split('-', 1)[1]}")
        assert expected is not None
        for entry in expected.entries:
            assert entry.clause in specs[protocol].catalogue, (path.name, entry.clause)


def test_an_entry_naming_a_test_matches_that_parameter_only(tmp_path):
    baseline = _baseline(tmp_path, case="kafka.x.case", clause="kafka.x.clause", test="test_x[one]", reason="r",
                         source="s")
    assert apply_baseline(baseline, "kafka.x.case", _failed("kafka.x.clause"), "test_x[one]").verdict is Verdict.XFAIL
    passed = Classified(Verdict.OK, "", None)
    assert apply_baseline(baseline, "kafka.x.case", passed, "test_x[two]").verdict is Verdict.OK


def test_an_intermittent_divergence_that_passes_is_ok(tmp_path):
    baseline = _baseline(tmp_path, case="kafka.x.case", clause="kafka.x.clause", reason="r", source="s",
                         intermittent=True)
    passed = Classified(Verdict.OK, "", None)
    assert apply_baseline(baseline, "kafka.x.case", passed).verdict is Verdict.OK
    assert apply_baseline(baseline, "kafka.x.case", _failed("kafka.x.clause")).verdict is Verdict.XFAIL


def test_a_carried_failure_the_baseline_lists_is_xfail(tmp_path):
    from wirecheck.targets.runner.verdicts import expect_carried

    baseline = _baseline(tmp_path, case="p.case", clause="p.blocker", reason="r", source="s")
    carried = [{"case": "p.case", "clause": "p.blocker", "nodeid": "suites/p/test_x.py::test_x", "verdict": "FAILED",
                "message": "p.blocker: expected a; got b"},
               {"case": "p.case", "clause": "p.other", "nodeid": "suites/p/test_x.py::test_x", "verdict": "FAILED",
                "message": "p.other: expected a; got b"}]
    expect_carried(baseline, carried)
    assert [record["verdict"] for record in carried] == ["XFAIL", "FAILED"]
