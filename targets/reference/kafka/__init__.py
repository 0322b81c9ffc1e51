"""The Kafka personality of the reference broker (``python -m targets.reference --protocols kafka``).

Configuration through ``BrokerConfig.extra`` (all optional):
    kafka_auto_create         create topics on Metadata (default True; Produce never creates, as in Kafka)
    kafka_default_partitions  partitions of auto-created topics and of CreateTopics with -1 (default 1)
    kafka_max_message_bytes   largest accepted batch (default 1048588, Kafka's max.message.bytes)
    kafka_min_session_ms      group.min.session.timeout.ms (default 6000)
    retention_records         (the CLI's --retention-records) records kept per partition (default: all)
Storage is in memory; with ``--data-dir`` batches and topics are also written to a durable log and replayed on
start (``--fsync batch|none``; see durable.py for what is and is not kept).

Topic configs in CreateTopics: ``message.timestamp.type`` (CreateTime or LogAppendTime: the broker then stamps
each batch and recomputes its CRC-32C) is honoured; every other config is accepted and ignored.
"""

from targets.reference.core import BrokerConfig
from targets.reference.kafka.faults import FAULTS
from targets.reference.kafka.server import KafkaPersonality

DEFAULT_PORT = 9092

__all__ = ["DEFAULT_PORT", "FAULTS", "create"]


def create(config: BrokerConfig) -> KafkaPersonality:
    return KafkaPersonality(config)
