"""Kafka frame-level checks on one reassembled connection, decoding with the suite's ``protocols.kafka``.

Per connection: requests decode strictly; responses come back in request order carrying the request's
correlation id (acks=0 Produce gets none); each response decodes at its request's version; every ErrorCode is a
defined code; versions stay inside what ApiVersions advertised on the connection; record batches carry valid
CRC-32Cs; Produce base offsets move forward per partition and Fetch batches come in offset order.
"""

from __future__ import annotations

import functools

from wirecheck.protocols.fields import ArrayCodec, DecodeError
from wirecheck.protocols.kafka import errors, messages, records
from wirecheck.protocols.kafka.codec import NullableStruct, StructCodec

from wirecheck.protocols.capture import Finding

API_VERSIONS, PRODUCE, FETCH = 18, 0, 1
UNSUPPORTED_VERSION = 35


def sniff(data: bytes) -> bool:
    """int32 size, int16 api key known to the message definitions, int16 version, int32 correlation id."""
    if len(data) < 12:
        return False
    size = int.from_bytes(data[:4], "big", signed=True)
    api_key = int.from_bytes(data[4:6], "big", signed=True)
    version = int.from_bytes(data[6:8], "big", signed=True)
    return 8 <= size <= 104_857_600 and api_key in messages.api_keys() and 0 <= version <= 50


CONTROLLED_SHUTDOWN = 7


def client_id(frame: bytes) -> str | None:
    """The client id a request frame's header carries (None: none, or not a request header).

    A real client's connections are told from other connections to the same broker by it (the suite gives each
    client run a unique one). RequestHeader.json (apache/kafka clients/src/main/resources/common/message,
    lines 19-38): after the api key, version and correlation id, ClientId is a nullable string with the
    old-style int16 length in every header version from 1 ("flexibleVersions": "none", so flexible v2 headers
    keep it); header v0, without it, is used only by ControlledShutdown v0."""
    if len(frame) < 14:
        return None
    api_key, version = int.from_bytes(frame[4:6], "big", signed=True), int.from_bytes(frame[6:8], "big", signed=True)
    if api_key == CONTROLLED_SHUTDOWN and version == 0:
        return None
    length = int.from_bytes(frame[12:14], "big", signed=True)
    if length < 0 or 14 + length > len(frame):
        return None
    try:
        return frame[14:14 + length].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _header_guess(frame: bytes) -> tuple[int | None, int | None, int | None]:
    """(api key, version, correlation id) read straight from the fixed header, for undecodable requests."""
    if len(frame) < 12:
        return None, None, None
    return (int.from_bytes(frame[4:6], "big", signed=True), int.from_bytes(frame[6:8], "big", signed=True),
            int.from_bytes(frame[8:12], "big", signed=True))


def _struct_in(codec) -> StructCodec | None:
    """The struct a field holds, directly, as array elements or as a nullable struct; None for scalars."""
    while isinstance(codec, (ArrayCodec, NullableStruct)):
        codec = codec.item if isinstance(codec, ArrayCodec) else codec.inner
    return codec if isinstance(codec, StructCodec) else None


@functools.cache
def _routes(codec: StructCodec, key: str) -> tuple:
    """((field name, routes inside it, or None where the field is ``key`` itself), ...) in wire order: only the
    fields that are ``key`` or hold a struct that has it somewhere below. Built once per message version."""
    routes = []
    for name, field, _ in (*codec.regular, *codec.tagged.values()):
        if name == key:
            routes.append((name, None))
        elif (inner := _struct_in(field)) is not None and (below := _routes(inner, key)):
            routes.append((name, below))
    return tuple(routes)


def _find(value, routes: tuple, path: tuple = ()) -> list:
    """Every (path, value) of the field the routes lead to in a decoded body; path holds the enclosing dicts.
    Only the fields on a route are entered: a body is mostly other fields."""
    found = []
    if isinstance(value, list):
        for item in value:
            found += _find(item, routes, path)
        return found
    if not isinstance(value, dict):
        return found  # a null struct or array
    inner = path + (value,)
    for name, below in routes:
        if name not in value:
            continue
        if below is None:
            found.append((inner, value[name]))
        else:
            found += _find(value[name], below, inner)
    return found


def _topic_partition(path) -> tuple:
    topic = next((d.get("Name", d.get("Topic")) for d in path if "Name" in d or "Topic" in d), None)
    partition = next((d.get("Index", d.get("PartitionIndex")) for d in reversed(path)
                      if "Index" in d or "PartitionIndex" in d), None)
    return topic, partition


def _batches(data: bytes, partial_tail: bool):
    """Decoded batches of a records field (magic 2, or legacy message sets)."""
    magic = records.magic_of(data)
    if magic == 2:
        return records.decode_batches(data, allow_partial_tail=partial_tail)
    return records.decode_legacy_set(data, allow_partial_tail=partial_tail)


class _Request:
    def __init__(self, index: int, frame: bytes):
        self.index, self.frame = index, frame
        self.api_key, self.version, self.correlation_id = _header_guess(frame)
        self.body = None
        self.bad_crc: set[tuple] = set()  # (topic, partition) whose batch CRC was wrong
        self.record_counts: dict[tuple, int] = {}

    @property
    def expects_response(self) -> bool:
        return not (self.api_key == PRODUCE and self.body is not None and self.body.get("Acks") == 0)


def _check_request(request: _Request, advertised: dict, findings: list) -> None:
    frame, i = request.frame, request.index
    try:
        decoded = messages.decode_request(frame)
    except (DecodeError, messages.UnknownApi, KeyError, ValueError) as exc:
        findings.append(Finding("kafka.capture.request-decodes", "client", i, f"request does not decode: {exc}", frame))
        return
    request.body = decoded["body"]
    if request.api_key != API_VERSIONS and request.api_key in advertised:
        low, high = advertised[request.api_key]
        if not low <= request.version <= high:
            findings.append(Finding("kafka.capture.version-advertised", "client", i,
                                    f"{messages.api_name(request.api_key)} v{request.version} outside the advertised "
                                    f"{low}-{high}", frame))
    for path, data in _find(request.body, _routes(messages.request_codec(request.api_key, request.version), "Records")):
        if not data:
            continue
        key = _topic_partition(path)
        try:
            request.record_counts[key] = sum(len(b.records) for b in _batches(bytes(data), partial_tail=False))
        except records.CorruptBatch as exc:
            request.bad_crc.add(key)
            findings.append(Finding("kafka.produce.crc-mismatch", "client", i,
                                    f"batch for {key[0]}/{key[1]}: {exc}", frame))
        except DecodeError as exc:
            findings.append(Finding("kafka.produce.batch-length", "client", i,
                                    f"batch for {key[0]}/{key[1]} does not decode: {exc}", frame))


def _decode_response(request: _Request, frame: bytes) -> tuple[dict, StructCodec]:
    """(body, the codec that decoded it)."""
    try:
        return (messages.decode_response(request.api_key, request.version, frame)["body"],
                messages.response_codec(request.api_key, request.version))
    except DecodeError:
        if request.api_key != API_VERSIONS:
            raise
        # KIP-511: a broker that does not support the ApiVersions version asked answers with a v0 body
        body = messages.decode_response(API_VERSIONS, 0, frame)["body"]
        if body.get("ErrorCode") != UNSUPPORTED_VERSION:
            raise
        return body, messages.response_codec(API_VERSIONS, 0)


def _check_response(request: _Request, i: int, frame: bytes, state: dict, findings: list) -> None:
    if request.api_key is None or request.version is None:
        return
    try:
        body, codec = _decode_response(request, frame)
    except (DecodeError, messages.UnknownApi, KeyError, ValueError) as exc:
        findings.append(Finding("kafka.api-versions.advertised-implemented", "server", i,
                                f"response to {_name(request)} does not decode at that version: {exc}", frame))
        return
    codes = _find(body, _routes(codec, "ErrorCode"))  # found once: the produce check reads them too
    for _, code in codes:
        if isinstance(code, int) and code not in errors.BY_CODE:
            findings.append(Finding("kafka.capture.error-code-known", "server", i,
                                    f"{_name(request)} response carries undefined error code {code}", frame))
    if request.api_key == API_VERSIONS and body.get("ErrorCode") == 0:
        state["advertised"].update({e["ApiKey"]: (e["MinVersion"], e["MaxVersion"]) for e in body.get("ApiKeys", [])})
    if request.api_key == PRODUCE:
        _check_produce_response(request, codes, i, frame, state["next_offset"], findings)
    if request.api_key == FETCH:
        _check_fetch_response(body, codec, i, frame, findings)


def _check_produce_response(request, codes, i, frame, next_offset, findings) -> None:
    for path, code in codes:
        key = _topic_partition(path)
        if key in request.bad_crc and code == 0:
            findings.append(Finding("kafka.produce.crc-mismatch", "server", i,
                                    f"batch with a bad CRC for {key[0]}/{key[1]} acknowledged with error 0", frame))
        base = path[-1].get("BaseOffset")
        if code != 0 or not isinstance(base, int) or base < 0 or "BaseOffset" not in path[-1]:
            continue
        if key in next_offset and base < next_offset[key]:
            findings.append(Finding("kafka.produce.base-offset", "server", i,
                                    f"base offset {base} of {key[0]}/{key[1]} is below {next_offset[key]}, the end "
                                    f"of the previous batch on this connection", frame))
        next_offset[key] = max(next_offset.get(key, 0), base + max(1, request.record_counts.get(key, 1)))


def _check_fetch_response(body, codec, i, frame, findings) -> None:
    for path, data in _find(body, _routes(codec, "Records")):
        if not data:
            continue
        key = _topic_partition(path)
        try:
            batches = _batches(bytes(data), partial_tail=True)
        except records.CorruptBatch as exc:
            findings.append(Finding("kafka.fetch.batch-crc", "server", i, f"{key[0]}/{key[1]}: {exc}", frame))
            continue
        except DecodeError as exc:
            findings.append(Finding("kafka.fetch.batch-crc", "server", i,
                                    f"{key[0]}/{key[1]}: batch does not decode: {exc}", frame))
            continue
        offsets = [getattr(b, "base_offset", getattr(b, "offset", None)) for b in batches]
        offsets = [o for o in offsets if isinstance(o, int)]
        if any(b <= a for a, b in zip(offsets, offsets[1:])):
            findings.append(Finding("kafka.fetch.records", "server", i,
                                    f"{key[0]}/{key[1]}: batch offsets not increasing: {offsets[:10]}", frame))


def _name(request: _Request) -> str:
    try:
        return f"{messages.api_name(request.api_key)} v{request.version}"
    except Exception:
        return f"api {request.api_key} v{request.version}"


def check(client_frames: list[bytes], server_frames: list[bytes]) -> list[Finding]:
    findings: list[Finding] = []
    state = {"advertised": {}, "next_offset": {}}
    requests = [_Request(i, frame) for i, frame in enumerate(client_frames)]
    # Requests and responses interleave in time, but responses come in request order: check each request
    # before the response that answers it, so that ApiVersions' ranges apply to the requests after it.
    answered = 0
    pending = []
    for request in requests:
        _check_request(request, state["advertised"], findings)
        if request.expects_response:
            pending.append(request)
        while answered < len(server_frames) and answered < len(pending):
            _pair(pending[answered], answered, server_frames[answered], state, findings)
            answered += 1
    for i in range(answered, len(server_frames)):
        findings.append(Finding("kafka.framing.pipelining", "server", i,
                                f"response #{i} answers no request ({len(pending)} awaited a response)",
                                server_frames[i]))
    return findings


def _pair(request: _Request, i: int, frame: bytes, state: dict, findings: list) -> None:
    correlation = int.from_bytes(frame[4:8], "big", signed=True) if len(frame) >= 8 else None
    if correlation != request.correlation_id:
        findings.append(Finding("kafka.header.correlation-id", "server", i,
                                f"response #{i} carries correlation id {correlation}, the request it answers "
                                f"({_name(request)}, client frame {request.index}) sent {request.correlation_id}",
                                frame))
        return
    _check_response(request, i, frame, state, findings)
