"""The Kafka SASL cases against a SASL-enabled reference broker: with credentials every case passes (none is left
UNIMPLEMENTED), without them the login cases are UNIMPLEMENTED, and against the default (open) broker all are."""

import pytest

from tests.quality.expected import KAFKA_SASL_ARGS
from tests.quality.harness import run_suite

SASL_CASES = 11


def test_sasl_cases_pass_against_a_sasl_broker(tmp_path):
    run = run_suite("kafka/test_sasl.py", tmp_path, extra=KAFKA_SASL_ARGS)
    assert run.returncode == 0, run.tail()
    assert set(run.by_verdict()) == {"OK"}, run.by_verdict()
    assert len(run.by_verdict()["OK"]) == SASL_CASES


def test_the_sasl_cases_need_credentials(tmp_path):
    """Credentials are how the user says a listener requires SASL: Apache Kafka advertises SaslHandshake on its
    PLAINTEXT listeners too, so without them every SASL case is UNIMPLEMENTED, even against a SASL broker."""
    run = run_suite("kafka/test_sasl.py", tmp_path, extra=KAFKA_SASL_ARGS[:1])
    assert run.returncode == 0, run.tail()
    assert set(run.by_verdict()) == {"UNIMPLEMENTED"} and len(run.records) == SASL_CASES


def test_open_broker_does_not_advertise_sasl(tmp_path):
    run = run_suite("kafka/test_sasl.py", tmp_path)
    assert run.returncode == 0, run.tail()
    assert set(run.by_verdict()) == {"UNIMPLEMENTED"}


# The login step (suites/kafka/login.py) runs on every connection a case opens, so the rest of the suite runs
# against a broker that serves nothing before authentication.
SLICE = ["kafka/test_produce_fetch.py", "kafka/test_transactions.py"]


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
@pytest.mark.parametrize("suite", SLICE)
def test_suite_slice_logs_in_on_every_connection(tmp_path, suite, mechanism):
    run = run_suite(suite, tmp_path, extra=[*KAFKA_SASL_ARGS, "--target-option", f"kafka.sasl-mechanism={mechanism}"])
    assert run.returncode == 0, run.tail()
    verdicts = run.by_verdict()
    assert set(verdicts) <= {"OK", "UNIMPLEMENTED"}, verdicts
    assert len(verdicts["OK"]) >= 10


@pytest.mark.parametrize("suite", SLICE)
def test_suite_slice_is_blocked_without_credentials(tmp_path, suite):
    run = run_suite(suite, tmp_path, extra=KAFKA_SASL_ARGS[:1])
    assert not run.clauses_with("OK"), run.by_verdict()
    assert run.by_verdict().get("BLOCKED"), run.by_verdict()
