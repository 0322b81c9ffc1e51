"""RustLog frame-level checks on one reassembled connection (JSON frames, answered strictly in order).

RustLog has no correlation id: the n-th response answers the n-th request (seed §Flow Control: "synchronous
request processing, one at a time"), so pairing is by position.
"""

from __future__ import annotations

import json

from wirecheck.protocols.capture import Finding

REQUESTS = {"Produce", "Fetch", "OffsetCommit", "OffsetFetch", "CreateTopic", "ListTopics", "DescribeTopic",
            "DescribePartition", "MetricsFetch", "Ping"}
#: request type -> the success response type (seed §Message Type Enumeration); Error answers anything.
ANSWER = {name: f"{name}Response" for name in REQUESTS} | {"Ping": "Pong"}


def _payload(frame: bytes):
    """The JSON object of a frame, or the reason it is not one."""
    try:
        text = frame[4:].decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"payload is not UTF-8 ({exc.reason} at byte {exc.start})"
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"payload is not JSON ({exc})"
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return None, "payload is not a JSON object with a string \"type\""
    return value, None


def sniff(data: bytes) -> bool:
    """u32 length, then a JSON object: the payload's first byte is "{"."""
    return len(data) >= 5 and data[4:5] == b"{" and 1 <= int.from_bytes(data[:4], "big") <= 10_485_760


def screen(frames: list[bytes], side: str) -> tuple[list[bytes], list[Finding]]:
    """MIN_FRAME_SIZE is 1: an empty frame is a framing error (seed §Frame Structure)."""
    findings = [Finding("rustlog.framing.zero-length", side, i, "zero-length frame", f)
                for i, f in enumerate(frames) if len(f) == 4]
    return [f for f in frames if len(f) > 4], findings


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check(client_frames: list[bytes], server_frames: list[bytes]) -> list[Finding]:
    findings: list[Finding] = []
    requests = []
    for i, frame in enumerate(client_frames):
        value, problem = _payload(frame)
        if problem is None and value["type"] not in REQUESTS:
            problem = f"unknown request type {value['type']!r}"
        if problem:
            findings.append(Finding("rustlog.capture.request-frame", "client", i, problem, frame))
        requests.append(value)
    next_offset: dict[tuple, int] = {}  # (topic, partition) -> lowest offset the next produce may get
    for i, frame in enumerate(server_frames):
        value, problem = _payload(frame)
        if problem:
            findings.append(Finding("rustlog.framing.response-frame", "server", i, problem, frame))
            continue
        if i >= len(requests):
            findings.append(Finding("rustlog.framing.pipelining", "server", i,
                                    f"response {value['type']!r} answers no request ({len(requests)} sent)", frame))
            continue
        request = requests[i]
        kind = value["type"]
        if kind == "Error":
            if not _is_int(value.get("code")) or not isinstance(value.get("message"), str):
                findings.append(Finding("rustlog.errors.shape", "server", i,
                                        "Error without an integer code and a string message", frame))
            continue
        if request is None:
            continue  # the request was malformed; only an Error is checked (above)
        expected = ANSWER[request["type"]]
        if kind != expected:
            findings.append(Finding("rustlog.framing.pipelining", "server", i,
                                    f"{request['type']} request #{i} answered by {kind!r}, expected {expected!r} "
                                    f"or 'Error'", frame))
            continue
        if kind == "ProduceResponse":
            findings += _check_produce(request, value, i, frame, next_offset)
        elif kind == "FetchResponse":
            findings += _check_fetch(request, value, i, frame)
    return findings


def _check_produce(request: dict, response: dict, i: int, frame: bytes, next_offset: dict) -> list[Finding]:
    base, count = response.get("base_offset"), response.get("record_count")
    if not (_is_int(base) and _is_int(count)):
        return [Finding("rustlog.produce.offsets", "server", i, "base_offset/record_count are not integers", frame)]
    key = (request.get("topic"), request.get("partition"))
    out = []
    records = request.get("records")
    if isinstance(records, list) and count != len(records):
        out.append(Finding("rustlog.produce.offsets", "server", i,
                           f"record_count {count} for a batch of {len(records)} records", frame))
    if count > 0:  # an empty batch reports the high watermark and moves nothing
        if key in next_offset and base < next_offset[key]:
            out.append(Finding("rustlog.produce.offsets", "server", i,
                               f"base_offset {base} of {key[0]}/{key[1]} is below {next_offset[key]}, the end of "
                               f"the previous batch on this connection: offsets went backwards", frame))
        next_offset[key] = max(next_offset.get(key, 0), base + count)
    return out


def _check_fetch(request: dict, response: dict, i: int, frame: bytes) -> list[Finding]:
    records = response.get("records")
    if not isinstance(records, list):
        return [Finding("rustlog.fetch.records", "server", i, "FetchResponse.records is not a list", frame)]
    offsets = [r.get("offset") if isinstance(r, dict) else None for r in records]
    if not all(_is_int(o) for o in offsets):
        return [Finding("rustlog.fetch.records", "server", i, "a record offset is not an integer", frame)]
    out = []
    if any(b <= a for a, b in zip(offsets, offsets[1:])):
        out.append(Finding("rustlog.fetch.records", "server", i, f"record offsets not increasing: {offsets[:10]}",
                           frame))
    requested = request.get("offset")
    if offsets and _is_int(requested) and offsets[0] < requested:
        out.append(Finding("rustlog.fetch.records", "server", i,
                           f"first record offset {offsets[0]} is below the requested {requested}", frame))
    if offsets and response.get("next_offset") != offsets[-1] + 1:
        out.append(Finding("rustlog.fetch.next-offset", "server", i,
                           f"next_offset {response.get('next_offset')} after last offset {offsets[-1]}", frame))
    return out
