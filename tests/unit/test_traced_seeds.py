"""Traced seeds (strategies/traced.py) put each span where the codec wrote the field, and the rule-driven bulk
mutators (strategies/rules.py) build every mutant through a registered operator's apply function."""

from __future__ import annotations

import json
import random
import struct

import pytest

from wirecheck.protocols.barco import wire
from wirecheck.protocols.batches import ATTRIBUTES_OFFSET, CRC_OFFSET, LENGTH_OFFSET, MAGIC_OFFSET
from wirecheck.protocols.fluvio import messages, records
from wirecheck.protocols.kafka import messages as kafka_messages
from wirecheck.protocols.kafka import records as kafka_records
from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.rustlog.layers import encode_frame
from wirecheck.strategies import barco, fluvio, kafka, operators, pravega, rustlog
from wirecheck.strategies.traced import trace_json


def test_pravega_spans_hold_the_fields_the_codec_wrote():
    seed = pravega.traced("ReadSegment", {"segment": "seg/0", "offset": 77, "suggested_length": -5,
                                          "delegation_token": "", "request_id": 99})
    frame = seed.frame
    assert struct.unpack(">i", frame[seed.field("type").start : seed.field("type").end]) == (cmd.CODE["ReadSegment"],)
    assert int.from_bytes(frame[seed.field("length").start : seed.field("length").end], "big") == len(frame) - 8
    offset, rid = seed.field("offset"), seed.field("request_id")
    assert struct.unpack(">q", frame[offset.start : offset.end]) == (77,)
    assert struct.unpack(">q", frame[rid.start : rid.end]) == (99,)
    assert frame[seed.field("segment", "data").start : seed.field("segment", "data").end] == b"seg/0"
    # request_id is optional in ReadSegment: the required part ends with the token
    assert seed.field("required").end == seed.field("delegation_token", "data").end


def test_fluvio_batch_spans_sit_where_protocols_batches_says():
    batch = records.build_batch([b"abc"])
    seed = fluvio.traced_produce("topic-a", batch, 25)
    at = seed.field("body.topics[0].partitions[0].records", "recordset").start
    assert seed.frame[at : at + len(batch)] == batch
    assert seed.field("records.batch_length").start == at + LENGTH_OFFSET
    assert seed.field("records.crc").start == at + CRC_OFFSET
    assert seed.field("records.attributes").start == at + ATTRIBUTES_OFFSET
    assert seed.field("header.correlation_id").end == 12  # size, api key, version, then the id


def test_barco_spans_follow_the_header_and_body_layout():
    seed = barco.traced_produce("tp", [b"one", b""], b"k", timestamp=5)
    head = wire.parse_header(seed.frame)
    assert head.crc_ok and head.flags == wire.FLAG_TIMESTAMP
    assert seed.field("crc").end == wire.HEADER_SIZE
    body = wire.parse_produce(seed.frame[wire.HEADER_SIZE :], head.flags)
    assert (body.topic, body.key, body.messages, body.timestamp) == (b"tp", b"k", [b"one", b""], 5)
    topic = seed.field("topic", "sized")
    assert seed.frame[topic.start : topic.end] == b"\x02tp"
    assert seed.field("messages").end == len(seed.frame)


@pytest.mark.parametrize("module, args", [(pravega, ("s/0", "t")), (fluvio, ("wc-topic",)), (barco, ("wc-topic",)),
                                          (rustlog, ("wc-topic",)), (kafka, ([18, 3, 1, 10],))])
def test_every_operator_of_a_rule_mutator_has_a_shared_apply(module, args):
    mutator = module.BulkMutator(random.Random(3), *args)
    for name in set(mutator.OPERATORS):
        assert operators.get(name).apply is not None, name
        mutant = mutator.mutant(name)
        assert mutant.operator == name and mutant.frame


def test_reframed_mutants_keep_their_outer_length_true():
    mutator = fluvio.BulkMutator(random.Random(5), "wc-topic")
    for _ in range(200):
        mutant = mutator.mutant(random.Random(_).choice(["trailing-bytes", "recordset-trailing", "wide-varints"]))
        assert struct.unpack_from(">i", mutant.frame)[0] == len(mutant.frame) - 4
        if mutant.operator != "trailing-bytes":
            messages.decode_request(mutant.frame)  # a valid request but for the defect inside the records


@pytest.mark.parametrize("value", [{}, {"type": "Ping"}, {"a": [], "b": [1, [2.5, None]], "c": {"d": True}},
                                   {"type": "Produce", "topic": "caf\u00e9", "records": ["AA==", ""]}, [1, "x"]])
def test_json_spans_hold_each_value_as_json_dumps_wrote_it(value):
    text, spans = trace_json(value, "root", at=4)
    assert text == json.dumps(value, separators=(",", ":")).encode()
    frame = b"head" + text
    assert spans[0].path == "root" and (spans[0].start, spans[0].end) == (4, len(frame))
    for span in spans:
        if span.kind == "member":  # dropping a member leaves valid JSON without it
            parent, key = span.path.rsplit(".", 1)
            rest = json.loads(frame[4 : span.start] + frame[span.end :])
            assert key not in (rest if parent == "root" else rest[parent.split(".", 1)[1]])
        elif span.kind == "data":
            assert frame[span.start - 1] == frame[span.end] == ord('"')  # the text between the quotes
        elif span.kind in ("object", "array"):
            assert isinstance(json.loads(frame[span.start : span.end]), dict if span.kind == "object" else list)
        else:
            assert json.loads(frame[span.start : span.end]) == span.value


def test_rustlog_seeds_are_the_encoded_requests_and_reframing_keeps_the_length_true():
    seed = rustlog.traced_request(rustlog.sample_request("Fetch", "wc-topic", 1))
    assert seed.frame == encode_frame(rustlog.sample_request("Fetch", "wc-topic", 1))
    offset = seed.field("Fetch.offset")
    assert seed.frame[offset.start : offset.end] == b"0" and offset.kind == "integer"
    mutator = rustlog.BulkMutator(random.Random(4), "wc-topic", 2)
    for _ in range(300):
        mutant = next(mutator)
        stated = struct.unpack_from(">I", mutant.frame)[0]
        if mutant.family in ("length-lie", "oversize"):
            assert stated != len(mutant.frame) - 4
        else:
            assert stated == len(mutant.frame) - 4, mutant.label()
        if mutant.family in ("bad-field", "drop-field", "unknown-type", "boundary-value"):
            assert isinstance(json.loads(mutant.frame[4:]), dict), mutant.label()  # the JSON is valid


def test_kafka_batch_spans_sit_where_protocols_batches_says():
    spans = kafka.batch_spans()
    assert (spans["batchLength"].start, spans["magic"].start, spans["crc"].start, spans["attributes"].start) == (
        LENGTH_OFFSET, MAGIC_OFFSET, CRC_OFFSET, ATTRIBUTES_OFFSET)
    assert spans["recordCount"].end == kafka_records.BATCH_OVERHEAD


def test_kafka_mutants_keep_their_size_prefix_true_but_where_it_is_the_lie():
    mutator = kafka.BulkMutator(random.Random(6), [18, 3, 1], operators=tuple(kafka.RULES))
    for _ in range(300):
        mutant = next(mutator)
        stated = struct.unpack_from(">i", mutant.frame)[0]
        assert (stated != len(mutant.frame) - 4) == (mutant.operator == "frame-length"), mutant.label()
        original = kafka_messages.decode_request(mutant.context.original)
        assert (mutant.context.api_key, mutant.context.correlation_id) == (original["header"]["RequestApiKey"],
                                                                           original["header"]["CorrelationId"])
