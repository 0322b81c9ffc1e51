"""Barco / PolarStreams byte formats as plain struct codecs (the hot path; layers.py describes the same bytes
for humans). Research notes: specs/barco.md §2 (binary producer), §4 (records), §5 (poll responses), §6.

Every integer is big-endian. A binary producer frame is a 13-byte header and a body::

    version u8 | flags u8 | stream id u16 | opcode u8 | body length u32 | head crc u32 (IEEE, header[0:9])
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field

import zstandard

from wirecheck.protocols.compression import CompressionError, read_zstd

VERSION = 1
FLAG_TIMESTAMP = 0x01
HEADER = struct.Struct(">BBHBI")  # the 9 bytes the CRC covers
HEADER_SIZE = 13

STARTUP, READY, ERROR, PRODUCE, PRODUCE_RESPONSE, HEARTBEAT = 1, 2, 3, 4, 5, 6
OPCODES = {STARTUP: "STARTUP", READY: "READY", ERROR: "ERROR", PRODUCE: "PRODUCE",
           PRODUCE_RESPONSE: "PRODUCE_RESPONSE", HEARTBEAT: "HEARTBEAT"}
REQUEST_OPCODES = (STARTUP, PRODUCE, HEARTBEAT)

SERVER_ERROR, ROUTING_ERROR, LEADER_NOT_FOUND = 0, 1, 2
ERROR_CODES = {SERVER_ERROR: "serverError", ROUTING_ERROR: "routingError", LEADER_NOT_FOUND: "leaderNotFoundError"}

MAX_MESSAGE_SIZE = 1 << 20  # POLAR_MAX_MESSAGE_SIZE (HTTP producer limit; decision D4 applies it to frames too)
#: the largest PRODUCE body: timestamp, a 255-byte key and topic with their lengths, and MAX_MESSAGE_SIZE of messages
MAX_BODY = 8 + 1 + 255 + 1 + 255 + MAX_MESSAGE_SIZE
MAX_ERROR_BODY = 512  # the Go client reads error bodies into a 512-byte buffer
DEFAULT_RANGES = 4  # POLAR_CONSUMER_RANGES

FRAMES_MIME = "application/vnd.polar.producer.frames"
NDJSON_MIME = "application/x-ndjson"
POLL_MIME = "application/vnd.polar.consumermessage"


class WireError(ValueError):
    """Bytes that do not follow the layout."""


def crc(header9: bytes) -> int:
    return zlib.crc32(header9) & 0xFFFFFFFF


HEADER_FIELDS = ("version", "flags", "stream_id", "opcode", "body_length")  # in HEADER's order; then the crc


def header(opcode: int, body_length: int, stream_id: int = 0, flags: int = 0, version: int = VERSION,
           crc_value: int | None = None, trace: list | None = None) -> bytes:
    """The 13-byte header; ``trace`` (if given) receives ``(path, kind, start, end, prefix)`` per field."""
    head = HEADER.pack(version, flags, stream_id, opcode, body_length)
    if trace is not None:
        at = 0
        for name, code in zip(HEADER_FIELDS, HEADER.format.lstrip(">")):
            width = struct.calcsize(">" + code)
            trace.append((name, "fixed", at, at + width, f"uint{8 * width}"))
            at += width
        trace.append(("crc", "crc", at, HEADER_SIZE, "uint32"))
    return head + struct.pack(">I", crc(head) if crc_value is None else crc_value)


def frame(opcode: int, body: bytes = b"", stream_id: int = 0, flags: int = 0, version: int = VERSION,
          trace: list | None = None) -> bytes:
    """A whole frame; ``trace`` receives the header's fields and ``body`` (what follows the header)."""
    out = header(opcode, len(body), stream_id, flags, version, trace=trace) + body
    if trace is not None:
        trace.append(("body", "data", HEADER_SIZE, len(out), ""))
    return out


@dataclass(frozen=True)
class Header:
    version: int
    flags: int
    stream_id: int
    opcode: int
    body_length: int
    crc: int

    @property
    def crc_ok(self) -> bool:
        return self.crc == crc(HEADER.pack(self.version, self.flags, self.stream_id, self.opcode, self.body_length))

    @property
    def name(self) -> str:
        return OPCODES.get(self.opcode, f"op{self.opcode}")


def parse_header(data: bytes) -> Header:
    if len(data) < HEADER_SIZE:
        raise WireError(f"{len(data)} bytes: a header has 13")
    version, flags, stream_id, opcode, length = HEADER.unpack_from(data)
    return Header(version, flags, stream_id, opcode, length, int.from_bytes(data[9:13], "big"))


# -- bodies ------------------------------------------------------------------------------------------------------


def messages_part(messages: list[bytes]) -> bytes:
    """``{u32 length}{bytes}`` repeated: the PRODUCE messages and the frames MIME type of the HTTP producer."""
    return b"".join(struct.pack(">I", len(m)) + m for m in messages)


def split_messages(data: bytes) -> list[bytes]:
    """The messages of a framed part; the lengths must add up to the part exactly (decision D3)."""
    out, pos = [], 0
    while pos < len(data):
        if len(data) - pos < 4:
            raise WireError(f"{len(data) - pos} trailing bytes: not a message length")
        (length,) = struct.unpack_from(">I", data, pos)
        pos += 4
        if length > len(data) - pos:
            raise WireError(f"message length {length} overruns the body by {length - (len(data) - pos)} bytes")
        out.append(bytes(data[pos : pos + length]))
        pos += length
    return out


def produce_body(topic: bytes | str, messages: list[bytes], key: bytes | str = b"",
                 timestamp: int | None = None, trace: list | None = None) -> bytes:
    """A PRODUCE body; ``trace`` (if given) receives ``(path, kind, start, end, prefix)`` per field, offsets
    counted from the frame start (the body follows the header)."""
    topic = topic.encode() if isinstance(topic, str) else topic
    key = key.encode() if isinstance(key, str) else key
    head = b"" if timestamp is None else struct.pack(">q", timestamp)
    body = head + bytes([len(key)]) + key + bytes([len(topic)]) + topic + messages_part(messages)
    if trace is not None:
        _trace_produce(trace, len(head), key, topic, messages)
    return body


def _trace_produce(trace: list, head: int, key: bytes, topic: bytes, messages: list[bytes]) -> None:
    at = HEADER_SIZE
    if head:
        trace.append(("timestamp", "fixed", at, at + head, "int64"))
        at += head
    for name, value in (("key", key), ("topic", topic)):
        trace.append((name, "length", at, at + 1, "uint8"))
        trace.append((name, "data", at + 1, at + 1 + len(value), "bytes"))
        at += 1 + len(value)
    trace.append(("messages", "data", at, at + len(messages_part(messages)), ""))
    for index, message in enumerate(messages):
        trace.append((f"messages[{index}]", "length", at, at + 4, "uint32"))
        trace.append((f"messages[{index}]", "data", at + 4, at + 4 + len(message), "bytes"))
        at += 4 + len(message)


def produce(topic: bytes | str, messages: list[bytes], key: bytes | str = b"", stream_id: int = 1,
            timestamp: int | None = None) -> bytes:
    flags = FLAG_TIMESTAMP if timestamp is not None else 0
    return frame(PRODUCE, produce_body(topic, messages, key, timestamp), stream_id, flags)


@dataclass
class Produce:
    topic: bytes
    key: bytes
    messages: list[bytes]
    timestamp: int | None = None


def parse_produce(body: bytes, flags: int) -> Produce:
    pos, timestamp = 0, None
    if flags & FLAG_TIMESTAMP:
        if len(body) < 8:
            raise WireError("body shorter than its timestamp")
        (timestamp,) = struct.unpack_from(">q", body)
        pos = 8
    fields = []
    for what in ("partition key", "topic"):
        if pos >= len(body):
            raise WireError(f"body ends before the {what} length")
        length = body[pos]
        if pos + 1 + length > len(body):
            raise WireError(f"{what} length {length} overruns the body")
        fields.append(bytes(body[pos + 1 : pos + 1 + length]))
        pos += 1 + length
    return Produce(fields[1], fields[0], split_messages(body[pos:]), timestamp)


def error_body(code: int, message: str) -> bytes:
    return bytes([code]) + message.encode()


def parse_error(body: bytes) -> tuple[int, str]:
    if not body:
        raise WireError("an ERROR body has at least its code")
    return body[0], body[1:].decode("utf-8", "replace")


def parse_known_error(body: bytes) -> tuple[int, str]:
    """:func:`parse_error`, refusing a code the notes do not list (§2.5: 0, 1, 2). Whoever reads an ERROR judges
    this first, so that an unknown code is never misread as the defect of the clause that asked."""
    code, message = parse_error(body)
    if code not in ERROR_CODES:
        raise WireError(f"code {code} (the codes are 0, 1 and 2)")
    # §2.5: the message runs to the end of the body with no length prefix. A text message does not start with
    # NUL or 0x01 (a length's high byte up to 511), so such leading bytes counting the rest are a prefix.
    text = body[1:]
    for width in (2, 4):
        if len(text) >= width and int.from_bytes(text[:width], "big") == len(text) - width and text[0] < 2:
            raise WireError(f"a {8 * width}-bit length prefix ({text[:width].hex()}) before the message "
                            f"(its length is the body length - 1, unprefixed)")
    return code, message


# -- records and chunks ------------------------------------------------------------------------------------------

RECORD = struct.Struct(">qI")  # timestamp µs, body length; then the body


def records(items: list[tuple[int, bytes]]) -> bytes:
    return b"".join(RECORD.pack(ts, len(body)) + body for ts, body in items)


def parse_records(data: bytes) -> list[tuple[int, bytes]]:
    out, pos = [], 0
    while pos < len(data):
        if len(data) - pos < RECORD.size:
            raise WireError(f"{len(data) - pos} trailing bytes: not a record header")
        ts, length = RECORD.unpack_from(data, pos)
        pos += RECORD.size
        if length > len(data) - pos:
            raise WireError(f"record length {length} overruns the chunk")
        out.append((ts, bytes(data[pos : pos + length])))
        pos += length
    return out


MAX_DECOMPRESSED = 2 << 20  # MaxGroupSize: the decoder memory cap
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_has_checksum(payload: bytes) -> bool:
    """The frame header's Content_Checksum_flag (bit 2 of the frame header descriptor)."""
    return len(payload) > 4 and payload[:4] == ZSTD_MAGIC and bool(payload[4] & 0x04)


def decompress(payload: bytes, limit: int = MAX_DECOMPRESSED) -> bytes:
    """One zstd frame, checked against its checksum when it has one, bounded to ``limit`` bytes."""
    try:
        return read_zstd(payload, limit, across_frames=False)
    except CompressionError as exc:
        raise WireError(str(exc)) from None


def compress(data: bytes, checksum: bool = True) -> bytes:
    return zstandard.ZstdCompressor(write_checksum=checksum, write_content_size=True).compress(data)


# -- poll responses ----------------------------------------------------------------------------------------------

ITEM_HEAD = struct.Struct(">qBI")  # token, range index, gen version


@dataclass
class PollItem:
    token: int
    range_index: int
    version: int
    topic: bytes
    offset: int
    payload: bytes = b""
    values: list[bytes] = field(default_factory=list)  # JSON form: the record bodies

    def records(self) -> list[tuple[int, bytes]]:
        return parse_records(decompress(self.payload))


def poll_response(items: list[PollItem]) -> bytes:
    out = [struct.pack(">H", len(items))]
    for item in items:
        out.append(ITEM_HEAD.pack(item.token, item.range_index, item.version))
        out.append(bytes([len(item.topic) & 0xFF]) + item.topic)
        out.append(struct.pack(">qi", item.offset, len(item.payload)) + item.payload)
    return b"".join(out)


def parse_poll_response(data: bytes) -> list[PollItem]:
    """The binary poll body (notes §5.2): the item count is a number of items; the body ends with the last."""
    if len(data) < 2:
        raise WireError(f"{len(data)} bytes: no item count")
    (count,) = struct.unpack_from(">H", data)
    pos, items = 2, []
    for index in range(count):
        try:
            token, range_index, version = ITEM_HEAD.unpack_from(data, pos)
            pos += ITEM_HEAD.size
            topic_length = data[pos]
            topic = bytes(data[pos + 1 : pos + 1 + topic_length])
            if len(topic) != topic_length:
                raise WireError(f"item {index}: topic overruns the body")
            pos += 1 + topic_length
            offset, length = struct.unpack_from(">qi", data, pos)
            pos += 12
        except (struct.error, IndexError):
            raise WireError(f"item {index} of {count}: truncated at byte {pos}") from None
        if length < 0 or pos + length > len(data):
            raise WireError(f"item {index}: payload length {length} overruns the body")
        items.append(PollItem(token, range_index, version, topic, offset, bytes(data[pos : pos + length])))
        pos += length
    if pos != len(data):
        raise WireError(f"{len(data) - pos} bytes after the last of {count} items")
    return items


JSON_ITEM_KEYS = {"topic": str, "token": str, "rangeIndex": int, "version": int, "startOffset": str, "values": list}


def parse_poll_json(data: bytes) -> list[PollItem]:
    """The JSON poll body (notes §5.3): token and startOffset as decimal strings, values as JSON documents."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(f"not JSON: {exc}") from None
    if not isinstance(doc, list):
        raise WireError(f"a JSON array of items, not {type(doc).__name__}")
    items = []
    for index, entry in enumerate(doc):
        if not isinstance(entry, dict):
            raise WireError(f"item {index} is not an object")
        for key, kind in JSON_ITEM_KEYS.items():
            if not isinstance(entry.get(key), kind) or isinstance(entry.get(key), bool):
                raise WireError(f"item {index}: {key!r} missing or not a {kind.__name__}")
        try:
            token, offset = int(entry["token"]), int(entry["startOffset"])
        except ValueError:
            raise WireError(f"item {index}: token / startOffset not decimal") from None
        values = [json.dumps(v, separators=(",", ":")).encode() for v in entry["values"]]
        items.append(PollItem(token, entry["rangeIndex"], entry["version"], entry["topic"].encode(), offset,
                              values=values))
    return items


# -- discovery ---------------------------------------------------------------------------------------------------

DISCOVERY_PORTS = ("producerPort", "producerBinaryPort", "consumerPort")


def _positive_int(value, below: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < below


def discovered_port(doc, key: str) -> int | None:
    """One port of a brokers document when it is a valid one (a client learns what it can from a partial
    document; :func:`parse_brokers` judges the document whole)."""
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if _positive_int(value, 65536) else None


def parse_brokers(data: bytes) -> dict:
    """GET /v1/brokers (notes §6): length and the three ports are integers; names (when given) a list."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise WireError("not a JSON object")
    for key in ("length",) + DISCOVERY_PORTS:
        value = doc.get(key)
        if not _positive_int(value, 2**31 if key == "length" else 65536):
            raise WireError(f"{key!r} missing or not a valid integer: {value!r}")
    if "names" in doc and not (isinstance(doc["names"], list) and all(isinstance(n, str) for n in doc["names"])):
        raise WireError("'names' is not a list of strings")
    return doc


# -- describing --------------------------------------------------------------------------------------------------


def describe(data: bytes) -> str:
    """One binary producer frame as text; never raises."""
    try:
        head = parse_header(data)
    except WireError:
        return f"{len(data)} bytes: {data[:48].hex()}"
    body = data[HEADER_SIZE:]
    text = (f"v{head.version} flags={head.flags:#04x} sid={head.stream_id} {head.name} len={head.body_length}"
            f"{'' if head.crc_ok else ' BAD-CRC'}")
    try:
        if head.opcode == ERROR:
            code, message = parse_error(body)
            text += f" code={code} ({ERROR_CODES.get(code, '?')}) {message[:120]!r}"
        elif head.opcode == PRODUCE:
            p = parse_produce(body, head.flags)
            text += f" topic={p.topic[:60]!r} key={p.key[:30]!r} messages={len(p.messages)}"
            if p.timestamp is not None:
                text += f" ts={p.timestamp}"
    except WireError as exc:
        text += f" (body: {exc})"
    return text
