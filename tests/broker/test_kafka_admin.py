"""The Kafka personality's configs, admin APIs and SASL, checked through kafka-python's protocol classes: what the
conformance suite cannot see from outside (retention by time, compacted topics, configs kept in the durable log)."""

from __future__ import annotations

import struct
import time

import pytest
import kafka.protocol.admin as kp_admin
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.sasl import (SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
                                 SaslHandshakeResponse)
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

from scramp import ScramClient

from tests.interop.kafka_support import InProcessBroker, Wire, build, record_batch

NONE, INVALID_RECORD, SASL_AUTHENTICATION_FAILED = 0, 87, 58
SET = 0


@pytest.fixture(scope="module")
def broker():
    with InProcessBroker() as b:
        yield b


def create(w: Wire, name: str, configs: dict[str, str] | None = None) -> None:
    r = w.call(CreateTopicsRequest, CreateTopicsResponse, 7, timeout_ms=1000, topics=[
        {"name": name, "num_partitions": 1, "replication_factor": 1,
         "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}])
    assert r.topics[0].error_code == NONE, r


def produce(w: Wire, topic: str, batch: bytes):
    r = w.call(ProduceRequest, ProduceResponse, 9, acks=1, timeout_ms=1000, topic_data=[
        {"name": topic, "partition_data": [{"index": 0, "records": batch}]}])
    return r.responses[0].partition_responses[0]


def earliest(w: Wire, topic: str) -> int:
    r = w.call(ListOffsetsRequest, ListOffsetsResponse, 7, replica_id=-1, isolation_level=0, topics=[
        {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -2}]}])
    return r.topics[0].partitions[0].offset


def set_config(w: Wire, topic: str, name: str, value: str) -> int:
    r = w.call(kp_admin.IncrementalAlterConfigsRequest, kp_admin.IncrementalAlterConfigsResponse, 1,
               validate_only=False, resources=[{"resource_type": 2, "resource_name": topic, "configs": [
                   {"name": name, "config_operation": SET, "value": value}]}])
    return r.responses[0].error_code


def describe(w: Wire, topic: str) -> dict[str, str]:
    r = w.call(kp_admin.DescribeConfigsRequest, kp_admin.DescribeConfigsResponse, 4, resources=[
        {"resource_type": 2, "resource_name": topic, "configuration_keys": None}])
    return {c.name: c.value for c in r.results[0].configs}


def test_retention_ms_expires_old_batches(broker):
    with broker.wire() as w:
        create(w, "ret", {"retention.ms": "60000"})
        old = int(time.time() * 1000) - 3_600_000
        assert produce(w, "ret", record_batch([b"old"], timestamps=[old])).error_code == NONE
        assert produce(w, "ret", record_batch([b"new"])).error_code == NONE
        assert earliest(w, "ret") == 1  # the hour-old batch went; the newest always stays


def test_compacted_topic_refuses_records_without_a_key(broker):
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=int(time.time() * 1000), key=None, value=b"v", headers=[])
    with broker.wire() as w:
        create(w, "compacted")
        assert set_config(w, "compacted", "cleanup.policy", "compact") == NONE
        assert produce(w, "compacted", bytes(builder.build())).error_code == INVALID_RECORD
        assert produce(w, "compacted", record_batch([b"keyed"])).error_code == NONE


def test_log_append_time_set_by_alter_configs(broker):
    with broker.wire() as w:
        create(w, "lat")
        assert produce(w, "lat", record_batch([b"a"])).log_append_time_ms == -1
        assert set_config(w, "lat", "message.timestamp.type", "LogAppendTime") == NONE
        assert produce(w, "lat", record_batch([b"b"])).log_append_time_ms > 0


def test_configs_survive_a_restart(tmp_path):
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        create(w, "durable-cfg")
        assert set_config(w, "durable-cfg", "retention.ms", "123456") == NONE
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert describe(w, "durable-cfg")["retention.ms"] == "123456"


def test_delete_records_to_minus_one_empties_the_partition(broker):
    with broker.wire() as w:
        create(w, "del-all")
        produce(w, "del-all", record_batch([b"a", b"b"]))
        r = w.call(kp_admin.DeleteRecordsRequest, kp_admin.DeleteRecordsResponse, 2, timeout_ms=1000, topics=[
            {"name": "del-all", "partitions": [{"partition_index": 0, "offset": -1}]}])
        assert r.topics[0].partitions[0].low_watermark == 2
        assert earliest(w, "del-all") == 2


# ---------------------------------------------------------------------------------------------- SASL


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory):
    users = tmp_path_factory.mktemp("sasl") / "users.txt"
    users.write_text("# test users\nalice:alice-secret\n")
    with InProcessBroker(sasl_users=str(users)) as b:
        yield b


def handshake(w: Wire, mechanism: str):
    return w.call(SaslHandshakeRequest, SaslHandshakeResponse, 1, mechanism=mechanism)


def test_sasl_advertised_only_when_enabled(broker, sasl_broker):
    for b, expected in ((broker, set()), (sasl_broker, {(17, 0, 1), (36, 0, 2)})):
        with b.wire() as w:
            r = w.call(ApiVersionsRequest, ApiVersionsResponse, 2)
        assert {(k.api_key, k.min_version, k.max_version) for k in r.api_keys if k.api_key in (17, 36)} == expected


@pytest.mark.parametrize("version", [0, 1, 2])
def test_sasl_plain_login_then_metadata(sasl_broker, version):
    with sasl_broker.wire() as w:
        assert handshake(w, "PLAIN").mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
        r = w.call(SaslAuthenticateRequest, SaslAuthenticateResponse, version, auth_bytes=b"\0alice\0alice-secret")
        assert r.error_code == NONE
        assert w.call(MetadataRequest, MetadataResponse, 1, topics=[]).brokers


def raw_token(w: Wire, token: bytes) -> bytes:
    """One SASL token without Kafka framing (after SaslHandshake v0): INT32 size, then the token."""
    w.send_raw(struct.pack(">i", len(token)) + token)
    return w.recv_frame()


def test_sasl_handshake_v0_then_raw_plain_token(sasl_broker):
    with sasl_broker.wire() as w:
        r = w.call(SaslHandshakeRequest, SaslHandshakeResponse, 0, mechanism="PLAIN")
        assert r.error_code == NONE
        assert raw_token(w, b"\0alice\0alice-secret") == b""  # an empty token: authenticated
        assert w.call(MetadataRequest, MetadataResponse, 1, topics=[]).brokers


def test_sasl_handshake_v0_then_raw_scram_exchange(sasl_broker):
    scram = ScramClient(["SCRAM-SHA-256"], "alice", "alice-secret")
    with sasl_broker.wire() as w:
        assert w.call(SaslHandshakeRequest, SaslHandshakeResponse, 0, mechanism="SCRAM-SHA-256").error_code == NONE
        scram.set_server_first(raw_token(w, scram.get_client_first().encode()).decode())
        scram.set_server_final(raw_token(w, scram.get_client_final().encode()).decode())  # verifies the server
        assert w.call(MetadataRequest, MetadataResponse, 1, topics=[]).brokers


def test_sasl_handshake_v0_wrong_password_closes(sasl_broker):
    with sasl_broker.wire() as w:
        w.call(SaslHandshakeRequest, SaslHandshakeResponse, 0, mechanism="PLAIN")
        w.send_raw(struct.pack(">i", 19) + b"\0alice\0wrong-secret")
        w.expect_closed()


def test_sasl_request_before_login_closes(sasl_broker):
    with sasl_broker.wire() as w:
        w.send(build(MetadataRequest, 1, topics=[]))
        w.expect_closed()


def test_sasl_unknown_user_fails_and_closes(sasl_broker):
    with sasl_broker.wire() as w:
        handshake(w, "SCRAM-SHA-512")
        r = w.call(SaslAuthenticateRequest, SaslAuthenticateResponse, 1,
                   auth_bytes=b"n,,n=mallory,r=abcdefghijklmnop")
        assert r.error_code == SASL_AUTHENTICATION_FAILED
        w.expect_closed()
