"""Kafka frames built with kafka-python's message classes (the spec's own JSON definitions), for capture tests."""

from __future__ import annotations

from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

CLIENT = "wirecheck-test"


def request(message, correlation_id: int) -> bytes:
    message.with_header(correlation_id=correlation_id, client_id=CLIENT)
    return bytes(message.encode(header=True, framed=True))


def response(message, correlation_id: int) -> bytes:
    message.with_header(correlation_id=correlation_id)
    return bytes(message.encode(header=True, framed=True))


def record_batch(values: list[bytes], base_offset: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, value in enumerate(values):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=None, value=value, headers=[])
    batch = bytearray(builder.build())
    batch[0:8] = base_offset.to_bytes(8, "big")  # base offset is outside the CRC'd range
    return bytes(batch)


def conversation(topic: str = "t", advertised_produce_max: int = 3) -> list[tuple[str, bytes]]:
    """A well-formed client/broker exchange: ApiVersions, Metadata, two Produce requests (kind, frame)."""
    return [
        ("send", request(ApiVersionsRequest[2](), 1)),
        ("recv", response(ApiVersionsResponse[2](error_code=0, throttle_time_ms=0, api_keys=[
            (0, 0, advertised_produce_max), (3, 0, 1), (18, 0, 2)]), 1)),
        ("send", request(MetadataRequest[1](topics=[(topic,)]), 2)),
        ("recv", response(MetadataResponse[1](brokers=[(0, "127.0.0.1", 9092, None)], controller_id=0, topics=[
            (0, topic, False, [(0, 0, 0, [0], [0])])]), 2)),
        ("send", request(ProduceRequest[3](transactional_id=None, acks=1, timeout_ms=1000,
                                           topic_data=[(topic, [(0, record_batch([b"a", b"b"]))])]), 3)),
        ("recv", response(ProduceResponse[3](responses=[(topic, [(0, 0, 0, -1)])], throttle_time_ms=0), 3)),
        ("send", request(ProduceRequest[3](transactional_id=None, acks=1, timeout_ms=1000,
                                           topic_data=[(topic, [(0, record_batch([b"c"]))])]), 4)),
        ("recv", response(ProduceResponse[3](responses=[(topic, [(0, 0, 2, -1)])], throttle_time_ms=0), 4)),
    ]


def transcript(frames: list[tuple[str, bytes]], port: int = 9092, closed: str = "closed") -> dict:
    events = [{"t": 0.0, "conn": 1, "kind": "connect", "peer": f"127.0.0.1:{port}", "local": "127.0.0.1:53211"}]
    for i, (kind, frame) in enumerate(frames):
        events.append({"t": 0.001 * (i + 1), "conn": 1, "kind": kind, "hex": frame.hex()})
    events.append({"t": 0.001 * (len(frames) + 1), "conn": 1, "kind": closed})
    return {"schema": "wirecheck.transcript/1", "case": "kafka.test", "nodeid": "t::kafka", "protocol": "kafka",
            "events": events}
