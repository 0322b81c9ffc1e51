"""Read what a group committed straight off the wire, independently of the client under test."""

from __future__ import annotations

from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse

from tests.interop.kafka_support import Wire


def port_of(bootstrap: str) -> int:
    return int(bootstrap.rsplit(":", 1)[1])


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    with Wire(port_of(bootstrap)) as w:
        resp = w.call(OffsetFetchRequest, OffsetFetchResponse, 5, group_id=group,
                      topics=[{"name": topic, "partition_indexes": list(range(partitions))}])
    return {p.partition_index: p.committed_offset for p in resp.topics[0].partitions}


def stored_producer_ids(bootstrap: str, topic: str, partition: int = 0) -> list[int]:
    """The producerId field of each stored batch (>= 0 when the producer was idempotent)."""
    import struct

    with Wire(port_of(bootstrap)) as w:
        resp = w.call(FetchRequest, FetchResponse, 12, max_wait_ms=0, min_bytes=1, max_bytes=1 << 24, topics=[
            {"topic": topic, "partitions": [{"partition": partition, "fetch_offset": 0,
                                             "partition_max_bytes": 1 << 24}]}])
    data, ids, pos = resp.responses[0].partitions[0].records, [], 0
    while pos + 61 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        ids.append(struct.unpack_from(">q", data, pos + 43)[0])
        pos += 12 + length
    return ids
