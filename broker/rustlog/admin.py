"""RustLog's admin requests (CreateTopic, ListTopics, DescribeTopic, DescribePartition, MetricsFetch) and Ping.

A handler family of the personality (server.py), registered by request kind in ``HANDLERS``.
"""

from __future__ import annotations

from wirecheck.broker.rustlog.durable import DurableLog
from wirecheck.broker.rustlog.log import PartitionLog
from wirecheck.broker.rustlog.lookups import Lookups
from wirecheck.broker.rustlog.wire import INVALID_REQUEST, RequestError

MAX_PARTITIONS = 1000  # seed §Create Topic Request: "1-1000 partitions"


class AdminHandlers(Lookups):
    open_connections: int

    async def create_topic(self, topic: str, partition_count: int) -> bytes:
        if not self.faults.topic_name_unchecked:
            self.check_name(topic)
        elif not 0 < len(topic) <= 65535:  # the fault checks only that a name is there (and bounded)
            raise RequestError(INVALID_REQUEST, "topic name empty or too long")
        # The fault still keeps a bound, so that it cannot exhaust memory (it only has to accept 1001).
        limit = 10_000 if self.faults.partition_count_unbounded else MAX_PARTITIONS
        if not 1 <= partition_count <= limit:
            raise RequestError(INVALID_REQUEST, f"partition_count {partition_count} not in 1..{MAX_PARTITIONS}",
                               {"partition_count": partition_count})
        created = await self.store.create_topic(topic, partition_count)
        if created is None and self.faults.create_existing_succeeds:
            return self.response("CreateTopicResponse", success=True, partitions_created=partition_count)
        if created is None and self.variants.create_existing_false:
            return self.response("CreateTopicResponse", success=False, partitions_created=0)
        if created is None:
            # The seed has no code for an existing topic; we answer 400 naming it (the suite accepts an Error
            # or success:false).
            existing = len(self.store.topics[topic].partitions)
            raise RequestError(INVALID_REQUEST, f"Topic '{topic}' already exists",
                               {"topic": topic, "partition_count": existing})
        created = 1 if self.faults.partitions_created_counts_topics else partition_count
        return self.response("CreateTopicResponse", success=True, partitions_created=created)

    async def list_topics(self) -> bytes:
        topics = [{"name": name, "partition_count": len(self.store.topics[name].partitions)}
                  for name in (self.store.topics if self.variants.list_creation_order
                               else sorted(self.store.topics))
                  if not self.faults.list_skips_empty_topics
                  or any(log_.high_watermark for log_ in self.store.topics[name].partitions)]
        return self.response("ListTopicsResponse", topics=topics)

    def describe(self, index: int, log_: PartitionLog | DurableLog) -> dict:
        segments = log_.segment_count
        if self.faults.segment_count_zero_when_empty and log_.high_watermark == log_.log_start_offset:
            segments = 0
        return {"partition": index, "high_watermark": log_.high_watermark,
                "log_start_offset": log_.log_start_offset, "segment_count": segments}

    async def describe_topic(self, topic: str) -> bytes:
        if self.faults.describe_unknown_400 and topic not in self.store.topics:
            raise RequestError(INVALID_REQUEST, f"Topic '{topic}' not found")
        found = self.topic(topic)
        partitions = [self.describe(i, log_) for i, log_ in enumerate(found.partitions)]
        return self.response("DescribeTopicResponse", topic=topic, partitions=partitions)

    async def describe_partition(self, topic: str, partition: int) -> bytes:
        log_ = self.partition(topic, partition)
        if self.variants.describe_partition_minimal:  # D10: the upstream code's fields only (notes §1.2)
            return self.response("DescribePartitionResponse", topic=topic, partition=partition,
                                 high_watermark=log_.high_watermark)
        return self.response("DescribePartitionResponse", topic=topic, **self.describe(partition, log_))

    async def metrics_fetch(self) -> bytes:
        counters = self.store.counters
        metrics = {
            "messages_produced_total": counters.messages_produced_total,
            "messages_fetched_total": counters.messages_fetched_total,
            "bytes_in_total": counters.bytes_in_total,
            "bytes_out_total": counters.bytes_out_total,
            "active_connections": self.open_connections,
            "topics": len(self.store.topics),
            "partitions": self.store.partition_total,
        }
        if self.variants.metrics_other_counters:  # D10 names its counters only "for example"
            metrics = {"records_produced": counters.messages_produced_total,
                       "records_fetched": counters.messages_fetched_total, "bytes_in": counters.bytes_in_total,
                       "bytes_out": counters.bytes_out_total, "connections": self.open_connections,
                       "topic_count": len(self.store.topics), "partition_count": self.store.partition_total}
        return self.response("MetricsFetchResponse", metrics=metrics)

    async def ping(self) -> bytes:
        return self.response("PingResponse" if self.faults.pong_wrong_type else "Pong")


HANDLERS = {"CreateTopic": AdminHandlers.create_topic, "ListTopics": AdminHandlers.list_topics,
            "DescribeTopic": AdminHandlers.describe_topic, "DescribePartition": AdminHandlers.describe_partition,
            "MetricsFetch": AdminHandlers.metrics_fetch, "Ping": AdminHandlers.ping}
