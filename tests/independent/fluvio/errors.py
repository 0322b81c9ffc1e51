"""ErrorCode values (spec §6).

On the wire an ErrorCode is an i16 tag followed by the variant's payload, if it
has one.  ``ErrorCode`` objects carry an already-encoded payload so that the
handlers only choose a variant; ``encode`` writes tag + payload.
"""

from __future__ import annotations

from dataclasses import dataclass

from .codec import Writer

# Tags used by this server (a subset of spec §6).
UNKNOWN_SERVER_ERROR = -1
NONE = 0
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
OFFSET_MANAGEMENT_DISABLED = 3004
SMARTMODULE_ERROR = 6000
SMARTMODULE_NOT_FOUND = 6001
COMPRESSION_ERROR = 9000


@dataclass(frozen=True)
class ErrorCode:
    tag: int
    payload: bytes = b""

    @property
    def ok(self) -> bool:
        return self.tag == NONE

    def encode(self, w: Writer, *, with_payload: bool = True) -> None:
        w.i16(self.tag)
        if with_payload:
            w.raw(self.payload)


OK = ErrorCode(NONE)


def other(message: str) -> ErrorCode:
    """Other (2): payload String."""
    return ErrorCode(OTHER, Writer().string(message).getvalue())


def offset_evicted(offset: int, next_available: int) -> ErrorCode:
    """OffsetEvicted (71): payload offset i64, next_available i64."""
    return ErrorCode(OFFSET_EVICTED, Writer().i64(offset).i64(next_available).getvalue())


def partition_full(topic: str, partition: int) -> ErrorCode:
    """PartitionFull (72): payload replica_key {topic String, partition u32}."""
    return ErrorCode(PARTITION_FULL, Writer().string(topic).u32(partition).getvalue())


def smartmodule_not_found(name: str) -> ErrorCode:
    """SmartModuleNotFound (6001): payload name String."""
    return ErrorCode(SMARTMODULE_NOT_FOUND, Writer().string(name).getvalue())


def simple(tag: int) -> ErrorCode:
    return ErrorCode(tag)
