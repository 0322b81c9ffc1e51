"""Hostile Kafka requests: lying counts and lengths, truncation, overlong varints, bad UTF-8, tagged-field
tricks. Each mutant carries the reaction a conforming broker may have (strategies.kafka); the target must react
so, and still answer a known-good request afterwards (the plugin's liveness probe).

Mutants are drawn from read-only APIs only (strategies.kafka.READ_ONLY, Metadata without auto-creation), so
that the valid-but-odd ones (unknown tags, trailing bytes) cannot change a live cluster.
"""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given

from wirecheck.protocols.kafka import errors, messages
from wirecheck.protocols.verdicts import Blocked, Divergence
from wirecheck.strategies import kafka as kafka_strategies
from wirecheck.suites.kafka.client import C, DataPath, Kafka, short
from wirecheck.targets.fuzzing import fuzz_case, judge_example

case = pytest.mark.case

MUTANT_DEADLINE = 1.0


def _adapter(target, transactions: bool = False) -> kafka_strategies.KafkaFuzz:
    """The bulk adapter; ``transactions`` (a guided run): a topic of its own for its AddPartitionsToTxn steps (the
    run goes without them, its steps stopping at InitProducerId, where the target refuses to create one)."""
    advertised = Kafka(target).advertised()  # the transactional APIs' versions: a guided run's session-state steps
    topic = None
    if transactions:
        with contextlib.suppress(Blocked):
            topic = DataPath(target).topic("fuzz-txn")
    return kafka_strategies.KafkaFuzz(kafka_strategies.read_only_ranges(advertised),
                                      init_producer=advertised.get(kafka_strategies.INIT_PRODUCER_ID),
                                      transactions=advertised, txn_topic=topic)


@case("kafka.encoding.malformed-body", hostile=True)
def test_structural_mutants_get_a_permitted_outcome(target, fuzz):
    """Bulk: seeded structural mutants, pipelined where the spec keeps the connection open; replay with the same
    --fuzz-seed."""
    adapter = _adapter(target, transactions=getattr(fuzz, "guided", False))
    fuzz_case(target, adapter, fuzz.rng("kafka.encoding.malformed-body"), fuzz.mutants,
              connect=lambda: target.connect(deadline=MUTANT_DEADLINE))


@case("kafka.encoding.malformed-body", hostile=True)
def test_mutants_shrink_to_a_minimal_frame(target):
    """The same property under Hypothesis: a failure shrinks to a small request and prints its reproduce blob."""
    adapter = _adapter(target)
    target.transcript.note("Hypothesis examples follow; the failing one is last")

    @given(kafka_strategies.mutated_requests(list(adapter.ranges), kafka_strategies.BULK_OPERATORS, adapter.ranges,
                                             kafka_strategies.harmless))
    def check(mutant):
        session = target.connect(deadline=MUTANT_DEADLINE)
        session.transcript.note(f"example: {mutant.label()}; permitted: {mutant.reaction}")
        judge_example(target, session, adapter, mutant)

    check()


@case("kafka.encoding.hostile-count", hostile=True)
@pytest.mark.parametrize("count", [2**31 - 1, 2**31 - 2, -2, -(2**31)], ids=["max", "max-1", "-2", "min"])
def test_hostile_topic_count_is_rejected(target, count):
    """Metadata v1's Topics is nullable (MetadataRequest.json: "nullableVersions": "1+"; null asks for every
    topic). A count above the bytes present is refused. A negative count other than -1, the guide's null marker,
    may be refused too, or read as null as Apache Kafka's generated reader does (MessageDataGenerator.java,
    generateVariableLengthReader: "if (arrayLength < 0)" is null in a nullable field): then the answer lists every
    topic, among them one the case knows exists."""
    clause = "kafka.encoding.hostile-count"
    client = Kafka(target)
    client.require(3, 1)
    known = DataPath(target).topic("known", shared=True) if count < 0 else None
    frame = messages.encode_request(3, 1, 5, "wirecheck", {"Topics": [{"Name": "t"}]})
    at = len(frame) - 7  # the INT32 topic count, before one INT16-length "t"
    if count < -1:
        target.beyond_comparison("a negative count other than -1: refused, or read as null (every topic), both "
                                 "permitted")
    client.session.send(frame[:at] + struct.pack(">i", count) + frame[at + 4:])
    # an answer that is no Metadata response at all is a refusal in a form malformed-body forbids (judge_refusal);
    # this clause's own is that the count is refused and the target neither waits for its elements nor dies
    reply = client.session.recv()
    codes = client.error_codes_of(reply.frame, (3, 1)) if reply.is_frame else None
    # per-topic codes of other topics (one still being created: LEADER_NOT_AVAILABLE) do not make it a refusal
    if known is not None and codes is not None and errors.INVALID_REQUEST not in codes:
        listed = [t["Name"] for t in messages.decode_response(3, 1, reply.frame)["body"]["Topics"]]
        if known not in listed:
            raise Divergence(C[clause], f"the connection closed, or the answer to a null Topics (every topic, "
                             f"{known} among them)", f"an answer listing {short(listed)}")
        return
    if reply.is_frame:
        client.judge_refusal(reply.frame, clause, (3, 1))
        client.closes(clause, allowed_codes=(42,), context=(3, 1))
    elif not reply.ended:
        raise Divergence(C[clause], "the connection closed (an error 42 answer first allowed)",
                         f"{reply}: the connection stayed open")


@case("kafka.encoding.unknown-tags")
@pytest.mark.parametrize("where", ["body", "header", "both"])
def test_unknown_tagged_fields_are_skipped(target, where):
    client = Kafka(target)
    _, high = client.require(18)
    if high < 3:
        pytest.skip("UNIMPLEMENTED: no flexible ApiVersions version advertised")
    body = {"ClientSoftwareName": "wirecheck", "ClientSoftwareVersion": "0.1.0"}
    if where in ("body", "both"):
        body["_tagged_fields"] = {100: b"\x01\x02\x03", 4000: b""}
    header_tags = {77: b"\xff" * 5} if where in ("header", "both") else None
    correlation_id = client.next_correlation_id()
    client.session.send(messages.encode_request(18, 3, correlation_id, "wirecheck", body, header_tags))
    answer = client.receive(18, 3, correlation_id, "kafka.encoding.unknown-tags")
    if answer["ErrorCode"] != 0:
        raise Divergence(C["kafka.encoding.unknown-tags"], "ErrorCode 0 (the unknown tags skipped)",
                         f"ErrorCode {answer['ErrorCode']}")
    # the same connection must still be in sync: a second request is answered normally
    client.call(18, 0, {}, "kafka.encoding.unknown-tags")


@case("kafka.framing.size-prefix", hostile=True)
def test_size_claiming_more_than_sent_is_not_answered(target):
    # A size larger than the bytes sent: the broker may wait for the rest or close, never answer early.
    client = Kafka(target)
    frame = messages.encode_request(18, 0, 3, "wirecheck", {})
    client.session.send(struct.pack(">i", len(frame) - 4 + 100) + frame[4:])
    reply = client.session.recv(deadline=1.0)
    if reply.is_frame:
        raise Divergence(C["kafka.framing.size-prefix"], "no answer before the frame is complete",
                         f"an answer to a frame 100 bytes short: {reply}")


@case("kafka.encoding.malformed-body", hostile=True)
@pytest.mark.parametrize("where", ["name-length", "tag-count"])
def test_overlong_varint_is_rejected(target, where):
    """Kafka's ByteUtils.readUnsignedVarint throws past 5 bytes; a 6-byte varint is a malformed request."""
    client = Kafka(target)
    _, high = client.require(18)
    if high < 3:
        pytest.skip("UNIMPLEMENTED: no flexible ApiVersions version advertised")
    body = {"ClientSoftwareName": "wirecheck", "ClientSoftwareVersion": "0.1.0"}
    frame, spans = kafka_strategies.traced_request(18, 3, 11, "wirecheck", body)
    span = next(s for s in spans if (where == "name-length" and s.path == "body.ClientSoftwareName"
                                     and s.kind == "length") or (where == "tag-count" and s.kind == "tag-count"
                                                                  and s.path == "body._tagged_fields"))
    mutant = kafka_strategies.mutate_overlong_varint(frame, span, 18, 3)
    client.session.send(mutant.frame)
    client.closes("kafka.encoding.malformed-body", allowed_codes=(42,), context=(18, 3))
