"""Kafka's reaction states (protocols/states.py): the producer's transactional state on the connection, errors by
their Errors.java names, and the error cells the clause catalogue names.

The transactional state belongs to a transactional id, not to a connection; the fuzzer follows it on the
connection whose requests moved it (InitProducerId, AddPartitionsToTxn, EndTxn answered without error:
TransactionCoordinator's Empty -> Ongoing -> CompleteCommit/CompleteAbort -> Ongoing), which is where a mutant
sent after them is read. The bulk mutants are read-only requests, which move no state; a guided run's steps
(``Adapter.step``) do: InitProducerId with the next of the steps' transactional ids (``txn-producer``), then
AddPartitionsToTxn of a topic of the run's own with the producer id and epoch that answer chose
(``in-transaction``: a step made from an earlier answer, ``Mutant.build``), then EndTxn (abort) with them
(``txn-complete``). A transaction a step left ongoing stays so until its timeout or the next InitProducerId of
its transactional id, which aborts it and is answered CONCURRENT_TRANSACTIONS (the state then stays where it was):
Kafka's mutants mostly end their connection (a malformed body is refused by a close), so an EndTxn planned after
them would reach the target on another connection, without the producer id it needs.
"""

from __future__ import annotations

from wirecheck.protocols.kafka import errors
from wirecheck.protocols.states import ANY, Cell, StateModel, Transition

#: every API's name (messages.api_name of each key kafka-python's and kio's definitions hold), as data: naming
#: them from the definitions would load every kio class at import (seconds); tests/unit/test_coverage_map_catalogue.py
#: checks the two agree
REQUESTS = (
    "AddOffsetsToTxn", "AddPartitionsToTxn", "AddRaftVoter", "AlterClientQuotas", "AlterConfigs",
    "AlterPartitionReassignments", "AlterReplicaLogDirs", "AlterShareGroupOffsets", "AlterUserScramCredentials",
    "ApiVersions", "ConsumerGroupDescribe", "ConsumerGroupHeartbeat", "CreateAcls", "CreateDelegationToken",
    "CreatePartitions", "CreateTopics", "DeleteAcls", "DeleteGroups", "DeleteRecords",
    "DeleteShareGroupOffsets", "DeleteTopics", "DescribeAcls", "DescribeClientQuotas", "DescribeCluster",
    "DescribeConfigs", "DescribeDelegationToken", "DescribeGroups", "DescribeLogDirs", "DescribeProducers",
    "DescribeQuorum", "DescribeShareGroupOffsets", "DescribeTopicPartitions", "DescribeTransactions",
    "DescribeUserScramCredentials", "ElectLeaders", "EndTxn", "ExpireDelegationToken", "Fetch",
    "FindCoordinator", "GetTelemetrySubscriptions", "Heartbeat", "IncrementalAlterConfigs", "InitProducerId",
    "JoinGroup", "LeaveGroup", "ListConfigResources", "ListGroups", "ListOffsets", "ListPartitionReassignments",
    "ListTransactions", "Metadata", "OffsetCommit", "OffsetDelete", "OffsetFetch", "OffsetForLeaderEpoch",
    "Produce", "PushTelemetry", "RemoveRaftVoter", "RenewDelegationToken", "SaslAuthenticate", "SaslHandshake",
    "ShareAcknowledge", "ShareFetch", "ShareGroupDescribe", "ShareGroupHeartbeat", "StreamsGroupDescribe",
    "StreamsGroupHeartbeat", "SyncGroup", "TxnOffsetCommit", "UnregisterBroker", "UpdateFeatures",
    "WriteTxnMarkers",
)

NO_PRODUCER, PRODUCER, ONGOING, COMPLETE = "no-producer", "txn-producer", "in-transaction", "txn-complete"

STATES = StateModel(
    initial=NO_PRODUCER,
    states={NO_PRODUCER: "no transactional producer id obtained on this connection",
            PRODUCER: "InitProducerId answered: a transactional producer with no transaction begun (Empty)",
            ONGOING: "AddPartitionsToTxn answered: a transaction is ongoing (TransactionState.ONGOING)",
            # TransactionCoordinator.handleEndTransaction: an EndTxn retried in CompleteAbort/CompleteCommit with
            # the same outcome is answered NONE, in Empty INVALID_TXN_STATE (broker/kafka/transactions.py too)
            COMPLETE: "EndTxn answered: the transaction ended (COMPLETE_ABORT), its producer id and epoch kept"},
    transitions=(Transition(ANY, "InitProducerId", "answer", PRODUCER),
                 Transition(PRODUCER, "AddPartitionsToTxn", "answer", ONGOING),
                 Transition(ONGOING, "AddPartitionsToTxn", "answer", ONGOING),
                 Transition(ONGOING, "EndTxn", "answer", COMPLETE),
                 Transition(COMPLETE, "AddPartitionsToTxn", "answer", ONGOING)),
    error_names={code: error.name for code, error in errors.BY_CODE.items()},
    requests=REQUESTS,
    error_vocabulary={name: name for name in errors.BY_NAME if name != "NONE"},
    cells=(
        Cell("kafka.api-versions.unsupported-version", "ApiVersions", "error:UNSUPPORTED_VERSION"),
        Cell("kafka.api-versions.invalid-software-name", "ApiVersions", "error:INVALID_REQUEST"),
        Cell("kafka.produce.crc-mismatch", "Produce", "error:CORRUPT_MESSAGE"),
        Cell("kafka.produce.invalid-record", "Produce", "error:INVALID_RECORD"),
        Cell("kafka.produce.batch-length", "Produce", "error:CORRUPT_MESSAGE"),
        Cell("kafka.produce.batch-length", "Produce", "error:INVALID_RECORD"),
        Cell("kafka.produce.unknown-topic", "Produce", "error:UNKNOWN_TOPIC_OR_PARTITION"),
        Cell("kafka.produce.invalid-acks", "Produce", "error:INVALID_REQUIRED_ACKS"),
        Cell("kafka.produce.zstd-version", "Produce", "error:UNSUPPORTED_COMPRESSION_TYPE"),
        Cell("kafka.produce.message-too-large", "Produce", "error:MESSAGE_TOO_LARGE"),
        Cell("kafka.fetch.out-of-range", "Fetch", "error:OFFSET_OUT_OF_RANGE"),
        Cell("kafka.fetch.unknown-topic", "Fetch", "error:UNKNOWN_TOPIC_OR_PARTITION"),
        Cell("kafka.fetch.unknown-session", "Fetch", "error:FETCH_SESSION_ID_NOT_FOUND"),
        Cell("kafka.list-offsets.unknown-topic", "ListOffsets", "error:UNKNOWN_TOPIC_OR_PARTITION"),
        Cell("kafka.metadata.unknown-topic", "Metadata", "error:UNKNOWN_TOPIC_OR_PARTITION"),
        Cell("kafka.metadata.unknown-topic", "Metadata", "error:LEADER_NOT_AVAILABLE"),
        Cell("kafka.metadata.invalid-topic", "Metadata", "error:INVALID_TOPIC_EXCEPTION"),
        Cell("kafka.group.member-id-required", "JoinGroup", "error:MEMBER_ID_REQUIRED"),
        Cell("kafka.consumer-group.fenced-epoch", "ConsumerGroupHeartbeat", "error:FENCED_MEMBER_EPOCH"),
        Cell("kafka.consumer-group.unknown-member", "ConsumerGroupHeartbeat", "error:UNKNOWN_MEMBER_ID"),
        Cell("kafka.consumer-group.leave", "ConsumerGroupHeartbeat", "error:UNKNOWN_MEMBER_ID"),
        Cell("kafka.consumer-group.unsupported-assignor", "ConsumerGroupHeartbeat", "error:UNSUPPORTED_ASSIGNOR"),
        Cell("kafka.consumer-group.invalid-request", "ConsumerGroupHeartbeat", "error:INVALID_REQUEST"),
        Cell("kafka.consumer-group.describe", "ConsumerGroupDescribe", "error:GROUP_ID_NOT_FOUND"),
        Cell("kafka.consumer-group.classic-coexistence", "JoinGroup", "error:INCONSISTENT_GROUP_PROTOCOL"),
        Cell("kafka.consumer-group.classic-upgrade", "ConsumerGroupHeartbeat", "error:REBALANCE_IN_PROGRESS"),
        Cell("kafka.consumer-group.classic-upgrade", "ConsumerGroupHeartbeat", "error:GROUP_ID_NOT_FOUND"),
        Cell("kafka.consumer-group.commit-member-epoch", "OffsetCommit", "error:STALE_MEMBER_EPOCH"),
        Cell("kafka.share-group.fenced-epoch", "ShareGroupHeartbeat", "error:FENCED_MEMBER_EPOCH"),
        Cell("kafka.share-group.unknown-member", "ShareGroupHeartbeat", "error:UNKNOWN_MEMBER_ID"),
        Cell("kafka.share-group.leave", "ShareGroupHeartbeat", "error:UNKNOWN_MEMBER_ID"),
        Cell("kafka.share-group.invalid-request", "ShareGroupHeartbeat", "error:INVALID_REQUEST"),
        Cell("kafka.share-group.describe", "ShareGroupDescribe", "error:GROUP_ID_NOT_FOUND"),
        Cell("kafka.share-ack.invalid-record-state", "ShareAcknowledge", "error:INVALID_RECORD_STATE"),
        Cell("kafka.share-ack.invalid-batches", "ShareAcknowledge", "error:INVALID_REQUEST"),
        Cell("kafka.share-fetch.lock-expiry", "ShareFetch", "error:INVALID_RECORD_STATE"),
        Cell("kafka.share-session.epoch", "ShareFetch", "error:INVALID_SHARE_SESSION_EPOCH"),
        Cell("kafka.share-session.not-found", "ShareFetch", "error:SHARE_SESSION_NOT_FOUND"),
        Cell("kafka.telemetry.unknown-subscription", "PushTelemetry", "error:UNKNOWN_SUBSCRIPTION_ID"),
        Cell("kafka.telemetry.unsupported-compression", "PushTelemetry", "error:UNSUPPORTED_COMPRESSION_TYPE"),
        Cell("kafka.telemetry.too-large", "PushTelemetry", "error:TELEMETRY_TOO_LARGE"),
        Cell("kafka.telemetry.null-instance", "PushTelemetry", "error:INVALID_REQUEST"),
        Cell("kafka.telemetry.push-interval", "PushTelemetry", "error:THROTTLING_QUOTA_EXCEEDED"),
        Cell("kafka.telemetry.terminated", "PushTelemetry", "error:INVALID_REQUEST"),
        Cell("kafka.telemetry.unreadable-metrics", "PushTelemetry", "error:INVALID_RECORD"),
        Cell("kafka.group.unknown-member", "Heartbeat", "error:UNKNOWN_MEMBER_ID"),
        Cell("kafka.group.illegal-generation", "Heartbeat", "error:ILLEGAL_GENERATION"),
        Cell("kafka.group.rebalance-in-progress", "Heartbeat", "error:REBALANCE_IN_PROGRESS"),
        Cell("kafka.group.invalid-session-timeout", "JoinGroup", "error:INVALID_SESSION_TIMEOUT"),
        Cell("kafka.topics.already-exists", "CreateTopics", "error:TOPIC_ALREADY_EXISTS"),
        Cell("kafka.topics.invalid-partitions", "CreateTopics", "error:INVALID_PARTITIONS"),
        Cell("kafka.topics.invalid-replication-factor", "CreateTopics", "error:INVALID_REPLICATION_FACTOR"),
        Cell("kafka.idempotence.out-of-order", "Produce", "error:OUT_OF_ORDER_SEQUENCE_NUMBER"),
        Cell("kafka.txn.fenced", "EndTxn", "error:INVALID_PRODUCER_EPOCH"),
        Cell("kafka.txn.fenced", "EndTxn", "error:PRODUCER_FENCED"),
        Cell("kafka.txn.invalid-state", "EndTxn", "error:INVALID_TXN_STATE"),
        Cell("kafka.txn.init-aborts-ongoing", "InitProducerId", "error:CONCURRENT_TRANSACTIONS"),
        Cell("kafka.txn.invalid-timeout", "InitProducerId", "error:INVALID_TRANSACTION_TIMEOUT"),
        Cell("kafka.txn.produce-unadded", "Produce", "error:INVALID_TXN_STATE"),
        Cell("kafka.txn-v2.old-epoch-fenced", "Produce", "error:INVALID_PRODUCER_EPOCH"),
        Cell("kafka.configs.unknown-topic", "DescribeConfigs", "error:UNKNOWN_TOPIC_OR_PARTITION"),
        Cell("kafka.configs.unknown-config", "IncrementalAlterConfigs", "error:INVALID_CONFIG"),
        Cell("kafka.configs.honoured", "Produce", "error:MESSAGE_TOO_LARGE"),
        Cell("kafka.admin.create-partitions-invalid", "CreatePartitions", "error:UNKNOWN_TOPIC_OR_PARTITION"),
        Cell("kafka.admin.create-partitions-invalid", "CreatePartitions", "error:INVALID_PARTITIONS"),
        Cell("kafka.admin.delete-records-fetch", "Fetch", "error:OFFSET_OUT_OF_RANGE"),
        Cell("kafka.admin.delete-records-beyond-hw", "DeleteRecords", "error:OFFSET_OUT_OF_RANGE"),
        Cell("kafka.admin.delete-groups", "DeleteGroups", "error:GROUP_ID_NOT_FOUND"),
        Cell("kafka.admin.delete-groups-non-empty", "DeleteGroups", "error:NON_EMPTY_GROUP"),
        Cell("kafka.admin.offset-delete-unknown-group", "OffsetDelete", "error:GROUP_ID_NOT_FOUND"),
        Cell("kafka.admin.offset-for-leader-epoch", "OffsetForLeaderEpoch", "error:UNKNOWN_TOPIC_OR_PARTITION"),
        Cell("kafka.sasl.handshake-mechanisms", "SaslHandshake", "error:UNSUPPORTED_SASL_MECHANISM"),
        Cell("kafka.sasl.wrong-password", "SaslAuthenticate", "error:SASL_AUTHENTICATION_FAILED"),
        Cell("kafka.sasl.scram-tampered", "SaslAuthenticate", "error:SASL_AUTHENTICATION_FAILED"),
    ),
    steps=("InitProducerId", "AddPartitionsToTxn", "EndTxn"),
)
