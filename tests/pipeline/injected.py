"""Captures with violations planted on purpose, built from transcripts with reports.pcap (one file per flow).

Each planted violation names the clause the capture checks must report; ``EXPECTED`` lists them all, so a
check that stops seeing one fails the test.
"""

from __future__ import annotations

from pathlib import Path

from wirecheck.protocols.kafka import messages
from wirecheck.protocols.rustlog.layers import encode_frame

from wirecheck.reports.pcap import write_pcap
from tests.pipeline.kafka_frames import record_batch, response, transcript
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from tests.pipeline.kafka_frames import request

RUSTLOG_PORT, KAFKA_PORT, UNKNOWN_PORT = 7070, 9092, 5555


def _rustlog_frames() -> list[tuple[str, bytes]]:
    produce = {"type": "Produce", "topic": "t", "partition": 0, "records": ["YQ==", "Yg=="]}
    return [
        ("send", encode_frame({"type": "Produce", **{k: v for k, v in produce.items() if k != "type"}})),
        ("recv", encode_frame({"type": "ProduceResponse", "base_offset": 10, "record_count": 2})),
        ("send", encode_frame(produce)),
        # offsets went backwards: 5 < 12
        ("recv", encode_frame({"type": "ProduceResponse", "base_offset": 5, "record_count": 2})),
        ("send", encode_frame({"type": "Fetch", "group_id": "", "topic": "t", "partition": 0, "offset": 0,
                               "max_bytes": 100})),
        # next_offset should be 2
        ("recv", encode_frame({"type": "FetchResponse", "next_offset": 7, "records": [
            {"offset": 0, "timestamp": 1, "payload": "YQ=="}, {"offset": 1, "timestamp": 2, "payload": "Yg=="}]})),
        ("send", encode_frame({"type": "Ping"})),
        ("recv", encode_frame(b"\xff\xfe not utf-8")),  # not a JSON object
        ("send", encode_frame({"type": "ListTopics"})),
        ("recv", encode_frame({"type": "Error", "message": "no code"})),  # Error without code
        ("recv", encode_frame({"type": "Pong"})),  # answers no request
        ("send", b"\x00\x00\x00\x00"),  # zero-length frame
    ]


def _kafka_frames() -> list[tuple[str, bytes]]:
    bad_crc = bytearray(record_batch([b"x"]))
    bad_crc[-1] ^= 0xFF  # a record byte: inside the CRC'd range
    produce = lambda cid, batch, version=3: request(ProduceRequest[version](  # noqa: E731
        transactional_id=None, acks=1, timeout_ms=1000, topic_data=[("t", [(0, batch)])]), cid)
    ok = lambda cid, base, code=0, version=3: response(ProduceResponse[version](  # noqa: E731
        responses=[("t", [(0, code, base, -1) + ((0,) if version >= 5 else ())])], throttle_time_ms=0), cid)
    return [
        ("send", request(ApiVersionsRequest[2](), 1)),
        ("recv", response(ApiVersionsResponse[2](error_code=0, throttle_time_ms=0,
                                                 api_keys=[(0, 0, 3), (18, 0, 2)]), 1)),
        ("send", produce(2, record_batch([b"a", b"b"]))),
        ("recv", ok(2, 10)),
        ("send", produce(3, record_batch([b"c"]))),
        ("recv", ok(3, 4)),  # base offset went backwards (4 < 12)
        ("send", produce(4, bytes(bad_crc))),
        ("recv", ok(4, 20)),  # a corrupt batch acknowledged
        ("send", produce(5, record_batch([b"d"]))),
        ("recv", ok(77, 21)),  # wrong correlation id
        ("send", produce(6, record_batch([b"e"]), version=5)),  # v5 not advertised (max 3)
        ("recv", ok(6, 22, version=5)),
        ("send", produce(7, record_batch([b"f"]))),
        ("recv", ok(7, -1, code=999)),  # undefined error code
    ]


EXPECTED = {
    # (protocol, side, clause)
    ("rustlog", "server", "rustlog.produce.offsets"),
    ("rustlog", "server", "rustlog.fetch.next-offset"),
    ("rustlog", "server", "rustlog.framing.response-frame"),
    ("rustlog", "server", "rustlog.errors.shape"),
    ("rustlog", "server", "rustlog.framing.pipelining"),
    ("rustlog", "client", "rustlog.framing.zero-length"),
    ("kafka", "server", "kafka.produce.base-offset"),
    ("kafka", "client", "kafka.produce.crc-mismatch"),
    ("kafka", "server", "kafka.produce.crc-mismatch"),
    ("kafka", "server", "kafka.header.correlation-id"),
    ("kafka", "client", "kafka.capture.version-advertised"),
    ("kafka", "server", "kafka.capture.error-code-known"),
}


def write_injected(directory: Path) -> dict[str, Path]:
    """The injected captures, plus a truncated one, a garbage one and an unknown protocol's flow."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {"rustlog": directory / "injected-rustlog.pcap", "kafka": directory / "injected-kafka.pcap",
             "unknown": directory / "unknown-protocol.pcap", "truncated": directory / "truncated.pcap",
             "garbage": directory / "garbage.pcap"}
    base = 1_763_700_000.0
    write_pcap(transcript(_rustlog_frames(), port=RUSTLOG_PORT), paths["rustlog"], base_time=base)
    write_pcap(transcript(_kafka_frames(), port=KAFKA_PORT), paths["kafka"], base_time=base)
    write_pcap(transcript([("send", b"\x16\x03\x01 hello, not a broker protocol"), ("recv", b"\x15\x03")],
                          port=UNKNOWN_PORT), paths["unknown"], base_time=base)
    whole = paths["rustlog"].read_bytes()
    paths["truncated"].write_bytes(whole[: len(whole) // 2])  # cut inside a packet record
    paths["garbage"].write_bytes(b"this is not a capture file\n" * 4)
    return paths


assert messages.api_name(0) == "Produce"  # the Kafka layer this module builds on is importable
