"""A table-driven codec for Kafka request and response bodies.

The tables are Apache Kafka's own message definitions (message_definitions.py). Each (message, version) is
compiled once into nested closures over the primitive readers and writers (codec_primitives.py), so decoding is a
walk over precomputed readers.

Values are plain Python: dicts keyed by the JSON field names, lists, ints, str, bytes (``bytes``, ``records``),
16-byte ``bytes`` for ``uuid``. Decoding fills every field of the version, defaults for absent tagged fields;
encoding takes the default for any key the dict lacks.

Encoding rules (KIP-482, RequestHeader.json/ResponseHeader.json): in a flexible version strings, bytes and
arrays are *compact* (unsigned varint N+1, 0 = null) and every struct ends with a tagged-field section; a field's
own ``flexibleVersions`` overrides the message's (the header's ClientId is never compact). Tagged fields equal to
their default are not written, as Kafka's generated writers do.
"""

from __future__ import annotations

import struct

from wirecheck.broker.kafka.codec_primitives import (FIXED, I8, I32, MalformedBody, blob_reader,
                                                                 fixed_reader, length_reader, read_bool, read_len32,
                                                                 read_uuid, read_uvarint, write_blob, write_uvarint)
from wirecheck.broker.kafka.message_definitions import VersionRange, load_message


# Decision: Kafka has no such limit, but this broker turns every decoded element into Python objects (~50x the
# wire size); a request holding more array elements than this is refused like a malformed one (connection
# closed) instead of costing gigabytes. 200,000 elements is far beyond any request a client sends.
MAX_ELEMENTS = 200_000
_elements = [0]  # elements decoded in the current request (decoding is synchronous: one request at a time)


class Options:
    """Codec deviations the broker's faults switch on (all False in a correct broker)."""

    def __init__(self, misskip_tags: bool = False, short_string_varint: bool = False, negative_null: bool = False,
                 default_tags: bool = False):
        self.misskip_tags = misskip_tags
        # variant tagged-defaults-written: every tagged field written, also at its default value
        self.default_tags = default_tags
        self.short_string_varint = short_string_varint
        # variant negative-count-null: any negative count or length of a nullable field is null, as Apache Kafka's
        # generated readers take it ("if (length < 0)"; a compact one computed in 32-bit ints)
        self.negative_null = negative_null


def _default(field: dict, version: int):
    """The value a field takes when it is absent (Kafka's MessageGenerator default rules)."""
    ftype, spec = field["type"], field.get("default")
    spec = None if spec is None else str(spec)  # a few definitions give JSON numbers/booleans
    if ftype.startswith("[]"):
        return None if spec == "null" else []
    if "fields" in field:
        return {f["name"]: _default(f, version) for f in field["fields"] if version in VersionRange(f["versions"])}
    if spec == "null":
        return None
    if ftype in ("int8", "int16", "int32", "int64", "uint16"):
        return int(spec, 0) if spec else 0
    if ftype == "float64":
        return float(spec) if spec else 0.0
    if ftype == "bool":
        return spec is not None and spec.lower() == "true"
    if ftype == "string":
        return spec or ""
    if ftype == "uuid":
        return bytes(16)
    if ftype == "records":
        return None
    return b""  # bytes


def _compile_type(field: dict, version: int, flexible: bool, opts: Options):
    """(reader, writer) for the value of one field at one version."""
    ftype = field["type"]
    nullable = version in VersionRange(field.get("nullableVersions"))
    if "flexibleVersions" in field:
        flexible = version in VersionRange(field["flexibleVersions"])
    if ftype.startswith("[]"):
        inner = dict(field, type=ftype[2:])
        inner.pop("nullableVersions", None)
        read_item, write_item = _compile_type(inner, version, flexible, opts)
        read_len = length_reader(True, opts.negative_null) if flexible else read_len32
        fixed = FIXED.get(inner["type"]) if "fields" not in inner else None
        null_below = -(2**31) if opts.negative_null else -1  # the lowest count read as null (when nullable)

        def read_array(buf, pos):
            n, pos = read_len(buf, pos)
            if n < 0:
                if n >= null_below and nullable:
                    return None, pos
                raise MalformedBody(f"array count {n}")
            # Every element takes at least one byte: a count larger than what is left is a lie, and we refuse
            # it before looping (no allocation or iteration driven by an unbacked count).
            if n > len(buf) - pos:
                raise MalformedBody(f"array count {n} exceeds the {len(buf) - pos} bytes left")
            _elements[0] += n
            if _elements[0] > MAX_ELEMENTS:
                raise MalformedBody(f"more than {MAX_ELEMENTS} array elements in one request")
            if fixed is not None:  # primitives: one C-level unpack instead of n reads
                end = pos + n * fixed.size
                if end > len(buf):
                    raise MalformedBody(f"array of {n} {inner['type']} beyond the frame")
                return list(struct.unpack_from(f">{n}{fixed.format[-1]}", buf, pos)), end
            items = []
            for _ in range(n):
                item, pos = read_item(buf, pos)
                items.append(item)
            return items, pos

        def write_array(value, out):
            if value is None:
                out += b"\x00" if flexible else b"\xff\xff\xff\xff"
                return
            if flexible:
                write_uvarint(len(value) + 1, out)
            else:
                out += I32.pack(len(value))
            for item in value:
                write_item(item, out)

        return read_array, write_array
    if "fields" in field:
        read_struct, write_struct = _compile_struct(field["fields"], version, flexible, opts)
        if not nullable:
            return read_struct, write_struct
        return _nullable_struct(read_struct, write_struct)
    if ftype in FIXED:
        st = FIXED[ftype]
        pack = st.pack

        def write_fixed(value, out):
            out += pack(value)

        return fixed_reader(st), write_fixed
    if ftype == "bool":
        return read_bool, lambda value, out: out.append(1 if value else 0)
    if ftype == "uuid":
        def write_uuid(value, out):
            out += value if value else bytes(16)
        return read_uuid, write_uuid
    if ftype in ("string", "bytes", "records"):
        return (blob_reader(ftype, flexible, nullable, opts.short_string_varint, opts.negative_null),
                write_blob(ftype, flexible))
    raise ValueError(f"unsupported field type {ftype}")


def _nullable_struct(read_struct, write_struct):
    """A nullable struct field is preceded by an INT8: -1 null, 1 present (Kafka's generated readers/writers)."""
    def read(buf, pos):
        marker, pos = _read_i8(buf, pos)
        if marker < 0:
            return None, pos
        return read_struct(buf, pos)

    def write(value, out):
        if value is None:
            out += I8.pack(-1)
            return
        out += I8.pack(1)
        write_struct(value, out)

    return read, write


_read_i8 = fixed_reader(I8)
_ABSENT = object()


def _compile_struct(fields: list[dict], version: int, flexible: bool, opts: Options):
    regular, tagged = [], {}
    for field in fields:
        if version not in VersionRange(field["versions"]):
            continue
        read, write = _compile_type(field, version, flexible, opts)
        default = _default(field, version)
        if default is None and version not in VersionRange(field.get("nullableVersions")):
            default = _default(dict(field, default=""), version)  # "null" default on a non-nullable version
        # A nullable field given as None is written null; a missing (or non-nullable None) one gets its default.
        nullable = version in VersionRange(field.get("nullableVersions"))
        if flexible and version in VersionRange(field.get("taggedVersions")):
            tagged[field["tag"]] = (field["name"], read, write, default)
        else:
            regular.append((field["name"], read, write, default, nullable))
    tag_order = sorted(tagged.items())
    misskip, every_tag = opts.misskip_tags, opts.default_tags

    def read_struct(buf, pos):
        value = {}
        for name, read, _, _, _ in regular:
            value[name], pos = read(buf, pos)
        if flexible:
            for name, _, _, default in tagged.values():
                value[name] = default
            count, pos = read_uvarint(buf, pos)
            if count > len(buf) - pos:
                raise MalformedBody(f"tagged field count {count} exceeds the bytes left")
            for _ in range(count):
                tag, pos = read_uvarint(buf, pos)
                size, pos = read_uvarint(buf, pos)
                end = pos + size
                if misskip and tag not in tagged:
                    end += 1  # fault: an unknown field is skipped one byte too far
                if end > len(buf):
                    raise MalformedBody(f"tagged field {tag} size {size} beyond the frame")
                known = tagged.get(tag)
                if known is not None:
                    value[known[0]], _ = known[1](buf[:end], pos)
                pos = end
        return value, pos

    def write_struct(value, out):
        get = value.get
        for name, _, write, default, nullable in regular:
            v = get(name, _ABSENT)
            write(default if v is _ABSENT or (v is None and not nullable) else v, out)
        if flexible:
            present = [(tag, write, v) for tag, (name, _, write, default) in tag_order
                       if (v := get(name, default)) != default or every_tag]
            write_uvarint(len(present), out)
            for tag, write, v in present:
                body = bytearray()
                write(v, body)
                write_uvarint(tag, out)
                write_uvarint(len(body), out)
                out += body

    return read_struct, write_struct


class Message:
    """One request or response definition, compiled per version on first use."""

    def __init__(self, name: str, opts: Options | None = None):
        self.spec = load_message(name)
        self.name = name
        self.valid = VersionRange(self.spec["validVersions"])
        self.flexible_versions = VersionRange(self.spec["flexibleVersions"])
        self.opts = opts or Options()
        self._compiled: dict[int, tuple] = {}

    def compile(self, version: int) -> None:
        self._get(version)

    def _get(self, version: int):
        compiled = self._compiled.get(version)
        if compiled is None:
            compiled = _compile_struct(self.spec["fields"], version, version in self.flexible_versions, self.opts)
            self._compiled[version] = compiled
        return compiled

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible_versions

    def decode(self, buf, version: int, pos: int = 0) -> tuple[dict, int]:
        if not isinstance(buf, memoryview):
            buf = memoryview(buf)  # slices for tagged fields must not copy the frame
        _elements[0] = 0
        try:
            return self._get(version)[0](buf, pos)
        except (struct.error, IndexError) as exc:
            raise MalformedBody(str(exc)) from None

    def encode(self, value: dict, version: int, out: bytearray | None = None) -> bytearray:
        out = bytearray() if out is None else out
        self._get(version)[1](value, out)
        return out

