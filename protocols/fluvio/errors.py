"""Fluvio's ErrorCode: an i16 tag **followed by the variant's payload** when it has one (specs/fluvio.md §6;
upstream ``fluvio-protocol/src/link/error_code.rs``).

Unlike Kafka's plain INT16 error codes, a parser that reads only the two tag bytes loses sync on the
payload-carrying variants (ambiguity A9), and an unknown tag makes the whole enclosing message undecodable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wirecheck.protocols.fields import INT16, VARLONG, DecodeError
from wirecheck.protocols.fluvio.wire import I64, STRING, U8, U32, U64, Field, FluvioOption, Struct

_REPLICA_KEY = Struct("ReplicaKey", [Field("topic", STRING), Field("partition", U32)])

NONE = 0
UNKNOWN_SERVER_ERROR = -1
OFFSET_OUT_OF_RANGE = 1
OTHER = 2
NOT_LEADER_FOR_PARTITION = 6
REQUEST_TIMED_OUT = 7
MESSAGE_TOO_LARGE = 10
STORAGE_ERROR = 56
OFFSET_EVICTED = 71
PARTITION_FULL = 72
PARTITION_SHORT_CIRCUITED = 73
TOPIC_NOT_FOUND = 2001
PARTITION_NOT_LEADER = 3001
FETCH_SESSION_NOT_FOUND = 3002
COMPRESSION_ERROR = 9000


class _RecordData:
    """Fluvio ``RecordData``: zig-zag varint (i64) length then bytes."""

    min_size = 1

    def write(self, out, value, version, trace=None, path=""):
        VARLONG.write(out, len(value))
        out += bytes(value)

    def read(self, buf, pos, version):
        length, pos = VARLONG.read(buf, pos)
        if length < 0 or pos + length > len(buf):
            raise DecodeError(f"record data claims {length} bytes", pos)
        return bytes(buf[pos : pos + length]), pos + length


RECORD_DATA = _RecordData()

_RUNTIME_ERROR = Struct("SmartModuleTransformRuntimeError", [
    Field("hint", STRING), Field("offset", I64), Field("kind", U8),
    Field("record_key", FluvioOption(RECORD_DATA)), Field("record_value", RECORD_DATA)])

#: tag -> (variant name, payload fields as (name, codec)) in declaration order.
VARIANTS: dict[int, tuple[str, list]] = {
    -1: ("UnknownServerError", []),
    0: ("None", []),
    1: ("OffsetOutOfRange", []),
    2: ("Other", [("message", STRING)]),
    6: ("NotLeaderForPartition", []),
    7: ("RequestTimedOut", [("timeout_ms", U64), ("kind", U8)]),
    10: ("MessageTooLarge", []),
    13: ("PermissionDenied", []),
    56: ("StorageError", []),
    60: ("InvalidCreateRequest", []),
    61: ("InvalidDeleteRequest", []),
    71: ("OffsetEvicted", [("offset", I64), ("next_available", I64)]),
    72: ("PartitionFull", [("replica_key", _REPLICA_KEY)]),
    73: ("PartitionShortCircuited", []),
    1000: ("SpuError", []),
    1001: ("SpuRegisterationFailed", []),
    1002: ("SpuOffline", []),
    1003: ("SpuNotFound", []),
    1004: ("SpuAlreadyExists", []),
    2000: ("TopicError", []),
    2001: ("TopicNotFound", []),
    2002: ("TopicAlreadyExists", []),
    2003: ("TopicPendingInitialization", []),
    2004: ("TopicInvalidConfiguration", []),
    2005: ("TopicNotProvisioned", []),
    2006: ("TopicInvalidName", []),
    2007: ("TopicDeleted", []),
    2008: ("TopicInvalidReplicaType", []),
    3000: ("PartitionPendingInitialization", []),
    3001: ("PartitionNotLeader", []),
    3002: ("FetchSessionNotFoud", []),  # sic, upstream spelling
    3003: ("OffsetFlushRequestError", [("message", STRING)]),
    3004: ("OffsetManagementDisabled", []),
    3005: ("MaxRetryReached", []),
    5000: ("ManagedConnectorError", []),
    5001: ("ManagedConnectorNotFound", []),
    5002: ("ManagedConnectorAlreadyExists", []),
    6000: ("SmartModuleError", []),
    6001: ("SmartModuleNotFound", [("name", STRING)]),
    6002: ("SmartModuleInvalid", [("error", STRING), ("name", FluvioOption(STRING))]),
    6003: ("SmartModuleInvalidExports", [("error", STRING), ("kind", STRING)]),
    6004: ("SmartModuleRuntimeError", [("error", _RUNTIME_ERROR)]),
    6005: ("SmartModuleChainInitError", [("message", STRING)]),
    6006: ("SmartModuleInitError", [("hint", STRING)]),
    6007: ("SmartModuleLookBackError", [("message", STRING)]),
    6008: ("SmartModuleMemoryLimitExceeded", [("requested", U64), ("max", U64)]),
    7000: ("TableFormatError", []),
    7001: ("TableFormatNotFound", []),
    7002: ("TableFormatAlreadyExists", []),
    8000: ("DerivedStreamObjectError", []),
    8001: ("DerivedStreamNotFound", [("message", STRING)]),
    8002: ("DerivedStreamJoinFetchError", []),
    8003: ("DerivedStreamInvalid", [("message", STRING)]),
    9000: ("CompressionError", []),
    10000: ("DeduplicationSmartModuleNotLoaded", []),
    10001: ("DeduplicationSmartModuleNameInvalid", [("message", STRING)]),
    11001: ("MirrorNotFound", []),
    11002: ("MirrorAlreadyExists", []),
    11003: ("MirrorProduceFromHome", []),
    11004: ("MirrorDeleteFromRemote", []),
    11005: ("MirrorInvalidType", []),
    11006: ("MirrorProduceFromRemoteNotAllowed", []),
    12001: ("SystemSpecDeletionAttempt", [("kind", STRING), ("name", STRING)]),
    12002: ("SystemSpecUpdatingAttempt", [("kind", STRING), ("name", STRING)]),
}

WITH_PAYLOAD = frozenset(code for code, (_, payload) in VARIANTS.items() if payload)


def name(code: int) -> str:
    return VARIANTS.get(code, (f"unknown({code})",))[0]


@dataclass(frozen=True)
class ErrorValue:
    """A decoded ErrorCode: the i16 tag and its payload fields (empty for data-less variants)."""

    code: int
    payload: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def name(self) -> str:
        return name(self.code)

    def __str__(self) -> str:
        return f"{self.code} {self.name}" + (f" {self.payload}" if self.payload else "")


class ErrorCodeCodec:
    min_size = 2

    def write(self, out, value, version, trace=None, path=""):
        if isinstance(value, int):
            value = ErrorValue(value)
        start = len(out)
        INT16.write(out, value.code)
        if trace is not None:
            trace.append((path, "fixed", start, start + 2, "int16"))
        for field_name, codec in VARIANTS[value.code][1]:
            codec.write(out, value.payload[field_name], version, trace, f"{path}.{field_name}")

    def read(self, buf, pos, version):
        start = pos
        code, pos = INT16.read(buf, pos)
        if code not in VARIANTS:
            raise DecodeError(f"unknown ErrorCode tag {code}", start)
        payload = {}
        for field_name, codec in VARIANTS[code][1]:
            try:
                payload[field_name], pos = codec.read(buf, pos, version)
            except DecodeError as exc:
                raise exc.within(f"{name(code)}.{field_name}") from None
        return ErrorValue(code, payload), pos


ERROR_CODE = ErrorCodeCodec()


def encode(code: int, version: int = 0, **payload) -> bytes:
    out = bytearray()
    ERROR_CODE.write(out, ErrorValue(code, payload), version)
    return bytes(out)
