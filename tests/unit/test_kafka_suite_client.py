"""The Kafka suite client's "not yet" helpers: retriable answers are asked again only for a bounded time, and what
comes back after that is the caller's to judge, so a server that never gets ready still fails its check."""

from __future__ import annotations

import struct

import pytest

from wirecheck.protocols.kafka import errors, messages
from wirecheck.protocols.kafka.clauses import CATALOGUE
from wirecheck.protocols.transcript import Transcript
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka import client as kafka_client
from wirecheck.targets.transport.outcome import Outcome, Reply

FIND_COORDINATOR = 10


class ScriptedSession:
    """Answers each request with the next of ``codes`` as a FindCoordinator v3 ErrorCode (the last one repeats)."""

    deadline = 1.0

    def __init__(self, codes: list[int]):
        self.codes = codes
        self.transcript = Transcript("kafka")
        self.sent = 0
        self._correlation = 0

    def send(self, data: bytes, decode: bool = True) -> bool:
        self._correlation = struct.unpack(">i", data[8:12])[0]
        self.sent += 1
        return True

    def recv(self, deadline=None) -> Reply:
        code = self.codes[min(self.sent, len(self.codes)) - 1]
        body = {"ThrottleTimeMs": 0, "ErrorCode": code, "ErrorMessage": None, "NodeId": 1, "Host": "127.0.0.1",
                "Port": 9092}
        return Reply(Outcome.FRAME, messages.encode_response(FIND_COORDINATOR, 3, self._correlation, body))


class Target:
    catalogue = CATALOGUE
    case_id = "kafka.group.find-coordinator"


@pytest.fixture(autouse=True)
def no_sleeping(monkeypatch):
    """Backoff sleeps advance a fake clock instead of waiting."""
    now = [0.0]
    monkeypatch.setattr(kafka_client.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(kafka_client.time, "sleep", lambda seconds: now.__setitem__(0, now[0] + seconds))


def find(codes: list[int], **options) -> tuple[int, int]:
    session = ScriptedSession(codes)
    client = kafka_client.Kafka(Target(), session)
    body = client.call_until_ready(FIND_COORDINATOR, 3, {"Key": "g", "KeyType": 0}, "kafka.group.find-coordinator",
                                   **options)
    return body["ErrorCode"], session.sent


def test_a_coordinator_loading_is_asked_again_until_it_answers():
    assert find([errors.COORDINATOR_NOT_AVAILABLE, errors.COORDINATOR_LOAD_IN_PROGRESS, errors.NOT_COORDINATOR,
                 errors.NONE]) == (errors.NONE, 4)


def test_a_coordinator_never_ready_is_returned_as_it_stands_after_the_bound():
    code, sent = find([errors.COORDINATOR_NOT_AVAILABLE])
    assert code == errors.COORDINATOR_NOT_AVAILABLE
    # backoff 0.1, 0.2, 0.4, 0.8, then 1 s steps until READY_WAIT_S: bounded by time, not by a count
    assert 5 < sent < 5 + kafka_client.READY_WAIT_S
    with pytest.raises(Divergence):
        kafka_client.expect("kafka.group.find-coordinator", code, errors.NONE)


def test_a_non_retriable_error_is_not_asked_again():
    assert find([errors.INVALID_REQUEST, errors.NONE]) == (errors.INVALID_REQUEST, 1)


def test_only_the_named_codes_are_retried():
    assert find([errors.CONCURRENT_TRANSACTIONS, errors.NONE]) == (errors.CONCURRENT_TRANSACTIONS, 1)
    assert find([errors.CONCURRENT_TRANSACTIONS, errors.NONE],
                retriable=kafka_client.COORDINATOR_NOT_READY | {errors.CONCURRENT_TRANSACTIONS}) == (errors.NONE, 2)


def test_until_applied_returns_the_last_answer_after_the_bound():
    answers = iter(range(1000))
    assert kafka_client.until_applied(lambda: next(answers), lambda n: n == 2) == 2
    last = kafka_client.until_applied(lambda: next(answers), lambda n: False)
    assert last > 3  # asked again until the bound, then handed back unjudged
