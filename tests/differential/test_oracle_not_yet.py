"""--differential with an oracle that says "not yet" where the target answers (ProtocolSpec.not_yet): a second
reference broker with the variant kafka.txn-completion-lags (Kafka's own timing: a transaction completes a moment
after EndTxn is answered, so the next coordinator request gets CONCURRENT_TRANSACTIONS) against the clean broker.

A retriable "not yet" says when, not what: the oracle is asked the same request again until it answers, as a client
would, and the comparison goes on. Every transaction case compares every answer it exchanged (but the one whose
abort waits for the server's timeout sweep, which stops comparing by design), none is DIVERGENT under --strict,
and the transcripts say where the oracle was asked again.
"""

from __future__ import annotations

import pytest

from tests.quality.harness import run_suite
from wirecheck.targets.launcher import launch

TIMEOUT_SWEEP = "test_transaction_past_its_timeout_is_aborted"


@pytest.fixture
def lagging_oracle(tmp_path):
    broker = launch(protocols=["kafka"], variants=["kafka.txn-completion-lags"], workdir=tmp_path / "oracle")
    try:
        yield broker
    finally:
        broker.stop()


def test_an_oracle_that_says_not_yet_is_asked_again_and_compared(tmp_path, lagging_oracle):
    report = tmp_path / "reports"
    run = run_suite("kafka/test_transactions.py", report, extra=[
        "-p", "no:randomly", "--differential", "--keep-transcripts",
        "--oracle", f"kafka=127.0.0.1:{lagging_oracle.ports['kafka']}"])
    assert run.returncode == 0 and run.records, run.tail()
    assert not [r for r in run.records if r["verdict"] != "OK"], run.by_verdict()
    partial = {r["nodeid"] for r in run.records if r["differential"]["compared"] != r["differential"]["exchanged"]}
    assert {nodeid.rsplit("::", 1)[1] for nodeid in partial} <= {TIMEOUT_SWEEP}, partial
    asked_again = [path for path in report.glob("*/transcripts/*.json") if 'oracle answered \\"not yet\\"'
                   in path.read_text()]
    assert asked_again, sorted(p.name for p in report.glob("*/transcripts/*.json"))


def test_not_yet_reads_every_error_field_and_never_a_request_that_took_effect():
    """A partition's CONCURRENT_TRANSACTIONS in AddPartitionsToTxn v3 (PartitionErrorCode) says "not yet"; a
    Produce answer never does (records may be in another partition), nor an answer with any other error."""
    from wirecheck.protocols.kafka import errors, messages, not_yet

    request = messages.encode_request(24, 3, 9, "c", {"TransactionalId": "t", "ProducerId": 1, "ProducerEpoch": 0,
                                                      "Topics": [{"Name": "x", "Partitions": [0]}]})

    def answer(code: int) -> bytes:
        return messages.encode_response(24, 3, 9, {"ThrottleTimeMs": 0, "ResultsByTopicV3AndBelow": [
            {"Name": "x", "ResultsByPartition": [{"PartitionIndex": 0, "PartitionErrorCode": code}]}]})

    assert not_yet(request, answer(errors.CONCURRENT_TRANSACTIONS))
    assert not not_yet(request, answer(errors.NONE)) and not not_yet(request, answer(errors.INVALID_TXN_STATE))
    produce = messages.encode_request(0, 9, 9, "c", {"TransactionalId": None, "Acks": -1, "TimeoutMs": 1000,
                                                     "TopicData": []})
    assert not not_yet(produce, messages.encode_response(0, 9, 9, {"ThrottleTimeMs": 0, "Responses": [
        {"Name": "x", "PartitionResponses": [{"Index": 0, "ErrorCode": errors.NOT_LEADER_OR_FOLLOWER}]}]}))
