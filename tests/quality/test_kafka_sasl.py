"""The Kafka SASL cases against a SASL-enabled reference broker: with credentials every case passes (none is left
UNIMPLEMENTED), without them the login cases are UNIMPLEMENTED, and against the default (open) broker all are."""

from tests.quality.expected import KAFKA_SASL_ARGS
from tests.quality.harness import run_suite

SASL_CASES = 11


def test_sasl_cases_pass_against_a_sasl_broker(tmp_path):
    run = run_suite("kafka/test_sasl.py", tmp_path, extra=KAFKA_SASL_ARGS)
    assert run.returncode == 0, run.output
    assert set(run.by_verdict()) == {"OK"}, run.by_verdict()
    assert len(run.by_verdict()["OK"]) == SASL_CASES


def test_login_cases_need_credentials(tmp_path):
    run = run_suite("kafka/test_sasl.py", tmp_path, extra=KAFKA_SASL_ARGS[:1])
    assert run.returncode == 0, run.output
    verdicts = run.by_verdict()
    assert run.clauses_with("OK") == {"kafka.sasl.handshake-mechanisms", "kafka.sasl.before-authentication"}
    assert len(verdicts["UNIMPLEMENTED"]) == SASL_CASES - 3


def test_open_broker_does_not_advertise_sasl(tmp_path):
    run = run_suite("kafka/test_sasl.py", tmp_path)
    assert run.returncode == 0, run.output
    assert set(run.by_verdict()) == {"UNIMPLEMENTED"}
