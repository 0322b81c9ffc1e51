"""The Kafka strategies: valid output is valid, each mutation breaks exactly what it says, reactions name real
clauses. Our strict decoder stands in for a conforming broker's parser here."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings

from wirecheck.protocols.kafka import errors, messages, records
from wirecheck.protocols.kafka.clauses import CATALOGUE
from wirecheck.protocols.reactions import ANSWER, CLOSE, ERROR, Observation
from wirecheck.strategies import binary
from wirecheck.strategies import kafka as kafka_strategies
from wirecheck.strategies.kafka.mutants import RULES
from wirecheck.strategies.kafka.seeds import field_nullable, traced_seed

REJECTED = {"hostile-count", "negative-length", "truncate", "overlong-varint", "truncated-tag", "invalid-utf8"}
CLOSED = Observation(CLOSE)
AN_ANSWER = Observation(ANSWER)


@settings(max_examples=150)
@given(kafka_strategies.mutated_requests())
def test_mutated_requests_break_what_they_say(mutated):
    assert mutated.reaction.clause in CATALOGUE
    assert mutated.reaction.outcomes
    assert mutated.frame != mutated.context.original
    if mutated.operator in REJECTED:
        with pytest.raises(messages.DecodeError):
            messages.decode_request(mutated.frame)
        assert mutated.reaction.permits(CLOSED)
        # our decoder is strict about UTF-8; Kafka's is lenient, so a broker may also answer that one; and a
        # negative count in a nullable field may be read as null (test_negative_counts_of_nullable_fields_may_be_null)
        null_read = mutated.operator in ("hostile-count", "negative-length") and mutated.reaction.permits(AN_ANSWER)
        if null_read:
            request = mutated.context
            assert field_nullable(request.api_key, request.version, mutated.field)
            assert mutated.reaction.clause == "kafka.encoding.hostile-count"
        assert mutated.reaction.permits(AN_ANSWER) == (mutated.operator == "invalid-utf8" or null_read)
    elif mutated.operator == "unknown-tag":
        messages.decode_request(mutated.frame)  # unknown tags are skipped: the frame still decodes
        assert bytes([0x8F, 0x4E, 3, 1, 2, 3]) in mutated.frame  # tag 9999, 3 bytes
        assert mutated.reaction.outcomes == {"answer"} and mutated.reaction.pipelines
    elif mutated.operator == "frame-length":
        assert int.from_bytes(mutated.frame[:4], "big", signed=True) != len(mutated.frame) - 4


@given(kafka_strategies.mutated_batches())
def test_mutated_batches_are_rejected(mutation):
    assert mutation.reaction.clause in CATALOGUE
    with pytest.raises(records.DecodeError):
        batch, end = records.decode_batch(mutation.batch)
        if end != len(mutation.batch):
            raise records.DecodeError("batch shorter than its bytes", end)


def test_traced_spans_cover_the_frame_exactly():
    body = {"ClientSoftwareName": "wc", "ClientSoftwareVersion": "1.0"}
    frame, spans = kafka_strategies.traced_request(18, 3, 7, "c", body)
    assert frame == messages.encode_request(18, 3, 7, "c", body)
    kinds = {(s.path, s.kind) for s in spans}
    assert ("body.ClientSoftwareName", "length") in kinds and ("body._tagged_fields", "tag-section") in kinds
    name = next(s for s in spans if s.path == "body.ClientSoftwareName" and s.kind == "data")
    assert frame[name.start:name.end] == b"wc"


def test_produce_crc_mutation_expects_corrupt_message():
    batch = records.build_batch([b"v"])
    mutation = kafka_strategies.corrupt_crc(batch)
    assert mutation.reaction.permits(Observation(ERROR, code=errors.CORRUPT_MESSAGE))
    assert not mutation.reaction.permits(Observation(ERROR, code=errors.INVALID_REQUEST))
    body = kafka_strategies.produce_body(9, "t", 0, mutation.batch)
    frame = messages.encode_request(0, 9, 1, "c", body)
    sent = messages.decode_request(frame)["body"]["TopicData"][0]["PartitionData"][0]["Records"]
    with pytest.raises(records.CorruptBatch):
        records.decode_batch(sent)


def test_binary_operators():
    assert binary.overlong_uvarint(5, 6) == b"\x85\x80\x80\x80\x80\x00"
    assert binary.encode_number("int32", -2) == b"\xff\xff\xff\xfe"
    assert binary.encode_number("uvarint+1", 0) == b"\x01"
    span = binary.Span("x", "count", 0, 4, "int32")
    assert binary.set_number(b"\x00\x00\x00\x01rest", span, 2**31 - 1) == b"\x7f\xff\xff\xffrest"
    assert binary.reframe_i32(b"ab") == b"\x00\x00\x00\x02ab"


def test_error_table_and_catalogue():
    assert errors.name(35) == "UNSUPPORTED_VERSION" and errors.name(2) == "CORRUPT_MESSAGE"
    assert errors.is_retriable(3) and not errors.is_retriable(35)
    assert errors.name(30_000) == "UNKNOWN_CODE_30000"
    assert len(errors.BY_CODE) >= 129
    assert all(clause.id.startswith("kafka.") and clause.requirement and clause.source for clause in CATALOGUE)
    assert "kafka.produce.crc-mismatch" in CATALOGUE


def test_bulk_generation_is_valid_and_mutants_are_rejected():
    import random

    rng = random.Random(20261121)
    for _ in range(300):
        api_key, version, body = kafka_strategies.random_request(rng)
        frame = messages.encode_request(api_key, version, 1, "c", body)
        assert messages.encode_request(api_key, version, 1, "c", messages.decode_request(frame)["body"]) == frame
    for _ in range(300):
        mutated = kafka_strategies.random_mutant(rng)
        assert mutated.reaction.clause in CATALOGUE
        if mutated.operator in REJECTED:
            with pytest.raises(messages.DecodeError):
                messages.decode_request(mutated.frame)
        elif mutated.operator == "unknown-tag":
            messages.decode_request(mutated.frame)


def test_traced_frames_equal_encoded_frames():
    import random

    rng = random.Random(7)
    for _ in range(300):
        api_key, version, body = kafka_strategies.random_request(rng)
        frame, spans = kafka_strategies.traced_request(api_key, version, 3, "c", body)
        assert frame == messages.encode_request(api_key, version, 3, "c", body)
        assert all(0 <= s.start <= s.end <= len(frame) for s in spans)


def test_every_structural_base_is_accepted_by_the_clean_reference_broker(tmp_path):
    """A structural mutant is judged against what its base request deserves: the bases (random valid requests
    made harmless) must draw no rejection from a conforming broker, or a mutant of an invalid base (a random
    IsolationLevel, an unknown coordinator KeyType) would blame the operator for the base's own error."""
    import random
    import socket

    from wirecheck.targets.launcher import launch

    broker = launch(["kafka"], workdir=tmp_path / "broker")
    try:
        with socket.create_connection(("127.0.0.1", broker.ports["kafka"]), timeout=5) as sock:
            def ask(frame: bytes) -> bytes:
                sock.sendall(frame)
                data = b""
                while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
                    data += sock.recv(1 << 20)
                return data

            answer = ask(kafka_strategies.fuzz_setup("kafka")[0])
            adapter = kafka_strategies.fuzz_adapter("kafka", [answer])
            rng, refused = random.Random(7), []
            for _ in range(400):
                seed = kafka_strategies.random_seed(rng, list(adapter.ranges), adapter.ranges,
                                                    kafka_strategies.harmless)
                request = messages.decode_request(seed.frame)["body"]
                body = messages.decode_response(seed.api_key, seed.version, ask(seed.frame))["body"]
                codes = errors.error_codes(body) & kafka_strategies.REJECTIONS
                out_of_range = {name: request[name] for name, valid in kafka_strategies.ENUMS.get(seed.api_key,
                                                                                                  {}).items()
                                if name in request and request[name] not in valid}
                if codes or out_of_range:
                    refused.append((seed.api_key, seed.version, sorted(codes), out_of_range))
    finally:
        broker.stop()
    assert not refused, refused[:3]


@pytest.mark.parametrize(("api_key", "version", "body", "path", "value", "null"), [
    (3, 1, {"Topics": [{"Name": "t"}]}, "body.Topics", -2, True),  # nullable from v1: Kafka reads null
    (3, 1, {"Topics": [{"Name": "t"}]}, "body.Topics", -(2**31), True),
    (3, 1, {"Topics": [{"Name": "t"}]}, "body.Topics", 2**31 - 1, False),  # a count above the bytes: refused
    (3, 0, {"Topics": [{"Name": "t"}]}, "body.Topics", -2, False),  # not nullable at v0
    (3, 12, {"Topics": [{"TopicId": bytes(16), "Name": "t"}]}, "body.Topics", 2**32 - 2, True),  # compact: int -2
    (3, 12, {"Topics": [{"TopicId": bytes(16), "Name": "t"}]}, "body.Topics", 2**31 - 2, False),  # compact, positive
])
def test_negative_counts_of_nullable_fields_may_be_null(api_key, version, body, path, value, null):
    """Apache Kafka's generated readers take any negative count of a nullable field for null (length < 0), a
    compact one computed in 32-bit ints: the answer is then permitted beside the refusal (hostile-count)."""
    seed = traced_seed(api_key, version, 1, "wc", body)
    span = next(s for s in seed.spans if s.path == path and s.kind == "count")
    frame = binary.set_number(seed.frame, span, value)
    reaction = RULES["hostile-count"].reaction(seed, span, frame)
    assert reaction.permits(CLOSED)
    assert reaction.permits(AN_ANSWER) == null


def test_a_wrong_refusal_code_under_a_survival_reaction_is_malformed_bodys():
    """The target survived a trailing-bytes mutant but refused it with UNKNOWN_SERVER_ERROR: the refusal's form is
    wrong (kafka.encoding.malformed-body), not the target's survival."""
    from wirecheck.strategies.kafka.mutants import SURVIVES, expect

    reaction = expect("kafka.robustness.survives", "7 bytes after the body", *SURVIVES)
    divergence = reaction.judge(Observation(ERROR, code=errors.UNKNOWN_SERVER_ERROR, rejects=True), CATALOGUE)
    assert divergence is not None and divergence.clause.id == "kafka.encoding.malformed-body"
    assert reaction.judge(Observation(ERROR, code=errors.INVALID_REQUEST, rejects=True), CATALOGUE) is None
    assert reaction.judge(CLOSED, CATALOGUE) is None


def test_transaction_steps_are_made_from_the_init_producer_id_answer():
    """AddPartitionsToTxn and EndTxn steps carry the transactional id, producer id and epoch of the InitProducerId
    answered before them on their connection; without one, an id no step initialises (an error, every time)."""
    adapter = kafka_strategies.offline_adapter()
    assert adapter.step_kinds == ("InitProducerId", "AddPartitionsToTxn", "EndTxn")
    rng = random.Random(5)
    init, add, end = (adapter.step(kind, rng) for kind in adapter.step_kinds)
    assert init.leads and add.build is not None and end.build is not None
    answer = messages.encode_response(22, init.context.version, init.context.correlation_id,
                                      {"ThrottleTimeMs": 0, "ErrorCode": 0, "ProducerId": 4242, "ProducerEpoch": 7})
    txn_id = messages.decode_request(init.frame)["body"]["TransactionalId"]
    added = messages.decode_request(add.build([(init, answer)]).frame)["body"]
    assert (added["V3AndBelowTransactionalId"], added["V3AndBelowProducerId"], added["V3AndBelowProducerEpoch"]) == \
        (txn_id, 4242, 7)
    assert added["V3AndBelowTopics"] == [{"Name": adapter.txn_topic, "Partitions": [0]}]
    ended = messages.decode_request(end.build([(init, answer), (add, None)]).frame)["body"]
    assert (ended["TransactionalId"], ended["ProducerId"], ended["ProducerEpoch"], ended["Committed"]) == \
        (txn_id, 4242, 7, False)
    refused = messages.encode_response(22, init.context.version, init.context.correlation_id,
                                       {"ThrottleTimeMs": 0, "ErrorCode": 51, "ProducerId": -1, "ProducerEpoch": -1})
    alone = messages.decode_request(add.build([(init, refused)]).frame)["body"]
    assert (alone["V3AndBelowTransactionalId"], alone["V3AndBelowProducerId"]) == (adapter.STEP_UNINITIALISED, -1)
    # the steps' transactional ids are used in turn
    ids = [messages.decode_request(adapter.step("InitProducerId", rng).frame)["body"]["TransactionalId"]
           for _ in range(adapter.STEP_TXN_IDS)]
    assert len(set(ids)) == adapter.STEP_TXN_IDS and txn_id not in ids[:-1] and ids[-1] == txn_id
    # each worker of a split run has transactional ids of its own
    workers = [messages.decode_request(adapter.for_worker(w).step("InitProducerId", rng).frame)["body"]
               ["TransactionalId"] for w in (0, 1)]
    assert len(set(workers) | {txn_id}) == 3
