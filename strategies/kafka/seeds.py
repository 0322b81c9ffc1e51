"""Kafka requests traced by their codec: each field's span as the struct codec writes it (``trace``), and the
traced seeds the mutants start from (``Seed``, ``random_seed``)."""

from __future__ import annotations

import functools
import struct
from typing import NamedTuple

from wirecheck.protocols import fields as f
from wirecheck.protocols.framing import I32_PREFIX
from wirecheck.protocols.kafka import messages
from wirecheck.protocols.kafka.codec import NullableStruct, StructCodec, _Sized
from wirecheck.strategies import operators
from wirecheck.strategies.binary import Span
from wirecheck.strategies.kafka.values import random_request
from wirecheck.strategies.traced import TracedSeed

#: the frame's size prefix
LENGTH = Span("length", "fixed", I32_PREFIX.length_offset, I32_PREFIX.header_size, "int32")


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


@functools.cache
def field_nullable(api_key: int, version: int, path: str) -> bool:
    """Whether the request field a span's ``path`` names (``body.Topics[0].Name``) is nullable at ``version``."""
    codec = messages.request_codec(api_key, version)
    for part in path.split(".")[1:]:
        name = part.split("[")[0]
        codec = next(c for n, c, _ in _struct(codec).regular if n == name)
        for _ in range(part.count("[")):
            codec = _unsized(codec).item
    return bool(getattr(_unsized(codec), "nullable", False)) or isinstance(_unsized(codec), NullableStruct)


def _unsized(codec):
    return codec.codec if isinstance(codec, _Sized) else codec


def _struct(codec) -> StructCodec:
    codec = _unsized(codec)
    return codec.inner if isinstance(codec, NullableStruct) else codec


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
    """(frame, spans) for a request; span offsets are absolute in the frame (the length prefix included). Besides
    each field's spans: ``length`` (the size prefix) and ``body`` (all of the body)."""
    out = bytearray(LENGTH.end)
    spans = [LENGTH]
    header_codec = messages.request_header_codec(messages.request_header_version(api_key, version))
    header = {"RequestApiKey": api_key, "RequestApiVersion": version, "CorrelationId": correlation_id,
              "ClientId": client_id}
    trace(header_codec, header, out, "header", spans)
    body_start = len(out)
    trace(messages.request_codec(api_key, version), body, out, "body", spans)
    spans.append(Span("body", "body", body_start, len(out)))
    out[LENGTH.start : LENGTH.end] = struct.pack(">i", len(out) - LENGTH.end)
    return bytes(out), spans


class KafkaRequest(NamedTuple):
    """What an answer to a mutant must match (the classifier's context), and the valid frame it came from."""

    api_key: int
    version: int
    correlation_id: int
    original: bytes = b""


class Seed(TracedSeed):
    """A valid request frame and where its fields sit: what the bulk operators mutate (context: its
    :class:`KafkaRequest`)."""

    @property
    def api_key(self) -> int:
        return self.context.api_key

    @property
    def version(self) -> int:
        return self.context.version

    @functools.cached_property
    def body(self) -> list[Span]:
        """The body's field spans."""
        return [s for s in self.spans if s.path.startswith("body.")]

    @functools.cached_property
    def targets(self) -> dict[str, list[Span]]:
        """Operator -> the spans it can break in this frame (empty when it cannot apply)."""
        body = self.body
        counts = [s for s in body if s.kind in ("count", "length")]
        sections = [s for s in body if s.kind == "tag-section"]
        return {
            "hostile-count": counts, "negative-length": counts,
            "truncate": operators.get("truncate").applicable(body),
            "overlong-varint": [s for s in body if s.prefix.startswith("uvarint")],
            "unknown-tag": sections, "truncated-tag": sections,
            "invalid-utf8": [s for s in body if s.kind == "data" and s.prefix == "text" and s.size >= 2],
            "duplicate-field": operators.get("duplicate-field").applicable(body),
            "drop-field": operators.get("drop-field").applicable(body),
            "swap-fields": operators.get("swap-fields").applicable(body),
        }


def traced_seed(api_key: int, version: int, correlation_id: int, client_id, body: dict) -> Seed:
    """A request traced as a :class:`Seed`."""
    frame, spans = traced_request(api_key, version, correlation_id, client_id, body)
    return Seed(messages.api_name(api_key), frame, tuple(spans), KafkaRequest(api_key, version, correlation_id, frame))


def random_seed(rng, api_keys=None, version_ranges=None, fixup=None) -> Seed:
    """A valid random request, traced. ``fixup(api_key, body)`` may adjust the body first (e.g. switch off topic
    auto-creation)."""
    api_key, version, body = random_request(rng, api_keys, version_ranges)
    if fixup is not None:
        fixup(api_key, body)
    return traced_seed(api_key, version, rng.randint(0, 2**31 - 1), "wirecheck", body)
