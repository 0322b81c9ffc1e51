"""Probes for the Kafka faults of the strictness checks: unsupported ApiVersions shape, response shape, frame
limit, unknown partitions, replication factor, KIP-511 names and lying batch lengths (see test_kafka_faults.py
for how they run)."""

from __future__ import annotations

import itertools
import struct

from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata.api_versions import ApiVersionsRequest
from kafka.protocol.metadata import MetadataRequest
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse

from tests.broker.kafka_admin_probes import with_wire
from tests.interop.kafka_support import Closed, Wire, build, record_batch

_names = itertools.count()


def topic(w: Wire, partitions: int = 1, replication: int = 1) -> str | int:
    name = f"chk{next(_names)}"
    resp = w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name, "num_partitions": partitions, "replication_factor": replication}], timeout_ms=1000)
    return name if replication == 1 else resp.topics[0].error_code


def left_after_v0_api_versions(w: Wire) -> int:
    """Bytes left in the answer to ApiVersions v99 once a v0 body is decoded (0: exactly a v0 body)."""
    w.send_raw(struct.pack(">ihhih", 10, 18, 99, 7, -1))
    body = w.recv_frame()[4:]
    (count,) = struct.unpack_from(">i", body, 2)  # ErrorCode int16, then ApiKeys: (key, min, max) int16 each
    return len(body) - (6 + 6 * count)


def metadata_v13_minus_v12(w: Wire) -> int:
    """v13 adds one top-level int16 (ErrorCode) to v12's answer."""
    sizes = []
    for version in (12, 13):
        w.send(build(MetadataRequest, version, topics=[]))
        sizes.append(len(w.recv_frame()))
    return sizes[1] - sizes[0]


def oversized_frame(w: Wire) -> str:
    head = struct.pack(">hhih", 18, 0, 1, -1)
    w.send_raw(struct.pack(">i", 200 * 1024 * 1024) + head)
    w.sock.settimeout(1.0)
    try:
        return "closed" if not w.sock.recv(4) else "answered"
    except TimeoutError:
        return "silent"
    except ConnectionResetError:
        return "closed"


def fetch_unknown_partition(w: Wire) -> int:
    resp = w.call(FetchRequest, FetchResponse, 12, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, topics=[
        {"topic": topic(w), "partitions": [{"partition": 5, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}])
    return resp.responses[0].partitions[0].error_code


def list_offsets_unknown_partition(w: Wire) -> int:
    resp = w.call(ListOffsetsRequest, ListOffsetsResponse, 7, replica_id=-1, topics=[
        {"name": topic(w), "partitions": [{"partition_index": 5, "timestamp": -1}]}])
    return resp.topics[0].partitions[0].error_code


def invalid_software_name(w: Wire) -> int:
    """The ErrorCode of ApiVersions v3 with a name outside KIP-511's pattern (read raw: the error answer is short)."""
    w.send(build(ApiVersionsRequest, 3, client_software_name="not a name!", client_software_version="1"))
    return struct.unpack_from(">h", w.recv_frame(), 4)[0]


def lying_batch_length(w: Wire) -> int | str:
    batch = bytearray(record_batch([b"a"]))
    struct.pack_into(">i", batch, 8, struct.unpack_from(">i", batch, 8)[0] - 3)
    try:
        resp = w.call(ProduceRequest, ProduceResponse, 9, acks=1, timeout_ms=1000, topic_data=[
            {"name": topic(w), "partition_data": [{"index": 0, "records": bytes(batch)}]}])
    except (Closed, ConnectionError):
        return "closed"
    return resp.responses[0].partition_responses[0].error_code


#: fault -> (probe(broker) -> observation, the clean broker's observation)
CHECK_PROBES = {
    "kafka.apiversions-unsupported-trailing-tags": (with_wire(left_after_v0_api_versions), 0),
    "kafka.metadata-v13-as-v12": (with_wire(metadata_v13_minus_v12), 2),
    "kafka.frame-limit-ignored": (with_wire(oversized_frame), "closed"),
    "kafka.fetch-unknown-partition-no-error": (with_wire(fetch_unknown_partition), 3),
    "kafka.listoffsets-unknown-partition-no-error": (with_wire(list_offsets_unknown_partition), 3),
    "kafka.replication-factor-unchecked": (with_wire(lambda w: topic(w, replication=3)), 38),
    "kafka.software-name-unchecked": (with_wire(invalid_software_name), 42),
    "kafka.batch-length-ignored": (with_wire(lying_batch_length), 2),  # CORRUPT_MESSAGE
}
