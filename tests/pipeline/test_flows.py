"""TCP reassembly from captures: the struct fast path agrees with scapy's dissection; pcapng; lost segments."""

from __future__ import annotations

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import RawPcapReader, rdpcap, wrpcap, wrpcapng

from wirecheck.reports.pcap import write_pcap
from wirecheck.reports.pipeline.captures.flows import _dissected, _fast, read_capture
from tests.pipeline.kafka_frames import conversation, transcript


def test_fast_path_matches_scapy_dissection(tmp_path):
    path = tmp_path / "k.pcap"
    write_pcap(transcript(conversation()), path)
    reader = RawPcapReader(str(path))
    packets = [raw for raw, _ in reader]
    reader.close()
    assert packets and all(_fast(1, raw) == _dissected(1, raw) for raw in packets)


def test_pcapng_and_pcap_give_the_same_streams(tmp_path):
    pcap, pcapng = tmp_path / "k.pcap", tmp_path / "k.pcapng"
    write_pcap(transcript(conversation()), pcap)
    wrpcapng(str(pcapng), rdpcap(str(pcap)))
    streams = []
    for path in (pcap, pcapng):
        capture = read_capture(str(path))
        (flow,) = capture.flows
        streams.append((flow.name, flow.to_server.assemble(), flow.to_client.assemble()))
    assert streams[0] == streams[1]
    assert streams[0][1][0] == b"".join(frame for kind, frame in conversation() if kind == "send")


def test_out_of_order_retransmitted_and_lost_segments(tmp_path):
    def seg(seq, data, flags="PA"):
        return Ether() / IP(src="127.0.0.1", dst="127.0.0.1") / TCP(sport=50000, dport=7070, seq=seq,
                                                                     flags=flags) / Raw(data)

    packets = [Ether() / IP(src="127.0.0.1", dst="127.0.0.1") / TCP(sport=50000, dport=7070, seq=99, flags="S"),
               seg(105, b"world"), seg(100, b"hello"), seg(100, b"hello"),  # out of order, then a retransmission
               seg(200, b"after a gap")]
    path = tmp_path / "gap.pcap"
    wrpcap(str(path), packets)
    (flow,) = read_capture(str(path)).flows
    data, problems = flow.to_server.assemble()
    assert data == b"helloworld"
    assert problems and "gap of 90 bytes" in problems[0]
