"""Fluvio SPU frame-level checks on one reassembled connection (for the capture pipeline).

Per connection: every request decodes at the api key and version its header names; every response carries
the correlation id of a request sent before it and decodes at that request's version. StreamFetch answers many
times under one correlation id (notes §5), so responses are paired by correlation id, not by position.
"""

from __future__ import annotations

from wirecheck.protocols.capture import Finding
from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import messages


def sniff(data: bytes) -> bool:
    """A whole first request that decodes as an SPU request (i32 size, u16 api key the SPU serves, i16 version
    0..COMMON_VERSION, i32 correlation id, client id, body).

    ApiVersions v0 with an empty body is byte-for-byte Kafka's ApiVersions v0, so it decides nothing here (the
    Fluvio client sends v1 and later, with its version, OS and architecture)."""
    if len(data) < 14:
        return False
    size = int.from_bytes(data[:4], "big", signed=True)
    if not 10 <= size <= 67_108_864 or len(data) < 4 + size:
        return False
    try:
        decoded = messages.decode_request(data[: 4 + size])
    except (DecodeError, ValueError, IndexError):
        return False
    header = decoded["header"]
    if not 0 <= header["api_version"] <= messages.COMMON_VERSION:
        return False
    return not (header["api_key"] == messages.API_VERSIONS and not decoded["body"])


def check(client_frames: list[bytes], server_frames: list[bytes]) -> list[Finding]:
    findings: list[Finding] = []
    sent: dict[int, tuple[int, int]] = {}  # correlation id -> (api key, version)
    for i, frame in enumerate(client_frames):
        try:
            header = messages.decode_request(frame)["header"]
        except (DecodeError, ValueError, IndexError) as exc:
            findings.append(Finding("fluvio.capture.request-decodes", "client", i, str(exc)[:200], frame))
            continue
        sent[header["correlation_id"]] = (header["api_key"], header["api_version"])
    for i, frame in enumerate(server_frames):
        correlation_id = int.from_bytes(frame[4:8], "big", signed=True) if len(frame) >= 8 else None
        request = sent.get(correlation_id)
        if request is None:
            findings.append(Finding("fluvio.framing.correlation-id", "server", i,
                                    f"correlation id {correlation_id} answers no request on this connection", frame))
            continue
        api_key, version = request
        try:
            messages.decode_response(api_key, version, frame)
        except (DecodeError, ValueError, IndexError) as exc:
            findings.append(Finding("fluvio.framing.response-frame", "server", i,
                                    f"not a {messages.api_name(api_key)} v{version} response: {str(exc)[:160]}",
                                    frame))
    return findings
