"""Barco binary producer frame-level checks on one reassembled connection (for the capture pipeline).

Only the binary producer (:9254) is a framed TCP stream; the HTTP endpoints are left to HTTP tooling. Per
connection: the first client frame is STARTUP, every client header's CRC is right; every server frame has a
valid response header, answers a stream id the client used, and an ERROR body reads as code + message.
"""

from __future__ import annotations

from wirecheck.protocols.barco import wire
from wirecheck.protocols.capture import Finding

RESPONSE_OPCODES = (wire.READY, wire.ERROR, wire.PRODUCE_RESPONSE)


def sniff(data: bytes) -> bool:
    """A first header of version 1 whose CRC is right and whose opcode is a request's."""
    if len(data) < wire.HEADER_SIZE:
        return False
    head = wire.parse_header(data)
    return head.version == wire.VERSION and head.opcode in wire.REQUEST_OPCODES and head.crc_ok


def check(client_frames: list[bytes], server_frames: list[bytes]) -> list[Finding]:
    findings: list[Finding] = []
    stream_ids = set()
    for i, frame in enumerate(client_frames):
        head = wire.parse_header(frame)
        stream_ids.add(head.stream_id)
        if i == 0 and head.opcode != wire.STARTUP:
            findings.append(Finding("barco.producer.startup-first", "client", i, f"first frame is {head.name}", frame))
        if not head.crc_ok:
            findings.append(Finding("barco.framing.header-crc", "client", i, "head crc does not match", frame))
    for i, frame in enumerate(server_frames):
        head = wire.parse_header(frame)
        if head.version != wire.VERSION or head.flags != 0 or not head.crc_ok or head.opcode not in RESPONSE_OPCODES:
            findings.append(Finding("barco.framing.response-header", "server", i, wire.describe(frame), frame))
        if head.stream_id not in stream_ids:
            findings.append(Finding("barco.framing.stream-id-echo", "server", i,
                                    f"stream id {head.stream_id} answers no request on this connection", frame))
        if head.opcode == wire.ERROR:
            body = frame[wire.HEADER_SIZE:]
            try:
                wire.parse_known_error(body)
            except wire.WireError:
                findings.append(Finding("barco.producer.error-body", "server", i, f"ERROR body {body[:16].hex()}",
                                        frame))
    return findings
