"""Self-validation: the RustLog suite fails against every faulted reference broker, naming the broken clause,
and passes against the clean one."""

import pytest

from tests.quality.harness import broker_faults, run_suite

#: fault -> the clause the suite must report as FAILED (with --strict, SHOULD clauses fail too)
EXPECTED = {
    "batch-not-atomic": "rustlog.produce.batch-atomic",
    "beyond-hw-416": "rustlog.fetch.beyond-hw",
    "commit-groups-shared": "rustlog.commit.group-isolation",
    "commit-unknown-topic-succeeds": "rustlog.commit.unknown-topic",
    "crash-on-deep-json": "rustlog.robustness.survives",
    "error-details-missing": "rustlog.errors.details",
    "fetch-exceeds-frame": "rustlog.fetch.response-size",
    "fetch-uses-group-offset": "rustlog.fetch.group-id-ignored",
    "float-accepted": "rustlog.request.invalid-fields",
    "invalid-utf8-accepted": "rustlog.framing.invalid-utf8",
    "length-counts-header": "rustlog.framing.response-frame",
    "malformed-json-kept-open": "rustlog.framing.malformed-json",
    "max-frame-rejected": "rustlog.framing.max-size-accepted",
    "next-offset-off-by-one": "rustlog.fetch.next-offset",
    "offset-fetch-zero": "rustlog.commit.no-commit-null",
    "oversize-kept-open": "rustlog.framing.oversize",
    "partition-count-unbounded": "rustlog.admin.partition-count",
    "partition-error-404": "rustlog.produce.unknown-partition",
    "pong-wrong-type": "rustlog.ping.pong",
    "produce-base-offset-off-by-one": "rustlog.produce.offsets",
    "record-limit-1001": "rustlog.produce.record-limit",
    "topic-name-unchecked": "rustlog.admin.topic-name",
    "unknown-type-closes": "rustlog.request.unknown-type",
    "zero-length-ignored": "rustlog.framing.zero-length",
}


def test_every_broker_fault_has_an_expected_clause():
    assert broker_faults("rustlog") == set(EXPECTED)


def test_clean_broker_passes_the_whole_suite(tmp_path):
    run = run_suite("rustlog", tmp_path)
    assert run.returncode == 0, run.output
    verdicts = run.by_verdict()
    assert set(verdicts) <= {"OK", "UNIMPLEMENTED"}, verdicts
    assert len(verdicts["OK"]) > 100


@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_fault_is_caught_naming_its_clause(tmp_path, fault):
    run = run_suite("rustlog", tmp_path, faults=[fault], expect=EXPECTED[fault])
    failed = run.clauses_with("FAILED")
    assert run.returncode == 1, run.output
    assert EXPECTED[fault] in failed, f"{fault}: expected {EXPECTED[fault]} among failed clauses {sorted(failed)}"
    assert not run.clauses_with("ERROR"), run.by_verdict().get("ERROR")
