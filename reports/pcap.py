"""A case's transcript as a pcap: synthetic Ethernet/IPv4/TCP around the exact bytes of the conversation.

Wireshark (or tshark) then shows a failing case with its own dissectors. Every connection of the transcript
becomes one TCP stream on 127.0.0.1 between the ports the transcript names, with a three-way handshake, data
segments with consistent seq/ack numbers, and the ending the transcript saw: a FIN from the peer (``closed``),
a RST from the peer (``reset``) or our FIN (``close``). ``silent`` and ``note`` events carry no packet.

Decisions: addresses are always 127.0.0.1 (the suite only talks to loopback; a transcript of a remote target
would otherwise leak its address into a shareable file). A connection whose ports are unknown gets client port
40000+conn and server port 1, so the file stays valid. Timestamps are ``base_time`` + the event's ``t``.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw
from scapy.utils import PcapWriter

LOOPBACK = "127.0.0.1"
CLIENT_MAC, SERVER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
SEGMENT = 16384  # payload bytes per TCP segment: well inside IPv4's 65535 and loopback's MTU
STEP = 1e-6  # seconds between packets that share one event time, so the order survives sorting


def _port(address: str | None) -> int | None:
    if not address or ":" not in address:
        return None
    try:
        port = int(address.rsplit(":", 1)[1])
    except ValueError:
        return None
    return port if 0 < port < 65536 else None


@dataclass
class _Stream:
    """One TCP connection's state: who is who and the next sequence number of each side."""

    client_port: int
    server_port: int
    client_seq: int
    server_seq: int
    open: bool = False
    client_fin: bool = False
    server_fin: bool = False

    def packet(self, from_client: bool, flags: str, payload: bytes = b"") -> Packet:
        """One Ether/IP/TCP frame (scapy types a stacked ``a / b`` as a plain ``Packet``)."""
        if from_client:
            ether = Ether(src=CLIENT_MAC, dst=SERVER_MAC)
            tcp = TCP(sport=self.client_port, dport=self.server_port, flags=flags, seq=self.client_seq,
                      ack=self.server_seq if "A" in flags else 0, window=65535)
        else:
            ether = Ether(src=SERVER_MAC, dst=CLIENT_MAC)
            tcp = TCP(sport=self.server_port, dport=self.client_port, flags=flags, seq=self.server_seq,
                      ack=self.client_seq if "A" in flags else 0, window=65535)
        packet = ether / IP(src=LOOPBACK, dst=LOOPBACK) / tcp
        if payload:
            packet = packet / Raw(payload)
        advance = len(payload) + (1 if ("S" in flags or "F" in flags) else 0)
        if from_client:
            self.client_seq = (self.client_seq + advance) % 2**32
        else:
            self.server_seq = (self.server_seq + advance) % 2**32
        return packet


def transcript_packets(transcript: dict, base_time: float) -> list[Packet]:
    """The packets of a ``wirecheck.transcript/1`` dict, each with its ``time`` set."""
    streams: dict[int, _Stream] = {}
    packets: list[Packet] = []
    clock = base_time

    def emit(packet: Packet, when: float) -> None:
        nonlocal clock
        clock = max(clock + STEP, when)  # strictly increasing, whatever the event times say
        packet.time = clock
        packets.append(packet)

    def stream_of(event: dict) -> _Stream:
        conn = int(event.get("conn", 1))
        if conn not in streams:
            streams[conn] = _Stream(client_port=_port(event.get("local")) or 40000 + conn % 20000,
                                    server_port=_port(event.get("peer")) or 1,
                                    client_seq=1000 * conn, server_seq=500_000 * conn)
        return streams[conn]

    def handshake(stream: _Stream, when: float) -> None:
        emit(stream.packet(True, "S"), when)
        emit(stream.packet(False, "SA"), when)
        emit(stream.packet(True, "A"), when)
        stream.open = True

    for event in transcript.get("events", []):
        kind = event.get("kind")
        when = base_time + float(event.get("t", 0.0) or 0.0)
        if kind not in {"connect", "send", "recv", "partial", "closed", "reset", "close", "shutdown"}:
            continue  # silent, note: nothing on the wire
        stream = stream_of(event)
        if kind == "connect":
            if not stream.open:
                handshake(stream, when)
            continue
        if not stream.open:  # a transcript trimmed to its last 400 events may start mid-conversation
            handshake(stream, when)
        if kind in {"send", "recv", "partial"}:
            try:
                data = bytes.fromhex(event.get("hex", ""))
            except ValueError:
                continue
            from_client = kind == "send"
            for start in range(0, len(data), SEGMENT):
                emit(stream.packet(from_client, "PA", data[start:start + SEGMENT]), when)
            if data:
                emit(stream.packet(not from_client, "A"), when)
        elif kind == "closed" and not stream.server_fin:
            emit(stream.packet(False, "FA"), when)
            emit(stream.packet(True, "A"), when)
            stream.server_fin = True
        elif kind in ("close", "shutdown") and not stream.client_fin:
            emit(stream.packet(True, "FA"), when)
            emit(stream.packet(False, "A"), when)
            stream.client_fin = True
        elif kind == "reset":
            emit(stream.packet(False, "R"), when)
            stream.open = False
            del streams[int(event.get("conn", 1))]
    return packets


def write_pcap(transcript_dict: dict, path, base_time: float | None = None) -> int:
    """Write the transcript as a pcap (Ethernet link type) at ``path``; returns the packet count."""
    packets = transcript_packets(transcript_dict, time.time() if base_time is None else base_time)
    writer = PcapWriter(str(path), linktype=1, sync=False)  # 1 = DLT_EN10MB
    try:
        if packets:
            writer.write(packets)
        else:
            writer.write_header(None)  # an empty but valid capture
    finally:
        writer.close()
    return len(packets)


def pcap_records(linktype: int, records) -> bytes:
    """A classic pcap (microsecond timestamps) of captured packets as they were: ``records`` are (time, raw bytes,
    length on the wire), e.g. the packets of a real capture kept after filtering."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype))
    for when, raw, wirelen in records:
        seconds = int(when)
        micros = min(999_999, round((when - seconds) * 1e6))
        out += struct.pack("<IIII", seconds, micros, len(raw), max(wirelen, len(raw))) + raw
    return bytes(out)
