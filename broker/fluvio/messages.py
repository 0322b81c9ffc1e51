"""Request decoders and response encoders of the SPU public APIs this broker implements.

Layouts and version gates: notes §3.2 (ApiVersions), §4.1/§4.5 (Produce), §5.1/§5.2 (Fetch), §5.3 (FetchOffsets),
§5.4 (StreamFetch), §5.5 (UpdateOffsets); SmartModuleInvocation from ``fluvio-spu-schema/src/server/
smartmodule.rs`` (§4.1). A response is encoded at its request's version (§1, ``call_service!``).

Decisions:
- Produce: the smartmodules Vec is read when bytes are left after the topics; a request that ends right after
  the topics has none (A5: the upstream v7 fixture has no trailer). The same layout at every version (A3), only
  the SmartModule sub-fields are version-gated.
- Produce isolation: i16, negative = ReadCommitted, anything else = ReadUncommitted (IsolationData, §4.1).
- Produce timeout < 0: malformed, the connection closes (§4.1, A13: mirrored).
- Fetch/StreamFetch isolation: u8, 0 or 1; anything else is malformed (A4: mirrored).
- Below Fetch v3 the request carries no max_bytes and the SPU's default is 0, so no records are returned
  (§5.1, FetchRequest's FluvioDefault: mirrored).
- Bytes left after a decoded request are ignored (§7: mirrored).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wirecheck.broker.fluvio import wire
from wirecheck.broker.fluvio.records import BadShape, Batch, read_record_set
from wirecheck.broker.fluvio.wire import Malformed, Reader

# SmartModule API versions (notes §3.1, stream_fetch.rs)
SMARTMODULE_LOOKBACK = 20
SMARTMODULE_LOOKBACK_AGE = 21
COMMON_VERSION_HAS_SM_NAME = 25


@dataclass
class Header:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str


def read_header(r: Reader) -> Header:
    """api_key u16 (A1: not the seed's i16), api_version i16, correlation_id i32, client_id String (§2.2)."""
    return Header(r.u16(), r.i16(), r.i32(), r.string())


# ------------------------------------------------------------------------------------------------ SmartModules

@dataclass
class Invocation:
    """A SmartModuleInvocation, kept only as far as this broker needs to refuse it."""

    predefined: str | None  # the name of a Predefined module, or None for AdHoc bytes
    name: str | None  # v >= 25


def read_invocation(r: Reader, version: int) -> Invocation:
    wasm_tag = r.u8()
    if wasm_tag == 0:
        predefined = r.string()
    elif wasm_tag == 1:
        predefined = None
        r.byte_vec()
    else:
        raise Malformed(f"unknown SmartModuleInvocationWasm tag {wasm_tag}")
    kind = r.u8()
    if kind == 3:  # Aggregate { accumulator: Vec<u8> }
        r.byte_vec()
    elif kind == 5:  # Join(String)
        r.string()
    elif kind == 6:  # JoinStream { topic, derivedstream }
        r.string()
        r.string()
    elif kind == 7:  # Generic(SmartModuleContextData)
        context = r.u8()
        if context == 1:
            r.byte_vec()
        elif context == 2:
            r.string()
        elif context == 3:
            r.string()
            r.string()
        elif context != 0:
            raise Malformed(f"unknown SmartModuleContextData tag {context}")
    elif kind > 7:
        raise Malformed(f"unknown SmartModuleKind tag {kind}")
    pairs = r.u16()  # params: BTreeMap<String, String>, u16 count
    if pairs * 4 > r.remaining:
        raise Malformed(f"params count {pairs} exceeds the {r.remaining} bytes left")
    r.elements += pairs
    for _ in range(pairs):
        r.string()
        r.string()
    if version >= SMARTMODULE_LOOKBACK and r.flag("lookback Option tag"):
        r.u64()  # last
        if version >= SMARTMODULE_LOOKBACK_AGE and r.flag("lookback age Option tag"):
            r.u64()  # Duration: secs u64 + nanos u32
            r.u32()
    name = r.option_string() if version >= COMMON_VERSION_HAS_SM_NAME else None
    return Invocation(predefined, name)


def read_invocations(r: Reader, version: int) -> list[Invocation]:
    return [read_invocation(r, version) for _ in range(r.count(3))]


def smartmodule_error(invocation: Invocation) -> bytes:
    """D3: no wasm runs here. A Predefined module is never found (6001); ad-hoc wasm is invalid (6002)."""
    if invocation.predefined is not None:
        return wire.ErrorCode.smartmodule_not_found(invocation.predefined)
    return wire.ErrorCode.smartmodule_invalid("this server runs no SmartModules", invocation.name)


# ------------------------------------------------------------------------------------------------ ApiVersions

@dataclass
class ApiVersionsRequest:
    client_version: str = ""
    client_os: str = ""
    client_arch: str = ""


def read_api_versions(r: Reader, version: int) -> ApiVersionsRequest:
    if version < 1:
        return ApiVersionsRequest()
    return ApiVersionsRequest(r.string(), r.string(), r.string())


def api_versions_response(keys: list[tuple[int, int, int]], platform_version: str) -> bytes:
    """error_code, api_keys Vec<{i16 key, i16 min, i16 max}>, platform_version (§3.2); no version gates."""
    return (wire.OK + wire.vec([wire.i16(k) + wire.i16(lo) + wire.i16(hi) for k, lo, hi in keys])
            + wire.string(platform_version))


# ------------------------------------------------------------------------------------------------ Produce

@dataclass
class PartitionData:
    index: int
    batches: list[Batch]
    malformed: str | None = None  # variants *-answers: why the RecordSet is answered with an error, not read


@dataclass
class ProduceRequest:
    transactional_id: str | None
    isolation: int
    timeout_ms: int
    topics: list[tuple[str, list[PartitionData]]]
    smartmodules: list[Invocation] = field(default_factory=list)

    @property
    def read_committed(self) -> bool:
        return self.isolation < 0


def read_produce(r: Reader, version: int, strict_isolation: bool = False, unsigned_timeout: bool = False,
                 clamp_record_sets: bool = False, trailer_required: bool = False,
                 answer_shapes: frozenset[str] = frozenset()) -> ProduceRequest:
    """The flags are faults: isolation-strict, negative-timeout-accepted (the timeout read as a u32) and
    recordset-overrun-clamped (records.read_record_set); and variants: trailer_required (smartmodules-trailer-
    required: the count read unconditionally, as the SPU's decoder does, A5) and answer_shapes (the RecordSet
    shapes answered with a partition error rather than a close, records.BadShape)."""
    transactional_id = r.option_string()
    isolation = r.i16()
    if strict_isolation and isolation not in (1, -1):
        raise Malformed(f"isolation {isolation}")  # fault isolation-strict: the decoder accepts any i16
    timeout = r.u32() if unsigned_timeout else r.i32()
    if timeout < 0:
        raise Malformed(f"negative timeout {timeout}")
    topics = []
    for _ in range(r.count(6)):
        name = r.string()
        partitions = []
        for _ in range(r.count(8)):
            index = r.u32()
            try:
                partitions.append(PartitionData(index, read_record_set(r, clamp_record_sets)))
            except BadShape as exc:
                if exc.shape not in answer_shapes:
                    raise
                partitions.append(PartitionData(index, [], malformed=str(exc)))  # the reader is past the set
        topics.append((name, partitions))
    smartmodules = read_invocations(r, version) if r.remaining or trailer_required else []
    return ProduceRequest(transactional_id, isolation, timeout, topics, smartmodules)


def produce_partition(index: int, error: bytes, base_offset: int, version: int) -> bytes:
    out = wire.u32(index) + error + wire.i64(base_offset)
    if version >= 2:
        out += wire.i64(0)  # log_append_time_ms: always 0 (A19)
    if version >= 5:
        out += wire.i64(0)  # log_start_offset: always 0 (A19)
    return out


def produce_response(topics: list[tuple[str, list[bytes]]], version: int, with_throttle: bool = True) -> bytes:
    out = wire.vec([wire.string(name) + wire.vec(parts) for name, parts in topics])
    if version >= 1 and with_throttle:
        out += wire.i32(0)
    return out


# ------------------------------------------------------------------------------------------------ Fetch

@dataclass
class FetchPartition:
    index: int
    fetch_offset: int


@dataclass
class FetchRequest:
    max_bytes: int
    read_committed: bool
    topics: list[tuple[str, list[FetchPartition]]]


def read_isolation_u8(r: Reader, any_nonzero: bool = False) -> bool:
    """``any_nonzero`` (fault fetch-isolation-any-nonzero): the byte read as a bool, any non-zero committed."""
    value = r.u8()
    if value > 1 and not any_nonzero:
        raise Malformed(f"isolation {value} is neither 0 nor 1")
    return value == 1


def read_fetch(r: Reader, version: int, any_isolation: bool = False) -> FetchRequest:
    r.i32()  # max_wait: ignored (A17)
    r.i32()  # min_bytes: ignored (A17)
    max_bytes = r.i32() if version >= 3 else 0
    read_committed = read_isolation_u8(r, any_isolation) if version >= 4 else False
    topics = []
    for _ in range(r.count(6)):
        name = r.string()
        partitions = []
        for _ in range(r.count(16)):
            index = r.u32()
            if version >= 9:
                r.i32()  # current_leader_epoch: ignored
            offset = r.i64()
            if version >= 5:
                r.i64()  # log_start_offset: ignored
            r.i32()  # partition max_bytes: ignored, the request-level value applies (§5.1)
            partitions.append(FetchPartition(index, offset))
        topics.append((name, partitions))
    if version >= 7:
        for _ in range(r.count(6)):  # forgotten: read and ignored
            r.string()
            for _ in range(r.count(4)):
                r.i32()
    return FetchRequest(max_bytes, read_committed, topics)


def partition_response(index: int, error: bytes, hw: int, log_start: int, records: bytes, version: int) -> bytes:
    """FetchablePartitionResponse (§5.2): aborted is always None; next_filter_offset (v >= 11) is 0."""
    out = wire.u32(index) + error + wire.i64(hw)
    if version >= 11:
        out += wire.i64(0)
    return out + wire.i64(log_start) + b"\x00" + wire.i32(len(records)) + records


def fetch_response(topics: list[tuple[str, list[bytes]]]) -> bytes:
    """throttle_time_ms 0, error_code None, session_id 0, topics (§5.2, A17)."""
    return (wire.i32(0) + wire.OK + wire.i32(0)
            + wire.vec([wire.string(name) + wire.vec(parts) for name, parts in topics]))


# ------------------------------------------------------------------------------------------------ FetchOffsets

def read_fetch_offsets(r: Reader, version: int) -> list[tuple[str, list[int]]]:
    topics = []
    for _ in range(r.count(6)):
        name = r.string()
        topics.append((name, [r.u32() for _ in range(r.count(4))]))
    if version == 23:
        r.option_string()  # consumer_id, v23 only (accepted, not advertised)
    return topics


def fetch_offsets_partition(index: int, error: bytes, start_offset: int, last_stable_offset: int) -> bytes:
    """Note the order: error_code before partition_index here (§5.3)."""
    return error + wire.u32(index) + wire.i64(start_offset) + wire.i64(last_stable_offset)


def fetch_offsets_response(topics: list[tuple[str, list[bytes]]]) -> bytes:
    return wire.vec([wire.string(name) + wire.vec(parts) for name, parts in topics])


# ------------------------------------------------------------------------------------------------ StreamFetch

@dataclass
class StreamFetchRequest:
    topic: str
    partition: int
    fetch_offset: int
    max_bytes: int
    read_committed: bool
    legacy_wasm: bytes
    smartmodule: Invocation | None
    derivedstream: str | None
    smartmodules: list[Invocation]
    consumer_id: str | None


def read_stream_fetch(r: Reader, version: int, any_isolation: bool = False) -> StreamFetchRequest:
    topic = r.string()
    partition = r.u32()
    fetch_offset = r.i64()
    max_bytes = r.i32()
    read_committed = read_isolation_u8(r, any_isolation)
    legacy_wasm = r.byte_vec() if 11 <= version <= 18 else b""
    smartmodule = derivedstream = None
    if 16 <= version <= 18:
        if r.flag("smartmodule Option tag"):
            smartmodule = read_invocation(r, version)
        if r.flag("derivedstream Option tag"):
            derivedstream = r.string()
            pairs = r.u16()
            if pairs * 4 > r.remaining:
                raise Malformed(f"params count {pairs} exceeds the {r.remaining} bytes left")
            r.elements += pairs
            for _ in range(pairs):  # params map; its lookback is v >= 20, past this field's last version
                r.string()
                r.string()
    smartmodules = read_invocations(r, version) if version >= 18 else []
    consumer_id = r.option_string() if version >= 23 else None
    return StreamFetchRequest(topic, partition, fetch_offset, max_bytes, read_committed, legacy_wasm, smartmodule,
                              derivedstream, smartmodules, consumer_id)


def stream_fetch_response(topic: str, stream_id: int, partition: bytes) -> bytes:
    return wire.string(topic) + wire.u32(stream_id) + partition


# ------------------------------------------------------------------------------------------------ UpdateOffsets

def read_update_offsets(r: Reader) -> list[tuple[int, int]]:
    """offsets: Vec<{offset i64, session_id u32}> (§5.5)."""
    return [(r.i64(), r.u32()) for _ in range(r.count(12))]


def update_offsets_response(status: list[tuple[int, bytes]]) -> bytes:
    return wire.vec([wire.u32(session) + error for session, error in status])


# ------------------------------------------------------------------------------------------------ consumer offsets

# UpdateConsumerOffset (1006), DeleteConsumerOffset (1007), FetchConsumerOffsets (1008), notes §5.6
# (SS/server/consumer_offset.rs). ReplicaKey is {topic String, partition u32}.

def read_update_consumer_offset(r: Reader) -> tuple[int, int]:
    """(offset i64, session_id u32): the offset of the consumer of an open stream (its StreamFetch consumer_id)."""
    return r.i64(), r.u32()


def update_consumer_offset_response(offset: int, error: bytes) -> bytes:
    return wire.i64(offset) + error


def read_delete_consumer_offset(r: Reader) -> tuple[str, int, str]:
    """(topic, partition, consumer_id)."""
    return r.string(), r.u32(), r.string()


def read_fetch_consumer_offsets(r: Reader, version: int) -> tuple[tuple[str, int] | None, str | None]:
    """filter_opts Option<{replica_id Option<ReplicaKey>, consumer_id Option<String>}>, v >= 24 only."""
    if version < 24 or not r.flag("filter_opts Option tag"):
        return None, None
    replica = (r.string(), r.u32()) if r.flag("replica_id Option tag") else None
    return replica, r.option_string()


def fetch_consumer_offsets_response(error: bytes, consumers: list[tuple[str, str, int, int, int]]) -> bytes:
    """consumers: (consumer_id, topic, partition, offset, modified_time u64)."""
    return error + wire.vec([wire.string(cid) + wire.string(topic) + wire.u32(partition) + wire.i64(offset)
                             + wire.u64(modified) for cid, topic, partition, offset, modified in consumers])
