"""Self-validation: the Kafka suite fails against every faulted reference broker, naming the broken clause,
and passes against the clean one."""

import pytest

from tests.quality.harness import broker_faults, run_suite

#: fault -> the clause the suite must report as FAILED (with --strict, SHOULD clauses fail too)
EXPECTED = {
    "acks0-responds": "kafka.produce.acks-zero",
    "advertise-unimplemented": "kafka.api-versions.advertised-implemented",
    "apiversions-unsupported-not-v0": "kafka.api-versions.unsupported-version",
    "commit-not-stored": "kafka.commit.round-trip",
    "coordinator-port-hardcoded": "kafka.group.find-coordinator",
    "correlation-id-wrong": "kafka.header.correlation-id",
    "crash-on-hostile-array": "kafka.robustness.survives",
    "crc-ieee": "kafka.produce.crc-mismatch",
    "create-duplicate-no-error": "kafka.topics.already-exists",
    "fetch-beyond-hw-empty": "kafka.fetch.out-of-range",
    "fetch-ignores-offset": "kafka.fetch.records",
    "fetch-no-long-poll": "kafka.fetch.long-poll",
    "flexible-header-v1": "kafka.header.response-v1-flexible",
    "generation-not-bumped": "kafka.group.generation",
    "heartbeat-ignores-rebalance": "kafka.group.rebalance-in-progress",
    "hw-off-by-one": "kafka.fetch.high-watermark",
    "leader-gets-no-metadata": "kafka.group.leader-metadata",
    "listoffsets-latest-off-by-one": "kafka.list-offsets.earliest-latest",
    "malformed-body-answered": "kafka.encoding.malformed-body",
    "message-too-large-unchecked": "kafka.produce.message-too-large",
    "metadata-empty-means-all": "kafka.metadata.empty-list",
    "produce-autocreates": "kafka.produce.unknown-topic",
    "sequence-not-checked": "kafka.idempotence.out-of-order",
    "tagged-fields-misskipped": "kafka.encoding.unknown-tags",
    "throttle-missing-metadata-v5": "kafka.api-versions.advertised-implemented",
    "unknown-key-stays-open": "kafka.header.unknown-api-key",
    "wrong-error-unknown-partition": "kafka.produce.unknown-topic",
}


def test_every_broker_fault_has_an_expected_clause():
    assert broker_faults("kafka") == set(EXPECTED)


def test_clean_broker_passes_the_whole_suite(tmp_path):
    run = run_suite("kafka", tmp_path)
    assert run.returncode == 0, run.output
    verdicts = run.by_verdict()
    assert set(verdicts) <= {"OK", "UNIMPLEMENTED"}, verdicts
    assert len(verdicts["OK"]) > 100


@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_fault_is_caught_naming_its_clause(tmp_path, fault):
    run = run_suite("kafka", tmp_path, faults=[fault], expect=EXPECTED[fault])
    failed = run.clauses_with("FAILED")
    assert run.returncode == 1, run.output
    assert EXPECTED[fault] in failed, f"{fault}: expected {EXPECTED[fault]} among failed clauses {sorted(failed)}"
    assert not run.clauses_with("ERROR"), run.by_verdict().get("ERROR")
