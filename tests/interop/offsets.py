"""Read what a group committed straight off the wire, independently of the client under test."""

from __future__ import annotations

from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse

from tests.interop.kafka_support import Wire


def port_of(bootstrap: str) -> int:
    return int(bootstrap.rsplit(":", 1)[1])


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    with Wire(port_of(bootstrap)) as w:
        resp = w.call(OffsetFetchRequest, OffsetFetchResponse, 5, group_id=group,
                      topics=[{"name": topic, "partition_indexes": list(range(partitions))}])
    return {p.partition_index: p.committed_offset for p in resp.topics[0].partitions}

