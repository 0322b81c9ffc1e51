"""The Kafka personality's table-driven codec, checked against kafka-python's independent encoder/decoder."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.fetch import FetchResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from wirecheck.broker.kafka.codec import Message, Options
from wirecheck.broker.kafka.codec_primitives import MalformedBody, read_uvarint, write_uvarint
from tests.interop.kafka_support import build


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**31 - 1, 2**32 - 1])
def test_uvarint_round_trip(value):
    out = bytearray()
    write_uvarint(value, out)
    assert read_uvarint(bytes(out), 0) == (value, len(out))


def test_overlong_and_truncated_varints_are_malformed():
    with pytest.raises(MalformedBody):
        read_uvarint(b"\xff" * 5 + b"\x01", 0)  # six bytes: Kafka allows at most five
    with pytest.raises(MalformedBody):
        read_uvarint(b"\x80", 0)


def test_decodes_what_kafka_python_encodes_flexible_and_not():
    msg = Message("MetadataRequest")
    for version in (1, 4, 9, 12):
        body = bytes(build(MetadataRequest, version, topics=[{"name": "abc"}, {"name": "d"}],
                           **({"allow_auto_topic_creation": False} if version >= 4 else {})).encode())
        value, end = msg.decode(body, version)
        assert end == len(body)
        assert [t["Name"] for t in value["Topics"]] == ["abc", "d"]
        assert value.get("AllowAutoTopicCreation", "absent") == (False if version >= 4 else "absent")


def test_null_versus_empty_arrays():
    msg = Message("MetadataRequest")
    null = bytes(build(MetadataRequest, 12, topics=None).encode())
    empty = bytes(build(MetadataRequest, 12, topics=[]).encode())
    assert msg.decode(null, 12)[0]["Topics"] is None
    assert msg.decode(empty, 12)[0]["Topics"] == []


def test_encodes_what_kafka_python_decodes_with_tagged_fields():
    value = {"ThrottleTimeMs": 7, "ErrorCode": 0, "SessionId": 0, "Responses": [{"Topic": "t", "Partitions": [
        {"PartitionIndex": 3, "ErrorCode": 0, "HighWatermark": 10, "LastStableOffset": 10, "LogStartOffset": 0,
         "CurrentLeader": {"LeaderId": 0, "LeaderEpoch": 5}, "AbortedTransactions": None,
         "PreferredReadReplica": -1, "Records": b"\x00" * 4}]}]}
    raw = bytes(Message("FetchResponse").encode(value, 12))
    decoded = FetchResponse.decode(raw, version=12)
    part = decoded.responses[0].partitions[0]
    assert (decoded.throttle_time_ms, part.partition_index, part.high_watermark) == (7, 3, 10)
    assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (0, 5)  # a tagged struct
    without_tag = dict(value, Responses=[dict(value["Responses"][0], Partitions=[
        {k: v for k, v in value["Responses"][0]["Partitions"][0].items() if k != "CurrentLeader"}])])
    shorter = bytes(Message("FetchResponse").encode(without_tag, 12))
    assert len(raw) - len(shorter) == 2 + 8 + 1 - 0  # tag id, size, LeaderId, LeaderEpoch, struct's own tags


def test_defaults_fill_fields_the_caller_left_out():
    raw = bytes(Message("MetadataResponse").encode({"Brokers": [], "Topics": []}, 12))
    decoded = MetadataResponse.decode(raw, version=12)
    assert (decoded.throttle_time_ms, decoded.cluster_id, decoded.controller_id) == (0, None, -1)


@pytest.mark.parametrize("body", [
    b"\x00\x00\x00\x01",  # one topic, then nothing
    b"\x7f\xff\xff\xff\x00",  # a count no frame could back
    b"\x00\x00\x00\x01\x7f\xff",  # a string length beyond the frame
    b"\xff\xff\xff\xfe",  # count -2
])
def test_lying_lengths_and_counts_are_malformed(body):
    with pytest.raises(MalformedBody):
        Message("MetadataRequest").decode(body, 1)


def test_unknown_tags_are_skipped_by_size_and_the_fault_misskips():
    body = bytearray(build(MetadataRequest, 12, topics=[]).encode())
    body[-1:] = b"\x01\x63\x02zz"
    value, end = Message("MetadataRequest").decode(bytes(body), 12)
    assert value["Topics"] == [] and end == len(body)
    with pytest.raises(MalformedBody):
        Message("MetadataRequest", Options(misskip_tags=True)).decode(bytes(body), 12)


def test_primitive_arrays_and_the_element_budget():
    import struct

    from wirecheck.broker.kafka.codec import MAX_ELEMENTS

    def offset_fetch(n: int) -> bytes:
        return (struct.pack(">h", 1) + b"g" + struct.pack(">i", 1) + struct.pack(">h", 1) + b"t"
                + struct.pack(">i", n) + struct.pack(f">{n}i", *range(n)))

    msg = Message("OffsetFetchRequest")
    value, _ = msg.decode(offset_fetch(1000), 5)
    assert value["Topics"][0]["PartitionIndexes"] == list(range(1000))
    with pytest.raises(MalformedBody):
        msg.decode(offset_fetch(MAX_ELEMENTS + 1), 5)
    assert msg.decode(offset_fetch(10), 5)[0]["Topics"][0]["PartitionIndexes"] == list(range(10))  # budget resets


@pytest.mark.parametrize(("version", "count"), [(1, b"\xff\xff\xff\xfe"), (1, b"\x80\x00\x00\x00"),
                                                (12, b"\xff\xff\xff\xff\x0f")])  # compact: 2**32-1, int -1 - 1
def test_a_negative_count_of_a_nullable_array_is_null_only_in_the_variant(version, count):
    """Variant negative-count-null reads any negative count of a nullable field as null, as Apache Kafka's
    generated readers do ("if (arrayLength < 0)"); the default broker refuses all but the null marker."""
    rest = b"\x00\x01t" if version < 9 else b"\x00\x00\x00"
    body = count + rest
    with pytest.raises(MalformedBody):
        Message("MetadataRequest").decode(body, version)
    decoded, _ = Message("MetadataRequest", Options(negative_null=True)).decode(body, version)
    assert decoded["Topics"] is None
    with pytest.raises(MalformedBody):  # not nullable at v0
        Message("MetadataRequest", Options(negative_null=True)).decode(b"\xff\xff\xff\xfe\x00\x01t", 0)
