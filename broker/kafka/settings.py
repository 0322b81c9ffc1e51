"""What the broker is configured with (:class:`Settings`, from the ``--kafka-*`` options) and how it names itself."""

from __future__ import annotations

from dataclasses import dataclass

# Decision: Kafka has no per-topic partition cap, but a count from the wire must not size an allocation
# unchecked; more than this is refused with INVALID_PARTITIONS (37).
MAX_PARTITIONS = 10_000

NODE_ID = 0  # node.id unless --kafka-node-id says otherwise (Settings.node_id)
CLUSTER_ID = "wirecheck-reference"
AUTHORIZED_OPERATIONS_OMITTED = -2147483648


def _operations(*codes: int) -> int:
    return sum(1 << code for code in codes)


# Asked for its authorized operations, a broker without an authorizer (this one has no ACLs) answers every operation
# the resource type supports: Apache Kafka's AuthHelper.authorizedOperations, authorizer None -> supportedOps, as a
# bit field of AclOperation codes (core/src/main/scala/kafka/server/AuthHelper.scala; AclEntry.supportedOperations:
# READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
# IDEMPOTENT_WRITE 12). Apache Kafka 4.4 answers 8096, 3576 and 3400.
CLUSTER_OPERATIONS = _operations(5, 7, 8, 9, 10, 11, 12)
TOPIC_OPERATIONS = _operations(3, 4, 5, 6, 7, 8, 10, 11)
GROUP_OPERATIONS = _operations(3, 6, 8, 10, 11)

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
