"""Scapy layers for every Kafka request and response at every version, generated from the definitions.

Nothing here is written per message: :func:`body_class` turns the compiled :class:`StructCodec` of a
(message, version) into a ``Packet`` class whose ``fields_desc`` follows the wire order. Scalar fields are
:class:`protocols.fields.CodecField` over the very codec objects the fast path uses, struct arrays are lists
of generated sub-packets, and flexible structs end with a ``_tagged_fields`` field. So a packet's bytes are
the codec's bytes by construction, and ``tests/unit/test_kafka_layers.py`` checks it on generated messages.

Frames: :class:`KafkaRequest` is length + request header (v0/v1/v2 chosen from the api key and version it
carries) and dissects its body by itself; a response does not say what it answers, so
:func:`response_frame_class` makes the frame class for one (api key, version).
"""

from __future__ import annotations

import functools

from scapy.fields import ConditionalField, Field, SignedIntField, SignedShortField
from scapy.packet import Packet, Raw

from wirecheck.protocols import fields as f
from wirecheck.protocols.kafka import messages
from wirecheck.protocols.kafka.codec import TAGGED, NullableStruct, StructCodec, message_codec
from wirecheck.protocols.kafka.schema import header as header_definition


class StructListField(Field):
    """An array of generated struct packets (classic INT32 or compact count; nullable when the codec is)."""

    __slots__ = ["codec", "cls"]
    islist = 1
    holds_packets = 1

    def __init__(self, name: str, cls, codec: f.ArrayCodec):
        self.codec, self.cls = codec, cls
        Field.__init__(self, name, [], fmt="!B")

    def addfield(self, pkt, s, val):
        out = bytearray()
        if val is None:
            self.codec.write(out, None)
            return s + bytes(out)
        prefix = self.codec.prefix
        if prefix == "compact":
            f.write_uvarint(out, len(val) + 1)
        else:
            prefix.write(out, len(val))
        return s + bytes(out) + b"".join(bytes(item) for item in val)

    def getfield(self, pkt, s):
        items, pos = self.codec.read(s, 0)  # strict decode first: a lying count fails here, cheaply
        if items is None:
            return s[pos:], None
        return s[pos:], [self.cls.from_value(item) for item in items]

    def i2repr(self, pkt, x):
        return repr(x)

    def randval(self):
        return []


class StructField(Field):
    """A single nested struct (nullable with an int8 marker when the codec says so)."""

    __slots__ = ["codec", "cls"]
    holds_packets = 1

    def __init__(self, name: str, cls, codec):
        self.codec, self.cls = codec, cls
        Field.__init__(self, name, None, fmt="!B")

    def addfield(self, pkt, s, val):
        if val is None:
            out = bytearray()
            self.codec.write(out, None)
            return s + bytes(out)
        prefix = b"\x01" if isinstance(self.codec, NullableStruct) else b""
        return s + prefix + bytes(val)

    def getfield(self, pkt, s):
        value, pos = self.codec.read(s, 0)
        return s[pos:], None if value is None else self.cls.from_value(value)


class TaggedFieldsField(Field):
    """A KIP-482 tagged-field section. Value: {field name: value} for known tags, {tag: bytes} for others."""

    __slots__ = ["owner"]

    def __init__(self, name: str, struct: StructCodec | None):
        self.owner = struct
        Field.__init__(self, name, {}, fmt="!B")

    def addfield(self, pkt, s, val):
        val = val or {}
        sections = []
        known = self.owner.tagged if self.owner else {}
        for tag, (name, codec, default) in known.items():
            if name in val and val[name] != default:
                out = bytearray()
                codec.write(out, val[name])
                sections.append((tag, bytes(out)))
        sections += [(tag, bytes(payload)) for tag, payload in val.items() if isinstance(tag, int)]
        sections.sort(key=lambda item: item[0])
        out = bytearray()
        f.write_tagged_section(out, sections)
        return s + bytes(out)

    def getfield(self, pkt, s):
        sections, pos = f.read_tagged_section(s, 0)
        known = self.owner.tagged if self.owner else {}
        value = {}
        for tag, payload, _ in sections:
            if tag in known:
                name, codec, _ = known[tag]
                value[name], _ = codec.read(payload, 0)
            else:
                value[tag] = payload
        return s[pos:], value

    def i2repr(self, pkt, x):
        return repr(x)


class KafkaStruct(Packet):
    """Base of every generated struct: knows its codec and converts to and from plain dicts."""

    codec: StructCodec = None

    def extract_padding(self, s):
        return b"", s  # a nested struct ends where its fields end; the rest belongs to the parent

    @classmethod
    def from_value(cls, value: dict) -> "KafkaStruct":
        """A packet holding ``value`` (a dict as the codec uses), nested structs converted too."""
        kwargs = {}
        for fld in cls.fields_desc:
            if fld.name == TAGGED:
                tagged = {name: value[name] for name, _, default in cls.codec.tagged.values()
                          if name in value and value[name] != default}
                tagged.update(value.get(TAGGED) or {})
                kwargs[TAGGED] = tagged
            elif fld.name in value:
                item = value[fld.name]
                if isinstance(fld, StructListField) and item is not None:
                    item = [fld.cls.from_value(element) for element in item]
                elif isinstance(fld, StructField) and item is not None:
                    item = fld.cls.from_value(item)
                kwargs[fld.name] = item
        return cls(**kwargs)

    def to_value(self) -> dict:
        """The packet as the codec's dict (tagged fields flattened, defaults filled as the codec does)."""
        value = {}
        for fld in self.fields_desc:
            item = self.getfieldval(fld.name)
            if fld.name == TAGGED:
                unknown = {k: v for k, v in (item or {}).items() if isinstance(k, int)}
                for name, _, default in self.codec.tagged.values():
                    value[name] = (item or {}).get(name, default)
                if unknown:
                    value[TAGGED] = unknown
            elif isinstance(fld, StructListField) and item is not None:
                value[fld.name] = [element.to_value() for element in item]
            elif isinstance(fld, StructField) and item is not None:
                value[fld.name] = item.to_value()
            else:
                value[fld.name] = item
        return value


class KafkaBody(KafkaStruct):
    """A top-level request or response body; bytes after it are shown as Padding (trailing garbage)."""

    def extract_padding(self, s):
        return b"", s if s else None


@functools.cache
def _struct_class(codec: StructCodec, top_level: bool) -> type:
    fields_desc = []
    for name, field_codec, default in codec.regular:
        fields_desc.append(_scapy_field(name, field_codec, default))
    if codec.flexible:
        fields_desc.append(TaggedFieldsField(TAGGED, codec))
    suffix = f"V{codec.version}"
    base = KafkaBody if top_level else KafkaStruct
    return type(f"{codec.name}{suffix}", (base,), {"name": f"{codec.name} v{codec.version}",
                                                   "fields_desc": fields_desc, "codec": codec})


def _scapy_field(name: str, codec, default):
    if isinstance(codec, f.ArrayCodec) and isinstance(codec.item, StructCodec):
        return StructListField(name, _struct_class(codec.item, False), codec)
    if isinstance(codec, StructCodec):
        return StructField(name, _struct_class(codec, False), codec)
    if isinstance(codec, NullableStruct):
        return StructField(name, _struct_class(codec.inner, False), codec)
    return f.CodecField(name, default, codec)


def body_class(api_key: int, version: int, kind: str) -> type:
    """The generated body class: ``kind`` is "request" or "response"."""
    codec = messages.request_codec(api_key, version) if kind == "request" else messages.response_codec(api_key,
                                                                                                      version)
    return _struct_class(codec, True)


def body_classes():
    """(api key, version, kind, body class) for every request and response at every encodable version."""
    for api_key in messages.api_keys():
        for version in messages.encodable_versions(api_key):
            for kind in ("request", "response"):
                yield api_key, version, kind, body_class(api_key, version, kind)


def message_layers() -> dict[str, type]:
    """Every message layer by name (the contract tests round-trip each one)."""
    return {cls.__name__: cls for *_, cls in body_classes()}


# ---------------------------------------------------------------------------------------------------------
# Frames


def _header_fields(header_version_of):
    client_id = f.string_codec(compact=False, nullable=True)
    return [
        SignedIntField("length", None),
        SignedShortField("api_key", 18),
        SignedShortField("api_version", 0),
        SignedIntField("correlation_id", 0),
        ConditionalField(f.CodecField("client_id", None, client_id), lambda p: header_version_of(p) >= 1),
        ConditionalField(TaggedFieldsField("header_tagged_fields", None), lambda p: header_version_of(p) >= 2),
    ]


def _request_header_version(pkt) -> int:
    try:
        return messages.request_header_version(pkt.api_key, pkt.api_version)
    except messages.UnknownApi:
        return 1  # unknown api key: a broker can still read header v1 (that is why ClientId stays classic)


class _Framed(Packet):
    def post_build(self, p, pay):
        whole = p + pay
        if self.length is None:
            whole = (len(whole) - 4).to_bytes(4, "big", signed=True) + whole[4:]
        return whole

    def extract_padding(self, s):
        if self.length is None or self.length < 0:
            return s, None
        body = self.length - (len(self.original) - len(s) - 4) if self.original else len(s)
        return s[:body], s[body:] or None

    def do_dissect_payload(self, s):
        if not s:  # an empty body (e.g. ApiVersions v0) is still a body layer, not "no payload"
            cls = self.guess_payload_class(s)
            if cls is not Raw:
                try:
                    self.add_payload(cls(b"", _internal=1, _underlayer=self))
                    return
                except Exception:  # a body with required fields cannot be empty: leave it absent
                    return
        super().do_dissect_payload(s)

    @classmethod
    def tcp_reassemble(cls, data, metadata, session):
        if len(data) < 4:
            return None
        length = int.from_bytes(data[:4], "big", signed=True)
        if length < 0 or len(data) >= 4 + length:
            return cls(data)
        return None


class KafkaRequest(_Framed):
    """A whole request frame; the header version and body class follow from api_key and api_version."""

    name = "Kafka request"
    fields_desc = _header_fields(_request_header_version)

    def guess_payload_class(self, payload):
        try:
            return body_class(self.api_key, self.api_version, "request")
        except messages.UnknownApi:
            return Raw


@functools.cache
def response_frame_class(api_key: int, version: int) -> type:
    """The frame class of one response: length + response header v0/v1 + the generated body."""
    header_version = messages.response_header_version(api_key, version)
    fields_desc = [SignedIntField("length", None), SignedIntField("correlation_id", 0)]
    if header_version >= 1:
        fields_desc.append(TaggedFieldsField("header_tagged_fields", message_codec(header_definition(
            "ResponseHeader"), 1)))
    body = body_class(api_key, version, "response")
    return type(f"{messages.api_name(api_key)}ResponseFrameV{version}", (_Framed,), {
        "name": f"Kafka {messages.api_name(api_key)} response v{version}",
        "fields_desc": fields_desc,
        "guess_payload_class": lambda self, payload: body,
    })


class KafkaResponse(_Framed):
    """A response frame whose request is unknown: length, correlation id, then the rest as Raw."""

    name = "Kafka response"
    fields_desc = [SignedIntField("length", None), SignedIntField("correlation_id", 0)]


def dissect(answer: bytes, request: bytes | None = None) -> Packet:
    """A whole response frame as a layer: the request it answers names the api key and version (a Kafka
    response does not); without a known request, a :class:`KafkaResponse` with a Raw body."""
    if request is not None and len(request) >= 8:
        api_key = int.from_bytes(request[4:6], "big", signed=True)
        version = int.from_bytes(request[6:8], "big", signed=True)
        try:
            return response_frame_class(api_key, version)(answer)
        except messages.UnknownApi:
            if api_key == 18:  # KIP-511: an ApiVersions version the broker does not speak is answered in v0
                return response_frame_class(api_key, 0)(answer)
    return KafkaResponse(answer)


def request_packet(api_key: int, version: int, correlation_id: int, client_id: str | None, body: dict) -> Packet:
    """A scapy request frame built from a body dict."""
    frame = KafkaRequest(api_key=api_key, api_version=version, correlation_id=correlation_id, client_id=client_id)
    return frame / body_class(api_key, version, "request").from_value(body)


def response_packet(api_key: int, version: int, correlation_id: int, body: dict) -> Packet:
    frame = response_frame_class(api_key, version)(correlation_id=correlation_id)
    return frame / body_class(api_key, version, "response").from_value(body)
