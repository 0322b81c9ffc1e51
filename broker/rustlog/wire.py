"""RustLog's wire layer: frame limits, the two-stage payload decoder and the response encoder.

Spec: the seed "RustLog Protocol Specification" (§Frame Structure, §JSON Payload Format, §Connection Error
Handling) with the project's decisions D1/D2/D11 from the research notes, part 1.

Decoding has two stages (bytes -> JSON value here, then JSON value -> request in ``schema.py``) so that a
*malformed* payload (invalid UTF-8 or JSON syntax: the connection is closed) can be told apart from an *invalid*
request (well-formed JSON of the wrong shape: Error 400, stay open).
"""

from __future__ import annotations

import json
import re
import struct

from wirecheck.broker.rustlog.faults import RustLogFaults, RustLogVariants

MAX_FRAME = 10_485_760  # seed §Protocol constants; inclusive (read_frame rejects only length > MAX)
MAX_DEPTH = 64  # deeper JSON is refused before json.loads could recurse into it

# Error codes, seed §Error Codes.
INVALID_REQUEST = 400
TOPIC_NOT_FOUND = 404
PARTITION_NOT_FOUND = 405
RECORD_TOO_LARGE = 413
OFFSET_OUT_OF_RANGE = 416
INTERNAL_SERVER_ERROR = 500
STORAGE_ERROR = 503
INSUFFICIENT_SPACE = 507

LENGTH = struct.Struct(">I")


class RequestError(Exception):
    """A request the broker answers with an Error frame; ``close`` ends the connection after it."""

    def __init__(self, code: int, message: str, details: dict | None = None, close: bool = False):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.close = close


class TooDeep(RequestError):
    """JSON nested deeper than MAX_DEPTH (a fault turns this into a process crash)."""


class BigInt:
    """A JSON integer too long to be any u64: kept as a marker so it fails range checks, never parsed.

    Python refuses to parse integers over 4300 digits (a ValueError inside json.loads) and would spend time on
    long ones. JSON has no leading zeros, so more than 25 characters (sign included) is never a u64 (20 digits).
    """

    def __init__(self, text: str):
        self.text = text[:40]


def _parse_int(text: str):
    return int(text) if len(text) <= 25 else BigInt(text)


def _reject_constant(name: str):
    # NaN, Infinity and -Infinity are Python extensions, not JSON (RFC 8259): a syntax error.
    raise ValueError(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        # D2: serde rejects a struct with a duplicate field; the request is invalid (400), not malformed.
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return obj


class _Duplicate(Exception):
    pass


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # a JSON string, escapes included
_ALL_BUT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SQUARE = bytes.maketrans(b"{}", b"[]")


def too_deep(payload: bytes, limit: int = MAX_DEPTH) -> bool:
    """Does the JSON text nest deeper than ``limit``? Decided without recursion, in C-speed passes.

    Strings are cut out (they may hold brackets; UTF-8 never hides an ASCII byte inside a multi-byte character),
    everything but brackets is deleted, and then each pass deletes every innermost "[]" pair, i.e. one level of
    nesting: anything left after ``limit`` passes is deeper than ``limit`` (or unbalanced, hence malformed).
    """
    brackets = _STRING.sub(b"", payload).translate(_SQUARE, _ALL_BUT_BRACKETS)
    run = b"[" * (limit + 1)
    for _ in range(limit):
        if not brackets:
            return False
        if run in brackets:  # limit+1 openings in a row: deeper than limit (shortcut for the common attack)
            return True
        reduced = brackets.replace(b"[]", b"")
        if len(reduced) == len(brackets):  # nothing to pair: unbalanced, i.e. malformed
            return True
        brackets = reduced
    return bool(brackets)


def decode_text(payload: bytes, *, lenient_utf8: bool = False, keep_open_on_malformed: bool = False) -> str:
    """Stage 1a: a frame's bytes -> text. Raises RequestError.

    Invalid UTF-8 -> 400 and close (seed §Connection Error Handling: "protocol violations that terminate
    connection"). Nesting deeper than MAX_DEPTH is refused here, before any parser sees it (TooDeep, 400).
    The caller passes the bytes as a temporary so that they are freed as soon as the text exists.
    """
    try:
        text = payload.decode("utf-8", errors="replace" if lenient_utf8 else "strict")
    except UnicodeDecodeError as exc:
        raise RequestError(INVALID_REQUEST, f"payload is not valid UTF-8 (byte {exc.start})", close=True) from None
    # Depth above MAX_DEPTH needs more than MAX_DEPTH opening brackets: count them first (cheap, in C).
    if payload.count(b"[") + payload.count(b"{") > MAX_DEPTH and too_deep(payload):
        # Refused unparsed. Unequal bracket counts are certainly malformed (close); otherwise the text may
        # well be valid JSON that is merely too deep for us: an invalid request (stay open).
        balanced = payload.count(b"[") == payload.count(b"]") and payload.count(b"{") == payload.count(b"}")
        raise TooDeep(INVALID_REQUEST, f"JSON nesting deeper than {MAX_DEPTH}", {"max_depth": MAX_DEPTH},
                      close=not keep_open_on_malformed and not balanced)
    return text


def parse_json(text: str, *, keep_open_on_malformed: bool = False) -> object:
    """Stage 1b: text -> a JSON value with exact integers. Invalid JSON syntax -> 400 and close."""
    try:
        return json.loads(text, parse_int=_parse_int, parse_constant=_reject_constant,
                          object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        raise RequestError(INVALID_REQUEST, f"duplicate field {str(exc)[:100]!r}") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise RequestError(INVALID_REQUEST, f"malformed JSON: {str(exc)[:200]}",
                           close=not keep_open_on_malformed) from None


class Encoder:
    """Response frames. Faults that bend the framing or the Error shape live here, in one place."""

    def __init__(self, faults: RustLogFaults, variants: RustLogVariants):
        self.faults = faults
        self.variants = variants

    def header(self, payload: bytes) -> bytes:
        """The length prefix of a response frame (the payload is written separately: no 10 MB copy)."""
        extra = LENGTH.size if self.faults.length_counts_header else 0
        return LENGTH.pack(len(payload) + extra)

    def response(self, obj: dict) -> bytes:
        """A response payload (without its length prefix)."""
        # ensure_ascii keeps any lone surrogate a client sent (legal in JSON escapes) encodable as UTF-8.
        return json.dumps(obj, separators=(",", ":")).encode("ascii")

    def error(self, code: int, message: str, details: dict | None = None) -> bytes:
        text_key = "error" if self.faults.error_message_key_wrong else "message"
        obj = {"type": "Error", "code": code, text_key: message or "error"}
        if not self.faults.error_details_missing:
            # D11: always present, null when there is nothing to add ({} under the variant details-empty-object)
            obj["details"] = {} if details is None and self.variants.details_empty_object else details
        return self.response(obj)
