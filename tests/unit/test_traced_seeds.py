"""Traced seeds (strategies/traced.py) put each span where the codec wrote the field, and the rule-driven bulk
mutators (strategies/rules.py) build every mutant through a registered operator's apply function."""

from __future__ import annotations

import random
import struct

import pytest

from wirecheck.protocols.barco import wire
from wirecheck.protocols.batches import ATTRIBUTES_OFFSET, CRC_OFFSET, LENGTH_OFFSET
from wirecheck.protocols.fluvio import messages, records
from wirecheck.protocols.pravega import commands as cmd
from wirecheck.strategies import barco, fluvio, operators, pravega


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


@pytest.mark.parametrize("module, args", [(pravega, ("s/0", "t")), (fluvio, ("wc-topic",)), (barco, ("wc-topic",))])
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
