"""Read a pcap/pcapng file with scapy and reassemble its TCP connections into two byte streams each.

Never raises on bad input: a corrupt or truncated file yields the flows read so far plus a problem text;
gaps (lost segments), retransmissions, overlaps and connections seen without their handshake are handled
and described, so the checks that follow know how much of each stream they can trust.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import scapy.layers.inet  # noqa: F401  (registers IPv4/TCP dissection)
import scapy.layers.inet6  # noqa: F401  (registers IPv6)
import scapy.layers.l2  # noqa: F401  (registers Ethernet and Linux cooked capture link types)
from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.utils import PcapReader

# scapy logs a warning per truncated packet; we count them and report once instead.
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

MAX_PACKETS = 5_000_000  # a bound on one file, so a hostile capture cannot run forever
MAX_STREAM = 256 * 1024 * 1024  # bytes kept per direction; the rest is reported, not buffered


@dataclass
class Direction:
    """One side's byte stream, rebuilt from its segments."""

    isn: int | None = None  # the SYN's sequence number, when the handshake was captured
    segments: dict[int, bytes] = field(default_factory=dict)  # absolute seq -> payload (first copy wins)
    fin: bool = False
    rst: bool = False
    packets: int = 0

    def add(self, seq: int, payload: bytes) -> None:
        if payload and seq not in self.segments:
            self.segments[seq] = payload

    def assemble(self) -> tuple[bytes, list[str]]:
        """The contiguous stream from its start, and what was wrong (a gap stops the stream)."""
        if not self.segments:
            return b"", []
        problems: list[str] = []
        start = (self.isn + 1) % 2**32 if self.isn is not None else None
        # Sequence numbers wrap at 2**32: order segments by their distance from the first one.
        if start is None:  # no SYN: the earliest segment, by signed distance from the first one captured
            reference = next(iter(self.segments))
            start = min(self.segments, key=lambda s: ((s - reference + 2**31) % 2**32) - 2**31)
        first = start
        ordered = sorted(self.segments.items(), key=lambda item: (item[0] - first) % 2**32)
        out = bytearray()
        position = 0  # bytes of stream assembled, relative to ``first``
        for seq, payload in ordered:
            offset = (seq - first) % 2**32
            if offset > position:
                problems.append(f"gap of {offset - position} bytes at stream offset {position}: later bytes dropped")
                break
            overlap = position - offset
            if overlap < len(payload):  # a retransmission may repeat bytes we already have
                out += payload[overlap:]
                position = len(out)
            if len(out) > MAX_STREAM:
                problems.append(f"stream longer than {MAX_STREAM} bytes: truncated for analysis")
                del out[MAX_STREAM:]
                break
        return bytes(out), problems


@dataclass
class Flow:
    client: tuple[str, int]
    server: tuple[str, int]
    to_server: Direction = field(default_factory=Direction)
    to_client: Direction = field(default_factory=Direction)
    first_time: float = 0.0
    handshake: bool = False  # client SYN seen

    @property
    def name(self) -> str:
        return f"{self.client[0]}:{self.client[1]} > {self.server[0]}:{self.server[1]}"


@dataclass
class Capture:
    flows: list[Flow]
    packets: int
    problems: list[str]


def _endpoints(packet):
    ip = packet.getlayer(IP) or packet.getlayer(IPv6)
    return ip.src, ip.dst


def read_capture(path: str, server_ports: set[int] = frozenset()) -> Capture:
    """Every TCP connection in the file. Client/server: who sent the SYN; else a known server port; else the
    lower port (servers usually listen on the lower, fixed port)."""
    flows: dict[tuple, Flow] = {}
    problems: list[str] = []
    count = truncated = 0
    try:
        reader = PcapReader(path)
    except Exception as exc:  # not a capture at all, or an unreadable header
        return Capture([], 0, [f"unreadable capture: {type(exc).__name__}: {exc}"])
    try:
        while count < MAX_PACKETS:
            try:
                packet = reader.read_packet()
            except EOFError:
                break
            except Exception as exc:  # truncated record, bad block: keep what we have
                problems.append(f"capture corrupt or truncated after {count} packets: {type(exc).__name__}: {exc}")
                break
            if packet is None:
                break
            count += 1
            if packet.wirelen is not None and len(packet.original) < packet.wirelen:
                truncated += 1  # snaplen, or a file cut mid-record: this packet's bytes are incomplete
            if not packet.haslayer(TCP) or not (packet.haslayer(IP) or packet.haslayer(IPv6)):
                continue
            tcp = packet[TCP]
            src, dst = _endpoints(packet)
            a, b = (src, tcp.sport), (dst, tcp.dport)
            key = tuple(sorted([a, b]))
            flow = flows.get(key)
            flags = int(tcp.flags)
            syn, ack = bool(flags & 0x02), bool(flags & 0x10)
            if flow is None:
                if syn and not ack:
                    client, server = a, b
                elif syn and ack:
                    client, server = b, a
                elif b[1] in server_ports and a[1] not in server_ports:
                    client, server = a, b
                elif a[1] in server_ports and b[1] not in server_ports:
                    client, server = b, a
                else:
                    client, server = (a, b) if a[1] > b[1] else (b, a)
                flow = flows[key] = Flow(client, server, first_time=float(packet.time))
            direction = flow.to_server if a == flow.client else flow.to_client
            direction.packets += 1
            if syn:
                direction.isn = tcp.seq
                flow.handshake = flow.handshake or (a == flow.client and not ack)
            payload = bytes(tcp.payload)
            # Ethernet pads short frames: trust the IP length, not the captured bytes.
            ip = packet.getlayer(IP)
            if ip is not None and ip.len is not None:
                payload = payload[: max(0, ip.len - ip.ihl * 4 - tcp.dataofs * 4)]
            direction.add(tcp.seq + (1 if syn else 0), payload)
            direction.fin |= bool(flags & 0x01)
            direction.rst |= bool(flags & 0x04)
        else:
            problems.append(f"stopped after {MAX_PACKETS} packets")
    finally:
        reader.close()
    if truncated:
        problems.append(f"{truncated} packet(s) captured shorter than on the wire (snaplen or a cut file)")
    return Capture(sorted(flows.values(), key=lambda f: f.first_time), count, problems)
