"""The scapy adapter against the reference broker: sr1 of a layer returns the dissected answer layer, and the
session's transcript has the exchange, for every protocol that has layers."""

import pytest

from wirecheck.protocols.fluvio import layers as fluvio
from wirecheck.protocols.fluvio import records as fluvio_records
from wirecheck.protocols.kafka import layers as kafka
from wirecheck.protocols.kafka import records as kafka_records
from wirecheck.protocols.registry import spec_for
from wirecheck.protocols.rustlog import layers as rustlog
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.adapter import TargetSocket
from wirecheck.targets.launcher import launch
from wirecheck.targets.transport.outcome import Outcome


@pytest.fixture(scope="module")
def broker():
    process = launch(["rustlog", "kafka", "fluvio"])
    yield process
    process.stop()


def connect(broker, name, deadline=2.0):
    spec = spec_for(name)
    return TargetSocket.connect(broker.address(name), spec, Transcript(name, spec.describe, spec.describe_answer), deadline=deadline)


def exchanged(transcript):
    return [(e.kind, e.data) for e in transcript.events if e.kind in ("send", "recv")]


def test_rustlog_sr1_returns_the_dissected_answer(broker):
    with connect(broker, "rustlog") as target:
        created = target.sr1(rustlog.RustLogFrame() / rustlog.CreateTopic(topic="adapter", partition_count=1))
        request = rustlog.RustLogFrame() / rustlog.Produce(topic="adapter", records=["aGk=", "aG8="])
        answer = target.sr1(request)
        transcript = target.transcript
    assert created[rustlog.CreateTopicResponse].success is True
    assert isinstance(answer.payload, rustlog.ProduceResponse)
    assert (answer.length, answer.record_count, answer.base_offset) == (len(bytes(answer)) - 4, 2, 0)
    assert exchanged(transcript)[2:] == [("send", bytes(request)), ("recv", bytes(answer))]
    assert '"type":"ProduceResponse"' in transcript.render()


def test_kafka_sr1_dissects_the_answer_of_the_request_it_answers(broker):
    with connect(broker, "kafka") as target:
        versions = target.sr1(kafka.KafkaRequest(api_key=18, api_version=3, correlation_id=5, client_id="wc")
                              / kafka.body_class(18, 3, "request")(ClientSoftwareName="wc", ClientSoftwareVersion="1"))
        target.sr1(kafka.request_packet(3, 12, 6, "wc", {"Topics": [{"Name": "adapter"}],
                                                         "AllowAutoTopicCreation": True}))
        produce = kafka.request_packet(0, 9, 7, "wc", {"Acks": -1, "TimeoutMs": 5000, "TopicData": [
            {"Name": "adapter", "PartitionData": [{"Index": 0, "Records": kafka_records.build_batch([b"v"])}]}]})
        answer = target.sr1(produce)
        transcript = target.transcript
    assert versions.correlation_id == 5 and versions.payload.ErrorCode == 0
    assert 0 in {entry.ApiKey for entry in versions.payload.ApiKeys}
    assert type(answer).__name__ == "ProduceResponseFrameV9" and answer.correlation_id == 7
    partition = answer.payload.Responses[0].PartitionResponses[0]
    assert (answer.payload.Responses[0].Name, partition.ErrorCode, partition.BaseOffset) == ("adapter", 0, 0)
    assert exchanged(transcript)[-2:] == [("send", bytes(produce)), ("recv", bytes(answer))]
    assert "Produce v9 response corr=7" in transcript.render()


def test_fluvio_sr1_dissects_the_answer_of_the_request_it_answers(broker):
    with connect(broker, "fluvio") as target:
        versions = target.sr1(fluvio.FluvioRequest(correlation_id=9) / fluvio.ApiVersionsRequestV2(
            client_version="0.18.2", client_os="linux", client_arch="x86_64"))
        produce = fluvio.FluvioRequest(correlation_id=10) / fluvio.ProduceRequestV25(
            transactional_id=None, isolation=0, timeout_ms=1000, smartmodules=[],
            topics=[{"name": "adapter", "partitions": [{"partition_index": 0,
                                                        "records": fluvio_records.build_batch([b"v"])}]}])
        answer = target.sr1(produce)
        transcript = target.transcript
    assert (versions.correlation_id, versions.payload.error_code.code) == (9, 0)
    assert {entry["api_key"] for entry in versions.payload.api_keys} >= {0, 1}
    assert produce.api_key == 0 and produce.api_version == 25  # bound by the body layer
    assert answer.correlation_id == 10
    partition = answer.payload.responses[0]["partitions"][0]
    assert (partition["error_code"].code, partition["base_offset"]) == (0, 0)
    assert exchanged(transcript)[-2:] == [("send", bytes(produce)), ("recv", bytes(answer))]


def test_sr_pipelines_and_pairs_answers_in_order(broker):
    with connect(broker, "rustlog") as target:
        pings = [rustlog.RustLogFrame() / rustlog.Ping() for _ in range(3)]
        answered, unanswered = target.sr(pings + [rustlog.RustLogFrame() / rustlog.ListTopics()])
    assert len(answered) == 4 and len(unanswered) == 0
    assert [type(answer.payload).__name__ for _, answer in answered] == ["Pong"] * 3 + ["ListTopicsResponse"]


def test_no_answer_is_none_and_last_reply_says_why_within_the_deadline(broker):
    with connect(broker, "rustlog", deadline=0.3) as target:
        assert target.sr1(b"\x00\x00\x00\x10{\"type\"") is None  # half a frame: the broker waits for the rest
        assert target.last_reply.outcome is Outcome.SILENT
    with connect(broker, "kafka") as target:
        assert target.sr1(b"\xff\xff\xff\xff") is None  # a negative length: the broker closes
        assert target.last_reply.ended
        assert target.transcript.events[-1].kind in ("closed", "reset")


def test_an_answer_its_layer_cannot_dissect_comes_back_raw():
    import socket
    import threading

    from scapy.packet import Raw

    listener = socket.create_server(("127.0.0.1", 0))

    def answer_short_frame():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"\x00\x00\x00\x02ab")  # a whole frame too short for a Kafka response header
        conn.recv(1)
        conn.close()

    threading.Thread(target=answer_short_frame, daemon=True).start()
    spec = spec_for("kafka")
    with TargetSocket.connect(listener.getsockname()[:2], spec, Transcript("kafka", spec.describe, spec.describe_answer)) as target:
        answer = target.sr1(kafka.request_packet(18, 3, 1, "wc", {}))
        notes = [e.detail for e in target.transcript.events if e.kind == "note"]
    listener.close()
    assert isinstance(answer, Raw) and answer.load == b"\x00\x00\x00\x02ab"
    assert notes and notes[0].startswith("answer not dissected")
