"""Scapy layers for Fluvio frames, batches and records: for humans (transcripts, captures, the vector tests).

The hot paths use ``messages`` and ``records``; these layers describe the same bytes declaratively and are
checked against them byte for byte in tests/vectors. Request bodies are bound by api key; a body field is a
``CodecField`` over the versioned codec of ``messages`` at the version the layer is built for.
"""

from __future__ import annotations

import functools

from scapy.fields import (ByteField, FieldLenField, ShortField, SignedByteField, SignedIntField, SignedLongField,
                          SignedShortField, StrLenField, XIntField)
from scapy.packet import Packet, bind_layers

from wirecheck.protocols.fields import VARLONG, CodecField
from wirecheck.protocols.fluvio import messages


class _AtVersion:
    """A versioned codec seen as a plain ``protocols.fields`` codec (write/read without a version)."""

    def __init__(self, codec, version: int):
        self.codec, self.version = codec, version

    def write(self, out, value):
        self.codec.write(out, value, self.version)

    def read(self, buf, pos):
        return self.codec.read(buf, pos, self.version)


class FluvioRequest(Packet):
    """``i32 size | u16 api_key | i16 api_version | i32 correlation_id | String client_id`` then the body."""

    name = "Fluvio request"
    fields_desc = [
        SignedIntField("size", None),
        ShortField("api_key", 18),  # u16 upstream (A1); ShortField is unsigned
        SignedShortField("api_version", 0),
        SignedIntField("correlation_id", 0),
        FieldLenField("client_id_len", None, length_of="client_id", fmt="!h"),
        StrLenField("client_id", b"wirecheck", length_from=lambda p: max(0, p.client_id_len)),
    ]

    def post_build(self, pkt, pay):
        data = pkt + pay
        if self.size is None:
            data = (len(data) - 4).to_bytes(4, "big", signed=True) + data[4:]
        return data


class FluvioResponse(Packet):
    name = "Fluvio response"
    fields_desc = [SignedIntField("size", None), SignedIntField("correlation_id", 0)]

    def post_build(self, pkt, pay):
        data = pkt + pay
        if self.size is None:
            data = (len(data) - 4).to_bytes(4, "big", signed=True) + data[4:]
        return data


def body_layer(api_key: int, version: int, kind: str = "request") -> type[Packet]:
    """A Packet class whose fields are the message's top-level fields at ``version``."""
    struct_codec = (messages.REQUESTS if kind == "request" else messages.RESPONSES)[api_key]
    fields = [CodecField(f.name, None, _AtVersion(f.codec, version)) for f in struct_codec.fields
              if f.present(version)]
    return type(f"{messages.api_name(api_key)}{kind.title()}V{version}", (Packet,),
                {"name": f"Fluvio {messages.api_name(api_key)} {kind} v{version}", "fields_desc": fields})


#: ApiVersions versions the suite speaks (the SPU does not list key 18 in its own answer).
API_VERSIONS_RANGE = (0, 2)

#: Every request and response at every version the SPU advertises: (kind, api_key, version) -> layer class.
#: Requests are bound under FluvioRequest by (api_key, api_version); a response header carries no api key, so
#: a response body is dissected with ``LAYERS["response", key, version]`` of the request it answers.
LAYERS = {(kind, key, version): body_layer(key, version, kind)
          for kind in ("request", "response")
          for key, (low, high) in {**messages.SPU_ADVERTISED, messages.API_VERSIONS: API_VERSIONS_RANGE}.items()
          for version in range(low, high + 1)}
for (_kind, _key, _version), _layer in LAYERS.items():
    if _kind == "request":
        bind_layers(FluvioRequest, _layer, api_key=_key, api_version=_version)



def message_layers() -> dict[str, type[Packet]]:
    """Every message layer by name (the contract tests round-trip each one)."""
    return {cls.__name__: cls for cls in LAYERS.values()}


@functools.cache
def response_frame_class(api_key: int, version: int) -> type[Packet]:
    """The frame class of one response: ``i32 size | i32 correlation_id`` then that response's body layer."""
    body = LAYERS["response", api_key, version]
    return type(f"{messages.api_name(api_key)}ResponseFrameV{version}", (FluvioResponse,), {
        "name": f"Fluvio response frame ({messages.api_name(api_key)} v{version})",
        "guess_payload_class": lambda self, payload: body,
    })


def dissect(answer: bytes, request: bytes | None = None) -> Packet:
    """A whole response frame as a layer; the request it answers names the api key and version (a response
    header does not). Without a known request the body stays Raw."""
    if request is not None and len(request) >= 8:
        api_key = int.from_bytes(request[4:6], "big")
        version = int.from_bytes(request[6:8], "big", signed=True)
        if ("response", api_key, version) in LAYERS:
            return response_frame_class(api_key, version)(answer)
    return FluvioResponse(answer)


ProduceRequestV25 = LAYERS["request", messages.PRODUCE, 25]
ProduceRequestV7 = LAYERS["request", messages.PRODUCE, 7]
ApiVersionsRequestV2 = LAYERS["request", messages.API_VERSIONS, 2]
FetchRequestV25 = LAYERS["request", messages.FETCH, 25]
StreamFetchRequestV25 = LAYERS["request", messages.STREAM_FETCH, 25]


class FluvioBatchHeader(Packet):
    """Preamble and header of a batch (notes §4.2): 57 bytes, then the schema id when attributes & 0x10,
    then the records region (the payload: ``i32 count`` + records, compressed as a whole when compressed)."""

    name = "Fluvio batch"
    fields_desc = [
        SignedLongField("base_offset", 0),
        SignedIntField("batch_len", None),
        SignedIntField("partition_leader_epoch", -1),
        SignedByteField("magic", 2),
        XIntField("crc", None),
        SignedShortField("attributes", 0),
        SignedIntField("last_offset_delta", 0),
        SignedLongField("first_timestamp", -1),
        SignedLongField("max_time_stamp", -1),
        SignedLongField("producer_id", -1),
        SignedShortField("producer_epoch", -1),
        SignedIntField("first_sequence", -1),
    ]

    def post_build(self, pkt, pay):
        from wirecheck.protocols.fluvio.records import recompute_crc

        data = pkt + pay
        if self.batch_len is None:
            data = data[:8] + (len(data) - 12).to_bytes(4, "big", signed=True) + data[12:]
        if self.crc is None:
            data = recompute_crc(data)
        return data


class FluvioRecord(Packet):
    """One record after its varint length (notes §4.3): ``i8 attributes | varint timestamp_delta |
    varint offset_delta | Option<RecordData> key | RecordData value | varint headers``."""

    name = "Fluvio record"
    fields_desc = [
        CodecField("length", 0, VARLONG),
        SignedByteField("attributes", 0),
        CodecField("timestamp_delta", 0, VARLONG),
        CodecField("offset_delta", 0, VARLONG),
        ByteField("key_tag", 0),  # Option tag: 0 None, 1 Some (Kafka: varint -1 for a null key)
    ]
