"""Transcripts as pcaps: valid TCP streams that Wireshark's own Kafka dissector reads without complaint."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from scapy.layers.inet import TCP
from scapy.utils import rdpcap

from wirecheck.reports.pcap import write_pcap
from tests.pipeline.kafka_frames import conversation, transcript

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (apt-get install tshark)")


def _tshark(path, *args) -> str:
    result = subprocess.run([TSHARK, "-n", "-r", str(path), "-d", "tcp.port==9092,kafka", *args],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_tcp_stream_has_handshake_consistent_seq_ack_and_fin(tmp_path):
    frames = conversation()
    path = tmp_path / "case.pcap"
    write_pcap(transcript(frames), path, base_time=1_700_000_000.0)
    packets = rdpcap(str(path))
    flags = [str(p[TCP].flags) for p in packets]
    assert flags[:3] == ["S", "SA", "A"]
    assert flags[-2:] == ["FA", "A"]
    client = [p for p in packets if p[TCP].dport == 9092]
    assert {p[TCP].sport for p in client} == {53211}
    # every data segment starts where the previous one from the same side ended
    for side in (9092, 53211):
        sent = [p for p in packets if p[TCP].sport == side]
        for before, after in zip(sent, sent[1:]):
            advance = len(bytes(before[TCP].payload)) + (1 if before[TCP].flags & 0x03 else 0)
            assert after[TCP].seq == (before[TCP].seq + advance) % 2**32
    payload = b"".join(bytes(p[TCP].payload) for p in client)
    assert payload == b"".join(frame for kind, frame in frames if kind == "send")
    times = [float(p.time) for p in packets]
    assert times == sorted(times) and times[0] >= 1_700_000_000.0


def test_reset_and_trimmed_transcripts_still_make_valid_streams(tmp_path):
    events = [{"t": 0.1, "conn": 2, "kind": "send", "hex": "00000001ff", "local": "127.0.0.1:50000",
               "peer": "127.0.0.1:7070"},  # trimmed: no connect event
              {"t": 0.2, "conn": 2, "kind": "silent", "detail": "no frame within 2.0s"},
              {"t": 0.3, "conn": 2, "kind": "reset"},
              {"t": 0.4, "conn": 3, "kind": "send", "hex": "not hex"}]
    path = tmp_path / "reset.pcap"
    assert write_pcap({"events": events}, path) == 3 + 2 + 1 + 3
    flags = [str(p[TCP].flags) for p in rdpcap(str(path))]
    assert flags[:6] == ["S", "SA", "A", "PA", "A", "R"]


@needs_tshark
def test_kafka_conversation_decodes_with_wiresharks_dissector(tmp_path):
    path = tmp_path / "kafka.pcap"
    write_pcap(transcript(conversation()), path)
    assert _tshark(path, "-Y", "_ws.malformed || _ws.expert.severity >= error") == ""
    decoded = _tshark(path, "-Y", "kafka", "-T", "fields", "-e", "kafka.api_key", "-e", "kafka.correlation_id")
    pairs = [tuple(line.split("\t")) for line in decoded.splitlines()]
    assert pairs == [("18", "1"), ("18", "1"), ("3", "2"), ("3", "2"), ("0", "3"), ("0", "3"), ("0", "4"), ("0", "4")]


@needs_tshark
def test_the_dissector_check_can_fail(tmp_path):
    """A truncated Produce body inside a correct length prefix must be flagged by the same check."""
    frames = conversation()
    kind, produce = frames[4]
    body = produce[4:30]
    frames[4] = (kind, len(body).to_bytes(4, "big") + body)
    path = tmp_path / "broken.pcap"
    write_pcap(transcript(frames), path)
    assert _tshark(path, "-Y", "_ws.malformed || _ws.expert.severity >= error") != ""
