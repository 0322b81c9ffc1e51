"""What every API-handler mixin of the Broker (broker.py) reads: the broker's parts, declared once for the checker,
and the partition lookup they share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirecheck.broker.kafka.errors import NONE, UNKNOWN_TOPIC_OR_PARTITION

if TYPE_CHECKING:
    from wirecheck.broker.kafka.admin import Admin
    from wirecheck.broker.kafka.configs import Configs
    from wirecheck.broker.kafka.consumer_groups import ConsumerGroups
    from wirecheck.broker.kafka.faults import KafkaFaults, KafkaVariants
    from wirecheck.broker.kafka.groups import Coordinator
    from wirecheck.broker.kafka.producers import Producers
    from wirecheck.broker.kafka.settings import Settings
    from wirecheck.broker.kafka.share_groups import ShareGroups
    from wirecheck.broker.kafka.storage import Storage
    from wirecheck.broker.kafka.transactions import Transactions


class BrokerParts:
    """The base of the API-handler mixins; :class:`Broker` sets every part in its constructor."""

    settings: Settings
    faults: KafkaFaults
    variants: KafkaVariants
    storage: Storage
    coordinator: Coordinator
    consumer_groups: ConsumerGroups
    share_groups: ShareGroups
    producers: Producers
    transactions: Transactions
    configs: Configs
    admin: Admin

    def _partition_error(self, topic: str, index: int) -> int:
        """3 for a missing topic, and for a missing partition of an existing topic."""
        t = self.storage.topics.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            return UNKNOWN_TOPIC_OR_PARTITION
        return NONE
