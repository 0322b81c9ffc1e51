"""A client's own defect (protocols.clients.ClientDefect): which client versions it names, how the client's traffic
shows it (Kafka: tagged fields written at their default values, which librdkafka 2.16.0 misreads), and that a
scenario failing with it shown is XFAIL, the client's, not FAILED, the target's."""

from __future__ import annotations

import struct

from wirecheck.protocols.clauses import Clause, Level
from wirecheck.protocols.clients import scenario_of
from wirecheck.protocols.kafka import SPEC, messages
from wirecheck.protocols.kafka.client_defects import default_tags_sent
from wirecheck.protocols.verdicts import ClientDefectMet, Divergence, Verdict
from wirecheck.broker.kafka.api_table import compile_messages
from wirecheck.targets.runner.verdicts import classify

PRODUCE = {"Responses": [{"Name": "t", "PartitionResponses": [
    {"Index": 0, "ErrorCode": 0, "BaseOffset": 0, "LogAppendTimeMs": -1, "LogStartOffset": 0, "RecordErrors": [],
     "ErrorMessage": None}]}], "ThrottleTimeMs": 0}


def _request(version: int = 12) -> bytes:
    return messages.encode_request(0, version, 7, "c", {"TransactionalId": None, "Acks": -1, "TimeoutMs": 1000,
                                                        "TopicData": []})


def _answer_every_tag_written(version: int = 12) -> bytes:
    """A Produce answer as the reference broker's variant kafka.tagged-defaults-written writes it."""
    _, responses = compile_messages(False, default_tags=True)
    out = bytearray(4) + struct.pack(">i", 7) + b"\x00"  # response header v1: no tags
    responses[0].encode(PRODUCE, version, out)
    struct.pack_into(">i", out, 0, len(out) - 4)
    return bytes(out)


def test_tagged_fields_at_their_defaults_are_shown_and_kafkas_own_encoding_is_not():
    written = _answer_every_tag_written()
    assert messages.decode_response(0, 12, written)["body"]["Responses"][0]["Name"] == "t"  # a valid answer
    evidence = default_tags_sent([(_request(), written)])
    assert evidence and "Produce v12" in evidence and "CurrentLeader" in evidence and "NodeEndpoints" in evidence
    assert default_tags_sent([(_request(), messages.encode_response(0, 12, 7, PRODUCE))]) is None
    assert default_tags_sent([(b"\x00\x00\x00\x01", written)]) is None  # a request that does not decode


def test_the_defect_names_the_client_versions_seen_to_have_it():
    (defect,) = [d for d in SPEC.client_defects if d.name == "librdkafka-default-tags"]
    assert defect.affects("confluent-kafka", "2.16.1 (librdkafka 2.16.0)")
    assert not defect.affects("confluent-kafka", "2.17.0 (librdkafka 2.17.0)")  # a new version is judged afresh
    assert not defect.affects("kcat", "1.7.1 (librdkafka 2.0.2)") and not defect.affects("confluent-kafka", None)
    assert scenario_of("kafka.clients.confluent-kafka.produce-consume") == ("kafka", "confluent-kafka",
                                                                           "produce-consume")
    assert scenario_of("kafka.commit.round-trip") is None


def test_a_scenario_failing_with_the_defect_shown_is_xfail_not_failed():
    clause = Clause("kafka.clients.confluent-kafka.produce-consume", "r", "s", Level.MUST)
    failure = Divergence(clause, "10 records back", "the client exited with status -11")
    result = classify(ClientDefectMet("librdkafka-default-tags", "Produce v12 answers carry CurrentLeader ...",
                                      failure, "what it does"), "call", None, strict=True, case_clause=clause.id)
    assert result.verdict is Verdict.XFAIL and result.verdict.pytest_outcome(strict=True) == "xfailed" and result.divergence is failure
    assert result.message.startswith("the client's own known defect librdkafka-default-tags: Produce v12")
