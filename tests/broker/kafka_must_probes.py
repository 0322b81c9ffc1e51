"""Probes for the Kafka faults of the protocol's MUSTs: error codes, validation, group membership checks, retries,
config descriptions and framing (see test_kafka_faults.py for how they run)."""

from __future__ import annotations

import itertools
import struct
import time

import crc32c
import kafka.protocol.admin as kp_admin
import kafka.protocol.consumer as kp_consumer
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse

from tests.broker.kafka_admin_probes import (
    APPEND,
    BROKER,
    describe,
    describe_result,
    produce,
    set_config,
    topic,
    value_after,
    with_wire,
)
from tests.broker.test_kafka_groups import heartbeat, join, join_new, sync
from tests.broker.test_kafka_transactions import fetch, init
from tests.broker.test_kafka_transactions import produce as produce_as
from tests.interop.kafka_support import Closed, Wire, build, outcome, record_batch

_names = itertools.count()


def group() -> str:
    return f"must-g{next(_names)}"


def create_error(w: Wire, partitions: int) -> int:
    return w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": f"must{next(_names)}", "num_partitions": partitions, "replication_factor": 1}],
        timeout_ms=1000).topics[0].error_code


def partition_count(w: Wire, name: str) -> int:
    return len(w.call(MetadataRequest, MetadataResponse, 1, topics=[{"name": name}]).topics[0].partitions)


def created_with_three(w: Wire) -> int:
    name = f"must{next(_names)}"
    w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name, "num_partitions": 3, "replication_factor": 1}], timeout_ms=1000)
    return partition_count(w, name)


def invalid_acks(w: Wire) -> int:
    resp = w.call(ProduceRequest, ProduceResponse, 9, acks=2, timeout_ms=1000, topic_data=[
        {"name": topic(w), "partition_data": [{"index": 0, "records": record_batch([b"a"])}]}])
    return resp.responses[0].partition_responses[0].error_code


def uncommitted_offset(w: Wire) -> int:
    got = w.call(OffsetFetchRequest, OffsetFetchResponse, 3, group_id=group(),
                 topics=[{"name": topic(w), "partition_indexes": [0]}])
    return got.topics[0].partitions[0].committed_offset


def metadata_no_autocreate(w: Wire) -> int:
    """Asked twice: the first answer is 3 whether or not it created the topic (Kafka 4's auto-create answer,
    DefaultAutoTopicCreationManager); the second tells whether it exists now."""
    name = f"must-nx{next(_names)}"
    for _ in range(2):
        resp = w.call(MetadataRequest, MetadataResponse, 4, topics=[{"name": name}], allow_auto_topic_creation=False)
    return resp.topics[0].error_code


def grow_to_same_count(w: Wire) -> int:
    return w.call(kp_admin.CreatePartitionsRequest, kp_admin.CreatePartitionsResponse, 3, timeout_ms=1000,
                  validate_only=False, topics=[{"name": topic(w), "count": 1, "assignments": None}]
                  ).results[0].error_code


def delete_records(w: Wire, name: str, offset: int) -> int:
    resp = w.call(kp_admin.DeleteRecordsRequest, kp_admin.DeleteRecordsResponse, 2, timeout_ms=1000, topics=[
        {"name": name, "partitions": [{"partition_index": 0, "offset": offset}]}])
    return resp.topics[0].partitions[0].error_code


def delete_records_beyond_hw(w: Wire) -> int:
    name = topic(w)
    produce(w, name, record_batch([b"a"]))
    return delete_records(w, name, 5)


def fetch_below_log_start(w: Wire) -> int:
    name = topic(w)
    for value in (b"a", b"b"):
        produce(w, name, record_batch([value]))
    delete_records(w, name, 1)
    return fetch(w, name, 0, isolation=0).error_code


def offset_delete_unknown_group(w: Wire) -> int:
    return w.call(kp_consumer.OffsetDeleteRequest, kp_consumer.OffsetDeleteResponse, 0, group_id=group(),
                  topics=[{"name": topic(w), "partitions": [{"partition_index": 0}]}]).error_code


def delete_unknown_group(w: Wire) -> int:
    return w.call(kp_admin.DeleteGroupsRequest, kp_admin.DeleteGroupsResponse, 2,
                  groups_names=[group()]).results[0].error_code


def heartbeat_as(w: Wire, generation_delta: int = 0, member: str | None = None) -> int:
    """Heartbeat of a synced single-member group, with a shifted generation or another member id."""
    name = group()
    joined = join_new(w, name)
    sync(w, name, joined.generation_id, joined.member_id)
    return heartbeat(w, name, joined.generation_id + generation_delta, member or joined.member_id)


def sync_of_another_generation(w: Wire) -> int:
    """SyncGroup of a stable single-member group with a generation that is not the group's."""
    name = group()
    joined = join_new(w, name)
    sync(w, name, joined.generation_id, joined.member_id)
    return sync(w, name, joined.generation_id + 5, joined.member_id).error_code


def fetched_log_start(w: Wire) -> int:
    """The LogStartOffset a Fetch v12 reports for a fresh topic with one record (0; -1 when left unset)."""
    name = topic(w)
    produce(w, name, record_batch([b"a"]))
    return fetch(w, name, 0, isolation=0).log_start_offset


def retried_batch(w: Wire) -> int:
    name = topic(w)
    _, pid, epoch = init(w, None)
    produce_as(w, name, pid, epoch, 0, [b"a"], transactional=False)
    return produce_as(w, name, pid, epoch, 0, [b"a"], transactional=False)[0]  # the same batch again: a retry


def validate_static_broker_config(w: Wire) -> int:
    key = describe(w, "0", kind=BROKER)[0].name
    return set_config(w, "0", key, "1", validate_only=True, kind=BROKER)


def leader_is_a_broker(w: Wire) -> bool:
    resp = w.call(MetadataRequest, MetadataResponse, 1, topics=[{"name": topic(w)}])
    return resp.topics[0].partitions[0].leader_id in {b.node_id for b in resp.brokers}


def _answered_or_closed(w: Wire) -> str:
    try:
        w.recv_frame()
    except (Closed, ConnectionError):
        return "closed"
    return "answered"


def long_client_id(w: Wire) -> str:
    """Metadata v12 (request header v2) from a client id over 127 bytes."""
    w.send(build(MetadataRequest, 12, topics=[]), client_id="c" * 200)
    return _answered_or_closed(w)


def negative_size_then_request(w: Wire) -> str:
    w.send_raw(struct.pack(">i", -1) + struct.pack(">ihhih", 10, 18, 0, 1, -1))
    return _answered_or_closed(w)


def api_versions_own_min(w: Wire) -> int:
    resp = w.call(ApiVersionsRequest, ApiVersionsResponse, 2)
    return next(k.min_version for k in resp.api_keys if k.api_key == 18)


def long_software_version(w: Wire) -> str:
    """ApiVersions v3 whose ClientSoftwareVersion takes a three-byte compact length."""
    w.send(build(ApiVersionsRequest, 3, client_software_name="wirecheck", client_software_version="1" * 20000))
    try:
        return struct.unpack_from(">h", w.recv_frame(), 4)[0]  # ErrorCode
    except (Closed, ConnectionError):
        return "closed"


def hostile_metadata_count(w: Wire) -> str:
    head = struct.pack(">hhih", 3, 1, 1, -1)
    return outcome(w, struct.pack(">i", len(head) + 4) + head + struct.pack(">i", 0x7FFFFFF0))


def fetched_crc_valid(w: Wire) -> bool:
    name = topic(w)
    produce(w, name, record_batch([b"a"]))
    data = fetch(w, name, 0, isolation=0).records
    end = 12 + struct.unpack_from(">i", data, 8)[0]  # batchLength counts the bytes after itself
    return struct.unpack_from(">I", data, 17)[0] == crc32c.crc32c(data[21:end])


def pipelined_order(w: Wire) -> list[int]:
    w.send_raw(b"".join(struct.pack(">ihhih", 10, 18, 0, i, -1) for i in (11, 12, 13)))
    return [struct.unpack_from(">i", w.recv_frame())[0] for _ in range(3)]


def split_size_prefix(w: Wire) -> str:
    raw = struct.pack(">ihhih", 10, 18, 0, 1, -1)
    w.send_raw(raw[:2])
    time.sleep(0.1)
    w.send_raw(raw[2:])
    return _answered_or_closed(w)


def api_versions_v3_header_v0(w: Wire) -> bool:
    """The byte after ErrorCode is ApiKeys' compact count (non-zero) in header v0; a tag byte shifts it to 0."""
    w.send(build(ApiVersionsRequest, 3, client_software_name="wirecheck", client_software_version="1"))
    return w.recv_frame()[6] != 0


def two_header_tags(w: Wire) -> str:
    """Metadata v12 whose request header v2 carries two tagged fields."""
    head = struct.pack(">hhih", 3, 12, 1, 1) + b"t" + b"\x02\x03\x02\x00\x01\x5a\x03xyz"
    body = bytes(build(MetadataRequest, 12, topics=[]).encode())
    return outcome(w, struct.pack(">i", len(head) + len(body)) + head + body)


def duplicate_error(w: Wire) -> int:
    name = topic(w)
    return w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name, "num_partitions": 1, "replication_factor": 1}], timeout_ms=1000).topics[0].error_code


def second_base_offset(w: Wire) -> int:
    name = topic(w)
    produce(w, name, record_batch([b"a"]))
    resp = w.call(ProduceRequest, ProduceResponse, 9, acks=1, timeout_ms=1000, topic_data=[
        {"name": name, "partition_data": [{"index": 0, "records": record_batch([b"b"])}]}])
    return resp.responses[0].partition_responses[0].base_offset


#: fault -> (probe(broker) -> observation, the clean broker's observation)
MUST_PROBES = {
    "kafka.invalid-acks-wrong-error": (with_wire(invalid_acks), 21),
    "kafka.create-zero-partitions-accepted": (with_wire(lambda w: create_error(w, 0)), 37),
    "kafka.uncommitted-reads-zero": (with_wire(uncommitted_offset), -1),
    "kafka.metadata-ignores-allow-create": (with_wire(metadata_no_autocreate), 3),
    "kafka.create-partitions-same-accepted": (with_wire(grow_to_same_count), 37),
    "kafka.delete-records-clamps-to-hw": (with_wire(delete_records_beyond_hw), 1),
    "kafka.offset-delete-unknown-group-ok": (with_wire(offset_delete_unknown_group), 69),
    "kafka.describe-configs-unknown-topic-empty":
        (with_wire(lambda w: describe_result(w, f"must-nx{next(_names)}").error_code), 3),
    "kafka.heartbeat-generation-unchecked": (with_wire(lambda w: heartbeat_as(w, generation_delta=1)), 22),
    "kafka.heartbeat-unknown-member-ok": (with_wire(lambda w: heartbeat_as(w, member="nobody")), 25),
    "kafka.sync-generation-unchecked": (with_wire(sync_of_another_generation), 22),
    "kafka.log-start-offset-unset": (with_wire(fetched_log_start), 0),
    # two batches in one partition's records (v3+): INVALID_RECORD, where the fault keeps the first
    "kafka.multi-batch-first-kept":
        (with_wire(lambda w: produce(w, topic(w), record_batch([b"a"]) + record_batch([b"b"]))), 87),
    "kafka.join-member-id-not-required": (with_wire(lambda w: join(w, group()).error_code), 79),
    "kafka.retry-out-of-order": (with_wire(retried_batch), 0),
    "kafka.delete-groups-unknown-ok": (with_wire(delete_unknown_group), 69),
    "kafka.read-only-validate-passes": (with_wire(validate_static_broker_config), 42),
    "kafka.create-topic-count-ignored": (with_wire(created_with_three), 3),
    "kafka.fetch-below-log-start-clamped": (with_wire(fetch_below_log_start), 1),
    "kafka.init-producer-id-needs-transactional-id": (with_wire(lambda w: init(w, None)[0]), 0),
    "kafka.describe-configs-broker-empty": (with_wire(lambda w: len(describe(w, "0", kind=BROKER)) > 0), True),
    "kafka.describe-configs-defaults-null":
        (with_wire(lambda w: describe(w, topic(w), ["retention.ms"])[0].value), "604800000"),
    "kafka.incremental-append-replaces":
        (with_wire(lambda w: value_after(w, "cleanup.policy", "compact", operation=APPEND)), "delete,compact"),
    "kafka.metadata-leader-not-a-broker": (with_wire(leader_is_a_broker), True),
    "kafka.client-id-byte-length": (with_wire(long_client_id), "answered"),
    "kafka.negative-size-skipped": (with_wire(negative_size_then_request), "closed"),
    "kafka.apiversions-listed-from-one": (with_wire(api_versions_own_min), 0),
    "kafka.compact-string-length-two-bytes": (with_wire(long_software_version), 0),
    "kafka.hostile-count-waits": (with_wire(hostile_metadata_count), "closed"),
    "kafka.fetch-crc-ieee": (with_wire(fetched_crc_valid), True),
    "kafka.pipelined-answers-reordered": (with_wire(pipelined_order), [11, 12, 13]),
    "kafka.size-prefix-one-read": (with_wire(split_size_prefix), "answered"),
    "kafka.apiversions-header-v1": (with_wire(api_versions_v3_header_v0), True),
    "kafka.header-tags-first-only": (with_wire(two_header_tags), "answered"),
    "kafka.base-offset-echoed": (with_wire(second_base_offset), 1),
    "kafka.error-code-negated": (with_wire(duplicate_error), 36),
}
