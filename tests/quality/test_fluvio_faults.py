"""Self-validation: the Fluvio suite fails against every faulted reference broker, naming the broken clause,
and passes against the clean one. The broker is started through its CLI by the suite's own plugin."""

import pytest

from tests.quality.harness import broker_faults, run_suite

#: fault -> (the clause the suite must report as FAILED, the suite module whose cases check it). The harness runs
#: with --strict, so SHOULD clauses fail too. Each faulted run is limited to that module: pytest and broker start-up
#: dominate a run, and a fault must be caught by the deterministic cases of its own area, not by luck elsewhere.
EXPECTED = {
    "apiversions-overadvertise": ("fluvio.versions.every-version", "test_versions"),
    "compression-error-wrong": ("fluvio.produce.compression-invalid", "test_produce"),
    "correlation-id-wrong": ("fluvio.framing.correlation-id", "test_framing"),
    "crash-on-huge-record-count": ("fluvio.robustness.survives", "test_produce"),
    "crc-unchecked": ("fluvio.produce.bad-crc", "test_produce"),
    "error-code-unknown-partition-wrong": ("fluvio.produce.unknown-partition", "test_produce"),
    "error-payload-missing": ("fluvio.errors.encoding", "test_fetch"),
    "fetch-hw-off-by-one": ("fluvio.fetch.high-watermark", "test_fetch"),
    "fetch-offsets-start-is-hw": ("fluvio.offsets.values", "test_fetch"),
    "fetch-offsets-wrong-code": ("fluvio.offsets.unknown-partition", "test_fetch"),
    "isolation-strict": ("fluvio.produce.isolation-other", "test_produce"),
    "negative-size-stays-open": ("fluvio.framing.negative-size-unanswered", "test_framing"),
    "offsets-follow-record-count": ("fluvio.produce.offsets", "test_produce"),
    "produce-base-offset-wrong": ("fluvio.produce.offsets", "test_produce"),
    "produce-responses-merged": ("fluvio.produce.response-entries", "test_produce"),
    "stream-fetch-no-updates": ("fluvio.stream.flow-control", "test_stream"),
    "stream-id-zero": ("fluvio.stream.records", "test_stream"),
    "throttle-missing": ("fluvio.produce.response-fields", "test_produce"),
    "unknown-key-stays-open": ("fluvio.header.unknown-api-key", "test_framing"),
    "update-offsets-unknown-session-ok": ("fluvio.update-offsets.status", "test_stream"),
}


def test_every_broker_fault_has_an_expected_clause():
    assert broker_faults("fluvio") == set(EXPECTED)


def test_clean_broker_passes_the_whole_suite(tmp_path):
    run = run_suite("fluvio", tmp_path)
    assert run.returncode == 0, run.output
    verdicts = run.by_verdict()
    assert set(verdicts) <= {"OK", "UNIMPLEMENTED"}, verdicts
    assert len(verdicts["OK"]) > 100


@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_fault_is_caught_naming_its_clause(tmp_path, fault):
    clause, module = EXPECTED[fault]
    run = run_suite(f"fluvio/{module}.py", tmp_path, faults=[fault], expect=clause)
    failed = run.clauses_with("FAILED")
    assert run.returncode == 1, run.output
    assert clause in failed, f"{fault}: expected {clause} among failed clauses {sorted(failed)}"
    assert not run.clauses_with("ERROR"), run.by_verdict().get("ERROR")
