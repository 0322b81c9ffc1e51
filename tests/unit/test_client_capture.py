"""The client capture (targets/client_capture.py): which connections of a capture are the client's (by the
protocol's client id hook, else by source port), the filtered pcap, the decoded client transcript; tcpdump missing,
refusing, or capped. The pcaps are written here (reports.pcap from a transcript, or tcpdump on loopback)."""

from __future__ import annotations

import os
import shutil
import socket
import threading

import pytest

from wirecheck.protocols.kafka import SPEC as KAFKA
from wirecheck.protocols.kafka import capture as kafka_capture
from wirecheck.protocols.kafka import messages
from wirecheck.reports.pcap import pcap_records, write_pcap
from wirecheck.reports.pipeline.captures.flows import read_capture, tcp_records
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets import client_capture
from wirecheck.targets.client_capture import Tcpdump, client_flows, client_transcript, filtered_pcap

API_VERSIONS, METADATA, CONTROLLED_SHUTDOWN = 18, 3, 7
SERVER = 9092
OURS, SUITE, STRANGER = "wc-abc123-gw0-7-client", "wirecheck/kafka.clients.kcat.produce-consume", "wc-other-gw1-3-client"


def _conversation(conn: int, port: int, client_id: str | None, server: int = SERVER) -> list[dict]:
    request = messages.encode_request(API_VERSIONS, 3, conn, client_id,
                                      {"ClientSoftwareName": "test", "ClientSoftwareVersion": "1"})
    answer = messages.encode_response(API_VERSIONS, 3, conn, {"ErrorCode": 0, "ApiKeys": [], "ThrottleTimeMs": 0})
    where = {"conn": conn, "local": f"127.0.0.1:{port}", "peer": f"127.0.0.1:{server}"}
    return [{**where, "kind": "connect", "t": conn}, {**where, "kind": "send", "hex": request.hex(), "t": conn + .1},
            {**where, "kind": "recv", "hex": answer.hex(), "t": conn + .2}, {**where, "kind": "close", "t": conn + .3}]


def _pcap(tmp_path, *conversations) -> bytes:
    path = tmp_path / "capture.pcap"
    write_pcap({"events": [event for conversation in conversations for event in conversation]}, path, base_time=1e9)
    return path.read_bytes()


def _client_ports(pcap: bytes) -> set[int]:
    return {flow.client[1] for flow in read_capture(pcap).flows}


def test_the_kafka_hook_reads_the_client_id_of_every_header_version():
    assert kafka_capture.client_id(messages.encode_request(API_VERSIONS, 3, 1, OURS, {})) == OURS  # header v2
    assert kafka_capture.client_id(messages.encode_request(METADATA, 1, 1, OURS, {"Topics": None})) == OURS  # v1
    assert kafka_capture.client_id(messages.encode_request(METADATA, 1, 1, None, {"Topics": None})) is None
    # header v0 (ControlledShutdown v0 only) has no client id: its body is not read as one
    body = CONTROLLED_SHUTDOWN.to_bytes(2, "big") + bytes(2) + (1).to_bytes(4, "big") + b"\x00\x02ab"  # BrokerId
    shutdown = len(body).to_bytes(4, "big") + body
    assert kafka_capture.client_id(shutdown) is None
    assert kafka_capture.client_id(messages.encode_request(API_VERSIONS, 3, 1, OURS, {})[:20]) is None  # cut short


def test_only_the_connections_carrying_the_client_id_are_kept(tmp_path):
    capture = _pcap(tmp_path, _conversation(1, 50001, OURS), _conversation(2, 50002, SUITE),
                    _conversation(3, 50003, STRANGER), _conversation(4, 50004, OURS, server=9999),
                    _conversation(5, 50005, OURS))
    endpoints = {SERVER: KAFKA.primary}
    kept = client_flows(capture, endpoints, OURS, kafka_capture.client_id, own_ports={50005})
    assert kept.how == "client id" and kept.seen == 3  # 9999 is no port of the target; 50005 is the suite's
    assert [flow.client[1] for flow in kept.flows] == [50001]
    assert [other.split(": ", 1)[1] for other in kept.others] == [f"names client id {SUITE}",
                                                                  f"names client id {STRANGER}"]
    pcap, packets = filtered_pcap(capture, kept.flows)
    assert _client_ports(pcap) == {50001} and packets == 9  # handshake, request + ack, answer + ack, FIN + ack
    assert client_flows(capture, endpoints, "wc-nobody", kafka_capture.client_id, set()).flows == []


def test_a_driver_may_name_its_clients_roles_after_the_client_id(tmp_path):
    capture = _pcap(tmp_path, _conversation(1, 50001, OURS + "/producer"), _conversation(2, 50002, OURS + "x"),
                    _conversation(3, 50003, OURS[:-1]))
    kept = client_flows(capture, {SERVER: KAFKA.primary}, OURS, kafka_capture.client_id, set())
    assert [flow.client[1] for flow in kept.flows] == [50001]


def test_the_client_transcript_decodes_requests_and_answers_in_time_order(tmp_path):
    capture = _pcap(tmp_path, _conversation(1, 50001, OURS), _conversation(2, 50002, OURS))
    endpoints = {SERVER: KAFKA.primary}
    kept = client_flows(capture, endpoints, OURS, kafka_capture.client_id, set())
    document = client_transcript("kafka", "kafka.clients.x.y", kept.flows, endpoints, {"client_id": OURS})
    kinds = [(event["conn"], event["kind"]) for event in document["events"]]
    assert kinds == [(1, "connect"), (1, "send"), (1, "recv"), (1, "close"),
                     (2, "connect"), (2, "send"), (2, "recv"), (2, "close")]
    sent, answered = document["events"][1], document["events"][2]
    assert sent["decoded"].startswith("ApiVersions v3 request") and OURS in sent["decoded"]
    assert answered["decoded"].startswith("ApiVersions v3 response")
    assert document["events"][0]["local"] == "127.0.0.1:50001" and document["events"][0]["endpoint"] == KAFKA.primary.name
    assert document["events"][1]["t"] == pytest.approx(0.1, abs=1e-3)


def test_answers_are_decoded_as_their_own_connections_requests_when_connections_reuse_correlation_ids(tmp_path):
    def exchange(conn, port, request, answer, sent_at, answered_at):
        where = {"conn": conn, "local": f"127.0.0.1:{port}", "peer": f"127.0.0.1:{SERVER}"}
        return [{**where, "kind": "connect", "t": sent_at - .01}, {**where, "kind": "send", "hex": request.hex(),
                "t": sent_at}, {**where, "kind": "recv", "hex": answer.hex(), "t": answered_at}]

    versions = exchange(1, 50001, messages.encode_request(API_VERSIONS, 3, 1, OURS, {}),
                        messages.encode_response(API_VERSIONS, 3, 1, {"ErrorCode": 0, "ApiKeys": []}), 1.0, 1.2)
    metadata = exchange(2, 50002, messages.encode_request(METADATA, 1, 1, OURS, {"Topics": None}),
                        messages.encode_response(METADATA, 1, 1, {"Brokers": [], "ControllerId": 0, "Topics": []}),
                        1.1, 1.3)  # the same correlation id, asked between the other's request and its answer
    capture = _pcap(tmp_path, versions, metadata)
    endpoints = {SERVER: KAFKA.primary}
    kept = client_flows(capture, endpoints, OURS, kafka_capture.client_id, set())
    events = client_transcript("kafka", "kafka.clients.x.y", kept.flows, endpoints, {})["events"]
    answers = [(event["conn"], event["decoded"].split(" corr")[0]) for event in events if event["kind"] == "recv"]
    assert answers == [(1, "ApiVersions v3 response"), (2, "Metadata v1 response")]


def test_without_a_client_id_connections_opened_in_the_capture_from_ports_not_the_suites_are_kept(tmp_path):
    capture = _pcap(tmp_path, _conversation(1, 50001, None), _conversation(2, 50002, None),
                    _conversation(3, 50003, None))
    # connection 3 began before the capture: its SYN is not in the file
    records = [(when, raw, wirelen) for linktype, raw, wirelen, when, segment in tcp_records(capture)
               if not (segment[2] == 50003 and segment[5] & 0x02) and not (segment[3] == 50003 and segment[5] & 0x02)]
    started_before = pcap_records(1, records)
    kept = client_flows(started_before, {SERVER: KAFKA.primary}, None, None, own_ports={50002})
    assert kept.how == "source port" and [flow.client[1] for flow in kept.flows] == [50001]


def test_a_missing_tcpdump_is_said_and_nothing_is_captured():
    assert "not installed" in Tcpdump({SERVER}, command="wirecheck-no-such-tcpdump").start()


class _Target:
    """What a scenario's capture reads of the case's target."""

    def __init__(self):
        self.case_id, self.spec, self.address = "kafka.clients.kcat.produce-consume", KAFKA, ("127.0.0.1", SERVER)
        self.info = type("Info", (), {"endpoints": {}})()
        self.transcript = Transcript("kafka")
        self.evidence = []

    def unique(self, stem):
        return f"wc-abc123-main-1-{stem}"

    def keep_evidence(self, evidence):
        self.evidence.append(evidence)


def test_a_scenario_without_tcpdump_runs_and_keeps_the_clients_log_and_why(monkeypatch):
    monkeypatch.setattr(client_capture, "TCPDUMP", "wirecheck-no-such-tcpdump")
    target = _Target()
    scenario = client_capture.ScenarioCapture.for_case(target)
    assert scenario.client_id == "wc-abc123-main-1-client"  # Kafka's requests name a client id
    scenario.before_run()
    scenario.logs.append(client_capture.ClientLog(("kcat", "-V"), 0, 0.1, "kcat says hello\n"))
    scenario.finish()
    [evidence] = target.evidence
    assert evidence.summary["captured"] is False and "not installed" in evidence.summary["not_captured"]
    assert list(evidence.files) == ["log"] and b"kcat says hello" in evidence.files["log"][1]
    assert "not captured: wirecheck-no-such-tcpdump is not installed" in scenario.where()
    assert evidence.files["log"][0] in scenario.where()


def test_a_tcpdump_that_may_not_capture_is_said_in_its_own_words(tmp_path):
    fake = tmp_path / "tcpdump"
    fake.write_text("#!/bin/sh\necho 'tcpdump: lo: You do not have permission to perform this capture' >&2\nexit 1\n")
    fake.chmod(0o755)
    why = Tcpdump({SERVER}, command=str(fake)).start()
    assert "did not capture on lo" in why and "permission" in why


def test_a_tcpdump_that_ends_during_the_capture_is_said(tmp_path):
    fake = tmp_path / "tcpdump"
    fake.write_text("#!/bin/sh\necho 'tcpdump: listening on lo, link-type EN10MB' >&2\n"
                    "echo 'tcpdump: pcap_loop: The interface disappeared' >&2\nexit 1\n")
    fake.chmod(0o755)
    tcpdump = Tcpdump({SERVER}, command=str(fake))
    assert tcpdump.start() is None
    assert any("ended during the capture" in note and "disappeared" in note for note in tcpdump.stop())


capturing = pytest.mark.skipif(shutil.which("tcpdump") is None or os.geteuid() != 0,
                               reason="tcpdump on lo needs tcpdump and root (CI installs it and runs as root)")


def _send_through_loopback(port_of, payload: bytes, tcpdump_for) -> tuple:
    """``payload`` over one loopback connection to a listener that reads it to the end, captured by the Tcpdump
    ``tcpdump_for(port)`` makes: (the tcpdump, its notes, the bytes received)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        tcpdump = tcpdump_for(listener.getsockname()[1])
        assert tcpdump.start() is None
        received = bytearray()

        def serve():
            conn, _ = listener.accept()
            with conn:
                while chunk := conn.recv(65536):
                    received.extend(chunk)

        server = threading.Thread(target=serve)
        server.start()
        with socket.create_connection(listener.getsockname()) as client:
            port_of.append(client.getsockname()[1])
            client.sendall(payload)
        server.join()
        return tcpdump, tcpdump.stop(), bytes(received)


@capturing
def test_tcpdump_keeps_every_byte_of_a_loopback_connection_up_to_its_end():
    payload, ports = bytes(range(256)) * 400, []  # 100 KiB: several segments
    tcpdump, notes, received = _send_through_loopback(ports, payload, lambda port: Tcpdump({port}))
    assert not [note for note in notes if "missing" in note or "limit" in note], notes
    kept = client_flows(bytes(tcpdump.data), {tcpdump.ports[0]: None}, None, None, set())
    assert [flow.client[1] for flow in kept.flows] == ports
    assert kept.flows[0].to_server.assemble()[0] == payload == received


@capturing
def test_a_runaway_capture_stops_at_its_byte_limit_and_says_so():
    tcpdump, notes, _ = _send_through_loopback([], b"x" * 200_000, lambda port: Tcpdump({port}, limit=4096))
    assert tcpdump.capped and len(tcpdump.data) == 4096 and any("limit of 4096 bytes" in note for note in notes)
