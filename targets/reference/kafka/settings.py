"""What the broker is configured with (:class:`Settings`, from the ``--kafka-*`` options) and how it names itself."""

from __future__ import annotations

from dataclasses import dataclass

# Decision: Kafka has no per-topic partition cap, but a count from the wire must not size an allocation
# unchecked; more than this is refused with INVALID_PARTITIONS (37).
MAX_PARTITIONS = 10_000

NODE_ID = 0  # node.id unless --kafka-node-id says otherwise (Settings.node_id)
CLUSTER_ID = "wirecheck-reference"
AUTHORIZED_OPERATIONS_OMITTED = -2147483648

#: a response carrying this key true is not sent: the server closes the connection instead
CLOSE = "_close"


@dataclass
class Settings:
    auto_create: bool = True
    node_id: int = NODE_ID  # this broker's node.id: in Metadata, FindCoordinator, DescribeCluster, its config resource
    topic_admin: bool = True  # False: topic administration is denied (TOPIC_AUTHORIZATION_FAILED), as by ACLs
    default_partitions: int = 1
    max_message_bytes: int = 1048588  # max.message.bytes default
    max_fetch_wait_s: float = 30.0  # cap on a fetch's long poll, whatever max_wait_ms claims
    retention_records: int | None = None  # per partition; None keeps everything
    retention_ms: int = 604800000  # log.retention.ms: the default of the topic retention.ms
    retention_check_ms: int = 300000  # log.retention.check.interval.ms
    consumer_heartbeat_ms: int = 1000  # group.consumer.heartbeat.interval.ms (KIP-848 members)
    consumer_session_ms: int = 45000  # group.consumer.session.timeout.ms
    share_lock_ms: int = 30000  # group.share.record.lock.duration.ms (KIP-932 share groups)
    share_delivery_limit: int = 5  # group.share.delivery.count.limit
    share_max_record_locks: int = 2000  # group.share.partition.max.record.locks
