"""The Fluvio Streaming Controller's public messages (fluvio-sc-schema objects/*, fluvio-controlplane-metadata).

Keys: ApiVersions 18 (the SPU's codec), Create 1001, Delete 1002, List 1003, Watch 1004. Every object request and
response is a TypeBuffer: the object's label (String "Topic" / "Partition" / "SPU" ...), a u32 byte length (from
version 11, DYN_OBJ), then the body at the header's version (objects/metadata.rs). The bodies below are written
for the SC's COMMON_VERSION range 15..19; the spec structs carry their own version gates (derive min_version).
"""

from __future__ import annotations

import struct

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import messages
from wirecheck.protocols.fluvio.errors import ERROR_CODE
from wirecheck.protocols.fluvio.wire import (BOOL, I32, I64, STRING, U8, U16, U32, U64, Field, FluvioOption, FluvioVec,
                                   Struct, Union)

API_VERSIONS, CREATE, DELETE, LIST, WATCH = 18, 1001, 1002, 1003, 1004
NAMES = {CREATE: "Create", DELETE: "Delete", LIST: "List", WATCH: "Watch"}
COMMON_VERSION = 19  # objects/mod.rs
WATCH_MIN = 15  # ObjectApiWatchRequest::MIN_API_VERSION; the client needs Watch within 15..=19 (notes §9)
MINIMUM_PLATFORM_VERSION = (0, 9, 0)  # crates/fluvio/src/lib.rs
SPU, PARTITION, TOPIC = "SPU", "Partition", "Topic"
UPDATE, DELETE_MSG = "UPDATE", "DELETE"
TOPIC_ERROR, TOPIC_NOT_FOUND, TOPIC_ALREADY_EXISTS, TOPIC_INVALID_NAME = 2000, 2001, 2002, 2006


class SizedBody:
    """TypeBuffer's body: u32 byte length then raw bytes (objects/metadata.rs, version >= DYN_OBJ)."""

    min_size = 4

    def write(self, out, value, version, trace=None, path=""):
        out += struct.pack(">I", len(value)) + bytes(value)

    def read(self, buf, pos, version):
        if pos + 4 > len(buf):
            raise DecodeError("truncated object length", pos)
        (n,) = struct.unpack_from(">I", buf, pos)
        if pos + 4 + n > len(buf):
            raise DecodeError(f"object body claims {n} bytes, {len(buf) - pos - 4} left", pos)
        return bytes(buf[pos + 4:pos + 4 + n]), pos + 4 + n


class IdMap:
    """``BTreeMap<u32, V>``: u16 count, then key/value pairs (TopicStatus.replica_map / mirror_map)."""

    min_size = 2

    def __init__(self, item):
        self.item = item

    def write(self, out, value, version, trace=None, path=""):
        out += struct.pack(">H", len(value))
        for key in sorted(value):
            out += struct.pack(">I", key)
            self.item.write(out, value[key], version)

    def read(self, buf, pos, version):
        count, pos = U16.read(buf, pos, version)
        if count * 4 > len(buf) - pos:
            raise DecodeError(f"map count {count} but only {len(buf) - pos} bytes left", pos - 2)
        out = {}
        for _ in range(count):
            key, pos = U32.read(buf, pos, version)
            out[key], pos = self.item.read(buf, pos, version)
        return out, pos


OBJECT = Struct("TypeBuffer", [Field("label", STRING), Field("body", SizedBody())])
STATUS = Struct("Status", [Field("name", STRING), Field("error_code", ERROR_CODE),
                           Field("error_message", FluvioOption(STRING))])

WATCH_REQUEST = Struct("WatchRequest", [Field("epoch", I64), Field("summary", BOOL, 10)])
LIST_REQUEST = Struct("ListRequest", [
    Field("name_filters", FluvioVec(Struct("ListFilter", [Field("name", STRING)]))),
    Field("summary", BOOL, 10), Field("system", BOOL, 13)])
DELETE_REQUEST = Struct("DeleteRequest", [Field("key", STRING), Field("force", BOOL, 13)])

_ENDPOINT = Struct("Endpoint", [Field("port", U16), Field("host", STRING), Field("encryption", U8)])
SPU_SPEC = Struct("SpuSpec", [
    Field("id", I32), Field("spu_type", U8),
    Field("public_endpoint", Struct("IngressPort", [
        Field("port", U16),
        Field("ingress", FluvioVec(Struct("IngressAddr", [Field("hostname", FluvioOption(STRING)),
                                                          Field("ip", FluvioOption(STRING))]))),
        Field("encryption", U8)])),
    Field("private_endpoint", _ENDPOINT), Field("rack", FluvioOption(STRING)),
    Field("public_endpoint_local", FluvioOption(_ENDPOINT), 1)])
SPU_STATUS = Struct("SpuStatus", [Field("resolution", U8)])

_STORAGE = Struct("TopicStorageConfig", [Field("segment_size", FluvioOption(U32)),
                                         Field("max_partition_size", FluvioOption(U64))])
_CLEANUP = Union("CleanupPolicy", {0: ("Segment", Struct("SegmentBasedPolicy", [Field("time_in_seconds", U32)]))})
_REPLICA_STATUS = Struct("ReplicaStatus", [Field("spu", I32), Field("hw", I64), Field("leo", I64)])
PARTITION_SPEC = Struct("PartitionSpec", [
    Field("leader", I32), Field("replicas", FluvioVec(I32)),
    Field("cleanup_policy", FluvioOption(_CLEANUP), 4), Field("storage", FluvioOption(_STORAGE), 4),
    # deduplication and mirror are Options this suite only meets as None (0): read as their tag byte
    Field("compression_type", U8, 6), Field("no_deduplication", U8, 12), Field("system", BOOL, 13), Field("no_mirror", U8, 14)])
PARTITION_STATUS = Struct("PartitionStatus", [
    Field("resolution", U8), Field("leader", _REPLICA_STATUS), Field("lsr", U32),
    Field("replicas", FluvioVec(_REPLICA_STATUS)), Field("size", I64, 5), Field("is_being_deleted", BOOL),
    Field("base_offset", I64, 16)])

_REPLICA_PARAM = Struct("TopicReplicaParam", [Field("partitions", U32), Field("replication_factor", U32),
                                              Field("ignore_rack_assignment", BOOL)])
_PARTITION_MAP = Struct("PartitionMap", [Field("id", U32), Field("replicas", FluvioVec(I32)),
                                         Field("no_mirror", U8, 14)])
REPLICA_SPEC = Union("ReplicaSpec", {0: ("Assigned", FluvioVec(_PARTITION_MAP)), 1: ("Computed", _REPLICA_PARAM)})
TOPIC_SPEC = Struct("TopicSpec", [
    Field("replicas", REPLICA_SPEC), Field("cleanup_policy", FluvioOption(_CLEANUP), 3),
    Field("storage", FluvioOption(_STORAGE), 4), Field("compression_type", U8, 6),
    Field("no_deduplication", U8, 12), Field("system", BOOL, 13)])
TOPIC_STATUS = Struct("TopicStatus", [
    Field("resolution", U8), Field("replica_map", IdMap(FluvioVec(I32))), Field("no_mirror_map", U16, 14),
    Field("reason", STRING)])

CREATE_TOPIC_REQUEST = Struct("CreateRequest<TopicSpec>", [
    Field("name", STRING), Field("dry_run", BOOL), Field("timeout", FluvioOption(U32), 7),
    Field("spec", TOPIC_SPEC)])

#: label -> (spec codec, status codec); the object kinds the client watches (notes §9 step 5)
OBJECTS = {SPU: (SPU_SPEC, SPU_STATUS), PARTITION: (PARTITION_SPEC, PARTITION_STATUS),
           TOPIC: (TOPIC_SPEC, TOPIC_STATUS)}


def metadata(label: str) -> Struct:
    spec, status = OBJECTS[label]
    return Struct(f"Metadata<{label}>", [Field("name", STRING), Field("spec", spec), Field("status", status)])


def metadata_update(label: str) -> Struct:
    """MetadataUpdate{epoch i64, changes Vec<Message{header u8 (0 UPDATE, 1 DELETE), content}>, all} (watch.rs)."""
    item = metadata(label)
    message = Union(f"Message<{label}>", {0: (UPDATE, item), 1: (DELETE_MSG, item)})
    return Struct(f"MetadataUpdate<{label}>", [Field("epoch", I64), Field("changes", FluvioVec(message)),
                                              Field("all", FluvioVec(item))])


def list_response(label: str) -> Struct:
    return Struct(f"ListResponse<{label}>", [Field("inner", FluvioVec(metadata(label)))])


#: inner bodies with a fixed codec, by (api key, direction)
INNER = {(WATCH, "request"): WATCH_REQUEST, (LIST, "request"): LIST_REQUEST, (DELETE, "request"): DELETE_REQUEST,
         (CREATE, "request"): CREATE_TOPIC_REQUEST}


def encode_object_request(api_key: int, version: int, correlation_id: int, label: str, body: dict,
                          client_id: str = "wirecheck") -> bytes:
    inner = bytearray()
    INNER[api_key, "request"].write(inner, body, version)
    out = bytearray(messages.encode_header(api_key, version, correlation_id, client_id))
    OBJECT.write(out, {"label": label, "body": bytes(inner)}, version)
    return messages.frame(bytes(out))


def decode_answer(frame: bytes) -> tuple[int, bytes]:
    """(correlation id, body bytes) of a whole response frame."""
    if len(frame) < 8:
        raise DecodeError("a response frame shorter than its header", 0)
    return struct.unpack_from(">i", frame, 4)[0], frame[8:]


def decode_object(api_key: int, version: int, body: bytes) -> tuple[str, dict]:
    """A Watch or List response body: (label, decoded inner body)."""
    outer, pos = OBJECT.read(body, 0, version)
    if pos != len(body):
        raise DecodeError(f"{len(body) - pos} bytes after the object", pos)
    label = outer["label"]
    if label not in OBJECTS:
        raise DecodeError(f"an answer for object type {label!r}", 0)
    codec = metadata_update(label) if api_key == WATCH else list_response(label)
    inner, end = codec.read(outer["body"], 0, version)
    if end != len(outer["body"]):
        raise DecodeError(f"{len(outer['body']) - end} bytes after the {label} body", end)
    return label, inner


def decode_status(body: bytes, version: int) -> dict:
    status, pos = STATUS.read(body, 0, version)
    if pos != len(body):
        raise DecodeError(f"{len(body) - pos} bytes after the Status", pos)
    return status
