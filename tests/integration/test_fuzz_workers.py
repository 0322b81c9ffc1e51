"""A bulk run split over worker processes (targets/fuzz_workers.py) against the reference broker: one worker or
several report the same failing mutant of a seed (a fault blind Kafka mutants reach), its divergence carried back
from the worker process that bisected it. (The split itself, deep in a run, is tests/unit/test_fuzz_workers.py.)"""

from __future__ import annotations

import pytest

from wirecheck.protocols.kafka import SPEC
from wirecheck.protocols.transcript import Transcript
from wirecheck.strategies import kafka as kafka_strategies
from wirecheck.targets.fuzz_workers import Share, run_workers
from wirecheck.targets.fuzzing import MutantFailed
from wirecheck.targets.launcher import launch
from wirecheck.targets.session import Session

FAULT = "kafka.malformed-body-answered"


@pytest.fixture(scope="module")
def broker():
    started = launch(["kafka"], faults=[FAULT])
    yield started
    started.stop()


def share(broker) -> Share:
    address = broker.address("kafka")
    transcript = Transcript("kafka", SPEC.describe)

    def connect():
        return Session(address, SPEC.primary, transcript, deadline=2.0)

    session = connect()
    try:
        answers = [session.request(frame).frame for frame in kafka_strategies.fuzz_setup("workers")]
    finally:
        session.close()
    return Share(connect, kafka_strategies.fuzz_adapter("workers", answers))


def test_the_same_failing_mutant_on_one_worker_or_two(broker):
    shares = [share(broker)]
    found = []
    for workers in (1, 2):
        with pytest.raises(MutantFailed) as failed:
            run_workers(shares, 3, 20_000, workers)
        found.append((failed.value.mutant.label(), failed.value.divergence.clause.id))
    assert found[0][1] == "kafka.encoding.malformed-body"
    assert found[1] == found[0]
