"""Probes for the Kafka faults in configs, the admin APIs and SASL (see test_kafka_faults.py for how they run).

Each probe takes a broker and returns an observation; SASL probes need a broker started with SASL_OPTIONS.
"""

from __future__ import annotations

import itertools

import kafka.protocol.admin as kp_admin
import kafka.protocol.consumer as kp_consumer
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, \
    OffsetFetchResponse
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import InitProducerIdRequest, InitProducerIdResponse
from kafka.protocol.sasl import (SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
                                 SaslHandshakeResponse)
from scramp import ScramClient, ScramException

from tests.broker.test_kafka_groups import join_new
from tests.interop.kafka_support import InProcessBroker, Wire, build, record_batch

_names = itertools.count()
TOPIC, BROKER = 2, 4  # ConfigResource.Type
SET, APPEND = 0, 2  # IncrementalAlterConfigs ConfigOperation
USER, PASSWORD = "alice", "alice-secret"


def topic(w: Wire, partitions: int = 1) -> str:
    name = f"adm{next(_names)}"
    w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
        {"name": name, "num_partitions": partitions, "replication_factor": 1}], timeout_ms=1000)
    return name


def produce(w: Wire, name: str, records: bytes) -> int:
    resp = w.call(ProduceRequest, ProduceResponse, 9, acks=1, timeout_ms=1000, topic_data=[
        {"name": name, "partition_data": [{"index": 0, "records": records}]}])
    return resp.responses[0].partition_responses[0].error_code


def describe_result(w: Wire, name: str, keys=None, synonyms=False, documentation=False, kind: int = TOPIC):
    """The DescribeConfigs result of one resource (its error code and configs)."""
    return w.call(kp_admin.DescribeConfigsRequest, kp_admin.DescribeConfigsResponse, 4, resources=[
        {"resource_type": kind, "resource_name": name, "configuration_keys": keys}],
        include_synonyms=synonyms, include_documentation=documentation).results[0]


def describe(w: Wire, name: str, keys=None, synonyms=False, documentation=False, kind: int = TOPIC):
    return describe_result(w, name, keys, synonyms, documentation, kind).configs


def set_config(w: Wire, name: str, key: str, value: str, validate_only: bool = False, operation: int = SET,
               kind: int = TOPIC) -> int:
    return w.call(kp_admin.IncrementalAlterConfigsRequest, kp_admin.IncrementalAlterConfigsResponse, 1,
                  validate_only=validate_only, resources=[{"resource_type": kind, "resource_name": name, "configs": [
                      {"name": key, "config_operation": operation, "value": value}]}]).responses[0].error_code


def value_after(w: Wire, key: str, value: str, validate_only: bool = False, operation: int = SET) -> str:
    name = topic(w)
    set_config(w, name, key, value, validate_only, operation)
    return {c.name: c.value for c in describe(w, name)}[key]


def too_large_with_override(w: Wire) -> int:
    name = topic(w)
    set_config(w, name, "max.message.bytes", "200")
    return produce(w, name, record_batch([b"x" * 400]))


def partitions_after_growing_to_four(w: Wire) -> int:
    name = topic(w)
    w.call(kp_admin.CreatePartitionsRequest, kp_admin.CreatePartitionsResponse, 3, timeout_ms=1000,
           validate_only=False, topics=[{"name": name, "count": 4, "assignments": None}])
    return len(w.call(MetadataRequest, MetadataResponse, 1, topics=[{"name": name}]).topics[0].partitions)


def earliest_after_delete_records(w: Wire) -> int:
    name = topic(w)
    for value in (b"a", b"b", b"c"):
        produce(w, name, record_batch([value]))
    w.call(kp_admin.DeleteRecordsRequest, kp_admin.DeleteRecordsResponse, 2, timeout_ms=1000, topics=[
        {"name": name, "partitions": [{"partition_index": 0, "offset": 2}]}])
    return w.call(ListOffsetsRequest, ListOffsetsResponse, 7, replica_id=-1, topics=[
        {"name": name, "partitions": [{"partition_index": 0, "timestamp": -2}]}]).topics[0].partitions[0].offset


def delete_group_with_member(w: Wire) -> int:
    group = f"adm-g{next(_names)}"
    join_new(w, group)
    return w.call(kp_admin.DeleteGroupsRequest, kp_admin.DeleteGroupsResponse, 2,
                  groups_names=[group]).results[0].error_code


def committed_after_offset_delete(w: Wire) -> int:
    name, group = topic(w), f"adm-g{next(_names)}"
    w.call(OffsetCommitRequest, OffsetCommitResponse, 3, group_id=group, generation_id_or_member_epoch=-1,
           member_id="", topics=[{"name": name, "partitions": [
               {"partition_index": 0, "committed_offset": 7, "committed_metadata": None}]}])
    w.call(kp_consumer.OffsetDeleteRequest, kp_consumer.OffsetDeleteResponse, 0, group_id=group,
           topics=[{"name": name, "partitions": [{"partition_index": 0}]}])
    got = w.call(OffsetFetchRequest, OffsetFetchResponse, 3, group_id=group,
                 topics=[{"name": name, "partition_indexes": [0]}])
    return got.topics[0].partitions[0].committed_offset


def cluster_port_is_ours(b: InProcessBroker) -> bool:
    with b.wire() as w:
        resp = w.call(kp_admin.DescribeClusterRequest, kp_admin.DescribeClusterResponse, 2, endpoint_type=1)
    return [broker.port for broker in resp.brokers] == [b.port]


def end_offset_for_epoch_zero(w: Wire) -> int:
    name = topic(w)
    produce(w, name, record_batch([b"a"]))
    resp = w.call(kp_consumer.OffsetForLeaderEpochRequest, kp_consumer.OffsetForLeaderEpochResponse, 4,
                  replica_id=-1, topics=[{"topic": name, "partitions": [
                      {"partition": 0, "current_leader_epoch": 0, "leader_epoch": 0}]}])
    return resp.topics[0].partitions[0].end_offset


def active_producers(w: Wire) -> int:
    name = topic(w)
    init = w.call(InitProducerIdRequest, InitProducerIdResponse, 4, transactional_id=None,
                  transaction_timeout_ms=1000, producer_id=-1, producer_epoch=-1)
    produce(w, name, record_batch([b"a"], producer_id=init.producer_id, producer_epoch=init.producer_epoch,
                                  base_sequence=0))
    resp = w.call(kp_admin.DescribeProducersRequest, kp_admin.DescribeProducersResponse, 0,
                  topics=[{"name": name, "partition_indexes": [0]}])
    return len(resp.topics[0].partitions[0].active_producers)


# ---------------------------------------------------------------------------------------------- SASL


def metadata_before_login(w: Wire) -> str:
    w.send(build(MetadataRequest, 1, topics=[]))
    try:
        w.recv_frame()
    except Exception:  # closed (EOF or reset) before any answer
        return "closed"
    return "answered"


def handshake_code(w: Wire, mechanism: str) -> int:
    return w.call(SaslHandshakeRequest, SaslHandshakeResponse, 1, mechanism=mechanism).error_code


def plain_wrong_password(w: Wire) -> int:
    handshake_code(w, "PLAIN")
    return w.call(SaslAuthenticateRequest, SaslAuthenticateResponse, 2,
                  auth_bytes=f"\0{USER}\0wrong".encode()).error_code


def scram_tampered_proof(w: Wire) -> int:
    handshake_code(w, "SCRAM-SHA-256")
    scram = ScramClient(["SCRAM-SHA-256"], USER, PASSWORD)
    first = w.call(SaslAuthenticateRequest, SaslAuthenticateResponse, 2, auth_bytes=scram.get_client_first().encode())
    scram.set_server_first(first.auth_bytes.decode())
    final = scram.get_client_final()
    # the proof's first base64 digit: each of its six bits is data (the last digit's low bits are padding, which
    # a decoder may ignore, so changing only those would leave the proof as it was)
    at = final.index(",p=") + 3
    tampered = final[:at] + ("A" if final[at] != "A" else "B") + final[at + 1:]
    return w.call(SaslAuthenticateRequest, SaslAuthenticateResponse, 2, auth_bytes=tampered.encode()).error_code


def plain_login(w: Wire) -> int:
    """PLAIN with the right password and an empty authorization identity (RFC 4616: act as the user)."""
    handshake_code(w, "PLAIN")
    return w.call(SaslAuthenticateRequest, SaslAuthenticateResponse, 2,
                  auth_bytes=f"\0{USER}\0{PASSWORD}".encode()).error_code


def scram_server_verified(w: Wire) -> bool:
    handshake_code(w, "SCRAM-SHA-256")
    scram = ScramClient(["SCRAM-SHA-256"], USER, PASSWORD)
    first = w.call(SaslAuthenticateRequest, SaslAuthenticateResponse, 2, auth_bytes=scram.get_client_first().encode())
    scram.set_server_first(first.auth_bytes.decode())
    final = w.call(SaslAuthenticateRequest, SaslAuthenticateResponse, 2, auth_bytes=scram.get_client_final().encode())
    try:
        scram.set_server_final(final.auth_bytes.decode())
    except ScramException:
        return False
    return True


def with_wire(probe):
    def run(b: InProcessBroker):
        with b.wire() as w:
            return probe(w)
    return run


#: fault -> (probe(broker) -> observation, the clean broker's observation)
ADMIN_PROBES = {
    "kafka.describe-configs-drops-key":
        (with_wire(lambda w: sorted(c.name for c in describe(w, topic(w), ["retention.ms", "cleanup.policy"]))),
         ["cleanup.policy", "retention.ms"]),
    "kafka.describe-configs-synonyms-always":
        (with_wire(lambda w: len(describe(w, topic(w), ["retention.ms"])[0].synonyms)), 0),
    "kafka.describe-configs-docs-always":
        (with_wire(lambda w: describe(w, topic(w), ["retention.ms"])[0].documentation), None),
    "kafka.alter-configs-unknown-accepted": (with_wire(lambda w: set_config(w, topic(w), "wirecheck.x", "1")), 40),
    "kafka.alter-configs-not-applied": (with_wire(lambda w: value_after(w, "retention.ms", "1234")), "1234"),
    "kafka.validate-only-applied":
        (with_wire(lambda w: value_after(w, "retention.ms", "1000", validate_only=True)), "604800000"),
    "kafka.max-message-bytes-override-ignored": (with_wire(too_large_with_override), 10),
    "kafka.create-partitions-count-ignored": (with_wire(partitions_after_growing_to_four), 4),
    "kafka.delete-records-start-not-moved": (with_wire(earliest_after_delete_records), 2),
    "kafka.delete-groups-non-empty-accepted": (with_wire(delete_group_with_member), 68),
    "kafka.offset-delete-not-deleted": (with_wire(committed_after_offset_delete), -1),
    "kafka.describe-cluster-port-wrong": (cluster_port_is_ours, True),
    "kafka.leader-epoch-end-off": (with_wire(end_offset_for_epoch_zero), 1),
    "kafka.describe-producers-empty": (with_wire(active_producers), 1),
}

#: the same for the SASL faults, which need a SASL-enabled broker on both sides
SASL_PROBES = {
    "kafka.sasl-unauthenticated-served": (with_wire(metadata_before_login), "closed"),
    "kafka.sasl-wrong-password-accepted": (with_wire(plain_wrong_password), 58),
    "kafka.sasl-scram-proof-unchecked": (with_wire(scram_tampered_proof), 58),
    "kafka.sasl-unsupported-mechanism-accepted": (with_wire(lambda w: handshake_code(w, "NOPE")), 33),
    "kafka.sasl-plain-authzid-required": (with_wire(plain_login), 0),
    "kafka.sasl-scram-signature-wrong": (with_wire(scram_server_verified), True),
}


def sasl_options(tmp_path) -> dict:
    users = tmp_path / "users.txt"
    users.write_text(f"{USER}:{PASSWORD}\n")
    return {"sasl_users": str(users)}
