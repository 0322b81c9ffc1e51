"""The Kafka personality's own options (flags ``--kafka-<option>``, see broker/personality.py)."""

from dataclasses import dataclass, field

from wirecheck.broker.personality import parse_mapping


@dataclass
class KafkaOptions:
    topics: dict[str, int] = field(default_factory=dict, metadata={
        "help": "topics created at start (an operator's), NAME:PARTITIONS,...", "parse": parse_mapping})
    topic_admin: bool = field(default=True, metadata={
        "help": "answer CreateTopics, DeleteTopics and CreatePartitions; --no-kafka-topic-admin refuses them with "
                "TOPIC_AUTHORIZATION_FAILED, as a cluster whose ACLs keep topic administration to its operator"})
    node_id: int = field(default=0, metadata={
        "help": "this broker's node.id (Kafka's is the operator's choice; a second broker with another id shows "
                "whether a client or a --differential run maps ids instead of expecting 0)"})
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
    share_lock_ms: int = field(default=30000, metadata={
        "help": "group.share.record.lock.duration.ms: how long a KIP-932 share-group member holds the records it "
                "acquired before they are given back (Kafka: 30000; the suite's lock-expiry cases need <= 3000)"})
    share_delivery_limit: int = field(default=5, metadata={
        "help": "group.share.delivery.count.limit: deliveries after which a record is archived (KIP-932)"})
    share_max_record_locks: int = field(default=2000, metadata={
        "help": "group.share.partition.max.record.locks: records in flight per share partition (KIP-932)"})
    retention_ms: int = field(default=604800000, metadata={
        "help": "log.retention.ms: the default of the topic retention.ms, enforced on closed segments (-1: keep)"})
    retention_check_ms: int = field(default=300000, metadata={
        "help": "log.retention.check.interval.ms: how often retention and the log cleaner run"})
    telemetry: bool = field(default=True, metadata={
        "help": "advertise and answer KIP-714 client telemetry (GetTelemetrySubscriptions, PushTelemetry); "
                "--no-kafka-telemetry leaves them out, as a broker without them (clients then push nothing)"})
    telemetry_push_ms: int = field(default=1000, metadata={
        "help": "the PushIntervalMs telemetry subscriptions give (Kafka's interval.ms default is 300000; 1000 lets "
                "a short client run push several times)"})
    telemetry_max_bytes: int = field(default=1048576, metadata={
        "help": "telemetry.max.bytes: the largest Metrics a PushTelemetry may carry (TelemetryMaxBytes)"})
    telemetry_metrics: str = field(default="all", metadata={
        "help": "the metrics subscriptions request: all, none, or comma-separated name prefixes"})
    sasl_users: str = field(default="", metadata={
        "help": "a file of user:password lines: the listener then requires SASL (PLAIN, SCRAM-SHA-256/512) "
                "and advertises SaslHandshake and SaslAuthenticate"})
