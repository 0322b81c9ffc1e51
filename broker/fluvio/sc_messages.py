"""The Streaming Controller's public messages, as bytes (fluvio-sc-schema objects/*, fluvio-controlplane-metadata).

Every SC object request and response wraps its body in a TypeBuffer: the object's label (String: "Topic",
"Partition", "SPU", ...), from version 11 (DYN_OBJ) a u32 byte length, then the body encoded at the request's
version (objects/metadata.rs). This broker accepts versions >= 11 only (sc.py D2), so the length is always there.

Version gates used below (derive ``min_version``): WatchRequest.summary >= 10; ListRequest.summary >= 10,
.system >= 13; DeleteRequest.force >= 13; CommonCreateRequest.timeout >= 7; TopicSpec cleanup_policy >= 3,
storage >= 4, compression_type >= 6, deduplication >= 12, system >= 13; PartitionSpec cleanup_policy/storage
>= 4, compression_type >= 6, deduplication >= 12, system >= 13, mirror >= 14; PartitionStatus size >= 5,
base_offset >= 16; TopicStatus mirror_map >= 14; SpuSpec public_endpoint_local >= 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from wirecheck.broker.fluvio import wire
from wirecheck.broker.fluvio.wire import Malformed, Reader

DYN_OBJ = 11
MAX_LABEL = 64  # no SC label is longer; a longer one is hostile and closes the connection (sc.py D3)

SPU_LABEL, PARTITION_LABEL, TOPIC_LABEL = "SPU", "Partition", "Topic"
COMPRESSION_ANY = 4  # CompressionAlgorithm::Any, the default
TOPIC_PROVISIONED = 4  # TopicResolution::Provisioned
PARTITION_ONLINE = 1  # PartitionResolution::Online
SPU_ONLINE = 0  # SpuStatusResolution::Online
UPDATE, DELETE = 0, 1  # MsgType


class BodyPastFrame(Malformed):
    """An object body length reaching past the frame (fault sc-body-length-waits reacts to it)."""


def read_type_buffer(r: Reader) -> tuple[str, Reader]:
    """(label, a reader over exactly the body): String label, u32 length, body bytes."""
    n = r.i16()
    if n > MAX_LABEL:
        raise Malformed(f"object label of {n} bytes")
    r.pos -= 2
    label = r.string()
    length = r.u32()
    if length > r.remaining:
        raise BodyPastFrame(f"object body of {length} bytes, {r.remaining} left")
    return label, Reader(r.raw(length))


def type_buffer(label: str, body: bytes) -> bytes:
    return wire.string(label) + wire.u32(len(body)) + body


# ------------------------------------------------------------------------------------------------ requests

@dataclass
class TopicRequest:
    name: str
    dry_run: bool
    partitions: int  # Computed.partitions, or the number of Assigned partition maps
    replication: int
    compression: int
    system: bool


def read_watch(r: Reader, version: int) -> tuple[int, bool]:
    epoch = r.i64()
    summary = r.flag() if version >= 10 else False
    return epoch, summary


def read_list(r: Reader, version: int) -> tuple[list[str], bool, bool]:
    names = [r.string() for _ in range(r.count(2))]
    summary = r.flag() if version >= 10 else False
    system = r.flag() if version >= 13 else False
    return names, summary, system


def read_delete(r: Reader, version: int) -> tuple[str, bool]:
    key = r.string()
    force = r.flag() if version >= 13 else False
    return key, force


def _option(r: Reader, read):
    return read() if r.flag("Option tag") else None


def _skip_partition_mirror(r: Reader, version: int) -> None:
    tag = r.u8()
    if tag == 0:  # Remote: home_cluster, home_spu_key, home_spu_id, home_spu_endpoint, target (>= 18)
        r.string(), r.string(), r.i32(), r.string()
    elif tag == 1:  # Home: remote_cluster, remote_replica, source (>= 18)
        r.string(), r.string()
    else:
        raise Malformed(f"unknown PartitionMirrorConfig tag {tag}")
    if version >= 18:
        r.flag()


def read_create_topic(r: Reader, version: int) -> TopicRequest:
    """CreateRequest<TopicSpec>: CommonCreateRequest{name, dry_run, timeout Option<u32> (>= 7)}, TopicSpec."""
    name = r.string()
    dry_run = r.flag()
    if version >= 7:
        _option(r, r.u32)
    tag = r.u8()
    if tag == 0:  # Assigned(Vec<PartitionMap{id u32, replicas Vec<i32>, mirror Option (>= 14)}>)
        maps = r.count(8)
        replication = 1
        for _ in range(maps):
            r.u32()
            replicas = r.count(4)
            for _ in range(replicas):
                r.i32()
            replication = max(replication, replicas)
            if version >= 14:
                _option(r, lambda: _skip_partition_mirror(r, version))
        partitions = maps
    elif tag == 1:  # Computed{partitions u32, replication_factor u32, ignore_rack_assignment bool}
        partitions, replication = r.u32(), r.u32()
        r.flag()
    else:
        raise Malformed(f"ReplicaSpec tag {tag} (2 = Mirror is not served here)")
    if version >= 3:
        _option(r, lambda: _skip_cleanup_policy(r))
    if version >= 4:
        _option(r, lambda: (_option(r, r.u32), _option(r, r.u64)))
    compression = r.u8() if version >= 6 else COMPRESSION_ANY
    if compression > 5:
        raise Malformed(f"CompressionAlgorithm tag {compression}")
    if version >= 12:
        _option(r, lambda: _skip_deduplication(r))
    system = r.flag() if version >= 13 else False
    return TopicRequest(name, dry_run, partitions, replication, compression, system)


def _skip_cleanup_policy(r: Reader) -> None:
    tag = r.u8()
    if tag != 0:  # Segment(SegmentBasedPolicy{time_in_seconds u32}) is the only variant
        raise Malformed(f"CleanupPolicy tag {tag}")
    r.u32()


def _skip_deduplication(r: Reader) -> None:
    r.u64()  # bounds.count
    _option(r, lambda: (r.u64(), r.u32()))  # bounds.age: Duration
    r.string()  # filter.transform.uses
    for _ in range(r.u16()):  # with: BTreeMap<String, String>, u16 count
        r.string(), r.string()


# ------------------------------------------------------------------------------------------------ responses

def status(name: str, error: bytes, message: str | None) -> bytes:
    """Status{name, error_code ErrorCode, error_message Option<String>} (response.rs): Create / Delete."""
    return wire.string(name) + error + wire.option_string(message)


def metadata(name: str, spec: bytes, status_bytes: bytes) -> bytes:
    return wire.string(name) + spec + status_bytes


def metadata_update(epoch: int, changes: list[tuple[int, bytes]], all_items: list[bytes]) -> bytes:
    """MetadataUpdate{epoch i64, changes Vec<Message{header u8, content}>, all Vec<Metadata>} (watch.rs)."""
    return (wire.i64(epoch) + wire.vec([wire.u8(kind) + body for kind, body in changes])
            + wire.vec(all_items))


def spu(spu_id: int, host: str, port: int, version: int) -> bytes:
    """SpuSpec{id, spu_type u8 (0 Managed), public_endpoint IngressPort{port u16, ingress Vec<IngressAddr
    {hostname Option<String>, ip Option<String>}>, encryption u8}, private_endpoint Endpoint{port, host,
    encryption}, rack Option<String>, public_endpoint_local Option<Endpoint> (>= 1)} + SpuStatus{resolution}."""
    spec = (wire.i32(spu_id) + wire.u8(0)
            + wire.u16(port) + wire.vec([wire.option_string(host) + wire.option_string(None)]) + wire.u8(0)
            + wire.u16(port) + wire.string(host) + wire.u8(0)
            + wire.option_string(None))
    if version >= 1:
        spec += b"\x00"
    return metadata(str(spu_id), spec, wire.u8(SPU_ONLINE))


def partition(topic: str, index: int, leader: int, hw: int, leo: int, size: int, log_start: int,
              compression: int, system: bool, version: int) -> bytes:
    spec = wire.i32(leader) + wire.vec([wire.i32(leader)])
    if version >= 4:
        spec += b"\x00\x00"  # cleanup_policy None, storage None
    if version >= 6:
        spec += wire.u8(compression)
    if version >= 12:
        spec += b"\x00"
    if version >= 13:
        spec += wire.u8(int(system))
    if version >= 14:
        spec += b"\x00"
    replica = wire.i32(leader) + wire.i64(hw) + wire.i64(leo)
    state = wire.u8(PARTITION_ONLINE) + replica + wire.u32(0) + wire.vec([])
    if version >= 5:
        state += wire.i64(size)
    state += b"\x00"  # is_being_deleted
    if version >= 16:
        state += wire.i64(log_start)
    return metadata(f"{topic}-{index}", spec, state)


def topic(name: str, partitions: int, replication: int, leader: int, compression: int, system: bool,
          version: int) -> bytes:
    spec = wire.u8(1) + wire.u32(partitions) + wire.u32(replication) + b"\x00"  # Computed
    if version >= 3:
        spec += b"\x00"
    if version >= 4:
        spec += b"\x00"
    if version >= 6:
        spec += wire.u8(compression)
    if version >= 12:
        spec += b"\x00"
    if version >= 13:
        spec += wire.u8(int(system))
    replica_map = wire.u16(partitions) + b"".join(wire.u32(i) + wire.vec([wire.i32(leader)])
                                                  for i in range(partitions))
    state = wire.u8(TOPIC_PROVISIONED) + replica_map
    if version >= 14:
        state += wire.u16(0)
    state += wire.string("")
    return metadata(name, spec, state)
