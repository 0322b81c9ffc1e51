"""``wirecheck safety kafka --upstream``: the workload against Apache Kafka itself, which the command starts, kills
(-9) and starts again on its own log directory, pauses and faults through the proxy (the long runs: BENCHMARKS.md
"Safety"). A correct server with its data kept across kills has no anomaly: a false one here blames Apache Kafka."""

import pytest

from tests.safety.runs import safety_run

pytestmark = [pytest.mark.slow, pytest.mark.interop]

pytest.importorskip("confluent_kafka")


def test_apache_kafka_killed_and_restarted_has_no_anomaly(tmp_path):
    done, result = safety_run(tmp_path, "kafka", 25, 8, 11, "--upstream")
    assert done.returncode == 0, done.stdout + done.stderr
    assert result["valid"] and result["restarts"] >= 1, result
    assert result["target"].startswith("Apache Kafka "), result["target"]
    assert result["acknowledged"] > 100, result
    log = (tmp_path / "report" / "upstream" / "server.log").read_text(errors="replace")
    assert log.count("Kafka Server started") == 1 + result["restarts"]  # each kill was a new process on the data
