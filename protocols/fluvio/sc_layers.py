"""Scapy layers for the Streaming Controller's messages (protocols/fluvio/sc.py), for transcripts and captures.

An SC request is the SPU's request header (``layers.FluvioRequest``) and then a TypeBuffer: the object's label
and its u32-length-prefixed body. The SC's keys overlap the SPU's (1002 and 1003 mean different things on each),
so SC frames get their own header class, ``ScRequest``, and the TypeBuffer is bound under it by api key. The
TypeBuffer's body depends on the label as well as the key; ``inner_layer`` names its layer.
"""

from __future__ import annotations

from scapy.packet import Packet, bind_layers

from wirecheck.protocols.fields import CodecField
from wirecheck.protocols.fluvio import sc
from wirecheck.protocols.fluvio.layers import FluvioRequest, _AtVersion

#: the SC's version range the layers cover: Watch's MIN_API_VERSION up to the SC's COMMON_VERSION
VERSIONS = range(sc.WATCH_MIN, sc.COMMON_VERSION + 1)


class ScRequest(FluvioRequest):
    name = "Fluvio SC request"
    payload_guess: list = []  # its own bindings, never the SPU's (inherited, they would win for 1002 / 1003)


def _layer(name: str, codec, version: int) -> type[Packet]:
    fields = [CodecField(f.name, None, _AtVersion(f.codec, version)) for f in codec.fields if f.present(version)]
    return type(f"Sc{name}V{version}", (Packet,), {"name": f"Fluvio SC {name} v{version}", "fields_desc": fields})


def _codecs() -> dict[tuple[str, str | None, int], tuple[str, object]]:
    """(kind, object label or None, api key) -> (layer name stem, codec)."""
    out = {("request", None, sc.WATCH): ("WatchRequest", sc.WATCH_REQUEST),
           ("request", None, sc.LIST): ("ListRequest", sc.LIST_REQUEST),
           ("request", None, sc.DELETE): ("DeleteRequest", sc.DELETE_REQUEST),
           ("request", sc.TOPIC, sc.CREATE): ("CreateTopicRequest", sc.CREATE_TOPIC_REQUEST),
           ("response", None, sc.CREATE): ("Status", sc.STATUS),
           ("response", None, sc.DELETE): ("Status", sc.STATUS)}
    for label in sc.OBJECTS:
        out["response", label, sc.WATCH] = (f"MetadataUpdate{label}", sc.metadata_update(label))
        out["response", label, sc.LIST] = (f"ListResponse{label}", sc.list_response(label))
    return out


CODECS = _codecs()
_BY_STEM = {stem: codec for stem, codec in CODECS.values()}  # Create and Delete share the Status layer
#: every SC body layer: (layer name stem, version) -> (class, codec)
LAYERS: dict[tuple[str, int], tuple[type[Packet], object]] = {
    (stem, version): (_layer(stem, codec, version), codec) for stem, codec in _BY_STEM.items() for version in VERSIONS}
#: the TypeBuffer of object requests and of Watch / List answers
OBJECT_LAYERS = {version: _layer("Object", sc.OBJECT, version) for version in VERSIONS}
for _key in (sc.CREATE, sc.DELETE, sc.LIST, sc.WATCH):
    for _version, _layer_cls in OBJECT_LAYERS.items():
        bind_layers(ScRequest, _layer_cls, api_key=_key, api_version=_version)


def inner_layer(kind: str, api_key: int, label: str, version: int) -> type[Packet] | None:
    """The layer of a TypeBuffer's body (a request's or a Watch / List answer's), or of a Create / Delete
    answer (a bare Status); None for a combination the SC does not have."""
    found = CODECS.get((kind, None, api_key)) or CODECS.get((kind, label, api_key))
    return None if found is None or (found[0], version) not in LAYERS else LAYERS[found[0], version][0]


def message_layers() -> dict[str, type[Packet]]:
    return {cls.__name__: cls for cls, _ in LAYERS.values()} | {cls.__name__: cls for cls in OBJECT_LAYERS.values()}


def layer_codecs() -> dict[str, tuple[object, int]]:
    """Layer name -> (codec, version): what the strategies build each layer's values from."""
    out = {cls.__name__: (codec, version) for (_, version), (cls, codec) in LAYERS.items()}
    out.update({cls.__name__: (sc.OBJECT, version) for version, cls in OBJECT_LAYERS.items()})
    return out
