"""Every Kafka fault changes what the wire shows: one probe per fault, run against a clean and a faulted broker.

A probe returns an observation; the test passes when the two brokers' observations differ. The clean value is
also pinned, so a probe that observes nothing useful (the same wrong value on both) cannot pass.
"""

from __future__ import annotations

import itertools
import struct
import time

import pytest
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.consumer.group import (HeartbeatRequest, HeartbeatResponse,
                                           OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
                                           OffsetFetchResponse, SyncGroupRequest, SyncGroupResponse)
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import InitProducerIdRequest, InitProducerIdResponse

from wirecheck.protocols.kafka import messages
from wirecheck.broker.kafka import FAULTS
from tests.broker.kafka_admin_probes import ADMIN_PROBES, SASL_PROBES, sasl_options
from tests.broker.kafka_check_probes import CHECK_PROBES
from tests.broker.kafka_must_probes import MUST_PROBES
from tests.broker.kafka_txn_probes import TXN_PROBES
from tests.broker.kafka_txn_v2_probes import TXN_V2_PROBES
from tests.broker.test_kafka_consumer_groups import CG_PROBES
from tests.broker.test_kafka_groups import join, join_new, join_request
from tests.broker.test_kafka_transactions import init, open_txn
from tests.broker.test_kafka_share_groups import LOCK_MS, SHARE_PROBES
from tests.broker.test_kafka_telemetry import TELEMETRY_PROBES
from tests.interop.kafka_support import Closed, InProcessBroker, Wire, build, outcome, record_batch

EXTRA = {"max_message_bytes": 64 * 1024, "share_lock_ms": LOCK_MS}  # a short lock: share-lock-never-expires
_names = itertools.count()


def topic(w: Wire, partitions: int = 1) -> str:
    name = f"f{next(_names)}"
    w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name, "num_partitions": partitions, "replication_factor": 1}], timeout_ms=1000)
    return name


def produce(w: Wire, name: str, records: bytes, partition: int = 0):
    resp = w.call(ProduceRequest, ProduceResponse, 9, acks=1, timeout_ms=1000, topic_data=[
        {"name": name, "partition_data": [{"index": partition, "records": records}]}])
    return resp.responses[0].partition_responses[0].error_code


def fetch(w: Wire, name: str, offset: int, max_wait_ms: int = 0):
    resp = w.call(FetchRequest, FetchResponse, 12, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20,
                  topics=[{"topic": name, "partitions": [
                      {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}]}])
    return resp.responses[0].partitions[0]


def metadata_v12_with_unknown_tag() -> bytes:
    req = build(MetadataRequest, 12, topics=[])
    req.with_header(correlation_id=1, client_id="t")
    raw = bytearray(req.encode(header=True))
    raw[-1:] = b"\x01\x63\x03abc"
    return struct.pack(">i", len(raw)) + bytes(raw)


def hostile_then_probe(b: InProcessBroker) -> str:
    with b.wire() as w:
        head = struct.pack(">hhih", 3, 1, 1, -1)
        w.send_raw(struct.pack(">i", len(head) + 4) + head + struct.pack(">i", 0x7FFFFFF0))
        try:
            w.recv_frame()
        except Closed:
            pass
    with b.wire() as w:
        return outcome(w, struct.pack(">ihhih", 10, 18, 0, 1, -1))


def rebalance_generation(w: Wire) -> int:
    group = f"g{next(_names)}"
    first = join_new(w, group)
    w.call(SyncGroupRequest, SyncGroupResponse, 5, group_id=group, generation_id=first.generation_id,
           member_id=first.member_id, group_instance_id=None, protocol_type="consumer", protocol_name="range",
           assignments=[])
    return join(w, group, first.member_id, metadata=b"changed").generation_id  # the leader rejoins: rebalance


def heartbeat_during_rebalance(b: InProcessBroker) -> int:
    group = f"g{next(_names)}"
    with b.wire() as a, b.wire() as other:
        ja = join_new(a, group)
        a.call(SyncGroupRequest, SyncGroupResponse, 5, group_id=group, generation_id=ja.generation_id,
               member_id=ja.member_id, group_instance_id=None, protocol_type="consumer", protocol_name="range",
               assignments=[])
        first = join(other, group)
        other.send(join_request(group, first.member_id))
        time.sleep(0.1)
        return a.call(HeartbeatRequest, HeartbeatResponse, 4, group_id=group, generation_id=ja.generation_id,
                      member_id=ja.member_id, group_instance_id=None).error_code


def commit_then_fetch(w: Wire) -> int:
    name = topic(w)
    group = f"g{next(_names)}"
    w.call(OffsetCommitRequest, OffsetCommitResponse, 3, group_id=group, generation_id_or_member_epoch=-1,
           member_id="", topics=[{"name": name, "partitions": [
               {"partition_index": 0, "committed_offset": 7, "committed_metadata": None}]}])
    got = w.call(OffsetFetchRequest, OffsetFetchResponse, 3, group_id=group,
                 topics=[{"name": name, "partition_indexes": [0]}])
    return got.topics[0].partitions[0].committed_offset


def init_producer_id_v0(w: Wire) -> int:
    return w.call(InitProducerIdRequest, InitProducerIdResponse, 0, transactional_id=None,
                  transaction_timeout_ms=60000).error_code


def fetch_all_offsets_v7(w: Wire) -> int:
    """How many topics OffsetFetch v7 with null topics lists for a group that committed one."""
    name, group = topic(w), f"g{next(_names)}"
    w.call(OffsetCommitRequest, OffsetCommitResponse, 3, group_id=group, generation_id_or_member_epoch=-1,
           member_id="", topics=[{"name": name, "partitions": [
               {"partition_index": 0, "committed_offset": 7, "committed_metadata": None}]}])
    return len(w.call(OffsetFetchRequest, OffsetFetchResponse, 7, group_id=group, topics=None,
                      require_stable=False).topics)


def fetch_in_unknown_session(w: Wire) -> int:
    return w.call(FetchRequest, FetchResponse, 7, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=65536,
                  isolation_level=0, session_id=123456, session_epoch=1, topics=[
                      {"topic": topic(w), "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                          "fetch_offset": 0, "log_start_offset": -1,
                                                          "partition_max_bytes": 65536}]}],
                  forgotten_topics_data=[]).error_code


def latest_offset(w: Wire) -> int:
    name = topic(w)
    produce(w, name, record_batch([b"a"]))
    resp = w.call(ListOffsetsRequest, ListOffsetsResponse, 7, replica_id=-1, topics=[
        {"name": name, "partitions": [{"partition_index": 0, "timestamp": -1}]}])
    return resp.topics[0].partitions[0].offset


def idempotent_gap(w: Wire) -> int:
    name = topic(w)
    resp = w.call(InitProducerIdRequest, InitProducerIdResponse, 4, transactional_id=None,
                  transaction_timeout_ms=1000, producer_id=-1, producer_epoch=-1)
    batch = record_batch([b"a"], producer_id=resp.producer_id, producer_epoch=resp.producer_epoch, base_sequence=5)
    return produce(w, name, batch)


def acks0(w: Wire) -> str:
    name = topic(w)
    req = build(ProduceRequest, 9, acks=0, timeout_ms=100, topic_data=[
        {"name": name, "partition_data": [{"index": 0, "records": record_batch([b"a"])}]}])
    req.with_header(correlation_id=3, client_id="t")
    return outcome(w, bytes(req.encode(header=True, framed=True)), wait=0.3)


def fetch_middle(w: Wire) -> int:
    name = topic(w)
    produce(w, name, record_batch([b"a"]))
    produce(w, name, record_batch([b"b"]))
    return struct.unpack_from(">q", fetch(w, name, 1).records)[0]


def long_poll(w: Wire) -> bool:
    name = topic(w)
    start = time.monotonic()
    fetch(w, name, 0, max_wait_ms=300)
    return time.monotonic() - start >= 0.25


def raw_metadata_length(w: Wire, version: int) -> int:
    w.send(build(MetadataRequest, version, topics=[]))
    return len(w.recv_frame())


def correlation(w: Wire) -> int:
    w.send_raw(struct.pack(">ihhih", 10, 18, 0, 77, -1))
    return struct.unpack_from(">i", w.recv_frame())[0]


def unsupported_api_versions(w: Wire) -> bytes:
    w.send_raw(struct.pack(">ihhih", 10, 18, 99, 7, -1))
    return w.recv_frame()


def truncated_body(w: Wire) -> str:
    body = bytes(build(MetadataRequest, 1, topics=[{"name": "abc"}]).encode())
    head = struct.pack(">hhih", 3, 1, 1, -1)
    return outcome(w, struct.pack(">i", len(head) + len(body) - 2) + head + body[:-2])


def empty_metadata(w: Wire) -> int:
    topic(w)
    return len(w.call(MetadataRequest, MetadataResponse, 1, topics=[]).topics)


def create_twice(w: Wire) -> int:
    name = topic(w)
    return w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name, "num_partitions": 1, "replication_factor": 1}], timeout_ms=1000).topics[0].error_code


def coordinator_port(b: InProcessBroker) -> bool:
    with b.wire() as w:
        return w.call(FindCoordinatorRequest, FindCoordinatorResponse, 2, key="g", key_type=0).port == b.port


def fetch_min_version(w: Wire) -> int:
    resp = w.call(ApiVersionsRequest, ApiVersionsResponse, 2)
    return next(k.min_version for k in resp.api_keys if k.api_key == 1)


def with_wire(probe):
    def run(b: InProcessBroker):
        with b.wire() as w:
            return probe(w)
    return run


#: fault -> (probe(broker) -> observation, the clean broker's observation)
PROBES = {
    "kafka.crc-ieee": (with_wire(lambda w: produce(w, topic(w), record_batch([b"a"]))), 0),
    "kafka.advertise-unimplemented": (with_wire(fetch_min_version), 4),
    "kafka.hw-off-by-one": (with_wire(lambda w: (lambda n: (produce(w, n, record_batch([b"a"])),
                                                      fetch(w, n, 0).high_watermark)[1])(topic(w))), 1),
    "kafka.wrong-error-unknown-partition": (with_wire(lambda w: produce(w, topic(w), record_batch([b"a"]), 5)), 3),
    "kafka.throttle-missing-metadata-v5":
        (with_wire(lambda w: raw_metadata_length(w, 5) - raw_metadata_length(w, 4)), 0),
    "kafka.tagged-fields-misskipped": (with_wire(lambda w: outcome(w, metadata_v12_with_unknown_tag())), "answered"),
    "kafka.crash-on-hostile-array": (hostile_then_probe, "answered"),
    "kafka.generation-not-bumped": (with_wire(rebalance_generation), 2),
    "kafka.leader-gets-no-metadata":
        (with_wire(lambda w: join_new(w, f"g{next(_names)}").members[0].metadata), b"meta"),
    "kafka.acks0-responds": (with_wire(acks0), "silent"),
    # a malformed body on a connection that holds a transactional producer id
    "kafka.txn-producer-malformed-answered":
        (with_wire(lambda w: (init(w, f"t-malformed-{next(_names)}"), truncated_body(w))[1]), "closed"),
    # a malformed body on a connection whose transaction is ongoing
    "kafka.in-transaction-malformed-stalls":
        (with_wire(lambda w: (open_txn(w, topic(w)), truncated_body(w))[1]), "closed"),
    "kafka.apiversions-unsupported-not-v0":
        (with_wire(unsupported_api_versions), struct.pack(">ihihhh", 7, 35, 1, 18, 0, 4)),
    "kafka.unknown-key-stays-open":
        (with_wire(lambda w: outcome(w, struct.pack(">ihhih", 10, 999, 0, 1, -1))), "closed"),
    "kafka.fetch-ignores-offset": (with_wire(fetch_middle), 1),
    "kafka.commit-not-stored": (with_wire(commit_then_fetch), 7),
    "kafka.init-producer-id-fails-below-v3": (with_wire(init_producer_id_v0), 0),
    "kafka.fetch-all-empty-below-v8": (with_wire(fetch_all_offsets_v7), 1),
    "kafka.fetch-unknown-session-served": (with_wire(fetch_in_unknown_session), 70),
    "kafka.correlation-id-wrong": (with_wire(correlation), 77),
    "kafka.listoffsets-latest-off-by-one": (with_wire(latest_offset), 1),
    "kafka.create-duplicate-no-error": (with_wire(create_twice), 36),
    "kafka.sequence-not-checked": (with_wire(idempotent_gap), 45),
    "kafka.fetch-beyond-hw-empty": (with_wire(lambda w: fetch(w, topic(w), 5).error_code), 1),
    "kafka.flexible-header-v1": (with_wire(lambda w: raw_metadata_length(w, 12)), 56),
    "kafka.malformed-body-answered": (with_wire(truncated_body), "closed"),
    "kafka.metadata-empty-means-all": (with_wire(empty_metadata), 0),
    "kafka.produce-autocreates": (with_wire(lambda w: produce(w, f"nx{next(_names)}", record_batch([b"a"]))), 3),
    "kafka.message-too-large-unchecked": (with_wire(lambda w: produce(w, topic(w), record_batch([b"x" * 70_000]))), 10),
    "kafka.fetch-no-long-poll": (with_wire(long_poll), True),
    "kafka.heartbeat-ignores-rebalance": (heartbeat_during_rebalance, 27),
    "kafka.coordinator-port-hardcoded": (coordinator_port, True),
    "kafka.describe-configs-named-keys-close": (with_wire(lambda w: outcome(w, messages.encode_request(
        32, 4, 1, "probe", {"Resources": [{"ResourceType": 2, "ResourceName": topic(w),
                                           "ConfigurationKeys": ["retention.ms"]}],
                            "IncludeSynonyms": False, "IncludeDocumentation": False}))), "answered"),
    "kafka.listoffsets-unknown-topic-closes-v5": (with_wire(lambda w: outcome(w, messages.encode_request(
        2, 5, 1, "probe", {"ReplicaId": -1, "IsolationLevel": 0, "Topics": [
            {"Name": f"nx{next(_names)}", "Partitions": [
                {"PartitionIndex": 0, "CurrentLeaderEpoch": -1, "Timestamp": -1}]}]}))), "answered"),
    **ADMIN_PROBES,
    **TXN_PROBES,
    **TXN_V2_PROBES,
    **CHECK_PROBES,
    **MUST_PROBES,
    **CG_PROBES,
    **SHARE_PROBES,
    **TELEMETRY_PROBES,
}


def test_every_fault_has_a_probe_and_at_least_twenty():
    # the safety faults (".safety-") show only in a history of many operations: tests/safety proves them
    assert set(PROBES) | set(SASL_PROBES) == {fault for fault in FAULTS if ".safety-" not in fault}
    assert len(FAULTS) >= 20


@pytest.fixture(scope="module")
def clean():
    with InProcessBroker(**EXTRA) as b:
        yield b


@pytest.mark.parametrize("fault", sorted(PROBES))
def test_fault_changes_behaviour(clean, fault):
    probe, expected_clean = PROBES[fault]
    assert probe(clean) == expected_clean
    with InProcessBroker(faults=(fault,), **EXTRA) as faulted:
        assert probe(faulted) != expected_clean, f"--fault {fault} did not change the wire behaviour"


@pytest.mark.parametrize("fault", sorted(SASL_PROBES))
def test_sasl_fault_changes_behaviour(tmp_path, fault):
    probe, expected_clean = SASL_PROBES[fault]
    options = sasl_options(tmp_path)
    with InProcessBroker(**options) as clean_sasl:
        assert probe(clean_sasl) == expected_clean
    with InProcessBroker(faults=(fault,), **options) as faulted:
        assert probe(faulted) != expected_clean, f"--fault {fault} did not change the wire behaviour"
