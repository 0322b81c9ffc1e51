"""A struct-based codec compiled from the message definitions, one per (message, version).

Values are plain dicts keyed by the definitions' field names (``{"ErrorCode": 0, "ApiKeys": [...]}``); arrays
are lists, nullable values may be None, ``uuid`` is :class:`uuid.UUID`, ``records`` and ``bytes`` are bytes.
In flexible versions every struct (the top level included) ends with a tagged-field section:

* a known tagged field appears in the dict under its name; on writing it is left out when it equals its
  default, as Kafka's generated writers do (KIP-482);
* unknown tags are kept raw under ``"_tagged_fields"`` ({tag: payload bytes}) and written back in tag order.

Encoding is lenient (a missing field takes its default; a field absent from the version is ignored) so one
dict can be written at several versions. Decoding is strict: every problem is a :class:`DecodeError` naming
the field path and the offset.
"""

from __future__ import annotations

import functools
import struct
import uuid

from wirecheck.protocols import fields as f
from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.kafka.schema import FieldDef, MessageDef

TAGGED = "_tagged_fields"
#: while a list (messages.tagged_defaults), every known tagged field decoded at its default value is named in it: a
#: writer may put them in (KIP-482 leaves it free), Kafka's leave them out, and some readers trip on them
DEFAULT_TAGS_SEEN: list[str] | None = None

ZERO_UUID = uuid.UUID(int=0)

_FIXED = {
    "int8": f.INT8,
    "int16": f.INT16,
    "int32": f.INT32,
    "int64": f.INT64,
    "uint16": f.UINT16,
    "uint32": f.UINT32,
    "uint64": f.UINT64,
    "float64": f.FLOAT64,
    "bool": f.BOOL,
    "uuid": f.UUID,
}

INTEGER_RANGES = {name: (c.low, c.high) for name, c in _FIXED.items() if getattr(c, "low", None) is not None}


class EncodeError(ValueError):
    """A value cannot be written as the definition says (wrong type, out of range, null where not allowed)."""


def default_value(field: FieldDef, version: int):
    """The field's default per the definition (README: numbers 0, strings "", arrays empty, unless given)."""
    raw = field.default
    nullable = field.nullable_in(version)
    if field.is_array:
        return None if (raw == "null" and nullable) else []
    if field.is_struct:
        if raw == "null" and nullable:
            return None
        return {sub.name: default_value(sub, version) for sub in field.fields if sub.present_in(version)}
    kind = field.type
    if raw == "null" and nullable:
        return None
    if kind in ("string",):
        return "" if raw is None else str(raw)
    if kind in ("bytes", "records"):
        return b""
    if kind == "bool":
        return raw is True or str(raw).lower() == "true"
    if kind == "uuid":
        return ZERO_UUID
    if kind == "float64":
        return float(raw) if raw is not None else 0.0
    if raw is None or raw == "":
        return 0
    return raw if isinstance(raw, int) else int(str(raw), 0)


def _min_size(codec) -> int:
    return getattr(codec, "min_size", getattr(codec, "size", 1))


def field_codec(field: FieldDef, version: int, flexible: bool):
    """The wire codec of one field at one version (ignoring tagging, which the struct handles)."""
    compact = flexible if field.flexible_override is None else version in field.flexible_override
    nullable = field.nullable_in(version)
    if field.is_array:
        if field.is_struct:
            item = struct_codec(field.fields, version, flexible, field.element_type)
        else:
            item = scalar_codec(field.element_type, compact, nullable=False)
        array = f.ArrayCodec(field.name, item, "compact" if compact else f.INT32, nullable, _min_size(item))
        return array
    if field.is_struct:
        inner = struct_codec(field.fields, version, flexible, field.type)
        return NullableStruct(inner) if nullable else inner
    return scalar_codec(field.type, compact, nullable)


def scalar_codec(kind: str, compact: bool, nullable: bool):
    if kind in _FIXED:
        return _FIXED[kind]
    if kind == "string":
        codec = f.string_codec(compact, nullable)
    elif kind in ("bytes", "records"):
        codec = f.bytes_codec(compact, nullable)
    else:
        raise ValueError(f"unknown Kafka field type {kind!r}")
    codec_min = 1 if compact else (2 if kind == "string" else 4)
    return _Sized(codec, codec_min)


class _Sized:
    """Attach a minimum wire size to a codec (used to bound hostile array counts)."""

    __slots__ = ("codec", "min_size", "name", "write", "read")

    def __init__(self, codec, min_size: int):
        self.codec, self.min_size, self.name = codec, min_size, codec.name
        self.write, self.read = codec.write, codec.read


class NullableStruct:
    """A single (non-array) nullable struct: an int8 marker, -1 null or 1 present (KIP-893)."""

    min_size = 1

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name

    def write(self, out: bytearray, value) -> None:
        if value is None:
            out.append(0xFF)
        else:
            out.append(1)
            self.inner.write(out, value)

    def read(self, buf: bytes, pos: int):
        marker, pos = f.INT8.read(buf, pos)
        if marker == -1:
            return None, pos
        if marker != 1:
            raise DecodeError(f"nullable struct marker {marker} (expected -1 or 1)", pos - 1)
        return self.inner.read(buf, pos)


def _read_steps(regular) -> list:
    """The regular fields as read steps: (name, codec), or a FixedRun for two or more fixed-size integer fields
    in a row (one ``struct`` call instead of one per field: most of a message's fields)."""
    steps, run = [], []
    for name, codec, _ in [*regular, (None, None, None)]:
        if type(codec) is f.FixedCodec:
            run.append((name, codec))
            continue
        steps += [f.FixedRun(run)] if len(run) > 1 else run
        run = []
        if name is not None:
            steps.append((name, codec))
    return steps


class StructCodec:
    """The fields of one struct at one version, in wire order, plus its tagged fields if flexible."""

    def __init__(self, name: str, field_defs, version: int, flexible: bool):
        self.name = name
        self.version = version
        self.flexible = flexible
        self.regular: list[tuple[str, object, object]] = []  # (name, codec, default)
        self.tagged: dict[int, tuple[str, object, object]] = {}  # tag -> (name, codec, default)
        self.defs: dict[str, FieldDef] = {}
        for fd in field_defs:
            if not fd.present_in(version):
                continue
            self.defs[fd.name] = fd
            codec = field_codec(fd, version, flexible)
            entry = (fd.name, codec, default_value(fd, version))
            if flexible and fd.tagged_in(version):
                self.tagged[fd.tag] = entry
            else:
                self.regular.append(entry)
        self.tagged = dict(sorted(self.tagged.items()))
        self.min_size = sum(_min_size(c) for _, c, _ in self.regular) + (1 if flexible else 0)
        self._reads = _read_steps(self.regular)

    def field_names(self) -> list[str]:
        return [name for name, _, _ in self.regular] + [name for name, _, _ in self.tagged.values()]

    def write(self, out: bytearray, value: dict) -> None:
        if not isinstance(value, dict):
            raise EncodeError(f"{self.name}: expected a dict, got {type(value).__name__}")
        for name, codec, default in self.regular:
            item = value.get(name, default)
            try:
                codec.write(out, item)
            except EncodeError as exc:
                raise EncodeError(f"{name}.{exc}") from None
            except (ValueError, TypeError, OverflowError, AttributeError, struct.error) as exc:
                raise EncodeError(f"{name}: cannot write {item!r}: {exc}") from None
        if not self.flexible:
            return
        sections: list[tuple[int, bytes]] = []
        for tag, (name, codec, default) in self.tagged.items():
            if name not in value or value[name] == default:
                continue
            payload = bytearray()
            try:
                codec.write(payload, value[name])
            except (ValueError, TypeError, OverflowError, AttributeError, struct.error) as exc:
                raise EncodeError(f"{name} (tag {tag}): cannot write {value[name]!r}: {exc}") from None
            sections.append((tag, bytes(payload)))
        unknown = value.get(TAGGED) or {}
        if unknown:
            sections.extend((int(tag), bytes(payload)) for tag, payload in unknown.items())
            sections.sort(key=lambda item: item[0])
        f.write_tagged_section(out, sections)

    def read(self, buf: bytes, pos: int):
        value = {}
        for step in self._reads:
            if type(step) is f.FixedRun:
                pos = step.read_into(value, buf, pos)
                continue
            name, codec = step
            try:
                value[name], pos = codec.read(buf, pos)
            except DecodeError as exc:
                raise exc.within(name) from None
        if not self.flexible:
            return value, pos
        try:
            sections, pos = f.read_tagged_section(buf, pos)
        except DecodeError as exc:
            raise exc.within(TAGGED) from None
        unknown = {}
        for tag, payload, at in sections:
            known = self.tagged.get(tag)
            if known is None:
                unknown[tag] = payload  # KIP-482: unknown tags are skipped, we keep them for display
                continue
            name, codec, _ = known
            try:
                decoded, end = codec.read(payload, 0)
            except DecodeError as exc:
                exc.offset += at
                raise exc.within(f"{name} (tag {tag})") from None
            if end != len(payload):
                raise DecodeError(f"tag {tag} has {len(payload)} bytes but its value used {end}", at, [name])
            if DEFAULT_TAGS_SEEN is not None and decoded == known[2]:
                DEFAULT_TAGS_SEEN.append(name)
            value[name] = decoded
        for name, _, default in self.tagged.values():
            value.setdefault(name, default)
        if unknown:
            value[TAGGED] = unknown
        return value, pos

    def encode(self, value: dict) -> bytes:
        out = bytearray()
        self.write(out, value)
        return bytes(out)

    def decode(self, data: bytes, pos: int = 0, exact: bool = True) -> dict:
        value, end = self.read(data, pos)
        if exact and end != len(data):
            raise DecodeError(f"{len(data) - end} trailing bytes after {self.name}", end)
        return value


@functools.cache
def _struct_cached(key, version: int, flexible: bool, name: str) -> StructCodec:
    return StructCodec(name, key, version, flexible)


def struct_codec(field_defs, version: int, flexible: bool, name: str) -> StructCodec:
    return _struct_cached(tuple(field_defs), version, flexible, name)


@functools.cache
def message_codec(definition: MessageDef, version: int) -> StructCodec:
    """The codec of a whole message body (or header) at ``version``."""
    return StructCodec(definition.name, definition.fields, version, definition.flexible(version))
