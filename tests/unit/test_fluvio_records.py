"""Fluvio batches, records and RecordSets (protocols/fluvio/records.py) and the strategies built on them."""

import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import messages, records
from wirecheck.strategies.fluvio import BulkMutator, batches, records_


@given(batches(wide_varints=True))
def test_batches_round_trip(batch):
    decoded, end = records.decode_batch(batch)
    assert end == len(batch)
    assert records.encode_batch(decoded) == batch  # raw_records kept: byte-identical


@given(records_(wide_varints=True))
def test_records_round_trip(recs):
    for record in recs:
        data = records.encode_record(record)
        assert records.decode_record(data, 0) == (record, len(data))


def test_key_is_an_option_tag_not_a_kafka_varint():
    assert records.encode_record(records.Record(b"v"))[4] == 0  # None: one 00 byte
    assert records.encode_record(records.Record(b"v", key=b"k"))[4:7] == b"\x01\x02k"


@pytest.mark.parametrize("codec", sorted(records.CODECS))
def test_compressed_region_includes_the_count(codec):
    batch = records.build_batch([b"a" * 100, b"b"], compression=codec)
    region = records.decode_batch(batch)[0].raw_records
    plain = records.decompress(codec, region)
    assert struct.unpack_from(">i", plain)[0] == 2


def test_snappy_is_the_framed_format():
    region = records.compress(records.SNAPPY, b"x" * 50)
    assert region.startswith(b"\xff\x06\x00\x00sNaPpY")


@pytest.mark.parametrize("batch_len", [0, 44, -5])
def test_batch_len_below_the_header_is_refused(batch_len):
    batch = bytearray(records.build_batch([b"x"]))
    struct.pack_into(">i", batch, records.LENGTH_OFFSET, batch_len)
    with pytest.raises(DecodeError, match="batch_len"):
        records.decode_batch(bytes(batch))


def test_partial_tail_and_split():
    a, b = records.build_batch([b"1"]), records.build_batch([b"2", b"3"])
    assert records.split_batches(a + b[:-3]) == [a]
    assert len(records.decode_record_set(a + b[:-3], allow_partial_tail=True)) == 1
    with pytest.raises(DecodeError):
        records.decode_record_set(a + b[:-3])


def test_as_stored_assigns_base_and_recomputes_crc():
    batch = records.build_batch([b"x"], base_offset=999)
    stored = records.as_stored(batch, 5)
    decoded = records.decode_batch(stored)[0]  # verifies the CRC
    assert decoded.base_offset == 5 and stored[12:] == batch[12:]


def test_offsets_taken_follows_last_offset_delta():
    assert records.offsets_taken(records.build_batch([b"1", b"2"])) == 2
    assert records.offsets_taken(records.encode_batch(records.Batch(records=[], last_offset_delta=-1))) == 0
    assert records.offsets_taken(records.encode_batch(records.Batch([records.Record(b"x")], last_offset_delta=9))) == 10


@pytest.mark.parametrize("operator", BulkMutator.OPERATORS)
def test_mutants_match_their_expectation_under_our_own_decoder(operator):
    """Mutants that must be answered decode; those that must close do not (a conforming server's reading)."""
    mutator = BulkMutator(random.Random(operator), "wc-topic")
    for _ in range(50):
        mutant = mutator.mutant(operator)
        assert mutant.operator == operator
        outcomes = mutant.reaction.outcomes
        if mutant.reaction.prefer is None and "close" not in outcomes:
            messages.decode_request(mutant.frame)
        elif outcomes == {"close"} and operator != "unknown-key":
            with pytest.raises(DecodeError):
                decoded = messages.decode_request(mutant.frame)
                size = struct.unpack_from(">i", mutant.frame)[0]
                assert size == len(mutant.frame) - 4, decoded
        elif operator == "unknown-key":
            assert struct.unpack_from(">H", mutant.frame, 4)[0] not in messages.NAMES


@given(st.data())
def test_hypothesis_request_frames_decode(data):
    from wirecheck.strategies.fluvio import request_frames

    api, version, frame = data.draw(request_frames("wc-topic"))
    decoded = messages.decode_request(frame)
    assert (decoded["header"]["api_key"], decoded["header"]["api_version"]) == (api, version)


@given(st.data())
def test_hostile_frames_strategy_draws_any_operator(data):
    from wirecheck.strategies.fluvio import hostile_frames

    mutant = data.draw(hostile_frames("wc-topic"))
    assert mutant.operator in BulkMutator.OPERATORS and len(mutant.frame) >= 4
