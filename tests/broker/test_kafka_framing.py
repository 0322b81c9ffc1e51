"""Kafka personality: framing limits, headers, ApiVersions, version checks, and every advertised version.

Requests are encoded and responses decoded by kafka-python's protocol classes, not by the broker's codec.
"""

from __future__ import annotations

import struct

import kafka.protocol.admin as kp_admin
import kafka.protocol.admin.groups as kp_admin_groups
import kafka.protocol.consumer as kp_consumer
import kafka.protocol.admin.topics as kp_topics
import kafka.protocol.consumer.fetch as kp_fetch
import kafka.protocol.consumer.group as kp_group
import kafka.protocol.consumer.offsets as kp_offsets
import kafka.protocol.metadata.find_coordinator as kp_coord
import kafka.protocol.producer.produce as kp_produce
import kafka.protocol.producer.transaction as kp_txn
import pytest
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from wirecheck.broker.kafka.api_table import APIS
from tests.interop.kafka_support import Closed, InProcessBroker, build

CLASSES = {
    0: (kp_produce.ProduceRequest, kp_produce.ProduceResponse, {"acks": 1}),
    1: (kp_fetch.FetchRequest, kp_fetch.FetchResponse, {}),
    2: (kp_offsets.ListOffsetsRequest, kp_offsets.ListOffsetsResponse, {}),
    3: (MetadataRequest, MetadataResponse, {"topics": []}),
    8: (kp_group.OffsetCommitRequest, kp_group.OffsetCommitResponse, {}),
    9: (kp_group.OffsetFetchRequest, kp_group.OffsetFetchResponse, {}),
    10: (kp_coord.FindCoordinatorRequest, kp_coord.FindCoordinatorResponse, {}),
    11: (kp_group.JoinGroupRequest, kp_group.JoinGroupResponse, {}),
    12: (kp_group.HeartbeatRequest, kp_group.HeartbeatResponse, {}),
    13: (kp_group.LeaveGroupRequest, kp_group.LeaveGroupResponse, {}),
    14: (kp_group.SyncGroupRequest, kp_group.SyncGroupResponse, {}),
    15: (kp_admin_groups.DescribeGroupsRequest, kp_admin_groups.DescribeGroupsResponse, {}),
    16: (kp_admin_groups.ListGroupsRequest, kp_admin_groups.ListGroupsResponse, {}),
    18: (ApiVersionsRequest, ApiVersionsResponse, {}),
    19: (kp_topics.CreateTopicsRequest, kp_topics.CreateTopicsResponse, {}),
    20: (kp_topics.DeleteTopicsRequest, kp_topics.DeleteTopicsResponse, {}),
    22: (kp_txn.InitProducerIdRequest, kp_txn.InitProducerIdResponse, {}),
    24: (kp_txn.AddPartitionsToTxnRequest, kp_txn.AddPartitionsToTxnResponse, {}),
    25: (kp_txn.AddOffsetsToTxnRequest, kp_txn.AddOffsetsToTxnResponse, {}),
    26: (kp_txn.EndTxnRequest, kp_txn.EndTxnResponse, {}),
    28: (kp_txn.TxnOffsetCommitRequest, kp_txn.TxnOffsetCommitResponse, {}),
    32: (kp_admin.DescribeConfigsRequest, kp_admin.DescribeConfigsResponse, {}),
    33: (kp_admin.AlterConfigsRequest, kp_admin.AlterConfigsResponse, {}),
    44: (kp_admin.IncrementalAlterConfigsRequest, kp_admin.IncrementalAlterConfigsResponse, {}),
    21: (kp_admin.DeleteRecordsRequest, kp_admin.DeleteRecordsResponse, {}),
    23: (kp_consumer.OffsetForLeaderEpochRequest, kp_consumer.OffsetForLeaderEpochResponse, {}),
    37: (kp_admin.CreatePartitionsRequest, kp_admin.CreatePartitionsResponse, {}),
    42: (kp_admin.DeleteGroupsRequest, kp_admin.DeleteGroupsResponse, {}),
    47: (kp_consumer.OffsetDeleteRequest, kp_consumer.OffsetDeleteResponse, {}),
    60: (kp_admin.DescribeClusterRequest, kp_admin.DescribeClusterResponse, {}),
    61: (kp_admin.DescribeProducersRequest, kp_admin.DescribeProducersResponse, {}),
}
# kafka-python has no classes for the KIP-848 keys (68, 69): test_kafka_consumer_groups.py covers them
ADVERTISED = [(key, v) for key, api in sorted(APIS.items()) if key in CLASSES
              for v in range(api.low, api.high + 1)]


@pytest.fixture(scope="module")
def broker():
    with InProcessBroker(max_frame=1 << 20) as b:
        yield b


def api_versions_v0_bytes(correlation_id: int) -> bytes:
    return struct.pack(">ihhi", 10, 18, 0, correlation_id) + b"\xff\xff"


def test_api_versions_lists_every_implemented_api(broker):
    with broker.wire() as w:
        for version in (0, 3, 4):
            resp = w.call(ApiVersionsRequest, ApiVersionsResponse, version,
                          **({"client_software_name": "wc", "client_software_version": "1"} if version >= 3 else {}))
            ranges = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
            assert resp.error_code == 0
            assert ranges == {key: (api.low, api.high) for key, api in APIS.items()}
            assert ranges[71] == ranges[72] == (0, 0)  # KIP-714 telemetry (telemetry.py)


def test_no_telemetry_option_leaves_keys_71_and_72_out():
    # librdkafka 2.5+ asks for a subscription whenever key 71 is advertised: a broker without KIP-714 must not list it
    with InProcessBroker(telemetry=False) as quiet, quiet.wire() as w:
        resp = w.call(ApiVersionsRequest, ApiVersionsResponse, 0)
        ranges = {k.api_key for k in resp.api_keys}
        assert 71 not in ranges and 72 not in ranges and 0 in ranges


def test_api_versions_unsupported_version_gets_v0_error_35(broker):
    with broker.wire() as w:
        w.send_raw(struct.pack(">ihhih", 10, 18, 99, 7, -1))  # ApiVersions v99, empty client id, no body
        payload = w.recv_frame()
    # v0 body (KIP-511): correlation id | error 35 | [18: 0-4]; response header v0 whatever the version asked.
    assert payload == struct.pack(">ihihhh", 7, 35, 1, 18, 0, 4)


def test_api_versions_response_header_is_v0_even_when_flexible(broker):
    with broker.wire() as w:
        corr = w.send(build(ApiVersionsRequest, 3, client_software_name="wc", client_software_version="1"))
        payload = w.recv_frame()
    assert struct.unpack_from(">ih", payload) == (corr, 0)  # no tagged-field byte between id and error code
    # the top-level tagged section carries the finalized features as Kafka 4 sends them (test_kafka_features.py);
    # kcat 1.7.1 (librdkafka 2.0.2) reads them, as its scenarios against this broker and Apache Kafka 4.4 show


def test_flexible_response_has_header_v1(broker):
    with broker.wire() as w:
        corr = w.send(build(MetadataRequest, 12, topics=[]))
        payload = w.recv_frame()
    assert struct.unpack_from(">i", payload) == (corr,) and payload[4] == 0  # empty tagged-field section


@pytest.mark.parametrize("key,version", ADVERTISED, ids=[f"key{k}-v{v}" for k, v in ADVERTISED])
def test_every_advertised_version_round_trips(broker, key, version):
    """A default request of each advertised version gets a response that decodes with no byte left over."""
    request_cls, response_cls, fields = CLASSES[key]
    with broker.wire() as w:
        corr = w.send(build(request_cls, version, **fields))
        payload = w.recv_frame()
    assert struct.unpack_from(">i", payload) == (corr,)
    flexible_header = response_cls.flexible_version_q(version) and key != 18
    header_len = 5 if flexible_header else 4
    if flexible_header:
        assert payload[4] == 0
    flexible = response_cls.flexible_version_q(version)
    decode = response_cls._struct.compiled_decode_from(version, compact=flexible, tagged=flexible,
                                                       data_class=response_cls[None])
    _, end = decode(memoryview(payload), header_len)
    assert end == len(payload), f"{len(payload) - end} bytes left after the v{version} body"


def test_unknown_api_key_closes_the_connection(broker):
    with broker.wire() as w:
        w.send_raw(struct.pack(">ihhih", 10, 9999, 0, 1, -1))
        w.expect_closed()


def test_unadvertised_version_closes_the_connection(broker):
    with broker.wire() as w:
        w.send_raw(struct.pack(">ihhih", 10, 3, 99, 1, -1))  # Metadata v99
        w.expect_closed()
    with broker.wire() as w:
        w.send_raw(struct.pack(">ihhih", 10, 1, 3, 1, -1))  # Fetch v3: below the advertised minimum
        w.expect_closed()


@pytest.mark.parametrize("size", [-1, -2147483648, 0, 3, (1 << 20) + 1, 0x7FFFFFFF])
def test_size_outside_limits_closes_before_reading_a_body(broker, size):
    with broker.wire() as w:
        w.send_raw(struct.pack(">i", size))
        w.expect_closed()


def test_frame_at_the_limit_is_read(broker):
    body = build(MetadataRequest, 1, topics=[])
    with broker.wire() as w:
        w.correlation_id = 41
        body.with_header(correlation_id=42, client_id="x" * 1000)
        raw = bytes(body.encode(header=True, framed=False))
        padded = raw + b"\x00" * ((1 << 20) - len(raw))  # trailing bytes are ignored, as Kafka's readers do
        w.send_raw(struct.pack(">i", len(padded)) + padded)
        assert MetadataResponse.decode(w.recv_frame(), version=1, header=True).header.correlation_id == 42


def test_truncated_body_closes_the_connection(broker):
    with broker.wire() as w:
        body = bytes(build(MetadataRequest, 1, topics=[{"name": "abc"}]).encode())
        head = struct.pack(">hhih", 3, 1, 1, -1)
        w.send_raw(struct.pack(">i", len(head) + len(body) - 2) + head + body[:-2])
        w.expect_closed()


def test_hostile_array_count_costs_one_connection_only(broker):
    with broker.wire() as w:
        head = struct.pack(">hhih", 3, 1, 1, -1)
        w.send_raw(struct.pack(">i", len(head) + 4) + head + struct.pack(">i", 0x7FFFFFF0))
        w.expect_closed()
    with broker.wire() as w:  # the broker still answers
        assert w.call(MetadataRequest, MetadataResponse, 1, topics=[]).brokers[0].port == broker.port


def test_split_size_prefix_and_pipelined_requests_answer_in_order(broker):
    with broker.wire() as w:
        frames = b""
        for corr in (5, 6, 7):
            req = build(ApiVersionsRequest, 2)
            req.with_header(correlation_id=corr, client_id="p")
            frames += bytes(req.encode(header=True, framed=True))
        w.send_raw(frames[:1])
        w.send_raw(frames[1:3])
        w.send_raw(frames[3:])
        ids = [struct.unpack_from(">i", w.recv_frame())[0] for _ in range(3)]
    assert ids == [5, 6, 7]


def test_unknown_tagged_field_in_a_flexible_request_is_skipped(broker):
    with broker.wire() as w:
        req = build(MetadataRequest, 12, topics=[])
        req.with_header(correlation_id=9, client_id="t")
        raw = bytearray(req.encode(header=True, framed=False))
        assert raw[-1] == 0  # top-level tagged-field count
        raw[-1:] = b"\x01" + b"\x63\x03abc"  # one unknown tag 99 of 3 bytes
        w.send_raw(struct.pack(">i", len(raw)) + bytes(raw))
        assert MetadataResponse.decode(w.recv_frame(), version=12, header=True).header.correlation_id == 9


def test_null_client_id_is_accepted(broker):
    with broker.wire() as w:
        w.send_raw(api_versions_v0_bytes(3))
        assert struct.unpack_from(">ih", w.recv_frame()) == (3, 0)


def test_peer_closing_mid_frame_does_not_disturb_others(broker):
    with broker.wire() as w:
        w.send_raw(struct.pack(">i", 1000) + b"\x00" * 10)
    with broker.wire() as w:
        assert w.call(ApiVersionsRequest, ApiVersionsResponse, 0).error_code == 0


def test_closed_raises_helper_sanity(broker):
    """The helper reports a close as Closed, so the tests above can fail for the right reason."""
    with broker.wire() as w:
        w.send_raw(struct.pack(">i", -5))
        with pytest.raises(Closed):
            w.recv_frame()


def test_api_versions_v3_with_an_invalid_software_name_is_invalid_request(broker):
    with broker.wire() as w:
        corr = w.send(build(ApiVersionsRequest, 3, client_software_name="bad name!", client_software_version="1"))
        payload = w.recv_frame()
    # v3 body (not the v0 fallback): error 42 | compact empty ApiKeys | throttle 0 | no tagged fields
    assert payload == struct.pack(">ih", corr, 42) + b"\x01" + struct.pack(">i", 0) + b"\x00"
