"""Wire-level pieces of the RustLog JSON protocol: constants, error codes,
payload decoding and typed field access.

Everything here follows the protocol document; choices it does not settle
are marked "DECISION" and listed in README.md.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from enum import IntEnum

# --- Protocol constants (Wire Format Specification) ------------------------
MAX_FRAME_SIZE = 10 * 1024 * 1024  # 10,485,760; a length equal to it is allowed
MIN_FRAME_SIZE = 1
LENGTH = struct.Struct(">I")  # u32 big-endian

# --- Limits from the request sections ---------------------------------------
MAX_RECORDS_PER_BATCH = 1000
MIN_PARTITIONS, MAX_PARTITIONS = 1, 1000
TOPIC_NAME = re.compile(r"[A-Za-z0-9_-]{1,255}")
U16_MAX = 2**16 - 1
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

# DECISION: largest decoded record.  The document's "<= 10MB after decoding"
# can never be reached (its base64 would not fit in a frame), and a record
# must stay fetchable, so a record's base64 text plus the FetchResponse
# wrapper must fit in one frame.  1 KiB is left for that wrapper.
MAX_RECORD_BYTES = ((MAX_FRAME_SIZE - 1024) // 4) * 3  # 7,863,552



class Code(IntEnum):
    """Error codes (Error Handling / Error Codes)."""

    INVALID_REQUEST = 400
    TOPIC_NOT_FOUND = 404
    PARTITION_NOT_FOUND = 405
    RECORD_TOO_LARGE = 413
    OFFSET_OUT_OF_RANGE = 416
    INTERNAL_SERVER_ERROR = 500
    STORAGE_ERROR = 503
    INSUFFICIENT_SPACE = 507


class RequestError(Exception):
    """A recoverable error: answered with an Error frame, connection stays open."""

    def __init__(self, code: Code, message: str, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


class UnknownType(RequestError):
    """A "type" this server does not know (recoverable, per the document)."""


class ProtocolViolation(Exception):
    """A violation that terminates the connection (after a best-effort Error).
    kind: "utf8" or "json" (which check failed)."""

    def __init__(self, code: Code, message: str, kind: str):
        super().__init__(message)
        self.code = code
        self.message = message
        self.kind = kind


def error_body(code: int, message: str, details: dict | None, *, with_details: bool = True) -> dict:
    body = {"type": "Error", "code": int(code), "message": message}
    if with_details:
        body["details"] = details
    return body


def encode_frame(body: dict) -> bytes:
    """Serialise one response.  ensure_ascii keeps the payload valid UTF-8 even
    if a client managed to send lone surrogates that we echo back."""
    payload = json.dumps(body, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return LENGTH.pack(len(payload)) + payload


def short(text: str, limit: int = 64) -> str:
    """Client-supplied text quoted in messages is cut to keep Errors small."""
    return text if len(text) <= limit else text[:limit] + "..."


# --- Payload decoding --------------------------------------------------------
class _DuplicateKey(Exception):
    pass


def _pairs(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def _reject_constant(name: str):
    # NaN / Infinity / -Infinity are not JSON (RFC 8259); Python accepts them.
    raise ValueError(f"{name} is not valid JSON")


def decode_payload(payload: bytes, *, lenient_utf8: bool = False):
    """Stage 1 (close on failure): UTF-8 and JSON syntax.
    Stage 2 (400, stay open): duplicate keys, excessive nesting.
    Returns the decoded JSON value, whatever its type."""
    try:
        text = payload.decode("utf-8", errors="replace" if lenient_utf8 else "strict")
    except UnicodeDecodeError as exc:
        raise ProtocolViolation(Code.INVALID_REQUEST, f"payload is not valid UTF-8 (byte {exc.start})", "utf8")
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_reject_constant)
    except _DuplicateKey as exc:
        raise RequestError(Code.INVALID_REQUEST, f"duplicate key {short(str(exc))!r}")
    except RecursionError:
        raise RequestError(Code.INVALID_REQUEST, "JSON nesting too deep")
    except json.JSONDecodeError as exc:
        raise ProtocolViolation(Code.INVALID_REQUEST, f"malformed JSON: {short(str(exc), 120)}", "json")
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            # Valid JSON, but an integer of more than 4300 digits (Python's
            # int-string limit): certainly out of range for any field.
            raise RequestError(Code.INVALID_REQUEST, "integer out of range")
        # NaN / Infinity (rejected by _reject_constant): not JSON
        raise ProtocolViolation(Code.INVALID_REQUEST, f"malformed JSON: {short(str(exc), 120)}", "json")


# --- Typed field access (stage 2: 400 and stay open) -------------------------
def _missing(name: str) -> RequestError:
    return RequestError(Code.INVALID_REQUEST, f"missing field '{name}'")


def _wrong(name: str, want: str) -> RequestError:
    return RequestError(Code.INVALID_REQUEST, f"field '{name}' must be {want}")


def get_str(msg: dict, name: str) -> str:
    if name not in msg:
        raise _missing(name)
    value = msg[name]
    if not isinstance(value, str):
        raise _wrong(name, "a string")
    return value


def get_uint(msg: dict, name: str, maximum: int) -> int:
    if name not in msg:
        raise _missing(name)
    value = msg[name]
    # bool is an int subclass in Python; JSON true/false is not a number.
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        want = "an unsigned 32-bit integer" if maximum == U32_MAX else "an unsigned 64-bit integer"
        raise _wrong(name, want)
    return value


def get_u32(msg: dict, name: str) -> int:
    return get_uint(msg, name, U32_MAX)


def get_u64(msg: dict, name: str) -> int:
    return get_uint(msg, name, U64_MAX)


def get_list(msg: dict, name: str) -> list:
    if name not in msg:
        raise _missing(name)
    value = msg[name]
    if not isinstance(value, list):
        raise _wrong(name, "an array")
    return value


def get_topic(msg: dict, name: str = "topic", *, validate: bool = True) -> str:
    topic = get_str(msg, name)
    if validate and not TOPIC_NAME.fullmatch(topic):
        raise RequestError(
            Code.INVALID_REQUEST,
            f"invalid topic name {short(topic)!r}: 1-255 characters of A-Z a-z 0-9 _ -",
        )
    return topic


def decode_record(index: int, value) -> bytes:
    """One element of Produce.records: standard base64 with padding."""
    if not isinstance(value, str):
        raise RequestError(Code.INVALID_REQUEST, f"records[{index}] must be a base64 string")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise RequestError(Code.INVALID_REQUEST, f"records[{index}] is not valid base64")
    return raw


def encode_b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")
