"""Hostile Kafka requests: lying counts and lengths, truncation, overlong varints, bad UTF-8, tagged-field
tricks. Each mutant carries what a conforming broker may do with it (strategies.kafka); the target must do
one of those, and still answer a known-good request afterwards (the plugin's liveness probe).

Mutants are drawn from read-only APIs only (and Metadata without auto-creation), so that the valid-but-odd
ones (unknown tags, trailing bytes) cannot change a live cluster.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given

from protocols.kafka import messages
from reports.model import Divergence
from strategies import kafka as kafka_strategies
from suites.kafka.client import C, Kafka, allowed, outcome, short

case = pytest.mark.case

#: ApiVersions, Metadata, ListOffsets, Fetch, OffsetFetch, FindCoordinator, DescribeGroups, ListGroups,
#: DescribeConfigs, DescribeCluster: reading APIs.
READ_ONLY = (18, 3, 2, 1, 9, 10, 15, 16, 32, 60)
# frame-length lies make a conforming broker wait (own case below); overlong varints have their own case so
# that a broker accepting them fails one clearly named case instead of the bulk one.
BULK_OPERATORS = tuple(op for op in kafka_strategies.OPERATORS if op not in ("frame-length", "overlong-varint"))
MUTANT_DEADLINE = 1.0


def _harmless(api_key: int, body: dict) -> None:
    """Keep the valid part of a mutant valid and quick: no topic auto-creation, no Fetch long-poll, and a
    client software name that passes ApiVersions v3+ validation (else 42 is the right answer)."""
    if api_key == 3:
        body["AllowAutoTopicCreation"] = False
    elif api_key == 1:
        body["MaxWaitMs"], body["MinBytes"] = 0, 0
    elif api_key == 18:
        body["ClientSoftwareName"], body["ClientSoftwareVersion"] = "wirecheck", "0.1.0"


def _bulk_count(fuzz) -> int:
    return max(20, min(fuzz.mutants // 30, 10_000))


def read_only_ranges(client: Kafka) -> dict[int, tuple[int, int]]:
    """Advertised versions of the read-only APIs that the definitions also know."""
    advertised = client.advertised()
    ranges = {}
    for key in READ_ONLY:
        if key in advertised:
            low = max(advertised[key][0], messages.versions(key)[0])
            high = min(advertised[key][1], messages.versions(key)[1])
            if low <= high:
                ranges[key] = (low, high)
    return ranges


def check_mutant(target, mutant, label: str) -> None:
    """Send one mutant on a fresh connection; its outcome must be one the expectation permits."""
    session = target.connect(deadline=MUTANT_DEADLINE)
    session.transcript.note(f"{label}: {mutant.operator} at {mutant.target} "
                            f"({messages.api_name(mutant.api_key)} v{mutant.version}); "
                            f"permitted: {mutant.expectation}")
    correlation_id = struct.unpack_from(">i", mutant.frame, 8)[0]
    session.send(mutant.frame)
    reply = session.recv()
    observed, detail = outcome(reply, mutant.api_key, mutant.version, correlation_id)
    session.close()
    if not allowed(mutant.expectation, observed):
        raise Divergence(C[mutant.expectation.clause], " or ".join(sorted(mutant.expectation.outcomes)),
                         f"{observed}: {short(detail)}",
                         note=f"{label}: {mutant.operator} at {mutant.target} of "
                              f"{messages.api_name(mutant.api_key)} v{mutant.version}")


@case("kafka.encoding.malformed-body", hostile=True)
def test_structural_mutants_get_a_permitted_outcome(target, fuzz):
    """Bulk: thousands of seeded mutants per second of generation; replay with the same --fuzz-seed."""
    ranges = read_only_ranges(Kafka(target))
    rng = fuzz.rng("kafka.encoding.malformed-body")
    for index in range(_bulk_count(fuzz)):
        mutant = kafka_strategies.random_mutant(rng, list(ranges), ranges, BULK_OPERATORS, _harmless)
        check_mutant(target, mutant, f"mutant {index}")


@case("kafka.encoding.malformed-body", hostile=True)
def test_mutants_shrink_to_a_minimal_frame(target):
    """The same property under Hypothesis: a failure shrinks to a small request and prints its reproduce blob."""
    ranges = read_only_ranges(Kafka(target))
    target.transcript.note("Hypothesis examples follow; the failing one is last")

    @given(kafka_strategies.mutated_requests(list(ranges), BULK_OPERATORS, ranges, _harmless))
    def check(mutant):
        check_mutant(target, mutant, "example")

    check()


@case("kafka.encoding.hostile-count", hostile=True)
@pytest.mark.parametrize("count", [2**31 - 1, 2**31 - 2, -2, -(2**31)], ids=["max", "max-1", "-2", "min"])
def test_hostile_topic_count_is_rejected(target, count):
    client = Kafka(target)
    client.require(3, 1)
    frame = messages.encode_request(3, 1, 5, "wirecheck", {"Topics": [{"Name": "t"}]})
    at = len(frame) - 7  # the INT32 topic count, before one INT16-length "t"
    client.session.send(frame[:at] + struct.pack(">i", count) + frame[at + 4:])
    client.closes("kafka.encoding.hostile-count", allowed_codes=(42,), context=(3, 1))


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
