"""Request schemas and field validation (seed §Message Types and each request's "JSON Schema").

Every failure here is an *invalid* request: Error 400 and the connection stays open (decision D2).
Integers must be JSON integers (bool, float, null, strings rejected), within the field's unsigned range, and are
kept as exact Python ints. Unknown extra fields are ignored (seed §Wire Format Evolution).
"""

from __future__ import annotations

import re

from wirecheck.broker.rustlog.wire import INVALID_REQUEST, RequestError

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

STR, U32, U64, STR_LIST = "string", "u32", "u64", "array of strings"

#: request type -> {field: kind}. Field names follow the seed; note Fetch says group_id, commits say group.
REQUESTS: dict[str, dict[str, str]] = {
    "Produce": {"topic": STR, "partition": U32, "records": STR_LIST},
    "Fetch": {"group_id": STR, "topic": STR, "partition": U32, "offset": U64, "max_bytes": U64},  # usize: 64-bit
    "OffsetCommit": {"group": STR, "topic": STR, "partition": U32, "offset": U64},
    "OffsetFetch": {"group": STR, "topic": STR, "partition": U32},
    "CreateTopic": {"topic": STR, "partition_count": U32},
    "ListTopics": {},
    "DescribeTopic": {"topic": STR},
    "DescribePartition": {"topic": STR, "partition": U32},
    "MetricsFetch": {},
    "Ping": {},
}

#: seed §Produce Request / §Create Topic Request: "1-255 characters, alphanumeric + underscore/hyphen" (ASCII).
TOPIC_NAME = re.compile(r"[A-Za-z0-9_-]{1,255}")


class UnknownType(RequestError):
    """A "type" no request has (response types included)."""


def _invalid(message: str) -> RequestError:
    return RequestError(INVALID_REQUEST, message)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _integer(name: str, value: object, maximum: int, floats_ok: bool, via_double: bool) -> int:
    if floats_ok and type(value) is float and value.is_integer():  # fault float-accepted
        value = int(value)
    if via_double and type(value) is int:  # fault u64-via-double: a JSON number parsed as an f64
        value = int(float(value))
    if type(value) is not int:  # bool is an int subclass: excluded on purpose
        raise _invalid(f"field {name!r} must be an unsigned integer, got {_short(getattr(value, 'text', value))}")
    if not 0 <= value <= maximum:
        raise _invalid(f"field {name!r} out of range 0..{maximum}: {_short(value)}")
    return value


def parse_request(obj: object, *, floats_ok: bool = False, via_double: bool = False) -> tuple[str, dict]:
    """A decoded JSON value -> (request type, validated fields). Raises RequestError / UnknownType."""
    if not isinstance(obj, dict):
        raise _invalid(f"payload must be a JSON object, got {type(obj).__name__}")
    if "type" not in obj:
        raise _invalid('payload has no "type" field')
    kind = obj["type"]
    if not isinstance(kind, str):
        raise _invalid(f'"type" must be a string, got {_short(kind)}')
    schema = REQUESTS.get(kind)
    if schema is None:
        raise UnknownType(INVALID_REQUEST, f"unknown request type {_short(kind)}")
    fields = {}
    for name, field_kind in schema.items():
        if name not in obj:
            raise _invalid(f"{kind}: missing field {name!r}")
        value = obj[name]
        if field_kind == STR:
            if not isinstance(value, str):
                raise _invalid(f"{kind}: field {name!r} must be a string, got {_short(value)}")
        elif field_kind == U32:
            value = _integer(name, value, U32_MAX, floats_ok, via_double)
        elif field_kind == U64:
            value = _integer(name, value, U64_MAX, floats_ok, via_double)
        elif field_kind == STR_LIST:
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise _invalid(f"{kind}: field {name!r} must be an array of base64 strings")
        fields[name] = value
    return kind, fields
