"""Hypothesis strategies for Kafka: valid messages for any (api key, version) straight from the definitions,
record batches, and structure-aware mutations that each carry what a conforming broker may do with them.

Valid values respect the definitions: fields exist only in their versions, null only where
``nullableVersions`` allows it, tagged fields only where ``taggedVersions`` allows them, integers in their
type's range (with the boundaries drawn often), strings and bytes of useful sizes (stack notes: Hypothesis'
default binary sizes are tiny, so sizes are drawn explicitly).
"""

from __future__ import annotations

import functools
import random
import struct
import uuid
from dataclasses import dataclass
from typing import NamedTuple

from hypothesis import strategies as st

from wirecheck.protocols import fields as f
from wirecheck.protocols import compression
from wirecheck.protocols.kafka import errors, messages, misread, records
from wirecheck.protocols.kafka.codec import TAGGED, NullableStruct, StructCodec, _Sized
from wirecheck.protocols.kafka import HELLO_CORRELATION_ID, SPEC
from wirecheck.protocols.framing import leading_correlation_id
from wirecheck.protocols.kafka.clauses import CATALOGUE
from wirecheck.protocols.reactions import ANSWER, ERROR, MALFORMED as UNREADABLE, SILENCE, Lazy, Observation, Reaction
from wirecheck.protocols import reactions
from wirecheck.strategies import binary
from wirecheck.strategies import operators as operators_registry
from wirecheck.strategies.binary import Span
from wirecheck.strategies.engine import Mutant

# ---------------------------------------------------------------------------------------------------------
# Valid values


@functools.cache
def _integers(low: int, high: int):
    """Integers in [low, high], with the boundaries (and 0, +-1) drawn often."""
    boundaries = sorted({v for v in (low, high, 0, -1, 1, low + 1, high - 1) if low <= v <= high})
    small = st.integers(max(low, -1000), min(high, 1000))
    return st.one_of(st.sampled_from(boundaries), small, st.integers(low, high))


# Strategies are built once and cached: building (and validating) strategy objects inside every draw costs
# more than drawing from them.


@functools.cache
def _exact_text(size: int):
    return st.text(min_size=size, max_size=size)


@functools.cache
def _exact_binary(size: int):
    return st.binary(min_size=size, max_size=size)


@functools.cache
def _sized_text(max_size: int):
    """Text whose length is drawn uniformly-ish (st.text's own sizes are tiny, see the stack notes)."""
    return st.integers(0, max_size).flatmap(_exact_text)


@functools.cache
def _sized_binary(max_size: int):
    return st.integers(0, max_size).flatmap(_exact_binary)


@functools.lru_cache(maxsize=None)
def value_strategy(codec, *, max_items: int = 3, max_text: int = 24, unknown_tags: bool = False,
                   records_strategy=None):
    """A strategy for values the codec accepts (a dict for a struct)."""
    if isinstance(codec, _Sized):
        codec = codec.codec
    if isinstance(codec, StructCodec):
        return _struct_strategy(codec, max_items, max_text, unknown_tags, records_strategy)
    if isinstance(codec, NullableStruct):
        return st.none() | value_strategy(codec.inner, max_items=max_items, max_text=max_text,
                                          unknown_tags=unknown_tags, records_strategy=records_strategy)
    if isinstance(codec, f.ArrayCodec):
        items = st.lists(value_strategy(codec.item, max_items=max(1, max_items - 1), max_text=max_text,
                                        unknown_tags=unknown_tags, records_strategy=records_strategy),
                         max_size=max_items)
        return st.none() | items if codec.nullable else items
    if isinstance(codec, f.LengthPrefixed):
        base = _sized_text(max_text) if codec.text else _sized_binary(max_text * 2)
        return st.none() | base if codec.nullable else base
    if codec is f.BOOL:
        return st.booleans()
    if codec is f.UUID:
        return st.one_of(st.just(uuid.UUID(int=0)), st.uuids())
    if codec is f.FLOAT64:
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(codec, f.FixedCodec):
        return _integers(codec.low, codec.high)
    raise TypeError(f"no strategy for codec {codec!r}")


def _struct_strategy(codec: StructCodec, max_items, max_text, unknown_tags, records_strategy):
    options = dict(max_items=max_items, max_text=max_text, unknown_tags=unknown_tags,
                   records_strategy=records_strategy)
    required = {}
    for name, field_codec, _ in codec.regular:
        definition = codec.defs[name]
        if definition.type == "records" and records_strategy is not None:
            inner = records_strategy
            required[name] = st.none() | inner if getattr(field_codec, "codec", field_codec).nullable else inner
        else:
            required[name] = value_strategy(field_codec, **options)
    optional = {name: value_strategy(field_codec, **options) for name, field_codec, _ in codec.tagged.values()}
    if codec.flexible and unknown_tags:
        first_free = max(codec.tagged, default=-1) + 1
        optional[TAGGED] = st.dictionaries(st.integers(first_free + 100, first_free + 10_000),
                                           _sized_binary(8), min_size=1, max_size=2)
    return st.fixed_dictionaries(required, optional=optional)


@functools.cache
def _key_choice(keys: tuple[int, ...]):
    return st.sampled_from(keys)


@functools.cache
def _version_range(low: int, high: int):
    return st.integers(low, high)


@st.composite
def api_and_version(draw, api_keys=None, kind: str = "request", include_removed: bool = False,
                    version_ranges=None):
    """(api key, version); ``version_ranges`` (api key -> (min, max)) narrows versions, e.g. to a target's."""
    keys = tuple(sorted(api_keys if api_keys is not None else messages.api_keys()))
    api_key = draw(_key_choice(keys))
    low, high = messages.versions(api_key)
    if include_removed:
        low = messages.encodable_versions(api_key).start  # 0, or a kio-only API's oldest kept version
    if version_ranges and api_key in version_ranges:
        low, high = version_ranges[api_key]
    version = draw(_version_range(low, high))
    return api_key, version


def bodies(api_key: int, version: int, kind: str = "request", **options):
    """Valid bodies (dicts) for one message."""
    codec = messages.request_codec(api_key, version) if kind == "request" else messages.response_codec(api_key,
                                                                                                      version)
    options.setdefault("records_strategy", DEFAULT_RECORDS)
    return value_strategy(codec, **options)


def layer_examples() -> dict:
    """Every message layer (protocols.kafka.layers.message_layers) -> a strategy of built body layers."""
    from wirecheck.protocols.kafka import layers

    return {cls.__name__: bodies(api_key, version, kind, unknown_tags=True).map(cls.from_value)
            for api_key, version, kind, cls in layers.body_classes()}


@dataclass(frozen=True)
class Message:
    api_key: int
    version: int
    kind: str
    body: dict


@st.composite
def any_message(draw, api_keys=None, kind: str = "request", include_removed: bool = False, version_ranges=None,
                **options) -> Message:
    """A valid message of any api key and version the definitions have."""
    api_key, version = draw(api_and_version(api_keys, kind, include_removed, version_ranges))
    return Message(api_key, version, kind, draw(bodies(api_key, version, kind, **options)))


client_ids = st.one_of(st.none(), st.just("wirecheck"), _sized_text(16))
correlation_ids = st.integers(0, 2**31 - 1)


@st.composite
def request_frames(draw, api_keys=None, include_removed: bool = False, **options) -> bytes:
    message = draw(any_message(api_keys, "request", include_removed, **options))
    return messages.encode_request(message.api_key, message.version, draw(correlation_ids), draw(client_ids),
                                   message.body)


# ---------------------------------------------------------------------------------------------------------
# Record batches


_HEADERS = st.lists(st.tuples(_sized_text(8), st.none() | _sized_binary(8)), max_size=2)
_KEYS = st.none() | _sized_binary(16)
_TIMESTAMP_DELTAS = st.integers(0, 10_000)


@functools.cache
def _values(max_value: int):
    return st.none() | _sized_binary(max_value)


@st.composite
def record_lists(draw, max_records: int = 4, max_value: int = 64):
    count = draw(st.integers(1, max_records))
    values = _values(max_value)
    return [records.Record(value=draw(values), key=draw(_KEYS), headers=draw(_HEADERS), offset_delta=index,
                           timestamp_delta=draw(_TIMESTAMP_DELTAS)) for index in range(count)]


_BASE_OFFSETS = st.sampled_from([0, 0, 1, 2**40])
_BASE_TIMESTAMPS = st.integers(0, 2**41)
_PRODUCER_IDS = st.sampled_from([-1, -1, 0, 1000])
_PRODUCER_EPOCHS = st.sampled_from([-1, 0, 5])
_SEQUENCES = st.sampled_from([-1, 0, 7])
_LEADER_EPOCHS = st.sampled_from([-1, 0])


@functools.cache
def _codec_choice(codecs: tuple[int, ...]):
    return st.sampled_from(codecs)


@st.composite
def record_batches(draw, max_records: int = 4, codecs=tuple(compression.NAMES)) -> records.RecordBatch:
    return records.RecordBatch(
        records=draw(record_lists(max_records)),
        base_offset=draw(_BASE_OFFSETS),
        compression=draw(_codec_choice(tuple(codecs))),
        base_timestamp=draw(_BASE_TIMESTAMPS),
        producer_id=draw(_PRODUCER_IDS),
        producer_epoch=draw(_PRODUCER_EPOCHS),
        base_sequence=draw(_SEQUENCES),
        partition_leader_epoch=draw(_LEADER_EPOCHS),
    )


def record_batch_bytes(max_records: int = 4, codecs=tuple(compression.NAMES)):
    return record_batches(max_records, codecs).map(records.encode_batch)


DEFAULT_RECORDS = record_batch_bytes(max_records=2)


# ---------------------------------------------------------------------------------------------------------
# Frame layout: where each field of an encoded frame sits (for mutations)


def _prefix_of(codec) -> str:
    prefix = codec.prefix
    if prefix == "compact":
        return "uvarint+1"
    return prefix.name  # "int16" / "int32"


def trace(codec, value, out: bytearray, path: str, spans: list[Span]) -> None:
    """Encode ``value`` into ``out`` like ``codec.write`` and record a :class:`Span` per field."""
    if isinstance(codec, _Sized):
        codec = codec.codec
    start = len(out)
    if isinstance(codec, StructCodec):
        for name, field_codec, default in codec.regular:
            trace(field_codec, value.get(name, default), out, f"{path}.{name}", spans)
        if codec.flexible:
            tagged_only = bytearray()
            _write_section(codec, value, tagged_only)
            section_start = len(out)
            count_end = section_start + len(f.uvarint_bytes(_count_section(tagged_only)))
            out += tagged_only
            spans.append(Span(f"{path}._tagged_fields", "tag-count", section_start, count_end, "uvarint"))
            spans.append(Span(f"{path}._tagged_fields", "tag-section", section_start, len(out), "uvarint"))
        return
    if isinstance(codec, NullableStruct):
        spans.append(Span(path, "fixed", start, start + 1, "int8", -1 if value is None else 1))
        if value is None:
            codec.write(out, None)
        else:
            out.append(1)
            trace(codec.inner, value, out, path, spans)
        return
    if isinstance(codec, f.ArrayCodec):
        if value is None:
            codec.write(out, None)
            spans.append(Span(path, "count", start, len(out), _prefix_of(codec), None))
            return
        if codec.prefix == "compact":
            f.write_uvarint(out, len(value) + 1)
        else:
            codec.prefix.write(out, len(value))
        spans.append(Span(path, "count", start, len(out), _prefix_of(codec), len(value)))
        for index, item in enumerate(value):
            trace(codec.item, item, out, f"{path}[{index}]", spans)
        return
    if isinstance(codec, f.LengthPrefixed):
        codec.write(out, value)
        if value is None:
            spans.append(Span(path, "length", start, len(out), _prefix_of(codec), -1))
            return
        data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        data_start = len(out) - len(data)
        spans.append(Span(path, "length", start, data_start, _prefix_of(codec), len(data)))
        spans.append(Span(path, "data", data_start, len(out), "text" if codec.text else "bytes", data))
        return
    codec.write(out, value)
    spans.append(Span(path, "fixed", start, len(out), getattr(codec, "name", "fixed"), value))


def _write_section(codec: StructCodec, value: dict, out: bytearray) -> None:
    full = bytearray()
    codec.write(full, value)
    regular = bytearray()
    for name, field_codec, default in codec.regular:
        field_codec.write(regular, value.get(name, default))
    out += full[len(regular):]


def _count_section(section: bytes) -> int:
    return f.read_uvarint(section, 0)[0]


def traced_request(api_key: int, version: int, correlation_id: int, client_id, body: dict):
    """(frame, spans) for a request; span offsets are absolute in the frame (the length prefix included)."""
    out = bytearray(4)
    spans = [Span("length", "fixed", 0, 4, "int32")]
    header_codec = messages.request_header_codec(messages.request_header_version(api_key, version))
    header = {"RequestApiKey": api_key, "RequestApiVersion": version, "CorrelationId": correlation_id,
              "ClientId": client_id}
    trace(header_codec, header, out, "header", spans)
    trace(messages.request_codec(api_key, version), body, out, "body", spans)
    out[0:4] = struct.pack(">i", len(out) - 4)
    return bytes(out), spans


# ---------------------------------------------------------------------------------------------------------
# Mutations and what a conforming broker may do with them


@functools.lru_cache(maxsize=8192)  # mutants of one corpus repeat their reactions; a Reaction is immutable
def expect(clause: str, why: str, *outcomes: str) -> Reaction:
    """A reaction from Kafka's outcome names: ``answer`` (a response that decodes at the request's version; it may
    carry ordinary per-topic errors), ``close``, ``silent`` (no answer before the deadline, e.g. the broker waits
    for bytes a lying length promised), ``error:N`` (a response carrying error code N)."""
    kinds, codes = set(), set()
    for outcome in outcomes:
        if outcome.startswith("error:"):
            kinds.add(ERROR)
            codes.add(int(outcome.split(":", 1)[1]))
        else:
            kinds.add(SILENCE if outcome == "silent" else outcome)
    return Reaction(frozenset(kinds), clause, why, codes=frozenset(codes) if codes else None, keeps_open=False)


MALFORMED = ("close", f"error:{errors.INVALID_REQUEST}")


class KafkaRequest(NamedTuple):
    """What an answer to a mutant must match (the classifier's context), and the valid frame it came from."""

    api_key: int
    version: int
    correlation_id: int
    original: bytes = b""


def mutated(frame: bytes, operator: str, field: str, reaction: Reaction, original: bytes, api_key: int,
            version: int) -> Mutant:
    """A mutant of ``original`` (a valid request frame)."""
    correlation_id = struct.unpack_from(">i", original, 8)[0]
    return Mutant(frame, operator, field, reaction, KafkaRequest(api_key, version, correlation_id, original))


def _reframe(data: bytes) -> bytes:
    return binary.reframe_i32(data[4:])


def mutate_hostile_count(frame: bytes, spans, span: Span, value: int, api_key, version) -> Mutant:
    new_frame = _reframe(binary.set_number(frame, span, value))
    return mutated(new_frame, "hostile-count", span.path, expect(
        "kafka.encoding.hostile-count", f"{span.kind} {span.path} claims {value}", *MALFORMED), frame, api_key,
        version)


def mutate_truncate(frame: bytes, cut: int, target: str, api_key, version) -> Mutant:
    new_frame = _reframe(frame[:cut])
    return mutated(new_frame, "truncate", target, expect(
        "kafka.encoding.malformed-body", f"body cut at byte {cut} inside {target}", *MALFORMED), frame, api_key,
        version)


def mutate_overlong_varint(frame: bytes, span: Span, api_key, version) -> Mutant:
    value, _ = f.read_uvarint(frame, span.start)
    new_frame = _reframe(binary.replace(frame, span, binary.overlong_uvarint(value, 6)))
    return mutated(new_frame, "overlong-varint", span.path, expect(
        "kafka.encoding.malformed-body", f"6-byte varint in {span.path} (at most 5 allowed)", *MALFORMED), frame,
        api_key, version)


def mutate_unknown_tag(frame: bytes, span: Span, api_key, version, tag: int = 9_999,
                       payload: bytes = b"\x01\x02\x03") -> Mutant:
    """Add an unknown tag to a tagged-field section: a conforming broker skips it and answers normally."""
    section = frame[span.start : span.end]
    entries, _ = f.read_tagged_section(section, 0)
    items = [(t, p) for t, p, _ in entries] + [(tag, payload)]
    items.sort(key=lambda item: item[0])
    new = bytearray()
    f.write_tagged_section(new, items)
    new_frame = _reframe(binary.replace(frame, span, bytes(new)))
    return mutated(new_frame, "unknown-tag", span.path, expect(
        "kafka.encoding.unknown-tags", f"unknown tag {tag} in {span.path} must be skipped", "answer"), frame,
        api_key, version)


def mutate_truncated_tag(frame: bytes, span: Span, api_key, version) -> Mutant:
    """A tagged field whose size claims more bytes than the frame has left."""
    section = frame[span.start : span.end]
    entries, _ = f.read_tagged_section(section, 0)
    new = bytearray()
    f.write_uvarint(new, len(entries) + 1)
    for t, p, _ in entries:
        f.write_uvarint(new, t)
        f.write_uvarint(new, len(p))
        new += p
    f.write_uvarint(new, 10_000)
    f.write_uvarint(new, 200)  # claims 200 bytes; the frame ends after 2
    new += b"\x00\x00"
    new_frame = _reframe(frame[: span.start] + bytes(new))  # everything after is dropped: the tag runs off the end
    return mutated(new_frame, "truncated-tag", span.path, expect(
        "kafka.encoding.malformed-body", f"tag in {span.path} claims 200 bytes, 2 present", *MALFORMED), frame,
        api_key, version)


def mutate_negative_length(frame: bytes, span: Span, api_key, version) -> Mutant:
    value = -2  # -1 is the null marker; -2 is never valid (compact: N+1 wraps to 2**32-1, Java's -1 - 1)
    new_frame = _reframe(binary.set_number(frame, span, value))
    return mutated(new_frame, "negative-length", span.path, expect(
        "kafka.encoding.malformed-body", f"length {value} in {span.path}", *MALFORMED), frame, api_key, version)


def mutate_invalid_utf8(frame: bytes, span: Span, api_key, version) -> Mutant:
    """Replace the last two bytes of a string (at least 2 bytes long) with an invalid UTF-8 sequence; the
    length stays true, so the encoding is the only defect.

    Kafka's readers decode strings with Java's ``new String(bytes, UTF_8)``, which substitutes U+FFFD instead
    of failing, so a broker may process the request; rejecting it is permitted too. Only survival is required.
    """
    new = bytes(frame[span.start : span.end - 2]) + b"\xc3\x28"
    return mutated(_reframe(binary.replace(frame, span, new)), "invalid-utf8", span.path,
                        expect("kafka.robustness.survives", f"invalid UTF-8 in {span.path}", "answer", *MALFORMED),
                        frame, api_key, version)


def mutate_frame_length(frame: bytes, lie: int, api_key, version) -> Mutant:
    """The outer length lies: larger (the broker waits or closes), negative (closes)."""
    mutated_frame = struct.pack(">i", lie) + frame[4:]
    if lie < 0:
        reaction = expect("kafka.framing.negative-size", f"frame length {lie}", "close")
    else:
        reaction = expect("kafka.framing.size-prefix", f"frame length {lie} for {len(frame) - 4} bytes",
                             "silent", "close")
    return mutated(mutated_frame, "frame-length", "length", reaction, frame, api_key, version)


def mutate_trailing_bytes(frame: bytes, extra: bytes, api_key, version) -> Mutant:
    """Bytes after the body inside the frame. Kafka's parsers stop at the body's end; whether a broker
    rejects the rest is not specified, so only liveness is required (any outcome but a hang or crash)."""
    return mutated(_reframe(frame + extra), "trailing-bytes", "body", expect(
        "kafka.robustness.survives", f"{len(extra)} bytes after the body", "answer", "close",
        f"error:{errors.INVALID_REQUEST}"), frame, api_key, version)


OPERATORS = ("hostile-count", "negative-length", "truncate", "overlong-varint", "unknown-tag", "truncated-tag",
             "invalid-utf8", "frame-length", "trailing-bytes")


@st.composite
def mutated_requests(draw, api_keys=None, operators=OPERATORS, version_ranges=None, fixup=None,
                     **options) -> Mutant:
    """A valid request with exactly one structural defect, and what a conforming broker may do with it.

    ``fixup(api_key, body)`` may adjust the valid body first (on a copy), e.g. to keep it harmless.
    """
    message = draw(any_message(api_keys, "request", version_ranges=version_ranges, **options))
    body = dict(message.body)
    if fixup is not None:
        fixup(message.api_key, body)
    frame, spans = traced_request(message.api_key, message.version, draw(correlation_ids), "wirecheck", body)
    key, version = message.api_key, message.version
    body_spans = [s for s in spans if s.path.startswith("body")]
    applicable = []
    for operator in operators:
        if operator == "hostile-count" and binary.spans_of(body_spans, "count", "length"):
            applicable.append(operator)
        elif operator == "negative-length" and [s for s in body_spans if s.kind in ("count", "length")]:
            applicable.append(operator)
        elif operator == "truncate" and body_spans and max(s.end for s in body_spans) > spans[-1].start:
            applicable.append(operator)
        elif operator in ("overlong-varint",) and [s for s in body_spans if s.prefix.startswith("uvarint")]:
            applicable.append(operator)
        elif operator in ("unknown-tag", "truncated-tag") and binary.spans_of(body_spans, "tag-section"):
            applicable.append(operator)
        elif operator == "invalid-utf8" and [s for s in body_spans if s.kind == "data" and s.prefix == "text"
                                             and s.size >= 2]:
            applicable.append(operator)
        elif operator in ("frame-length", "trailing-bytes"):
            applicable.append(operator)
    operator = draw(st.sampled_from(applicable))
    if operator == "hostile-count":
        span = draw(st.sampled_from(binary.spans_of(body_spans, "count", "length")))
        value = draw(st.sampled_from(binary.hostile_numbers(span.prefix)))
        return mutate_hostile_count(frame, spans, span, value, key, version)
    if operator == "negative-length":
        span = draw(st.sampled_from([s for s in body_spans if s.kind in ("count", "length")]))
        return mutate_negative_length(frame, span, key, version)
    if operator == "truncate":
        start = min(s.start for s in body_spans)
        cut = draw(st.integers(start, len(frame) - 1))
        target = next((s.path for s in body_spans if s.start <= cut < s.end), "body")
        return mutate_truncate(frame, cut, target, key, version)
    if operator == "overlong-varint":
        span = draw(st.sampled_from([s for s in body_spans if s.prefix.startswith("uvarint")]))
        return mutate_overlong_varint(frame, span, key, version)
    if operator == "unknown-tag":
        span = draw(st.sampled_from(binary.spans_of(body_spans, "tag-section")))
        return mutate_unknown_tag(frame, span, key, version)
    if operator == "truncated-tag":
        span = draw(st.sampled_from(binary.spans_of(body_spans, "tag-section")))
        return mutate_truncated_tag(frame, span, key, version)
    if operator == "invalid-utf8":
        span = draw(st.sampled_from([s for s in body_spans if s.kind == "data" and s.prefix == "text" and s.size >= 2]))
        return mutate_invalid_utf8(frame, span, key, version)
    if operator == "frame-length":
        lie = draw(st.sampled_from([len(frame) - 4 + 1, len(frame) - 4 + 1000, -1, -2**31]))
        return mutate_frame_length(frame, lie, key, version)
    extra = draw(st.binary(min_size=1, max_size=8))
    return mutate_trailing_bytes(frame, extra, key, version)


# ---------------------------------------------------------------------------------------------------------
# Record batch mutations (inside an otherwise valid Produce request)


def produce_body(version: int, topic: str, partition: int, batch: bytes, acks: int = -1,
                 timeout_ms: int = 5000, topic_id: uuid.UUID | None = None) -> dict:
    """A Produce body for one partition (topic by name, or by id from v13)."""
    topic_entry = {"Name": topic, "PartitionData": [{"Index": partition, "Records": batch}]}
    if topic_id is not None:
        topic_entry["TopicId"] = topic_id
    return {"TransactionalId": None, "Acks": acks, "TimeoutMs": timeout_ms, "TopicData": [topic_entry]}


@dataclass(frozen=True)
class BatchMutation:
    batch: bytes
    operator: str
    reaction: Reaction


def corrupt_crc(batch: bytes) -> BatchMutation:
    crc_at = records.CRC_OFFSET
    bad = batch[:crc_at] + struct.pack(">I", struct.unpack_from(">I", batch, crc_at)[0] ^ 0x1) + batch[crc_at + 4:]
    return BatchMutation(bad, "crc-mismatch", expect("kafka.produce.crc-mismatch", "batch CRC off by one bit",
                                                     f"error:{errors.CORRUPT_MESSAGE}"))


def corrupt_payload(batch: bytes) -> BatchMutation:
    """Flip a bit after the CRC without fixing it: the CRC check must catch it."""
    at = len(batch) - 1
    return BatchMutation(binary.flip_bit(batch, at), "payload-bit-flip", expect(
        "kafka.produce.crc-mismatch", "a record byte changed after the CRC was computed",
        f"error:{errors.CORRUPT_MESSAGE}"))


def wrong_magic(batch: bytes, magic: int = 1) -> BatchMutation:
    bad = batch[: records.MAGIC_OFFSET] + bytes([magic & 0xFF]) + batch[records.MAGIC_OFFSET + 1:]
    return BatchMutation(bad, "wrong-magic", expect(
        "kafka.produce.invalid-record", f"magic {magic} in Produce v3+",
        f"error:{errors.INVALID_RECORD}", f"error:{errors.CORRUPT_MESSAGE}"))


def lying_batch_length(batch: bytes, delta: int) -> BatchMutation:
    (length,) = struct.unpack_from(">i", batch, records.LENGTH_OFFSET)
    bad = batch[: records.LENGTH_OFFSET] + struct.pack(">i", length + delta) + batch[records.LENGTH_OFFSET + 4:]
    return BatchMutation(bad, "lying-batch-length", expect(
        "kafka.produce.batch-length", f"batchLength {length + delta} for {length} bytes",
        f"error:{errors.CORRUPT_MESSAGE}", f"error:{errors.INVALID_RECORD}", "close"))


def lying_record_count(batch: bytes, count: int) -> BatchMutation:
    at = records.BATCH_OVERHEAD - 4
    bad = records.recompute_crc(batch[:at] + struct.pack(">i", count) + batch[at + 4:])
    return BatchMutation(bad, "lying-record-count", expect(
        "kafka.produce.batch-length", f"record count {count} with a valid CRC",
        f"error:{errors.CORRUPT_MESSAGE}", f"error:{errors.INVALID_RECORD}"))


@st.composite
def mutated_batches(draw, max_records: int = 3) -> BatchMutation:
    batch = records.encode_batch(draw(record_batches(max_records, codecs=(compression.NONE,))))
    choice = draw(st.sampled_from(["crc", "payload", "magic", "length", "count"]))
    if choice == "crc":
        return corrupt_crc(batch)
    if choice == "payload":
        return corrupt_payload(batch)
    if choice == "magic":
        return wrong_magic(batch, draw(st.sampled_from([0, 1, 3, -1])))
    if choice == "length":
        return lying_batch_length(batch, draw(st.sampled_from([1, 100, -1, -40, 2**30])))
    return lying_record_count(batch, draw(st.sampled_from([0, 2**31 - 1, -1, 1000])))


# ---------------------------------------------------------------------------------------------------------
# Bulk generation without Hypothesis: a seeded random.Random walks the same codecs. Hypothesis spends ~0.1 ms
# per draw on bookkeeping (shrinking needs it); bulk cases need thousands of frames per second and replay by
# seed instead of shrinking.

_BOUNDARY_PICKS = (0, 1, -1)


def random_value(rng, codec, depth: int = 0, max_items: int = 3, max_text: int = 24):
    """A valid value for ``codec`` drawn from ``rng`` (a ``random.Random``)."""
    if isinstance(codec, _Sized):
        codec = codec.codec
    if isinstance(codec, StructCodec):
        value = {name: random_value(rng, c, depth + 1, max_items, max_text) for name, c, _ in codec.regular}
        for name, c, _ in codec.tagged.values():
            if rng.random() < 0.3:
                value[name] = random_value(rng, c, depth + 1, max_items, max_text)
        return value
    if isinstance(codec, NullableStruct):
        return None if rng.random() < 0.2 else random_value(rng, codec.inner, depth, max_items, max_text)
    if isinstance(codec, f.ArrayCodec):
        if codec.nullable and rng.random() < 0.1:
            return None
        count = rng.randint(0, max(0, max_items - depth))
        return [random_value(rng, codec.item, depth + 1, max_items, max_text) for _ in range(count)]
    if isinstance(codec, f.LengthPrefixed):
        if codec.nullable and rng.random() < 0.15:
            return None
        size = rng.randint(0, max_text)
        if codec.text:
            return "".join(chr(rng.choice((rng.randint(0x20, 0x7E), rng.randint(0xA0, 0x2FFF)))) for _ in range(size))
        return rng.randbytes(size)
    if codec is f.BOOL:
        return rng.random() < 0.5
    if codec is f.UUID:
        return uuid.UUID(int=rng.getrandbits(128))
    if codec is f.FLOAT64:
        return rng.uniform(-1e9, 1e9)
    if isinstance(codec, f.FixedCodec):
        roll = rng.random()
        if roll < 0.2:
            return rng.choice((codec.low, codec.high))
        if roll < 0.4 and codec.low < 0:
            return rng.choice(_BOUNDARY_PICKS)
        return rng.randint(codec.low, codec.high)
    raise TypeError(f"no generator for codec {codec!r}")


def random_request(rng, api_keys=None, version_ranges=None) -> tuple[int, int, dict]:
    """(api key, version, valid body). ``version_ranges`` (api key -> (min, max)) narrows the versions, e.g.
    to what a target advertises; by default the definitions' ranges."""
    keys = sorted(api_keys if api_keys is not None else messages.api_keys())
    api_key = rng.choice(keys)
    low, high = (version_ranges or {}).get(api_key, messages.versions(api_key))
    version = rng.randint(low, high)
    return api_key, version, random_value(rng, messages.request_codec(api_key, version))


@dataclass(frozen=True)
class Seed:
    """A valid request frame and where its body fields sit: what the bulk operators mutate."""

    frame: bytes
    spans: list
    api_key: int
    version: int

    @functools.cached_property
    def body(self) -> list[Span]:
        return [s for s in self.spans if s.path.startswith("body")]

    @functools.cached_property
    def targets(self) -> dict[str, list[Span]]:
        """Operator -> the spans it can break in this frame (empty when it cannot apply)."""
        body = self.body
        counts = [s for s in body if s.kind in ("count", "length")]
        sections = [s for s in body if s.kind == "tag-section"]
        return {
            "hostile-count": counts, "negative-length": counts, "truncate": body,
            "overlong-varint": [s for s in body if s.prefix.startswith("uvarint")],
            "unknown-tag": sections, "truncated-tag": sections,
            "invalid-utf8": [s for s in body if s.kind == "data" and s.prefix == "text" and s.size >= 2],
            "duplicate-field": operators_registry.get("duplicate-field").applicable(body),
            "drop-field": operators_registry.get("drop-field").applicable(body),
            "swap-fields": operators_registry.get("swap-fields").applicable(body),
        }


def random_seed(rng, api_keys=None, version_ranges=None, fixup=None) -> Seed:
    """A valid random request, traced. ``fixup(api_key, body)`` may adjust the body first (e.g. switch off topic
    auto-creation)."""
    api_key, version, body = random_request(rng, api_keys, version_ranges)
    if fixup is not None:
        fixup(api_key, body)
    frame, spans = traced_request(api_key, version, rng.randint(0, 2**31 - 1), "wirecheck", body)
    return Seed(frame, spans, api_key, version)


#: Operators that rearrange whole fields: the result may still parse (as something else), so only survival is
#: required. Not on Fetch or Metadata, where a shifted byte could start a long poll or create a topic.
REARRANGING = ("duplicate-field", "drop-field", "swap-fields")
REARRANGE_EXCLUDED = (1, 3)


@functools.lru_cache(maxsize=8192)
def _survives(why: str) -> Reaction:
    """Any answer, any error, or a close: only survival is required."""
    return reactions.answer_or_close("kafka.robustness.survives", why, keeps_open=False)


def mutate_seed(rng, seed: Seed, operators=OPERATORS, other: Seed | None = None) -> Mutant | None:
    """One structural defect in ``seed`` (None when no operator applies to it)."""
    frame, api_key, version, targets = seed.frame, seed.api_key, seed.version, seed.targets
    choices = [op for op in operators if op in ("frame-length", "trailing-bytes")
               or (op == "concatenated" and other is not None)
               or (targets.get(op) and not (op in REARRANGING and api_key in REARRANGE_EXCLUDED))]
    if not choices:
        return None
    operator = rng.choice(choices)
    if operator == "hostile-count":
        span = rng.choice(targets[operator])
        return mutate_hostile_count(frame, seed.spans, span, rng.choice(binary.hostile_numbers(span.prefix)),
                                    api_key, version)
    if operator == "negative-length":
        return mutate_negative_length(frame, rng.choice(targets[operator]), api_key, version)
    if operator == "truncate":
        body = seed.body
        cut = rng.randint(min(s.start for s in body), len(frame) - 1)
        target = next((s.path for s in body if s.start <= cut < s.end), "body")
        return mutate_truncate(frame, cut, target, api_key, version)
    if operator == "overlong-varint":
        return mutate_overlong_varint(frame, rng.choice(targets[operator]), api_key, version)
    if operator == "unknown-tag":
        return mutate_unknown_tag(frame, rng.choice(targets[operator]), api_key, version)
    if operator == "truncated-tag":
        return mutate_truncated_tag(frame, rng.choice(targets[operator]), api_key, version)
    if operator == "invalid-utf8":
        return mutate_invalid_utf8(frame, rng.choice(targets[operator]), api_key, version)
    if operator in REARRANGING:
        span = rng.choice(targets[operator])
        new = _reframe(operators_registry.apply(operator, rng, frame, span))
        return mutated(new, operator, span.path, _survives(f"{operator} of {span.path}: the body may still parse, "
                                                          "as something else"), frame, api_key, version)
    if operator == "concatenated":
        new = operators_registry.concatenated(frame, other.frame)
        return mutated(new, operator, "body", expect(
            "kafka.robustness.survives", "a second request body after the first, under one length",
            "answer", "close", f"error:{errors.INVALID_REQUEST}"), frame, api_key, version)
    if operator == "frame-length":
        return mutate_frame_length(frame, rng.choice([len(frame) - 3, len(frame) + 996, -1, -(2**31)]), api_key,
                                   version)
    return mutate_trailing_bytes(frame, rng.randbytes(rng.randint(1, 8)), api_key, version)


def random_mutant(rng, api_keys=None, version_ranges=None, operators=OPERATORS, fixup=None) -> Mutant:
    """One valid random request with one structural defect (the operators of :func:`mutated_requests`)."""
    while True:
        mutant = mutate_seed(rng, random_seed(rng, api_keys, version_ranges, fixup), operators)
        if mutant is not None:
            return mutant


# ---------------------------------------------------------------------------------------------------------
# The adapter for the bulk engine

operators_registry.register("unknown-tag", "unknown-enum", "an unknown tag added to a tagged-field section")
operators_registry.register("truncated-tag", "truncation", "a tagged field whose size runs past the end of the frame")

#: ApiVersions, Metadata, ListOffsets, Fetch, OffsetFetch, FindCoordinator, DescribeGroups, ListGroups,
#: DescribeConfigs, DescribeCluster: reading APIs. Bulk mutants are drawn from these only (and Metadata without
#: auto-creation), so that the valid-but-odd ones (unknown tags, trailing bytes) cannot change a live cluster.
READ_ONLY = (18, 3, 2, 1, 9, 10, 15, 16, 32, 60)
# frame-length lies make a conforming broker wait (a case of their own); overlong varints have their own case so
# that a broker accepting them fails one clearly named case instead of the bulk one.
BULK_OPERATORS = tuple(op for op in OPERATORS if op not in ("frame-length", "overlong-varint")) + (
    "concatenated", *REARRANGING)
CORPUS = 512  # valid seed requests kept for the bulk mutants; generating one costs more than mutating it

#: Error codes that mean "your request was not understood": an answer carrying one rejects the request.
REJECTIONS = {errors.INVALID_REQUEST, errors.UNSUPPORTED_VERSION, errors.UNKNOWN_SERVER_ERROR}


#: api key -> enum field -> its valid values, where Apache Kafka refuses others with INVALID_REQUEST (42)
ENUMS = {1: {"IsolationLevel": (0, 1)}, 2: {"IsolationLevel": (0, 1)}, 10: {"KeyType": (0, 1)}}


def harmless(api_key: int, body: dict) -> None:
    """Keep the valid part of a mutant valid and quick: no topic auto-creation, no Fetch long-poll, a client
    software name that passes ApiVersions v3+ validation (else 42 is the right answer), and enums Apache Kafka
    checks (IsolationLevel, the coordinator KeyType) in range: a mutant's base must itself be a valid request."""
    for enum, valid in ENUMS.get(api_key, {}).items():
        if enum in body and body[enum] not in valid:
            body[enum] = valid[0]
    if api_key == 3:
        body["AllowAutoTopicCreation"] = False
    elif api_key == 1:
        body["MaxWaitMs"], body["MinBytes"] = 0, 0
    elif api_key == 18:
        body["ClientSoftwareName"], body["ClientSoftwareVersion"] = "wirecheck", "0.1.0"
    elif api_key == 32:  # topic resources: an unknown resource type is rightly refused with 42 (a rejection)
        for resource in body.get("Resources") or []:
            resource["ResourceType"] = 2
    elif api_key == 60:
        body["EndpointType"] = 1  # brokers: a broker may refuse the controllers' endpoints (KIP-919)


def read_only_ranges(advertised: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Advertised versions of the read-only APIs that the definitions also know."""
    ranges = {}
    for key in READ_ONLY:
        if key in advertised:
            low = max(advertised[key][0], messages.versions(key)[0])
            high = min(advertised[key][1], messages.versions(key)[1])
            if low <= high:
                ranges[key] = (low, high)
    return ranges


def _short(obj, limit: int = 300) -> str:
    text = repr(obj)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class KafkaFuzz:
    """Kafka for strategies/engine.py: structural mutants of read-only requests at advertised versions,
    ApiVersions v0 as the keepalive, answers decoded at the request's version."""

    name = "kafka"
    catalogue = CATALOGUE
    pipelining_clause = "kafka.framing.pipelining"
    answers_in_order = True  # one connection's answers leave in request order (protocol guide 'Network')
    response_frame_clause = None  # an unframeable answer breaks the mutant's own clause

    KEEPALIVE_CORRELATION_ID = 0x57C1

    def __init__(self, ranges: dict[int, tuple[int, int]], operators=BULK_OPERATORS):
        self.ranges = ranges
        self.operators = operators
        # Metadata v1+ for no topic: its answer is a fraction of ApiVersions' (the broker encodes it per batch)
        if 3 in ranges and ranges[3][1] >= 1:
            self._keepalive_version = max(1, ranges[3][0])
            self.keepalive = messages.encode_request(3, self._keepalive_version, self.KEEPALIVE_CORRELATION_ID,
                                                     "wirecheck", {"Topics": [], "AllowAutoTopicCreation": False})
        else:
            self._keepalive_version = None
            self.keepalive = SPEC.hello()

    def mutants(self, rng: random.Random):
        """Mutants of a growing corpus of valid seeds (a new seed for one mutant in four, up to CORPUS)."""
        keys, corpus = list(self.ranges), []
        while True:
            if len(corpus) < CORPUS and (len(corpus) < 2 or rng.random() < 0.25):
                corpus.append(random_seed(rng, keys, self.ranges, harmless))
            mutant = mutate_seed(rng, rng.choice(corpus), self.operators, rng.choice(corpus))
            if mutant is not None:
                yield mutant

    answer_id = staticmethod(leading_correlation_id)
    keepalive_clause = "kafka.encoding.response-shape"  # a Metadata or ApiVersions v0 answer that does not decode

    @property
    def keepalive_id(self) -> int:
        return HELLO_CORRELATION_ID if self._keepalive_version is None else self.KEEPALIVE_CORRELATION_ID

    @staticmethod
    def request_id(mutant: Mutant) -> int:
        return mutant.context.correlation_id

    def is_keepalive_answer(self, frame: bytes) -> bool:
        if self._keepalive_version is None:
            return SPEC.is_hello_answer(frame)
        try:
            decoded = messages.decode_response(3, self._keepalive_version, frame)
        except messages.DecodeError:
            return False
        return decoded["header"]["CorrelationId"] == self.KEEPALIVE_CORRELATION_ID

    def classify(self, mutant: Mutant, frame: bytes) -> Observation:
        request: KafkaRequest = mutant.context
        try:
            decoded = messages.decode_response(request.api_key, request.version, frame)
        except messages.DecodeError as exc:
            return Observation(UNREADABLE, detail=f"undecodable: {exc}", **self._misread(mutant, frame))
        if decoded["header"]["CorrelationId"] != request.correlation_id:
            return Observation(UNREADABLE, detail=f"correlation id {decoded['header']['CorrelationId']}, "
                                                  f"sent {request.correlation_id}")
        codes = errors.error_codes(decoded["body"]) - {errors.NONE}
        if not codes:
            return Observation(ANSWER, detail=Lazy(_short, decoded["body"]))
        code = errors.INVALID_REQUEST if errors.INVALID_REQUEST in codes else min(codes)
        return Observation(ERROR, code=code, detail=Lazy(_short, decoded["body"]), rejects=code in REJECTIONS)

    @staticmethod
    def _misread(mutant: Mutant, frame: bytes) -> dict:
        """The clause an undecodable answer breaks when it is not the mutant's (misread.clause_of): a target
        whose reaction may be a close may refuse the request, so an answer that is no response at all is a
        refusal in a form the spec does not permit."""
        request: KafkaRequest = mutant.context
        clause = misread.clause_of(request.api_key, request.version, frame,
                                   refusable=reactions.CLOSE in mutant.reaction.outcomes)
        if clause == misread.REFUSAL_CLAUSE:
            return {"clause": clause, "expected": "the connection closed or an INVALID_REQUEST (42) answer"}
        return {"clause": clause}

    def seeds(self) -> list[bytes]:
        """One valid, harmless request per read-only API at its highest advertised version (raw replay)."""
        frames = []
        for key, (_, high) in sorted(self.ranges.items()):
            body = random_value(random.Random(key), messages.request_codec(key, high))
            harmless(key, body)
            frames.append(messages.encode_request(key, high, key + 1, "wirecheck", body))
        return frames


def fuzz_setup(name: str) -> list[bytes]:
    """Requests that prepare :func:`fuzz_adapter`: ApiVersions v0 (what the target advertises)."""
    return [messages.encode_request(messages.API_VERSIONS, 0, 1, "wirecheck", {})]


def fuzz_adapter(name: str, answers: list[bytes]) -> KafkaFuzz:
    body = messages.decode_response(messages.API_VERSIONS, 0, answers[0])["body"]
    advertised = {entry["ApiKey"]: (entry["MinVersion"], entry["MaxVersion"]) for entry in body["ApiKeys"]}
    return KafkaFuzz(read_only_ranges(advertised))


def offline_adapter() -> KafkaFuzz:
    """An adapter built without a target: every read-only API at every version the definitions know."""
    # READ_ONLY only: asking every key's versions would load the kio-only definitions for nothing
    return KafkaFuzz(read_only_ranges({key: messages.versions(key) for key in READ_ONLY if key in messages.api_keys()}))
