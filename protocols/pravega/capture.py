"""Pravega frame-level checks on one reassembled connection (for the capture pipeline).

Per connection: every client frame decodes as a known command; every server frame decodes as a reply, and a
reply that carries a requestId answers a request sent earlier on the connection with that requestId (Hello's 0
and KeepAlive's -1 excepted, notes §7.1). Replies may come in any order (the server is asynchronous).
"""

from __future__ import annotations

import struct

from wirecheck.protocols.capture import Finding
from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.pravega import commands

_HELLO = commands.CODE["Hello"]


def sniff(data: bytes) -> bool:
    """A first client frame that is a whole Hello (every client starts with one, notes §6), or a whole
    request that decodes."""
    if len(data) < 8:
        return False
    code, length = struct.unpack_from(">ii", data)
    if code not in commands.REQUESTS or not 0 <= length <= commands.MAX_PAYLOAD or len(data) < 8 + length:
        return False
    if code == _HELLO:
        return length >= 8
    try:
        commands.decode(data[: 8 + length], commands.MAX_PAYLOAD)
    except DecodeError:
        return False
    return True


def check(client_frames: list[bytes], server_frames: list[bytes]) -> list[Finding]:
    findings: list[Finding] = []
    sent: set[int] = set()
    for i, frame in enumerate(client_frames):
        try:
            decoded = commands.decode(frame, commands.MAX_PAYLOAD)
        except DecodeError as exc:
            findings.append(Finding("pravega.capture.request-decodes", "client", i, str(exc)[:200], frame))
            continue
        rid = decoded.get("request_id")
        if rid is not None:
            sent.add(rid)
    for i, frame in enumerate(server_frames):
        try:
            decoded = commands.decode(frame)
        except DecodeError as exc:
            findings.append(Finding("pravega.framing.reply", "server", i, str(exc)[:200], frame))
            continue
        if decoded.code not in commands.REPLIES:
            findings.append(Finding("pravega.framing.reply", "server", i,
                                    f"{decoded.name} is not a segment-store reply", frame))
            continue
        rid = decoded.get("request_id")
        if rid is not None and rid not in (-1, 0) and rid not in sent:
            findings.append(Finding("pravega.request-id.echo", "server", i,
                                    f"{decoded.name} carries requestId {rid}, which no request on this "
                                    "connection sent", frame))
    return findings
