"""The broker's shared state, and its API handlers by family (one mixin module each, named ``*_apis.py``).

Error behaviour follows Kafka's KafkaApis/ReplicaManager/GroupCoordinator as summarised in the spec notes
(kafka.md §5); each decision that goes beyond them is commented where it is made.
"""

from __future__ import annotations

import time

from wirecheck.broker.kafka import admin, compaction, configs, consumer_groups, groups
from wirecheck.broker.kafka.faults import KafkaFaults, KafkaVariants
from wirecheck.broker.kafka.fetch_apis import FetchApis
from wirecheck.broker.kafka.group_apis import GroupApis
from wirecheck.broker.kafka.metadata_apis import MetadataApis
from wirecheck.broker.kafka.produce_apis import ProduceApis
from wirecheck.broker.kafka.producers import Producers
from wirecheck.broker.kafka.settings import CLUSTER_ID, MAX_PARTITIONS, Settings
from wirecheck.broker.kafka.share_fetch import ShareFetcher
from wirecheck.broker.kafka.share_groups import ShareGroups
from wirecheck.broker.kafka.share_partitions import SharePartitions
from wirecheck.broker.kafka.storage import Storage
from wirecheck.broker.kafka.topic_apis import TopicApis
from wirecheck.broker.kafka.transactions import Transactions
from wirecheck.broker.kafka.txn_apis import TransactionApis


class Broker(MetadataApis, ProduceApis, FetchApis, TopicApis, TransactionApis, GroupApis):
    """The state shared by every connection, and one method per API."""

    def __init__(self, settings: Settings, faults: KafkaFaults, coordinator: groups.Coordinator, producers: Producers,
                 storage: Storage, variants: KafkaVariants | None = None):
        self.settings = settings
        variants = KafkaVariants() if variants is None else variants
        self.faults = faults
        self.variants = variants
        self.storage = storage
        self.coordinator = coordinator
        self.consumer_groups = consumer_groups.ConsumerGroups(
            coordinator, storage, faults, settings.consumer_heartbeat_ms, settings.consumer_session_ms,
            default_assignor="range" if variants.consumer_group_range_default else "uniform",
            deferred_assignment=variants.consumer_group_assignment_deferred)
        # KIP-932 share groups: membership (share_groups), in-flight records (share_partitions), ShareFetch and
        # ShareAcknowledge with their sessions (share_fetch); a member that leaves closes its session
        self.share_partitions = SharePartitions(storage, faults, variants, settings.share_lock_ms,
                                                settings.share_delivery_limit, settings.share_max_record_locks)
        self.share_fetcher = ShareFetcher(storage, self.share_partitions, faults, settings.max_fetch_wait_s)
        self.share_groups = ShareGroups(storage, self.consumer_groups, faults, variants,
                                        settings.consumer_heartbeat_ms, settings.consumer_session_ms,
                                        on_leave=self.share_fetcher.close_member)
        self.producers = producers
        self.transactions = Transactions(producers, storage, coordinator, faults, variants)
        self.configs = configs.Configs(storage, settings, faults, variants)
        self.admin = admin.Admin(storage, coordinator, producers, faults, MAX_PARTITIONS, CLUSTER_ID, settings.node_id,
                                 topic_admin=settings.topic_admin)

    def maintain_logs(self) -> None:
        """The periodic log maintenance: under cleanup.policy delete each partition drops its closed segments past
        the topic's retention.ms (its override, else the broker default); under compact the cleaner runs."""
        now = int(time.time() * 1000)
        for topic in self.storage.topics.values():
            policy = topic.configs.get("cleanup.policy", "delete").split(",")
            retention_ms = int(topic.configs.get("retention.ms", self.settings.retention_ms))
            for partition in topic.partitions:
                if "delete" in policy and retention_ms >= 0:
                    partition.expire_segments(now - retention_ms)
                if "compact" in policy:
                    compaction.compact(partition)
