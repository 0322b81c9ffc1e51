"""The Kafka message API: every request and response at every version, from the definitions.

Frames are ``int32 length`` + header + body. Header versions (Kafka protocol guide, "Headers"; KIP-482;
``generator/.../ApiMessageTypeGenerator.java``):

* request header v2 (tagged fields) for flexible API versions, v1 otherwise, v0 only for
  ControlledShutdown v0; in every version ClientId is a classic INT16-length nullable string
  (``RequestHeader.json``: ``"flexibleVersions": "none"``) so any broker can read any ApiVersions header;
* response header v1 (tagged fields) for flexible versions, v0 otherwise, **and always v0 for
  ApiVersions** (KIP-511): this exception is not in the JSON, so it is written here.

Versions below a definition's ``validVersions`` (e.g. Produce 0-2, Fetch 0-3, removed in Kafka 4.0 by
KIP-896) are still encodable: the field ranges ("0+") describe them. ``versions()`` reports the definition's
range; ``encodable_versions()`` starts at 0. Brokers keep advertising Produce 0 (KAFKA-18659).

Two sources, one model: kafka-python's JSON (``schema``) for the API keys it ships, kio's generated classes
(``kio_definitions``) for the client-facing Kafka 4 keys it lacks (consumer/share/streams groups, telemetry,
delegation tokens...). A kio-only key is loaded the first time it is used, and its removed versions are not
encodable: kio's classes describe only the versions Kafka 4 keeps.
"""

from __future__ import annotations

import functools

from wirecheck.protocols import fields as f
from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.kafka import codec as kafka_codec, kio_definitions, schema
from wirecheck.protocols.kafka.codec import EncodeError, StructCodec, message_codec

__all__ = [
    "DecodeError",
    "EncodeError",
    "UnknownApi",
    "api_keys",
    "api_name",
    "api_key_by_name",
    "versions",
    "encodable_versions",
    "flexible",
    "request_header_version",
    "response_header_version",
    "request_codec",
    "response_codec",
    "encode_request",
    "decode_request",
    "encode_response",
    "decode_response",
    "API_VERSIONS",
    "CONTROLLED_SHUTDOWN",
]

API_VERSIONS = 18
CONTROLLED_SHUTDOWN = 7  # its v0 is the only user of request header v0; not in kafka-python's definitions


class UnknownApi(KeyError):
    """An api key or version the definitions do not describe."""


@functools.cache
def _all_api_keys() -> tuple[int, ...]:
    return tuple(sorted({*schema.by_api_key(), *kio_definitions.api_keys()}))


def api_keys() -> list[int]:
    return list(_all_api_keys())


def _pair(api_key: int):
    try:
        return schema.by_api_key()[api_key]
    except KeyError:
        pass
    try:
        return kio_definitions.definitions(api_key)
    except KeyError:
        raise UnknownApi(f"no definition for api key {api_key}") from None


def api_name(api_key: int) -> str:
    """``ApiVersions`` for 18 (the definition name without Request)."""
    return _pair(api_key)[0].name.removesuffix("Request")


@functools.cache
def api_key_by_name(name: str) -> int:
    # kafka-python's names first: a kio-only key is loaded only when the name is none of them
    for key in [*schema.by_api_key(), *kio_definitions.api_keys()]:
        if api_name(key) == name:
            return key
    raise UnknownApi(f"no API named {name!r}")


def versions(api_key: int) -> tuple[int, int]:
    """(min, max) valid versions of the request, per its definition."""
    valid = _pair(api_key)[0].valid_versions
    return valid.low, valid.high


def encodable_versions(api_key: int) -> range:
    """0 .. max: the definition's versions plus the removed ones its field ranges still describe (kafka-python's
    JSON); a kio-only key's valid versions only."""
    low, high = versions(api_key)
    return range(0 if api_key in schema.by_api_key() else low, high + 1)


def _check_version(api_key: int, version: int) -> None:
    if version not in encodable_versions(api_key):
        raise UnknownApi(f"{api_name(api_key)} has no version {version} (max {versions(api_key)[1]})")


def flexible(api_key: int, version: int) -> bool:
    """Does this API version use KIP-482 encoding (compact strings/arrays, tagged fields)?"""
    return _pair(api_key)[0].flexible(version)


def request_header_version(api_key: int, version: int) -> int:
    if api_key == CONTROLLED_SHUTDOWN and version == 0:
        return 0
    return 2 if flexible(api_key, version) else 1


def response_header_version(api_key: int, version: int) -> int:
    if api_key == API_VERSIONS:
        return 0  # KIP-511: ApiVersions responses always use header v0, whatever the version
    return 1 if flexible(api_key, version) else 0


# Cached by (api key, version): ``message_codec``'s own cache hashes the whole nested definition on every call,
# which cost about a third of the time per decoded frame.
@functools.cache
def request_codec(api_key: int, version: int) -> StructCodec:
    _check_version(api_key, version)
    return message_codec(_pair(api_key)[0], version)


@functools.cache
def response_codec(api_key: int, version: int) -> StructCodec:
    _check_version(api_key, version)
    return message_codec(_pair(api_key)[1], version)


@functools.cache
def request_header_codec(header_version: int) -> StructCodec:
    return message_codec(schema.header("RequestHeader"), header_version)


@functools.cache
def response_header_codec(header_version: int) -> StructCodec:
    return message_codec(schema.header("ResponseHeader"), header_version)


def _frame(payload: bytearray) -> bytes:
    return len(payload).to_bytes(4, "big", signed=True) + bytes(payload)


def _unframe(frame: bytes) -> memoryview | bytes:
    if len(frame) < 4:
        raise DecodeError(f"truncated frame length: {len(frame)} bytes", 0, ["length"])
    length = int.from_bytes(frame[:4], "big", signed=True)
    if length < 0:
        raise DecodeError(f"negative frame length {length}", 0, ["length"])
    if length != len(frame) - 4:
        raise DecodeError(f"frame length says {length} but {len(frame) - 4} bytes follow", 0, ["length"])
    return frame


def encode_request(api_key: int, version: int, correlation_id: int, client_id: str | None, body: dict,
                   header_tagged_fields: dict[int, bytes] | None = None) -> bytes:
    """A whole request frame: length, request header (v0/v1/v2 as the version needs), body."""
    out = bytearray()
    header = {"RequestApiKey": api_key, "RequestApiVersion": version, "CorrelationId": correlation_id,
              "ClientId": client_id}
    if header_tagged_fields:
        header["_tagged_fields"] = header_tagged_fields
    request_header_codec(request_header_version(api_key, version)).write(out, header)
    request_codec(api_key, version).write(out, body)
    return _frame(out)


def encode_response(api_key: int, version: int, correlation_id: int, body: dict) -> bytes:
    """A whole response frame (used by tests and vectors; the suite's client only decodes responses)."""
    out = bytearray()
    response_header_codec(response_header_version(api_key, version)).write(out, {"CorrelationId": correlation_id})
    response_codec(api_key, version).write(out, body)
    return _frame(out)


def tagged_defaults(api_key: int, version: int, frame: bytes) -> list[str]:
    """The known tagged fields a response frame carries at their default values (Kafka's writers leave such a field
    out); empty also when the frame does not decode."""
    kafka_codec.DEFAULT_TAGS_SEEN = seen = []
    try:
        decode_response(api_key, version, frame)
    except DecodeError:
        return []
    finally:
        kafka_codec.DEFAULT_TAGS_SEEN = None
    return seen


def _decode_struct(codec: StructCodec, frame, pos: int, part: str):
    try:
        return codec.read(frame, pos)
    except DecodeError as exc:
        raise exc.within(part) from None


def decode_request(frame: bytes) -> dict:
    """Decode a whole request frame. Returns {"header": {...}, "body": {...}}; strict."""
    frame = _unframe(frame)
    try:
        api_key, _ = f.INT16.read(frame, 4)
        version, _ = f.INT16.read(frame, 6)
    except DecodeError as exc:
        raise exc.within("header") from None
    try:
        body_codec = request_codec(api_key, version)
    except UnknownApi as exc:
        raise DecodeError(str(exc.args[0]), 4, ["header", "RequestApiKey"]) from None
    header, pos = _decode_struct(request_header_codec(request_header_version(api_key, version)), frame, 4, "header")
    body, pos = _decode_struct(body_codec, frame, pos, "body")
    if pos != len(frame):
        raise DecodeError(f"{len(frame) - pos} trailing bytes after the body", pos, ["body"])
    return {"header": header, "body": body}


def decode_response(api_key: int, version: int, frame: bytes, header_version: int | None = None) -> dict:
    """Decode a whole response frame to {"header": {...}, "body": {...}}.

    Strict: truncation, trailing bytes, bad lengths and unknown versions raise :class:`DecodeError` naming the
    field path and offset. Note: a broker answering an ApiVersions version it does not support sends a
    *v0* body with error 35 (KIP-511); decode such a reply with ``version=0``. ``header_version`` overrides the
    response header version the rules give (to tell what a misread answer is instead, see ``misread``).
    """
    frame = _unframe(frame)
    if header_version is None:
        header_version = response_header_version(api_key, version)
    header_codec = response_header_codec(header_version)
    header, pos = _decode_struct(header_codec, frame, 4, "header")
    body, pos = _decode_struct(response_codec(api_key, version), frame, pos, "body")
    if pos != len(frame):
        raise DecodeError(f"{len(frame) - pos} trailing bytes after the body", pos, ["body"])
    return {"header": header, "body": body}
