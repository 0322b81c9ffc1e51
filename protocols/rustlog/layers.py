"""RustLog as scapy layers: the frame, and every request and response as a JSON-object layer.

The frame is binary (u32 big-endian payload length, seed §Frame Structure); messages are JSON objects tagged by
``"type"`` (seed §JSON Payload Format). Each message layer's ``fields_desc`` lists its JSON keys with their wire
kinds (u32, u64, topic, base64 ...). The same descriptions validate what a target answers
(:func:`schema_problems`) and drive the Hypothesis strategies, so the spec is written once.

Scapy is slow (~0.1 ms a packet): the layers describe and display; bulk fuzzing encodes plain dicts with
:func:`encode_frame` and the suite decodes answers with :func:`decode_frame`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from dataclasses import dataclass

from scapy.fields import Field, IntField
from scapy.packet import Packet, Raw

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
TOPIC_RE = re.compile(r"[A-Za-z0-9_-]{1,255}")


# -- wire kinds of JSON values ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """What a JSON value must be on the wire."""

    name: str
    nullable: bool = False
    items: "Kind | None" = None  # for lists
    struct: tuple["JsonField", ...] = ()  # for objects with a fixed schema

    def problems(self, value, path: str) -> list[str]:
        if value is None:
            return [] if self.nullable else [f"{path}: null where {self.name} is required"]
        check = _CHECKS[self.name]
        return check(self, value, path)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_range(hi):
    def check(kind, value, path):
        if not _is_int(value):
            return [f"{path}: {type(value).__name__} {value!r} where an integer is required"]
        if not 0 <= value <= hi:
            return [f"{path}: {value} outside 0..{hi}"]
        return []

    return check


def _string(kind, value, path):
    return [] if isinstance(value, str) else [f"{path}: {type(value).__name__} where a string is required"]


def _topic(kind, value, path):
    if not isinstance(value, str):
        return [f"{path}: {type(value).__name__} where a topic name is required"]
    return [] if TOPIC_RE.fullmatch(value) else [f"{path}: {value[:40]!r} is not a valid topic name"]


def _bool(kind, value, path):
    return [] if isinstance(value, bool) else [f"{path}: {type(value).__name__} where a boolean is required"]


def _b64(kind, value, path):
    if not isinstance(value, str):
        return [f"{path}: {type(value).__name__} where a base64 string is required"]
    return [] if decode_b64(value) is not None else [f"{path}: not standard padded base64"]


def _list(kind, value, path):
    if not isinstance(value, list):
        return [f"{path}: {type(value).__name__} where an array is required"]
    out = []
    for i, item in enumerate(value):
        out += kind.items.problems(item, f"{path}[{i}]")
    return out


def _object(kind, value, path):
    if not isinstance(value, dict):
        return [f"{path}: {type(value).__name__} where an object is required"]
    out = []
    for field in kind.struct:
        if field.name not in value:
            out.append(f"{path}.{field.name}: missing")
        else:
            out += field.kind.problems(value[field.name], f"{path}.{field.name}")
    return out


_CHECKS = {
    "u16": _int_range(0xFFFF),
    "u32": _int_range(U32_MAX),
    "u64": _int_range(U64_MAX),
    "usize": _int_range(U64_MAX),
    "string": _string,
    "topic": _topic,
    "bool": _bool,
    "b64": _b64,
    "list": _list,
    "object": _object,
    "any-object": lambda kind, value, path: [] if isinstance(value, dict) else [f"{path}: not an object"],
}

U16, U32, U64, USIZE = Kind("u16"), Kind("u32"), Kind("u64"), Kind("usize")
STRING, TOPIC, BOOL, B64 = Kind("string"), Kind("topic"), Kind("bool"), Kind("b64")
ANY_OBJECT = Kind("any-object")


def list_of(kind: Kind) -> Kind:
    return Kind("list", items=kind)


def object_of(*fields: "JsonField") -> Kind:
    return Kind("object", struct=tuple(fields))


def nullable(kind: Kind) -> Kind:
    return Kind(kind.name, nullable=True, items=kind.items, struct=kind.struct)


def decode_b64(text: str) -> bytes | None:
    """Strict standard base64 with padding (decision D3); None when invalid."""
    if len(text) % 4:
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


# -- scapy layers -----------------------------------------------------------------------------------------


class JsonField(Field):
    """One key of a JSON message; its value is a Python object, its wire kind a :class:`Kind`."""

    __slots__ = ["kind"]
    islist = 1  # a JSON array is one value: stop scapy from expanding it into one packet per element

    def __init__(self, name, default, kind: Kind):
        self.kind = kind
        super().__init__(name, default)

    def i2repr(self, pkt, value):
        text = json.dumps(value)
        return text if len(text) <= 80 else text[:77] + "..."


class RustLogFrame(Packet):
    """u32 big-endian payload length, then the payload as a message layer (seed §Frame Structure).

    Build ``RustLogFrame() / Produce(...)`` (the length is computed unless given); a dissected frame carries
    the message layer as its payload, or Raw when the payload is not a known JSON message.
    """

    name = "RustLogFrame"
    fields_desc = [IntField("length", None)]

    def post_build(self, p, pay):
        if self.length is None:
            p = struct.pack(">I", len(pay)) + p[4:]
        return p + pay

    def extract_padding(self, s):
        return s[: self.length], s[self.length :] or None

    def guess_payload_class(self, payload):
        return _message_class(payload) or Raw

    def message(self) -> "JsonMessage | Raw":
        """The payload as a message layer (Raw when it is not a known JSON message)."""
        return dissect_message(bytes(self.payload))


class JsonMessage(Packet):
    """Base of every RustLog message layer: fields are JSON keys, the wire form is one JSON object."""

    type_name = ""

    def self_build(self):  # noqa: D401 - scapy hook
        obj = {"type": self.type_name}
        for field in self.fields_desc:
            obj[field.name] = self.getfieldval(field.name)
        return json.dumps(obj, separators=(",", ":")).encode()

    def do_dissect(self, s):
        obj = json.loads(s)
        for field in self.fields_desc:
            if field.name in obj:
                self.setfieldval(field.name, obj[field.name])
        return b""

    def to_dict(self) -> dict:
        return json.loads(bytes(self))


def _message(name: str, *fields: JsonField, response: bool = False) -> type[JsonMessage]:
    cls = type(name, (JsonMessage,), {"name": f"RustLog {name}", "type_name": name, "fields_desc": list(fields)})
    (RESPONSES if response else REQUESTS)[name] = cls
    return cls


REQUESTS: dict[str, type[JsonMessage]] = {}
RESPONSES: dict[str, type[JsonMessage]] = {}

F = JsonField
Produce = _message("Produce", F("topic", "t", TOPIC), F("partition", 0, U32), F("records", [], list_of(B64)))
Fetch = _message("Fetch", F("group_id", "", STRING), F("topic", "t", TOPIC), F("partition", 0, U32),
                 F("offset", 0, U64), F("max_bytes", 1_048_576, USIZE))
# Commits name topics as plain strings: a name that cannot exist is "not found" (success false / offset null,
# seed §Offset Commit Response), not an invalid request.
OffsetCommit = _message("OffsetCommit", F("group", "g", STRING), F("topic", "t", STRING), F("partition", 0, U32),
                        F("offset", 0, U64))
OffsetFetch = _message("OffsetFetch", F("group", "g", STRING), F("topic", "t", STRING), F("partition", 0, U32))
CreateTopic = _message("CreateTopic", F("topic", "t", TOPIC), F("partition_count", 1, U32))
ListTopics = _message("ListTopics")
DescribeTopic = _message("DescribeTopic", F("topic", "t", TOPIC))
DescribePartition = _message("DescribePartition", F("topic", "t", TOPIC), F("partition", 0, U32))
MetricsFetch = _message("MetricsFetch")
Ping = _message("Ping")

PARTITION_INFO = (F("partition", 0, U32), F("high_watermark", 0, U64), F("log_start_offset", 0, U64),
                  F("segment_count", 1, USIZE))
ProduceResponse = _message("ProduceResponse", F("base_offset", 0, U64), F("record_count", 0, USIZE), response=True)
FetchResponse = _message(
    "FetchResponse",
    F("records", [], list_of(object_of(F("offset", 0, U64), F("timestamp", 0, U64), F("payload", "", B64)))),
    F("next_offset", 0, U64),
    response=True,
)
OffsetCommitResponse = _message("OffsetCommitResponse", F("success", True, BOOL), response=True)
OffsetFetchResponse = _message("OffsetFetchResponse", F("offset", None, nullable(U64)), response=True)
CreateTopicResponse = _message("CreateTopicResponse", F("success", True, BOOL), F("partitions_created", 0, U32),
                               response=True)
ListTopicsResponse = _message(
    "ListTopicsResponse", F("topics", [], list_of(object_of(F("name", "", STRING), F("partition_count", 0, U32)))),
    response=True)
DescribeTopicResponse = _message("DescribeTopicResponse", F("topic", "t", STRING),
                                 F("partitions", [], list_of(object_of(*PARTITION_INFO))), response=True)
DescribePartitionResponse = _message("DescribePartitionResponse", F("topic", "t", STRING), *PARTITION_INFO,
                                     response=True)
MetricsFetchResponse = _message("MetricsFetchResponse", F("metrics", {}, ANY_OBJECT), response=True)
Pong = _message("Pong", response=True)
Error = _message("Error", F("code", 400, U16), F("message", "", STRING), F("details", None, nullable(ANY_OBJECT)),
                 response=True)

#: request type -> the response type that answers it (seed §Message Types: <Name>Response, Ping -> Pong).
ANSWERS = {name: ("Pong" if name == "Ping" else f"{name}Response") for name in REQUESTS}


def message_layers() -> dict[str, type[JsonMessage]]:
    """Every message layer by name (the contract tests round-trip each one)."""
    return {**REQUESTS, **RESPONSES}


def _message_class(payload: bytes) -> type[JsonMessage] | None:
    try:
        obj = json.loads(payload)
        return REQUESTS.get(obj.get("type")) or RESPONSES.get(obj.get("type"))
    except (ValueError, AttributeError, TypeError, RecursionError):
        return None


def dissect_message(payload: bytes) -> JsonMessage | Raw:
    cls = _message_class(payload)
    return cls(payload) if cls is not None else Raw(payload)


def dissect(answer: bytes, request: bytes | None = None) -> RustLogFrame:
    """A whole answer frame as ``RustLogFrame / <message layer>`` (JSON names its own type: the request is not
    needed)."""
    return RustLogFrame(answer)


# -- fast codec (no scapy) --------------------------------------------------------------------------------


class FrameDecodeError(ValueError):
    """A frame that is not a RustLog JSON message; the message says why."""


def encode_payload(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def encode_frame(obj_or_payload) -> bytes:
    """A whole frame: the length prefix computed from the payload (never copied from a document)."""
    payload = obj_or_payload if isinstance(obj_or_payload, (bytes, bytearray)) else encode_payload(obj_or_payload)
    return struct.pack(">I", len(payload)) + payload


def decode_frame(frame: bytes) -> dict:
    """A whole response frame -> its JSON object; raises FrameDecodeError naming the problem."""
    if len(frame) < 4:
        raise FrameDecodeError(f"frame of {len(frame)} bytes has no length prefix")
    (length,) = struct.unpack_from(">I", frame)
    if length != len(frame) - 4:
        raise FrameDecodeError(f"length prefix says {length}, payload has {len(frame) - 4} bytes")
    try:
        text = frame[4:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrameDecodeError(f"payload is not UTF-8: {exc}") from None
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise FrameDecodeError(f"payload is not JSON: {exc}") from None
    except RecursionError:
        raise FrameDecodeError("payload JSON is nested too deeply to decode") from None
    if not isinstance(obj, dict):
        raise FrameDecodeError(f"payload is a JSON {type(obj).__name__}, not an object")
    if not isinstance(obj.get("type"), str):
        raise FrameDecodeError('payload has no string "type"')
    return obj


def schema_problems(obj: dict) -> list[str]:
    """Everything wrong with a decoded message against its layer's field kinds ([] when it conforms)."""
    cls = RESPONSES.get(obj.get("type")) or REQUESTS.get(obj.get("type"))
    if cls is None:
        return [f"unknown message type {obj.get('type')!r}"]
    return object_of(*cls.fields_desc).problems(obj, obj["type"])


def describe(frame: bytes) -> str:
    """One frame as text for transcripts; never raises."""
    try:
        obj = decode_frame(frame)
    except FrameDecodeError as exc:
        return f"<undecodable: {exc}>"
    text = json.dumps(obj, separators=(",", ":"))
    return text if len(text) <= 300 else text[:297] + "..."
