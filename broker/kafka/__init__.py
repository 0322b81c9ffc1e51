"""The Kafka personality of the reference broker (``python -m wirecheck.broker --protocols kafka``).

Options (:class:`KafkaOptions`, flags ``--kafka-<option>``); shared settings come from ``BrokerConfig``:
``--retention-records`` (records kept per partition, default all), ``--data-dir``, ``--fsync`` and ``--cache-bytes``.
Storage is in memory; with ``--data-dir`` batches, topics and coordinator state (committed offsets, transactions)
are written to disk and recovered on start (``--fsync batch|none``), and memory holds only each partition's index
and one batch cache of ``--cache-bytes`` shared by all partitions (see durable.py for what is and is not kept).

Transactions (KIP-98): transactions.py is the coordinator (transactional InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, EndTxn, TxnOffsetCommit); markers are control batches in the log, and read_committed Fetch and
ListOffsets stop at the last stable offset, with the aborted transactions listed.

Topic configs (configs.py: CreateTopics, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs): four are honoured
per topic: ``message.timestamp.type`` (LogAppendTime: the broker stamps each batch and recomputes its CRC-32C),
``max.message.bytes``, ``retention.ms`` (an explicit override expires whole batches on append; every
``--kafka-retention-check-ms`` the override, else the broker default ``--kafka-retention-ms``, drops closed segments,
see Partition.expire_segments) and ``cleanup.policy`` (delete: that retention; compact: records without a key are
refused, and the log cleaner, compaction.py, keeps the newest record of each key in the closed segments).
CreateTopics accepts and ignores other configs; the alter APIs refuse them (INVALID_CONFIG).

Admin APIs (admin.py): CreatePartitions, DeleteRecords, DeleteGroups, OffsetDelete, DescribeCluster,
OffsetForLeaderEpoch, DescribeProducers. SASL (sasl.py): ``--kafka-sasl-users FILE`` makes the listener require
SASL/PLAIN or SCRAM-SHA-256/512 and advertise SaslHandshake (v0-1) and SaslAuthenticate.
"""

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.kafka.faults import FAULTS, VARIANTS
from wirecheck.broker.kafka.options import KafkaOptions
from wirecheck.broker.kafka.server import KafkaPersonality
from wirecheck.broker.personality import PersonalityInfo

DEFAULT_PORT = 9092


def create(config: BrokerConfig, options: KafkaOptions | None = None) -> KafkaPersonality:
    return KafkaPersonality(config, options or KafkaOptions())


PERSONALITY = PersonalityInfo("kafka", DEFAULT_PORT, FAULTS, KafkaOptions, create, variants=VARIANTS,
                              storage=frozenset({"data_dir", "fsync", "retention_records", "cache_bytes"}))

__all__ = ["DEFAULT_PORT", "FAULTS", "KafkaOptions", "PERSONALITY", "create"]
