"""Fluvio SPU public API messages: header, request and response bodies at every version (specs/fluvio.md
§2-§5; upstream ``fluvio-spu-schema`` and ``fluvio-protocol/src/api``).

Frame: ``i32 size`` (not counting itself), then the body. Request header: ``api_key u16`` (the seed says i16;
the Rust type is u16, ambiguity A1), ``api_version i16``, ``correlation_id i32``, ``client_id String``.
Response header: ``correlation_id i32`` only. No tagged fields anywhere.
"""

from __future__ import annotations

import struct

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio.errors import ERROR_CODE
from wirecheck.protocols.fluvio.wire import (BYTES, I16, I32, I64, RECORD_SET, STRING, U8, U32, U64, Field, FluvioOption,
                                   FluvioVec, StringMap, Struct, Union)

__all__ = ["DecodeError"]

PRODUCE, FETCH, API_VERSIONS = 0, 1, 18
FETCH_OFFSETS, STREAM_FETCH, UPDATE_OFFSETS = 1002, 1003, 1005
COMMON_VERSION = 25  # SS/lib.rs: DEFAULT and MAX of most SPU requests
SEED_PRODUCE_VERSION = 7  # the seed's "DEFAULT_API_VERSION: 7 (COMMON_VERSION)" of an older release
NAMES = {PRODUCE: "Produce", FETCH: "Fetch", API_VERSIONS: "ApiVersions", FETCH_OFFSETS: "FetchOffsets",
         STREAM_FETCH: "StreamFetch", UPDATE_OFFSETS: "UpdateOffsets"}
#: what the SPU advertises (SPU/services/public/api_versions.rs), in its order
SPU_ADVERTISED = {PRODUCE: (0, 25), FETCH: (0, 25), FETCH_OFFSETS: (25, 25), STREAM_FETCH: (0, 25),
                  UPDATE_OFFSETS: (0, 0)}
#: Isolation in Fetch/StreamFetch: a u8 enum 0 ReadUncommitted, 1 ReadCommitted (other values: decode error)
FETCH_ISOLATIONS = (0, 1)
#: Isolation in Produce: an i16, 1 ReadUncommitted, -1 ReadCommitted (decoder: < 0 committed, else uncommitted)
READ_UNCOMMITTED, READ_COMMITTED = 1, -1
DEFAULT_MAX_BYTES = 1_048_588  # fluvio-types defaults: the client's fetch max_bytes

HEADER = struct.Struct(">Hhi")  # api_key u16, api_version i16, correlation_id i32 (then client_id)

# -- SmartModule invocation (SS/server/smartmodule.rs, fluvio-smartmodule input.rs) ---------------------------

_DURATION = Struct("Duration", [Field("secs", U64), Field("nanos", U32)])
_LOOKBACK = Struct("Lookback", [Field("last", U64), Field("age", FluvioOption(_DURATION), 21)])
_PARAMS = Struct("SmartModuleExtraParams", [Field("params", StringMap()),
                                           Field("lookback", FluvioOption(_LOOKBACK), 20)])
_WASM = Union("SmartModuleInvocationWasm", {0: ("Predefined", STRING), 1: ("AdHoc", BYTES)})
_KIND = Union("SmartModuleKind", {
    0: ("Filter", None), 1: ("Map", None), 2: ("ArrayMap", None),
    3: ("Aggregate", Struct("Aggregate", [Field("accumulator", BYTES)])),
    4: ("FilterMap", None), 5: ("Join", STRING),
    6: ("JoinStream", Struct("JoinStream", [Field("topic", STRING), Field("derivedstream", STRING)])),
    # 7 Generic(SmartModuleContextData) is left out: its payload is not in our notes; we never send it
})
SMARTMODULE = Struct("SmartModuleInvocation", [Field("wasm", _WASM), Field("kind", _KIND), Field("params", _PARAMS),
                                               Field("name", FluvioOption(STRING), 25)])

# -- Produce (key 0) ------------------------------------------------------------------------------------------

_PARTITION_PRODUCE = Struct("PartitionProduceData", [Field("partition_index", U32), Field("records", RECORD_SET)])
_TOPIC_PRODUCE = Struct("TopicProduceData", [Field("name", STRING),
                                             Field("partitions", FluvioVec(_PARTITION_PRODUCE))])
#: hand-written upstream, so no version gates except inside SmartModuleInvocation (A3); the smartmodules Vec
#: is always written (A5: the v7 fixture lacks it; decode_request tolerates its absence).
PRODUCE_REQUEST = Struct("ProduceRequest", [
    Field("transactional_id", FluvioOption(STRING)), Field("isolation", I16), Field("timeout_ms", I32),
    Field("topics", FluvioVec(_TOPIC_PRODUCE)), Field("smartmodules", FluvioVec(SMARTMODULE))])
_PARTITION_PRODUCE_RESPONSE = Struct("PartitionProduceResponse", [
    Field("partition_index", U32), Field("error_code", ERROR_CODE), Field("base_offset", I64),
    Field("log_append_time_ms", I64, 2), Field("log_start_offset", I64, 5)])
PRODUCE_RESPONSE = Struct("ProduceResponse", [
    Field("responses", FluvioVec(Struct("TopicProduceResponse", [
        Field("name", STRING), Field("partitions", FluvioVec(_PARTITION_PRODUCE_RESPONSE))]))),
    Field("throttle_time_ms", I32, 1)])

# -- Fetch (key 1) --------------------------------------------------------------------------------------------

_FETCH_PARTITION = Struct("FetchPartition", [
    Field("partition_index", U32), Field("current_leader_epoch", I32, 9), Field("fetch_offset", I64),
    Field("log_start_offset", I64, 5), Field("max_bytes", I32)])
FETCH_REQUEST = Struct("FetchRequest", [
    Field("max_wait", I32), Field("min_bytes", I32), Field("max_bytes", I32, 3), Field("isolation", U8, 4),
    Field("topics", FluvioVec(Struct("FetchableTopic", [Field("name", STRING),
                                                         Field("fetch_partitions", FluvioVec(_FETCH_PARTITION))]))),
    Field("forgotten", FluvioVec(Struct("ForgottenTopic", [
        Field("name", STRING), Field("forgotten_partition_indexes", FluvioVec(I32))])), 7)])
_ABORTED = Struct("AbortedTransaction", [Field("producer_id", I64), Field("first_offset", I64)])
FETCHABLE_PARTITION = Struct("FetchablePartitionResponse", [
    Field("partition_index", U32), Field("error_code", ERROR_CODE), Field("high_watermark", I64),
    Field("next_filter_offset", I64, 11), Field("log_start_offset", I64),
    Field("aborted", FluvioOption(FluvioVec(_ABORTED))), Field("records", RECORD_SET)])
FETCH_RESPONSE = Struct("FetchResponse", [
    Field("throttle_time_ms", I32), Field("error_code", ERROR_CODE), Field("session_id", I32),
    Field("topics", FluvioVec(Struct("FetchableTopicResponse", [
        Field("name", STRING), Field("partitions", FluvioVec(FETCHABLE_PARTITION))])))])

# -- ApiVersions (key 18) -------------------------------------------------------------------------------------

API_VERSIONS_REQUEST = Struct("ApiVersionsRequest", [
    Field("client_version", STRING, 1), Field("client_os", STRING, 1), Field("client_arch", STRING, 1)])
API_VERSIONS_RESPONSE = Struct("ApiVersionsResponse", [
    Field("error_code", ERROR_CODE),
    Field("api_keys", FluvioVec(Struct("ApiVersionKey", [Field("api_key", I16), Field("min_version", I16),
                                                         Field("max_version", I16)]))),
    Field("platform_version", STRING)])

# -- FetchOffsets (key 1002) ----------------------------------------------------------------------------------

FETCH_OFFSETS_REQUEST = Struct("FetchOffsetsRequest", [
    Field("topics", FluvioVec(Struct("FetchOffsetTopic", [
        Field("name", STRING),
        Field("partitions", FluvioVec(Struct("FetchOffsetPartition", [Field("partition_index", U32)])))]))),
    Field("consumer_id", FluvioOption(STRING), 23, 23)])
FETCH_OFFSETS_RESPONSE = Struct("FetchOffsetsResponse", [
    Field("topics", FluvioVec(Struct("FetchOffsetTopicResponse", [
        Field("name", STRING),
        # error_code before partition_index here, unlike every other partition response
        Field("partitions", FluvioVec(Struct("FetchOffsetPartitionResponse", [
            Field("error_code", ERROR_CODE), Field("partition_index", U32), Field("start_offset", I64),
            Field("last_stable_offset", I64)])))])))])

# -- StreamFetch (key 1003) and UpdateOffsets (key 1005) ------------------------------------------------------

STREAM_FETCH_REQUEST = Struct("StreamFetchRequest", [
    Field("topic", STRING), Field("partition", U32), Field("fetch_offset", I64), Field("max_bytes", I32),
    Field("isolation", U8),
    Field("wasm_module", BYTES, 11, 18),
    Field("smartmodule", FluvioOption(SMARTMODULE), 16, 18),
    Field("derivedstream", FluvioOption(Struct("DerivedStreamInvocation", [Field("stream", STRING),
                                                                          Field("params", _PARAMS)])), 16, 18),
    Field("smartmodules", FluvioVec(SMARTMODULE), 18),
    Field("consumer_id", FluvioOption(STRING), 23)])
STREAM_FETCH_RESPONSE = Struct("StreamFetchResponse", [
    Field("topic", STRING), Field("stream_id", U32), Field("partition", FETCHABLE_PARTITION)])
UPDATE_OFFSETS_REQUEST = Struct("UpdateOffsetsRequest", [
    Field("offsets", FluvioVec(Struct("OffsetUpdate", [Field("offset", I64), Field("session_id", U32)])))])
UPDATE_OFFSETS_RESPONSE = Struct("UpdateOffsetsResponse", [
    Field("status", FluvioVec(Struct("OffsetUpdateStatus", [Field("session_id", U32),
                                                            Field("error", ERROR_CODE)])))])

REQUESTS = {PRODUCE: PRODUCE_REQUEST, FETCH: FETCH_REQUEST, API_VERSIONS: API_VERSIONS_REQUEST,
            FETCH_OFFSETS: FETCH_OFFSETS_REQUEST, STREAM_FETCH: STREAM_FETCH_REQUEST,
            UPDATE_OFFSETS: UPDATE_OFFSETS_REQUEST}
RESPONSES = {PRODUCE: PRODUCE_RESPONSE, FETCH: FETCH_RESPONSE, API_VERSIONS: API_VERSIONS_RESPONSE,
             FETCH_OFFSETS: FETCH_OFFSETS_RESPONSE, STREAM_FETCH: STREAM_FETCH_RESPONSE,
             UPDATE_OFFSETS: UPDATE_OFFSETS_RESPONSE}

def api_name(api_key: int) -> str:
    return NAMES.get(api_key, f"api{api_key}")


# -- framing ---------------------------------------------------------------------------------------------------


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def encode_header(api_key: int, version: int, correlation_id: int, client_id: str = "wirecheck") -> bytes:
    out = bytearray(HEADER.pack(api_key, version, correlation_id))
    STRING.write(out, client_id, version)
    return bytes(out)


def encode_request(api_key: int, version: int, correlation_id: int, body: dict, client_id: str = "wirecheck",
                   trace: list | None = None) -> bytes:
    """A whole framed request; ``trace`` (if given) receives field spans with frame offsets."""
    out = bytearray(4)
    out += encode_header(api_key, version, correlation_id, client_id)
    if trace is not None:
        trace += [("frame.size", "fixed", 0, 4, "int32"), ("header.api_key", "fixed", 4, 6, "uint16"),
                  ("header.api_version", "fixed", 6, 8, "int16"), ("header.correlation_id", "fixed", 8, 12, "int32"),
                  ("header.client_id", "length", 12, 14, "int16")]
    REQUESTS[api_key].write(out, body, version, trace, "body" if trace is not None else "")
    struct.pack_into(">i", out, 0, len(out) - 4)
    return bytes(out)


def encode_response(api_key: int, version: int, correlation_id: int, body: dict) -> bytes:
    out = bytearray(struct.pack(">ii", 0, correlation_id))
    RESPONSES[api_key].write(out, body, version)
    struct.pack_into(">i", out, 0, len(out) - 4)
    return bytes(out)


def decode_header(frame_bytes: bytes) -> tuple[dict, int]:
    """The request header of a whole frame -> (header, body offset)."""
    if len(frame_bytes) < 4 + HEADER.size:
        raise DecodeError("truncated request header", min(len(frame_bytes), 4))
    api_key, version, correlation_id = HEADER.unpack_from(frame_bytes, 4)
    client_id, pos = STRING.read(frame_bytes, 4 + HEADER.size, version)
    return {"api_key": api_key, "api_version": version, "correlation_id": correlation_id,
            "client_id": client_id}, pos


def decode_request(frame_bytes: bytes) -> dict:
    """A whole request frame -> {"header", "body"}. A Produce body that ends right after its topics is read
    as having no smartmodules (A5: the upstream v7 fixture has no trailer)."""
    header, pos = decode_header(frame_bytes)
    codec = REQUESTS.get(header["api_key"])
    if codec is None:
        raise DecodeError(f"unknown api key {header['api_key']}", 4)
    body_bytes = bytes(frame_bytes[pos:])
    if header["api_key"] == PRODUCE:
        return {"header": header, "body": decode_produce_body(body_bytes, header["api_version"])}
    body, _ = codec.read(body_bytes, 0, header["api_version"])
    return {"header": header, "body": body}


def decode_produce_body(body: bytes, version: int) -> dict:
    """A ProduceRequest body; a missing smartmodules trailer reads as none (A5)."""
    head = Struct("ProduceRequest", PRODUCE_REQUEST.fields[:4])
    value, pos = head.read(body, 0, version)
    if pos == len(body):
        value["smartmodules"] = []
        value["_smartmodules_trailer"] = False
        return value
    value["smartmodules"], pos = PRODUCE_REQUEST.fields[4].codec.read(body, pos, version)
    value["_smartmodules_trailer"] = True
    return value


def decode_response(api_key: int, version: int, frame_bytes: bytes) -> dict:
    """A whole response frame -> {"correlation_id", "body"}. Strict: the size prefix must match and the body
    must end exactly where the frame does (a response with leftover bytes is not what the SPU writes)."""
    if len(frame_bytes) < 8:
        raise DecodeError("frame shorter than size + correlation id", 0)
    (size,) = struct.unpack_from(">i", frame_bytes, 0)
    if size != len(frame_bytes) - 4:
        raise DecodeError(f"size prefix {size} but {len(frame_bytes) - 4} bytes follow it", 0)
    (correlation_id,) = struct.unpack_from(">i", frame_bytes, 4)
    body, pos = RESPONSES[api_key].read(frame_bytes, 8, version)
    if pos != len(frame_bytes):
        raise DecodeError(f"{len(frame_bytes) - pos} bytes left after the {api_name(api_key)} response", pos)
    return {"correlation_id": correlation_id, "body": body}


def describe(frame_bytes: bytes) -> str:
    """A readable line for a frame; never raises (it runs on hostile bytes)."""
    try:
        decoded = decode_request(frame_bytes)
        h = decoded["header"]
        if not 0 <= h["api_version"] <= COMMON_VERSION:  # most likely a response read as a request
            raise DecodeError("not a request", 6)
        text = (f"{api_name(h['api_key'])} v{h['api_version']} request corr={h['correlation_id']} "
                f"client={h['client_id']!r} {decoded['body']!r}")
        return text[:2000]
    except Exception:  # noqa: BLE001 - describe must survive any bytes
        size = int.from_bytes(frame_bytes[:4], "big", signed=True) if len(frame_bytes) >= 4 else None
        second = int.from_bytes(frame_bytes[4:8], "big", signed=True) if len(frame_bytes) >= 8 else None
        return f"Fluvio frame size={size} corr?={second} ({len(frame_bytes)} bytes; a response or undecodable)"
