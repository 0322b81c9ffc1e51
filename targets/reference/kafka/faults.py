"""The clauses the Kafka personality can be told to break (``--fault kafka.NAME``), one line each.

Each description names the clause and where the spec states it: the Kafka protocol guide
(kafka.apache.org/protocol), a message definition (clients/src/main/resources/common/message/*.json),
a KIP, or the broker source the spec notes cite.
"""

FAULTS: dict[str, str] = {
    "kafka.consumer-group-join-epoch-zero":
        "A member joining a KIP-848 group gets a member epoch above 0 (KIP-848); this answers MemberEpoch 0",
    "kafka.consumer-group-member-id-ignored":
        "ConsumerGroupHeartbeat v1 keeps the member id the client generated (KIP-1082); this assigns another",
    "kafka.consumer-group-epoch-not-bumped":
        "A membership change bumps the group epoch (KIP-848); this keeps the first epoch",
    "kafka.consumer-group-assignment-omitted":
        "The heartbeat answer carries a changed assignment (KIP-848); this always answers Assignment null",
    "kafka.consumer-group-reassigns-unrevoked":
        "A partition is assigned only after its owner revoked it (KIP-848 reconciliation); this assigns it at once",
    "kafka.consumer-group-epoch-before-revocation":
        "A member's epoch advances only after it revoked what it loses (KIP-848); this moves it on at once, the "
        "lost partitions dropped from its assignment without a revocation step",
    "kafka.consumer-group-epoch-unchecked":
        "A heartbeat at a stale member epoch gets FENCED_MEMBER_EPOCH (110) (KIP-848); this accepts any epoch",
    "kafka.consumer-group-unknown-member-joins":
        "A heartbeat (epoch > 0) from an unknown member id gets UNKNOWN_MEMBER_ID (25) (KIP-848); this joins it",
    "kafka.consumer-group-leave-ignored":
        "MemberEpoch -1 removes the member (KIP-848); this answers -1 but keeps it",
    "kafka.consumer-group-static-rejoin-rebalances":
        "A static member rejoining after -2 takes over its epoch and assignment (KIP-848); this rejoins it as a "
        "new member, bumping the group epoch",
    "kafka.consumer-group-assignor-unchecked":
        "An unknown ServerAssignor gets UNSUPPORTED_ASSIGNOR (112) (KIP-848); this falls back to uniform",
    "kafka.consumer-group-fields-unchecked":
        "A heartbeat with missing or empty required fields gets INVALID_REQUEST (42) (KIP-848); this accepts it",
    "kafka.consumer-group-describe-no-target":
        "ConsumerGroupDescribe lists each member's target assignment (ConsumerGroupDescribeResponse.json); this "
        "lists it empty",
    "kafka.consumer-group-classic-join-allowed":
        "A classic JoinGroup of another ProtocolType than consumer on a consumer group with members gets "
        "INCONSISTENT_GROUP_PROTOCOL (23) (KIP-848); this hands the group to the classic protocol, dropping its "
        "members",
    "kafka.consumer-group-classic-members-dropped":
        "A heartbeat join naming a classic group with members leaves those members in place, refused with "
        "GROUP_ID_NOT_FOUND (69) or converted online with them (KIP-848 'Upgrade & Downgrade'); this takes the "
        "group over as if it were Empty, its classic members forgotten",
    "kafka.consumer-group-commit-epoch-unchecked":
        "OffsetCommit v9+ at a stale member epoch gets STALE_MEMBER_EPOCH (113) (KIP-848); this commits it",
    "kafka.telemetry-instance-id-not-assigned":
        "GetTelemetrySubscriptions with a zero ClientInstanceId is answered a new non-zero UUID (KIP-714); this "
        "answers the zero id back",
    "kafka.telemetry-subscription-id-unstable":
        "A push under the SubscriptionId GetTelemetrySubscriptions answered is accepted (KIP-714); this answers a "
        "SubscriptionId other than the one pushes are checked against, so every push gets UNKNOWN_SUBSCRIPTION_ID",
    "kafka.telemetry-subscription-unchecked":
        "A push under another SubscriptionId than the instance's gets UNKNOWN_SUBSCRIPTION_ID (117) (KIP-714); "
        "this accepts any",
    "kafka.telemetry-compression-unchecked":
        "A push with a CompressionType not among AcceptedCompressionTypes gets UNSUPPORTED_COMPRESSION_TYPE (76) "
        "(KIP-714); this does not check it",
    "kafka.telemetry-size-unchecked":
        "A push whose Metrics exceed TelemetryMaxBytes gets TELEMETRY_TOO_LARGE (118) (KIP-714); this does not "
        "check the size",
    "kafka.telemetry-null-instance-accepted":
        "A push with a zero ClientInstanceId gets INVALID_REQUEST (42) (KIP-714); this handles it as an instance",
    "kafka.share-group-join-epoch-zero":
        "A member joining a share group gets a member epoch above 0 (KIP-932); this answers MemberEpoch 0",
    "kafka.share-group-assignment-omitted":
        "The share-group heartbeat answer carries a changed assignment (KIP-932); this always answers Assignment "
        "null",
    "kafka.share-group-epoch-unchecked":
        "A share-group heartbeat at a stale member epoch gets FENCED_MEMBER_EPOCH (110) (KIP-932); this accepts "
        "any epoch",
    "kafka.share-group-unknown-member-joins":
        "A share-group heartbeat (epoch > 0) from an unknown member gets UNKNOWN_MEMBER_ID (25) (KIP-932); this "
        "joins it",
    "kafka.share-group-leave-ignored":
        "MemberEpoch -1 removes the share-group member (KIP-932); this answers -1 but keeps it",
    "kafka.share-group-fields-unchecked":
        "A share-group heartbeat with an empty GroupId/MemberId or a join without SubscribedTopicNames gets "
        "INVALID_REQUEST (42) (KIP-932); this accepts it",
    "kafka.share-group-describe-no-assignment":
        "ShareGroupDescribe lists each member's assignment (ShareGroupDescribeResponse.json); this lists it empty",
    "kafka.share-fetch-acquired-records-omitted":
        "ShareFetch names the records it hands out in AcquiredRecords (KIP-932, ShareFetchResponse.json); this "
        "returns the records with no AcquiredRecords",
    "kafka.share-records-acquired-twice":
        "A record locked by one share-group member is not delivered to another (KIP-932 in-flight records); this "
        "acquires locked records again for whoever fetches",
    "kafka.share-accept-redelivers":
        "An ACCEPTed record is never delivered again (KIP-932); this treats ACCEPT as RELEASE",
    "kafka.share-release-ignored":
        "A RELEASEd record becomes available at once (KIP-932); this answers 0 and keeps it locked until its lock "
        "expires",
    "kafka.share-reject-redelivers":
        "A REJECTed record is archived (KIP-932); this treats REJECT as RELEASE",
    "kafka.share-ack-state-unchecked":
        "Acknowledging a record the member does not hold gets INVALID_RECORD_STATE (121) (KIP-932); this applies "
        "it",
    "kafka.share-ack-batches-unchecked":
        "Overlapping, unsorted or inverted acknowledgement batches get INVALID_REQUEST (42) (KIP-932); this "
        "applies them",
    "kafka.share-delivery-count-frozen":
        "Each delivery increments a record's delivery count (KIP-932); this keeps it at 1",
    "kafka.share-delivery-limit-ignored":
        "A record released at group.share.delivery.count.limit deliveries is archived (KIP-932); this makes it "
        "available again forever",
    "kafka.share-lock-never-expires":
        "An acquisition lock expires after group.share.record.lock.duration.ms, giving the record back (KIP-932); "
        "this never expires locks",
    "kafka.share-session-epoch-unchecked":
        "A ShareFetch at another epoch than its share session's next gets INVALID_SHARE_SESSION_EPOCH (123) "
        "(KIP-932); this accepts any epoch",
    "kafka.share-session-unknown-opens":
        "A ShareFetch/ShareAcknowledge at epoch > 0 without a share session gets SHARE_SESSION_NOT_FOUND (122) "
        "(KIP-932); this opens one at that epoch",
    "kafka.crc-ieee":
        "RecordBatch CRC is CRC-32C over attributes..end (protocol guide 'Record Batch', KIP-98); "
        "this validates it with CRC-32 IEEE, so correct batches get CORRUPT_MESSAGE (2)",
    "kafka.advertise-unimplemented":
        "ApiVersions must only advertise versions the broker implements (KIP-35); Fetch v3 is advertised "
        "and answered in the v4 layout (FetchResponse.json)",
    "kafka.hw-off-by-one":
        "Fetch HighWatermark is the offset after the last committed record (FetchResponse.json); "
        "this answers HW + 1",
    "kafka.wrong-error-unknown-partition":
        "Produce to a missing partition of an existing topic is UNKNOWN_TOPIC_OR_PARTITION (3) (KafkaApis); "
        "this answers NOT_LEADER_OR_FOLLOWER (6) (Fetch and ListOffsets still answer 3)",
    "kafka.throttle-missing-metadata-v5":
        "MetadataResponse v3+ starts with ThrottleTimeMs (MetadataResponse.json); v5 answers omit it",
    "kafka.tagged-fields-misskipped":
        "Unknown tagged fields must be skipped by exactly their size (KIP-482); this skips one byte too "
        "many, so requests carrying one are misparsed",
    "kafka.crash-on-hostile-array":
        "An array count larger than the bytes left is a malformed request that costs one connection "
        "(RequestContext.parseRequest); this wedges the broker: no connection gets answers afterwards",
    "kafka.generation-not-bumped":
        "Every completed rebalance increments the group generation (JoinGroupResponse.json, "
        "GroupMetadata.initNextGeneration); this keeps generation 1",
    "kafka.leader-gets-no-metadata":
        "The JoinGroup leader receives every member's protocol metadata (JoinGroupResponse.json Members); "
        "this sends empty metadata",
    "kafka.acks0-responds":
        "Produce with acks=0 gets no response (protocol guide 'Produce API', KafkaApis.handleProduceRequest); "
        "this answers it",
    "kafka.apiversions-unsupported-not-v0":
        "ApiVersions at an unsupported version is answered with a v0 body, error 35 (KIP-511, "
        "ApiVersionsRequest.getErrorResponse); this encodes it at the broker's highest (flexible) version",
    "kafka.apiversions-unsupported-trailing-tags":
        "The v0 answer to an unsupported ApiVersions version is exactly a v0 body (KIP-511; v0 is not flexible, "
        "ApiVersionsResponse.json); this appends a tagged-field section, which a v0 reader cannot decode",
    "kafka.frame-limit-ignored":
        "A size prefix above socket.request.max.bytes (100 MiB) closes the connection before any body byte is "
        "read (NetworkReceive, InvalidReceiveException); this has no limit and waits for the body",
    "kafka.fetch-unknown-partition-no-error":
        "Fetch of an unknown topic or partition fails with UNKNOWN_TOPIC_OR_PARTITION (3) (KafkaApis."
        "handleFetchRequest); this answers an empty partition with error 0",
    "kafka.listoffsets-unknown-partition-no-error":
        "ListOffsets of an unknown topic or partition fails with UNKNOWN_TOPIC_OR_PARTITION (3) (KafkaApis."
        "handleListOffsetRequest); this answers offset -1 with error 0",
    "kafka.batch-length-ignored":
        "A batch whose batchLength disagrees with its bytes is corrupt (DefaultRecordBatch.ensureValid, "
        "ByteBufferLogInputStream); this takes the length from the bytes received and stores the batch",
    "kafka.replication-factor-unchecked":
        "CreateTopics with a replication factor above the number of brokers fails with INVALID_REPLICATION_FACTOR "
        "(38) (ReplicationControlManager, CreateTopicsResponse.json); this creates the topic with one replica",
    "kafka.software-name-unchecked":
        "ApiVersions v3+ with a ClientSoftwareName/Version outside KIP-511's pattern fails with INVALID_REQUEST "
        "(42) (ApiVersionsRequest.isValid); this answers 0",
    "kafka.metadata-v13-as-v12":
        "A response has the requested version's fields (MetadataResponse.json: v13 adds the top-level "
        "ErrorCode); this answers Metadata v13 with the v12 body",
    "kafka.unknown-key-stays-open":
        "A request with an unknown api key closes the connection (SocketServer via "
        "RequestHeader.parse); this stays silent and keeps it open",
    "kafka.fetch-ignores-offset":
        "Fetch returns batches from FetchOffset on (FetchRequest.json FetchOffset); this reads from the log "
        "start whatever offset in range is asked (an offset out of range is still refused)",
    "kafka.commit-not-stored":
        "OffsetCommit stores the offset that OffsetFetch returns (OffsetCommitRequest.json, "
        "OffsetFetchResponse.json); this answers success and stores nothing",
    "kafka.correlation-id-wrong":
        "A response carries its request's correlation id (protocol guide 'Response Header'); "
        "this answers with correlation id + 1",
    "kafka.listoffsets-latest-off-by-one":
        "ListOffsets timestamp -1 returns the log end offset (ListOffsetsRequest.json, "
        "protocol guide 'ListOffsets'); this answers log end + 1",
    "kafka.create-duplicate-no-error":
        "CreateTopics on an existing name fails with TOPIC_ALREADY_EXISTS (36) (CreateTopicsResponse.json); "
        "this answers 0",
    "kafka.sequence-not-checked":
        "Idempotent produce rejects a gap in sequence numbers with OUT_OF_ORDER_SEQUENCE_NUMBER (45) "
        "(KIP-98, ProducerAppendInfo); this accepts a sequence that skips ahead (a retry is still recognised)",
    "kafka.fetch-beyond-hw-empty":
        "Fetch at an offset above the high watermark fails with OFFSET_OUT_OF_RANGE (1) "
        "(ReplicaManager.readFromLog); this answers an empty partition with error 0",
    "kafka.flexible-header-v1":
        "Flexible request versions get response header v1 with a tagged-field section (KIP-482, "
        "ResponseHeader.json); this answers with header v0",
    "kafka.malformed-body-answered":
        "A body that does not decode closes the connection without a response (RequestContext.parseRequest); "
        "this writes correlation id + int16 -1 and keeps the connection (Kafka-RS's behaviour)",
    "kafka.metadata-empty-means-all":
        "Metadata v1+ with an empty topic array lists no topics, only null means all (MetadataRequest.json); "
        "this lists every topic",
    "kafka.produce-autocreates":
        "Produce to a missing topic fails with UNKNOWN_TOPIC_OR_PARTITION (3) and never creates it "
        "(KafkaApis.handleProduceRequest); this creates the topic",
    "kafka.message-too-large-unchecked":
        "A batch larger than max.message.bytes fails with MESSAGE_TOO_LARGE (10) (UnifiedLog."
        "analyzeAndValidateRecords); this accepts it on a topic without an override (no broker-wide default)",
    "kafka.fetch-no-long-poll":
        "Fetch waits up to MaxWaitMs for MinBytes (FetchRequest.json); this returns at once",
    "kafka.heartbeat-ignores-rebalance":
        "Heartbeat during a pending rebalance answers REBALANCE_IN_PROGRESS (27) so members rejoin "
        "(GroupCoordinator.handleHeartbeat); this answers 0",
    "kafka.describe-configs-drops-key":
        "DescribeConfigs returns every requested key the broker knows (DescribeConfigsRequest.json "
        "ConfigurationKeys); this drops the first one",
    "kafka.describe-configs-synonyms-always":
        "DescribeConfigs lists synonyms only when IncludeSynonyms is set (KIP-226); this always lists them",
    "kafka.describe-configs-docs-always":
        "DescribeConfigs v3+ returns documentation only when IncludeDocumentation is set (KIP-569); this always "
        "returns it",
    "kafka.alter-configs-unknown-accepted":
        "Altering an unknown topic config fails with INVALID_CONFIG (40) (ConfigAdminManager); this accepts it",
    "kafka.alter-configs-not-applied":
        "AlterConfigs/IncrementalAlterConfigs change the topic's configs (KIP-133, KIP-339); this answers 0 and "
        "changes nothing",
    "kafka.validate-only-applied":
        "AlterConfigs with ValidateOnly changes nothing (AlterConfigsRequest.json); this applies the change",
    "kafka.max-message-bytes-override-ignored":
        "A topic's max.message.bytes override bounds its batches (TopicConfig); this uses the broker default",
    "kafka.create-partitions-count-ignored":
        "CreatePartitions grows the topic to the requested count (KIP-195); this adds one partition whatever "
        "the count",
    "kafka.delete-records-start-not-moved":
        "DeleteRecords moves the log start offset (KIP-107); this answers the requested LowWatermark and keeps "
        "the records",
    "kafka.delete-groups-non-empty-accepted":
        "DeleteGroups of a group with members fails with NON_EMPTY_GROUP (68) (KIP-229); this deletes it",
    "kafka.offset-delete-not-deleted":
        "OffsetDelete removes the committed offset (KIP-496); this answers 0 and keeps it",
    "kafka.describe-cluster-port-wrong":
        "DescribeCluster names the brokers Metadata names (KIP-700); this answers the listener's port + 1",
    "kafka.leader-epoch-end-off":
        "OffsetForLeaderEpoch of the current epoch is the log end offset (KIP-101); this answers log end + 1",
    "kafka.describe-producers-empty":
        "DescribeProducers lists the partition's idempotent producers (KIP-664); this lists none",
    "kafka.sasl-unauthenticated-served":
        "Before SASL authentication only ApiVersions and SaslHandshake are served (KIP-43, KIP-152); this serves "
        "every request",
    "kafka.sasl-wrong-password-accepted":
        "SASL/PLAIN with a wrong password fails with SASL_AUTHENTICATION_FAILED (58) (RFC 4616, KIP-152); this "
        "accepts it",
    "kafka.sasl-scram-proof-unchecked":
        "A SCRAM client-final message with a wrong proof or nonce fails (RFC 5802); this accepts it",
    "kafka.sasl-unsupported-mechanism-accepted":
        "SaslHandshake with a mechanism not enabled answers UNSUPPORTED_SASL_MECHANISM (33) (KIP-43); this "
        "accepts it",
    "kafka.coordinator-port-hardcoded":
        "FindCoordinator names the broker's own host and port, as Metadata does (FindCoordinatorResponse.json); "
        "this answers a fixed wrong port",
    "kafka.txn-epoch-not-bumped":
        "InitProducerId for a known transactional id bumps its epoch (KIP-98, TransactionCoordinator); this "
        "answers the same epoch again",
    "kafka.txn-old-epoch-accepted":
        "A transactional request with an older epoch is fenced, PRODUCER_FENCED (90) or INVALID_PRODUCER_EPOCH (47) "
        "(KIP-98, KIP-588); this accepts it",
    "kafka.txn-lso-not-advanced":
        "A commit marker ends the transaction, so the last stable offset moves past it (KIP-98); this leaves the "
        "LSO at the committed transaction's first offset",
    "kafka.txn-aborted-not-listed":
        "read_committed Fetch lists the aborted transactions of the records it returns (FetchResponse.json "
        "AbortedTransactions); this lists none, so aborted records look committed",
    "kafka.txn-marker-not-control":
        "A transaction marker is a control batch (protocol guide 'Control Batches'); this writes it without the "
        "control attribute bit (the transaction still ends there)",
    "kafka.txn-read-committed-past-lso":
        "read_committed Fetch stops at the last stable offset (KIP-98); this returns records of open transactions",
    "kafka.txn-list-offsets-ignores-isolation":
        "ListOffsets LATEST with read_committed answers the last stable offset (ListOffsetsRequest.json "
        "IsolationLevel); this answers the high watermark",
    "kafka.txn-end-without-partitions-accepted":
        "EndTxn with no transaction in progress answers INVALID_TXN_STATE (48) (TransactionCoordinator); this "
        "answers 0",
    "kafka.txn-init-keeps-ongoing":
        "InitProducerId aborts the transactional id's ongoing transaction (TransactionCoordinator."
        "handleInitProducerId); this leaves it open, so its partitions' LSO never moves",
    "kafka.txn-timeout-ignored":
        "A transaction open longer than its TransactionTimeoutMs is aborted by the coordinator (KIP-98, "
        "transaction.timeout.ms); this keeps it open",
    "kafka.txn-timeout-unchecked":
        "A transactional InitProducerId needs 0 < TransactionTimeoutMs <= transaction.max.timeout.ms "
        "(TransactionStateManager.validateTransactionTimeoutMs); this accepts any timeout",
    "kafka.txn-v2-implicit-add-any-version":
        "A transactional Produce below v12 to a partition not in the transaction is refused INVALID_TXN_STATE "
        "(KIP-890 part 1); this adds the partition at every version, as v12 does",
    "kafka.txn-v2-implicit-add-missing":
        "A transactional Produce v12+ adds its partition to the transaction (KIP-890 part 2); this keeps "
        "version-1 rules and refuses a partition not added with INVALID_TXN_STATE (48)",
    "kafka.txn-v2-offsets-add-missing":
        "TxnOffsetCommit v5+ adds its group to the transaction (KIP-890 part 2); this refuses a group not added "
        "with AddOffsetsToTxn (48)",
    "kafka.txn-v2-epoch-not-bumped":
        "EndTxn v5+ bumps the epoch and answers it (KIP-890 part 2, EndTxnResponse v5); this answers the same "
        "epoch",
    "kafka.txn-v2-marker-old-epoch":
        "The markers of an EndTxn v5+ carry the bumped epoch (KIP-890 part 2); this writes them under the "
        "transaction's own epoch",
    "kafka.txn-v2-old-epoch-accepted":
        "After EndTxn v5+ a Produce under the old epoch is fenced, INVALID_PRODUCER_EPOCH (47) (KIP-890 part 2); "
        "this appends the late write",
    "kafka.txn-v2-end-retry-fenced":
        "An EndTxn v5+ retried under the epoch it bumped is answered success with the new epoch again "
        "(KIP-890 part 2); this fences it",
    "kafka.txn-v2-bump-any-version":
        "EndTxn below v5 keeps the epoch (KIP-890: version 2 is chosen by EndTxn v5+); this bumps it at every "
        "version, so an old client's next request is fenced",
    "kafka.invalid-acks-wrong-error":
        "Produce with acks outside -1, 0, 1 fails with INVALID_REQUIRED_ACKS (21) (KafkaApis.handleProduceRequest); "
        "this answers the generic INVALID_REQUEST (42)",
    "kafka.create-zero-partitions-accepted":
        "CreateTopics with fewer than one partition fails with INVALID_PARTITIONS (37) (CreateTopicsRequest.json, "
        "ReplicationControlManager); this lets a count of 0 through",
    "kafka.uncommitted-reads-zero":
        "OffsetFetch of a partition the group never committed answers offset -1 (OffsetFetchResponse.json); "
        "this answers 0",
    "kafka.metadata-ignores-allow-create":
        "Metadata v4+ with AllowAutoTopicCreation false never creates a topic and answers "
        "UNKNOWN_TOPIC_OR_PARTITION (3) (MetadataRequest.json, KIP-204); this ignores the flag",
    "kafka.create-partitions-same-accepted":
        "CreatePartitions to the current count fails with INVALID_PARTITIONS (37) (KIP-195); this answers 0",
    "kafka.delete-records-clamps-to-hw":
        "DeleteRecords beyond the high watermark fails with OFFSET_OUT_OF_RANGE (1) (KIP-107, "
        "UnifiedLog.deleteRecords); this clamps the offset to the high watermark and deletes every record",
    "kafka.offset-delete-unknown-group-ok":
        "OffsetDelete for a group that does not exist fails with GROUP_ID_NOT_FOUND (69) (KIP-496); this answers 0",
    "kafka.describe-configs-unknown-topic-empty":
        "DescribeConfigs of an unknown topic fails with UNKNOWN_TOPIC_OR_PARTITION (3) (ConfigAdminManager); this "
        "answers error 0 and no configs",
    "kafka.heartbeat-generation-unchecked":
        "Heartbeat with another generation than the group's fails with ILLEGAL_GENERATION (22) "
        "(GroupCoordinator.handleHeartbeat); this does not compare generations",
    "kafka.multi-batch-first-kept":
        "Produce v3+ with more than one record batch in a partition gets INVALID_RECORD (87) "
        "(ProduceRequest.validateRecords); this stores the first batch, drops the rest and answers 0",
    "kafka.log-start-offset-unset":
        "Fetch v5+ and Produce v5+ report the partition's log start offset (FetchResponse.json, "
        "ProduceResponse.json LogStartOffset); this leaves the field at its default -1",
    "kafka.sync-generation-unchecked":
        "SyncGroup with another generation than the group's fails with ILLEGAL_GENERATION (22) "
        "(GroupCoordinator.handleSyncGroup); this does not compare generations",
    "kafka.heartbeat-unknown-member-ok":
        "Heartbeat from a member the group does not know fails with UNKNOWN_MEMBER_ID (25) "
        "(GroupCoordinator.handleHeartbeat); this answers 0",
    "kafka.join-member-id-not-required":
        "JoinGroup v4+ with an empty member id answers MEMBER_ID_REQUIRED (79) with an id to rejoin with (KIP-394); "
        "this lets the member join at once, as v0-v3 do",
    "kafka.retry-out-of-order":
        "An idempotent batch retried with its sequence numbers is a duplicate: answered 0 (or 46) and not "
        "appended again (KIP-98, ProducerStateEntry's recent batches); this keeps no retry window and answers "
        "OUT_OF_ORDER_SEQUENCE_NUMBER (45)",
    "kafka.delete-groups-unknown-ok":
        "DeleteGroups of a group that does not exist fails with GROUP_ID_NOT_FOUND (69) (KIP-229); this answers 0",
    "kafka.read-only-validate-passes":
        "Altering a static broker config fails, INVALID_REQUEST (42) (ConfigAdminManager, 'Cannot update these "
        "configs dynamically'), with ValidateOnly too; this validation skips the check and answers 0",
    "kafka.create-topic-count-ignored":
        "CreateTopics creates NumPartitions partitions (CreateTopicsRequest.json); this creates one partition "
        "whatever the count (the answer still echoes it)",
    "kafka.fetch-below-log-start-clamped":
        "Fetch below the log start offset (after DeleteRecords) fails with OFFSET_OUT_OF_RANGE (1) (KIP-107, "
        "ReplicaManager.readFromLog); this reads from the log start with error 0",
    "kafka.init-producer-id-needs-transactional-id":
        "InitProducerId with a null TransactionalId gives an idempotent producer an id and epoch (KIP-98, "
        "InitProducerIdRequest.json); this refuses it with INVALID_REQUEST (42), as a transactions-only broker",
    "kafka.describe-configs-broker-empty":
        "DescribeConfigs of this broker lists its configs (DescribeConfigsResponse.json); this lists only dynamic "
        "ones, and there are none",
    "kafka.describe-configs-defaults-null":
        "DescribeConfigs of a topic gives every config its value, defaults included (DescribeConfigsResponse.json "
        "Value, ConfigSource DEFAULT_CONFIG); this gives values to overrides only, null to the rest",
    "kafka.incremental-append-replaces":
        "IncrementalAlterConfigs APPEND adds values to a list config (KIP-339); this replaces the list, as SET",
    "kafka.metadata-leader-not-a-broker":
        "Every partition leader in Metadata is one of the brokers it lists (MetadataResponse.json LeaderId, "
        "Brokers); this names node id + 1, which is not listed",
    "kafka.client-id-byte-length":
        "Request header v2 keeps ClientId as an INT16-length string (RequestHeader.json, flexibleVersions none); "
        "this holds its length in a signed byte, so a flexible request with a client id over 127 bytes is "
        "malformed and closes the connection",
    "kafka.negative-size-skipped":
        "A negative size prefix closes the connection (NetworkReceive, InvalidReceiveException); this skips the "
        "size and keeps reading",
    "kafka.apiversions-listed-from-one":
        "ApiVersions lists itself from version 0, which every broker serves so any client can start (KIP-35, "
        "KIP-511); this lists ApiVersions from 1 (and still answers v0)",
    "kafka.compact-string-length-two-bytes":
        "A COMPACT_STRING's length is an unsigned varint of N+1, up to five bytes (KIP-482, ByteUtils."
        "readUnsignedVarint); this reads at most two varint bytes, so a string of 16383+ bytes is misread",
    "kafka.hostile-count-waits":
        "An array count larger than the bytes left is refused at once (KAFKA-14063, ByteBufferAccessor bounds "
        "checks); this trusts an INT32 count (non-flexible versions) of 2^20 or more and waits for the missing "
        "elements: that connection stays open and answers nothing more",
    "kafka.fetch-crc-ieee":
        "Fetched record batches carry a CRC-32C over attributes..end (protocol guide 'Record Batch'); this "
        "re-checksums each batch it serves with CRC-32 IEEE",
    "kafka.pipelined-answers-reordered":
        "Responses on one connection leave in request order (protocol guide 'Network'); this answers a request "
        "read while more are already waiting only after the ones behind it",
    "kafka.size-prefix-one-read":
        "The INT32 size prefix may arrive over several reads (protocol guide 'Common Request and Response "
        "Structure'); this takes it from one read and drops the connection when that read brings fewer than 4 bytes",
    "kafka.apiversions-header-v1":
        "ApiVersions responses always use response header v0 (KIP-511, ApiMessageTypeGenerator); this answers "
        "flexible ApiVersions versions (v3+) with header v1, a tagged-field byte before the body",
    "kafka.header-tags-first-only":
        "Request header v2 ends with a tagged-field section whose fields are all skipped (KIP-482, "
        "RequestHeader.json); this skips only the first, so the body is read from the second on",
    "kafka.base-offset-echoed":
        "Produce answers the offset assigned to the batch's first record (ProduceResponse.json BaseOffset); this "
        "echoes the baseOffset the producer wrote in the batch (0 from clients)",
    "kafka.sasl-plain-authzid-required":
        "SASL/PLAIN's authorization identity may be empty, meaning the authentication identity (RFC 4616 "
        "section 2, PlainSaslServer); this refuses an empty one with SASL_AUTHENTICATION_FAILED (58)",
    "kafka.sasl-scram-signature-wrong":
        "The SCRAM server-final message carries ServerSignature = HMAC(ServerKey, AuthMessage) (RFC 5802 "
        "section 3); this signs with the StoredKey, so the client cannot verify the server",
    "kafka.error-code-negated":
        "Every ErrorCode is one of Errors.java's codes (protocol guide 'Error Codes'); this answers a CreateTopics "
        "name that already exists with -36, TOPIC_ALREADY_EXISTS negated (an errno-style sign slip)",
}


#: Other readings the spec permits (``--variant``): the whole suite must pass against each.
VARIANTS: dict[str, str] = {
    "kafka.consumer-group-range-default": "a consumer-group member naming no ServerAssignor is assigned by range, "
                                          "as a broker whose group.consumer.assignors lists range first (KIP-848)",
    "kafka.telemetry-push-unthrottled": "a PushTelemetry sooner than PushIntervalMs after the last one is accepted "
                                        "(no THROTTLING_QUOTA_EXCEEDED)",
    "kafka.telemetry-terminating-forgotten": "a push after the instance's terminating push is handled as any other",
    "kafka.telemetry-metrics-unread": "Metrics are not decompressed or read (Kafka without a client telemetry "
                                      "receiver plugin): any bytes within TelemetryMaxBytes are accepted",
    "kafka.share-group-exclusive-partitions": "the share-group assignor gives each partition to one member; members beyond the partition count stay idle (KIP-932 leaves the assignor pluggable)",
    "kafka.share-auto-offset-earliest": "a share partition starts at the log start (share.auto.offset.reset earliest) instead of the latest offset",
    "kafka.sasl-apis-on-plaintext": "a listener without SASL advertises SaslHandshake and SaslAuthenticate, as "
                                    "Apache Kafka's PLAINTEXT listeners do, and answers them ILLEGAL_SASL_STATE (34)",
    "kafka.fetch-immediate-empty": "a Fetch with MaxWaitMs 0 is answered at once with no records, whatever is there",
    "kafka.oversize-error-answer":
        "a size above the frame limit: the request header is read (never the body) and refused "
        "with INVALID_REQUEST (42) where its response has a top-level ErrorCode, then the "
        "connection closes",
    "kafka.null-client-id-refused":
        "a request header with a null ClientId closes the connection, as a broker that reads "
        "ClientId as a non-nullable string (nothing obliges accepting every nullable field)",
    "kafka.unknown-key-error-answer":
        "an unknown api key gets the correlation id and ErrorCode 35 (UNSUPPORTED_VERSION), then "
        "the connection closes",
    "kafka.unsupported-version-error-answer":
        "an unadvertised version gets ErrorCode 35 (UNSUPPORTED_VERSION) in the highest "
        "advertised version's shape, where that has a top-level ErrorCode, instead of the close",
    "kafka.malformed-body-invalid-request":
        "a body that does not decode gets INVALID_REQUEST (42) where the response has a top-level "
        "ErrorCode, then the connection closes",
    "kafka.produce-min-three":
        "Produce is advertised from v3, the real minimum (without the KAFKA-18659 quirk); v0-2 are "
        "unadvertised",
    "kafka.invalid-record-as-corrupt":
        "Produce with no batch, several batches or magic other than 2 gets CORRUPT_MESSAGE (2), "
        "as older brokers answered",
    "kafka.bad-batch-length-closes":
        "a refused batch whose batchLength disagrees with the bytes present closes the connection "
        "instead of a partition error",
    "kafka.zstd-any-produce-version":
        "a zstd batch is stored whatever the Produce version (no KIP-110 version gate)",
    "kafka.segment-below-max-message":
        "message.max.bytes 2 MiB over 1 MiB log segments: a batch between the two gets "
        "RECORD_LIST_TOO_LARGE (18), as Kafka answers for a batch no segment can hold",
    "kafka.fetch-early-partial":
        "a waiting Fetch is answered as soon as any bytes are there, below MinBytes too "
        "(MaxWaitMs is an upper bound)",
    "kafka.invalid-topic-unknown":
        "Metadata for a name outside Topic.validate's rule answers UNKNOWN_TOPIC_OR_PARTITION "
        "(3), not 17",
    "kafka.session-timeout-unbounded":
        "group.max.session.timeout.ms set to its top (INT32_MAX): only timeouts below the minimum "
        "get 26",
    "kafka.txn-fenced-invalid-epoch":
        "a fenced coordinator request gets INVALID_PRODUCER_EPOCH (47) at every version, not "
        "PRODUCER_FENCED (90)",
    "kafka.txn-init-aborts-at-once":
        "InitProducerId over an ongoing transaction aborts it and answers success at once, not "
        "CONCURRENT_TRANSACTIONS (51)",
    "kafka.txn-max-timeout-int32":
        "transaction.max.timeout.ms set to its top (INT32_MAX): only a TransactionTimeoutMs of 0 "
        "or less gets 50",
    "kafka.txn-timeout-no-fence":
        "a timed-out transaction is aborted under the same epoch, so the producer's late commit "
        "gets INVALID_TXN_STATE (48) instead of being fenced",
    "kafka.txn-v2-late-write-producer-fenced":
        "a transactional Produce v12+ under an epoch EndTxn v5 left behind gets PRODUCER_FENCED (90), the "
        "coordinator's own answer, instead of INVALID_PRODUCER_EPOCH (47)",
    "kafka.read-only-invalid-config":
        "altering a static broker config is refused with INVALID_CONFIG (40) instead of "
        "INVALID_REQUEST (42)",
}
