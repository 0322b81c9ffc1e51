"""The Kafka personality's own options (flags ``--kafka-<option>``, see targets/reference/personality.py)."""

from dataclasses import dataclass, field

from wirecheck.targets.reference.personality import parse_mapping


@dataclass
class KafkaOptions:
    topics: dict[str, int] = field(default_factory=dict, metadata={
        "help": "topics created at start (an operator's), NAME:PARTITIONS,...", "parse": parse_mapping})
    topic_admin: bool = field(default=True, metadata={
        "help": "answer CreateTopics, DeleteTopics and CreatePartitions; --no-kafka-topic-admin refuses them with "
                "TOPIC_AUTHORIZATION_FAILED, as a cluster whose ACLs keep topic administration to its operator"})
    auto_create: bool = field(default=True, metadata={
        "help": "create topics on Metadata (Produce never creates, as in Kafka)"})
    default_partitions: int = field(default=1, metadata={
        "help": "partitions of auto-created topics and of CreateTopics with -1"})
    max_message_bytes: int = field(default=1048588, metadata={
        "help": "largest accepted batch (Kafka's max.message.bytes)"})
    min_session_ms: int = field(default=6000, metadata={"help": "group.min.session.timeout.ms"})
    consumer_heartbeat_ms: int = field(default=1000, metadata={
        "help": "group.consumer.heartbeat.interval.ms: the HeartbeatIntervalMs KIP-848 members are given "
                "(Kafka's default is 5000; 1000 lets rebalances converge faster)"})
    consumer_session_ms: int = field(default=45000, metadata={
        "help": "group.consumer.session.timeout.ms: a KIP-848 member silent this long is removed"})
    retention_ms: int = field(default=604800000, metadata={
        "help": "log.retention.ms: the default of the topic retention.ms, enforced on closed segments (-1: keep)"})
    retention_check_ms: int = field(default=300000, metadata={
        "help": "log.retention.check.interval.ms: how often retention and the log cleaner run"})
    sasl_users: str = field(default="", metadata={
        "help": "a file of user:password lines: the listener then requires SASL (PLAIN, SCRAM-SHA-256/512) "
                "and advertises SaslHandshake and SaslAuthenticate"})
