"""What RustLog's request handlers share: the personality's state, the response encoder, and the lookups of
topics, partitions and committed offsets, with the errors a failed lookup answers.

The base of every handler family (produce.py, fetch.py, offsets.py, admin.py); the personality (server.py) sets
the state named below.
"""

from __future__ import annotations

from wirecheck.broker.rustlog.durable import DurableLog
from wirecheck.broker.rustlog.faults import RustLogFaults, RustLogVariants
from wirecheck.broker.rustlog.log import PartitionLog
from wirecheck.broker.rustlog.schema import TOPIC_NAME
from wirecheck.broker.rustlog.store import Store, Topic
from wirecheck.broker.rustlog.wire import (
    INVALID_REQUEST, PARTITION_NOT_FOUND, TOPIC_NOT_FOUND, Encoder, RequestError,
)

AVAILABLE_TOPICS_SHOWN = 100  # 404 details list at most this many names (bounded response)


class Lookups:
    faults: RustLogFaults
    variants: RustLogVariants
    encoder: Encoder
    store: Store

    def response(self, kind: str, **fields) -> bytes:
        return self.encoder.response({"type": kind, **fields})

    @staticmethod
    def name_ok(name: str) -> bool:
        return TOPIC_NAME.fullmatch(name) is not None

    def check_name(self, name: str) -> None:
        if not self.name_ok(name):
            raise RequestError(INVALID_REQUEST, f"invalid topic name {name[:300]!r}: 1-255 characters of "
                               "[A-Za-z0-9_-]", {"topic": name[:300]})

    def topic(self, name: str) -> Topic:
        if not self.variants.lookup_invalid_name_404:  # variant: the lookup alone decides (404)
            self.check_name(name)
        topic = self.store.topics.get(name)
        if topic is None:
            raise self.not_found(name)
        return topic

    def not_found(self, name: str) -> RequestError:
        available = sorted(self.store.topics)[:AVAILABLE_TOPICS_SHOWN]
        # available_topics is only the seed's example (SHOULD): the variant leaves details null
        details = None if self.variants.not_found_details_null else {"available_topics": available}
        return RequestError(TOPIC_NOT_FOUND, f"Topic '{name[:300]}' not found", details)  # an invalid name: any size

    def partition(self, name: str, partition: int, *, missing_404: bool = False) -> PartitionLog | DurableLog:
        topic = self.topic(name)
        if partition >= len(topic.partitions):
            code = TOPIC_NOT_FOUND if missing_404 else PARTITION_NOT_FOUND
            raise RequestError(code, f"Partition {partition} not found in topic '{name}'",
                               {"partition_count": len(topic.partitions)})
        return topic.partitions[partition]

    def partition_exists(self, topic: str, partition: int) -> bool:
        found = self.store.topics.get(topic) if self.name_ok(topic) else None
        return found is not None and partition < len(found.partitions)

    def commit_key(self, group: str, topic: str, partition: int) -> tuple:
        """Where a group's committed offset is kept (OffsetCommit, OffsetFetch, and Fetch under a fault)."""
        if self.faults.commit_groups_shared:
            return topic, partition
        if self.faults.commit_ignores_partition:
            return group, topic
        return group, topic, partition
