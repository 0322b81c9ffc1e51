"""The Kafka clause catalogue: what a broker must (or should) do on the wire, one sentence each.

Sources are the Kafka protocol guide (kafka.apache.org/protocol, section named), KIPs, the message definitions
(``common/message/*.json``) and, where the guide is silent, the broker code read for the spec notes
(``SocketServer.scala``, ``KafkaApis.scala``...). Where Kafka's behaviour is one of several reasonable ones
(closing versus answering with an error) the clause is SHOULD, so another permitted path is NON-STRICT.
"""

from __future__ import annotations

from wirecheck.protocols.clauses import Catalogue, Clause, Level
from wirecheck.protocols.clients import client_clauses
from wirecheck.protocols.kafka.clients import CLIENTS, SCENARIOS

MUST, SHOULD = Level.MUST, Level.SHOULD
GUIDE = "Kafka protocol guide"

CLAUSES = [
    # --- framing and headers
    Clause("kafka.framing.size-prefix",
           "Every request and response is an INT32 size (bytes that follow) then the message.",
           f"{GUIDE}, 'Common Request and Response Structure'"),
    Clause("kafka.framing.negative-size",
           "A request whose size prefix is negative is not processed; the broker closes the connection and stays "
           "available to other connections.",
           "NetworkReceive.java (InvalidReceiveException)", MUST),
    Clause("kafka.framing.size-limit",
           "A request whose size prefix is above the broker's frame limit (Kafka: socket.request.max.bytes, "
           "100 MiB by default) is not processed: the broker closes the connection or answers with an error, "
           "and stays available to other connections.",
           "NetworkReceive.java (InvalidReceiveException); SocketServerConfigs.SOCKET_REQUEST_MAX_BYTES", SHOULD,
           decision=(
           "SHOULD: the limit is each broker's configuration; closing (Kafka) and an error answer are both "
           "accepted. A broker that waits for a body above 100 MiB has a higher limit: non-strict.")),
    Clause("kafka.framing.pipelining",
           "Responses on one connection come back in the order the requests were sent.",
           f"{GUIDE}, 'Network' (ordering guarantee)"),
    Clause("kafka.header.correlation-id",
           "A response carries the correlation id of the request it answers.",
           f"{GUIDE}, 'Common Request and Response Structure'; ResponseHeader.json"),
    Clause("kafka.header.request-v2-flexible",
           "A flexible request version uses request header v2 (tagged fields) and a non-flexible one header v1.",
           "KIP-482; RequestHeader.json"),
    Clause("kafka.header.client-id-classic",
           "ClientId is an INT16-length nullable string in every request header version, flexible or not.",
           "RequestHeader.json (ClientId flexibleVersions none)"),
    Clause("kafka.header.null-client-id",
           "A request header with a null ClientId is accepted.",
           "RequestHeader.json (ClientId nullableVersions 1+); RequestHeader.parse", SHOULD,
           decision=(
           "SHOULD: the definitions allow a null ClientId from v1 on, but nothing obliges a broker "
           "to accept every nullable field; a broker that answers with an error is non-strict, not "
           "broken.")),
    Clause("kafka.header.response-v1-flexible",
           "A response to a flexible request version uses response header v1 (tagged fields), else header v0.",
           "KIP-482; ResponseHeader.json"),
    Clause("kafka.header.api-versions-v0",
           "An ApiVersions response always uses response header v0, whatever the request version.",
           "KIP-511; ApiMessageTypeGenerator.java (hard-coded exception)"),
    Clause("kafka.header.unknown-api-key",
           "A request with an unknown api key gets no response; the broker closes the connection.",
           "RequestHeader.java / SocketServer.processChannelException", SHOULD,
           decision=(
           "SHOULD: the protocol guide says nothing of unknown keys; closing is Kafka's behaviour "
           "(SocketServer), an error answer is also safe for clients.")),
    Clause("kafka.header.unsupported-version",
           "A request for a version the broker does not advertise (other than ApiVersions) is not answered "
           "as if it were supported; Kafka closes the connection.",
           "SocketServer.parseRequestHeader; ApiVersionManager.isApiEnabled", SHOULD,
           decision=(
           "SHOULD: Kafka closes; the guide only says the broker must not act on it, so an error "
           "answer (35) is also accepted as non-strict.")),
    # --- encoding
    Clause("kafka.encoding.flexible",
           "Flexible versions use compact strings, bytes and arrays (uvarint N+1, 0 null) and end every struct "
           "with a tagged-field section.",
           "KIP-482; message definitions (flexibleVersions)"),
    Clause("kafka.encoding.unknown-tags",
           "Unknown tagged fields are skipped, not rejected.",
           "KIP-482 ('unknown tagged fields are ignored')"),
    Clause("kafka.encoding.response-shape",
           "A response is exactly the requested version's shape: every field of that version in order, none "
           "missing, nothing after the body, and tagged-field sections only in flexible versions.",
           "Message definitions (validVersions, field versions, flexibleVersions); KIP-482; "
           f"{GUIDE}, 'Versioning and Compatibility'"),
    Clause("kafka.encoding.malformed-body",
           "A request whose body does not decode (truncated, trailing bytes, lying lengths, overlong varints) "
           "is rejected without a well-formed success response; Kafka closes the connection.",
           "RequestContext.parseRequest; SocketServer (InvalidRequestException)", MUST,
           decision="Closing and an INVALID_REQUEST (42) error are both accepted; only a success answer fails."),
    Clause("kafka.encoding.hostile-count",
           "An array count or length far above the bytes present (e.g. INT32_MAX) is rejected without "
           "allocating it; the broker survives and keeps serving other connections.",
           "KAFKA-14063; NetworkReceive / ByteBufferAccessor bounds checks",
           decision=(
           "A negative count or length other than -1 (the guide's null marker, 'Protocol Primitive Types') in a "
           "nullable field may be refused or read as null: Apache Kafka's generated readers test 'length < 0' "
           "(MessageDataGenerator.java, generateVariableLengthReader; a compact length is readUnsignedVarint() - 1 "
           "in 32-bit ints), so Metadata v1+ with Topics count -2 lists every topic. In a non-nullable field it "
           "is refused.")),
    # --- ApiVersions
    Clause("kafka.api-versions.advertised",
           "ApiVersions lists each supported api key with its min and max version.",
           f"{GUIDE}, 'ApiVersions API'; ApiVersionsResponse.json"),
    Clause("kafka.api-versions.advertised-implemented",
           "Every advertised (api key, version) is implemented: a valid request at that version gets a "
           "response that decodes at that version.",
           f"{GUIDE}, 'ApiVersions API' (clients pick the highest common version)"),
    Clause("kafka.api-versions.unsupported-version",
           "An ApiVersions request at a version above the broker's maximum gets a v0 response with error 35 "
           "UNSUPPORTED_VERSION listing ApiVersions' own supported range.",
           "KIP-511; ApiVersionsRequest.getErrorResponse; KafkaApis.handleApiVersionsRequest"),
    Clause("kafka.api-versions.invalid-software-name",
           "An ApiVersions v3+ request whose ClientSoftwareName or ClientSoftwareVersion does not match "
           "[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])? is answered with error 42 INVALID_REQUEST.",
           "KIP-511 (client name and version validation); ApiVersionsRequest.isValid; KafkaApis.handleApiVersionsRequest", MUST),
    Clause("kafka.api-versions.produce-min-zero",
           "Produce is advertised with min version 0, even when versions below 3 are rejected.",
           "KAFKA-18659 (apache/kafka PR #18727)", SHOULD,
           decision=(
           "SHOULD: a Kafka 4.x quirk kept for old clients' negotiation (KAFKA-18659); advertising "
           "the real minimum is also honest.")),
    # --- produce
    Clause("kafka.produce.crc-mismatch",
           "A produced record batch whose CRC-32C does not match gets CORRUPT_MESSAGE (2) for that partition; "
           "other partitions and the connection are unaffected.",
           f"{GUIDE}, 'Record Batch'; UnifiedLog.analyzeAndValidateRecords"),
    Clause("kafka.produce.invalid-record",
           "Produce v3+ with no batch, more than one batch, or magic other than 2 gets INVALID_RECORD (87) "
           "for that partition.",
           "ProduceRequest.validateRecords; KafkaApis.handleProduceRequest", SHOULD,
           decision="Older brokers answer CORRUPT_MESSAGE (2); both are accepted at SHOULD level."),
    Clause("kafka.produce.batch-length",
           "A batch whose batchLength disagrees with the bytes present is never stored: the partition gets "
           "CORRUPT_MESSAGE (2) or INVALID_RECORD (87), or the broker closes the connection.",
           f"{GUIDE}, 'Record Batch'; DefaultRecordBatch.ensureValid",
           decision="An error for the partition (Kafka) and closing the connection are both accepted."),
    Clause("kafka.produce.unknown-topic",
           "Produce to an unknown topic, or to a partition the topic does not have, gets "
           "UNKNOWN_TOPIC_OR_PARTITION (3); Produce never creates topics.",
           "KafkaApis.handleProduceRequest"),
    Clause("kafka.produce.invalid-acks",
           "Produce with acks not in {-1, 0, 1} gets INVALID_REQUIRED_ACKS (21).",
           "KafkaApis.handleProduceRequest; Errors.INVALID_REQUIRED_ACKS"),
    Clause("kafka.produce.acks-zero",
           "Produce with acks=0 gets no response.",
           f"{GUIDE}, 'Produce API' (acks)"),
    Clause("kafka.produce.base-offset",
           "A successful produce reports the base offset assigned to the batch's first record; offsets are "
           "consecutive per partition.",
           f"{GUIDE}, 'Produce API'; ProduceResponse.json (BaseOffset)"),
    Clause("kafka.produce.zstd-version",
           "A zstd-compressed batch in Produce below v7 gets UNSUPPORTED_COMPRESSION_TYPE (76).",
           "KIP-110; ProduceRequest.json (version 7 notes)", SHOULD,
           decision=(
           "SHOULD: KIP-110 ties zstd to Produce v7+; a broker that stores the batch anyway "
           "corrupts nothing for clients that negotiated it.")),
    Clause("kafka.produce.message-too-large",
           "A batch larger than the topic's max message bytes gets MESSAGE_TOO_LARGE (10).",
           "UnifiedLog.analyzeAndValidateRecords (RecordTooLargeException)", SHOULD,
           decision=(
           "SHOULD: the limit is a topic configuration (max.message.bytes); the code is Kafka's, "
           "the limit each broker's own.")),
    # --- fetch
    Clause("kafka.fetch.records",
           "Fetch returns the produced records, byte-identical in content, from the requested offset.",
           f"{GUIDE}, 'Fetch API'"),
    Clause("kafka.fetch.out-of-range",
           "Fetch from an offset outside [log start, high watermark] gets OFFSET_OUT_OF_RANGE (1).",
           f"{GUIDE}, 'Fetch API'; Errors.OFFSET_OUT_OF_RANGE"),
    Clause("kafka.fetch.unknown-topic",
           "Fetch (by topic name) of a topic the broker does not have, or of a partition the topic does not have, "
           "gets UNKNOWN_TOPIC_OR_PARTITION (3) for that partition.",
           "KafkaApis.handleFetchRequest; FetchResponse.json (ErrorCode)"),
    Clause("kafka.fetch.high-watermark",
           "Fetch reports the partition's high watermark, equal to the next offset to be written on one node.",
           "FetchResponse.json (HighWatermark)"),
    Clause("kafka.fetch.log-start-offset",
           "Fetch v5+ and Produce v5+ report the partition's log start offset (LogStartOffset), the offset "
           "ListOffsets earliest returns.",
           "FetchResponse.json, ProduceResponse.json (LogStartOffset, v5+)"),
    Clause("kafka.fetch.long-poll",
           "A Fetch whose MinBytes are not available waits up to MaxWaitMs before answering.",
           "FetchRequest.json (MaxWaitMs, MinBytes); protocol guide 'Fetch API'", SHOULD,
           decision=(
           "SHOULD: MaxWaitMs is an upper bound; answering early with fewer bytes is allowed by "
           "the guide, waiting is Kafka's behaviour.")),
    Clause("kafka.fetch.immediate",
           "A Fetch with MaxWaitMs 0 and MinBytes 0 is answered at once with the records available from the offset.",
           "FetchRequest.json (MaxWaitMs: 'the maximum time ... to wait for the response'; MinBytes); protocol guide "
           "'Fetch API'", SHOULD,
           decision="SHOULD: the guide bounds the wait, not what an immediate answer holds; Apache Kafka returns "
                    "what it has, and a broker that answers empty at once lets a client's next fetch read it. Every "
                    "other case fetches as the clients do (MaxWaitMs 500, MinBytes 1), so this edge value is judged "
                    "here only."),
    Clause("kafka.fetch.unknown-session",
           "A Fetch (v7+) continuing a fetch session the broker does not hold (a SessionId other than 0 with a "
           "SessionEpoch above 0) fails with FETCH_SESSION_ID_NOT_FOUND (70), whatever the id.",
           "KIP-227 'Fetch Session Errors' (FETCH_SESSION_ID_NOT_FOUND: the session ID in an incremental fetch "
           "request was not found); FetchRequest.json (SessionId: int32); FetchSession.scala FetchManager.newContext"),
    Clause("kafka.fetch.batch-crc",
           "Every record batch a Fetch returns has a valid CRC-32C and magic 2 (v4+).",
           f"{GUIDE}, 'Record Batch'"),
    # --- list offsets
    Clause("kafka.list-offsets.earliest-latest",
           "ListOffsets with timestamp -2 returns the log start offset and -1 the log end offset.",
           f"{GUIDE}, 'ListOffsets API'; ListOffsetsRequest.json"),
    Clause("kafka.list-offsets.unknown-topic",
           "ListOffsets of a topic the broker does not have, or of a partition the topic does not have, gets "
           "UNKNOWN_TOPIC_OR_PARTITION (3) for that partition.",
           "KafkaApis.handleListOffsetRequest; ListOffsetsResponse.json (ErrorCode)"),
    # --- metadata
    Clause("kafka.metadata.brokers",
           "Metadata lists at least one broker with a reachable host and port, and the leader of each "
           "partition it reports.",
           f"{GUIDE}, 'Metadata API'"),
    Clause("kafka.metadata.unknown-topic",
           "Metadata for a missing topic without auto-creation gets UNKNOWN_TOPIC_OR_PARTITION (3); with "
           "auto-creation the topic is created (LEADER_NOT_AVAILABLE (5), as Kafka 3, or "
           "UNKNOWN_TOPIC_OR_PARTITION (3), as Kafka 4, allowed on the first answer).",
           "KafkaApis.getTopicMetadata; AutoTopicCreationManager (Kafka 4: DefaultAutoTopicCreationManager."
           "sendCreateTopicRequest)"),
    Clause("kafka.metadata.empty-list",
           "Metadata v1+ with an empty topic array lists no topics; only a null array asks for all topics.",
           "MetadataRequest.json (Topics nullableVersions 1+)"),
    Clause("kafka.metadata.invalid-topic",
           "A topic name that is empty, '.', '..', longer than 249 characters or outside [a-zA-Z0-9._-] gets "
           "INVALID_TOPIC_EXCEPTION (17).",
           "Topic.validate", SHOULD,
           decision=(
           "SHOULD: Topic.validate is Kafka's rule, not the protocol guide's; a broker with a "
           "wider name alphabet answers UNKNOWN_TOPIC_OR_PARTITION or creates the topic, which is "
           "non-strict.")),
    # --- groups and commits
    Clause("kafka.group.find-coordinator",
           "FindCoordinator for a group returns a node that answers group requests.",
           f"{GUIDE}, 'FindCoordinator API'"),
    Clause("kafka.group.member-id-required",
           "A first JoinGroup v4+ with an empty member id gets MEMBER_ID_REQUIRED (79) and a member id.",
           "KIP-394; JoinGroupRequest.json"),
    # -- KIP-848 consumer groups (ConsumerGroupHeartbeat 68, ConsumerGroupDescribe 69) --
    Clause("kafka.consumer-group.join",
           "A ConsumerGroupHeartbeat with MemberEpoch 0 joins: the answer names the member (v1: the id the client "
           "generated; v0: one the coordinator assigns), a MemberEpoch above 0 and a HeartbeatIntervalMs above 0.",
           "KIP-848 'Joining the group'; KIP-1082 (v1: client-generated member ids); "
           "ConsumerGroupHeartbeatRequest.json, ConsumerGroupHeartbeatResponse.json"),
    Clause("kafka.consumer-group.group-epoch",
           "A membership change bumps the group epoch: a member joining a group with members gets an epoch of at "
           "least theirs (the target assignment's, which no member's passes) and, once the target assignment at the "
           "new group epoch is computed, heartbeats bring it to an epoch above theirs.",
           "KIP-848 'Group Epoch - Trigger a rebalance' and 'Member Epoch' (a member's epoch is the epoch of the "
           "assignment it reconciled to); KIP-1263 (the assignment is computed in batches, every "
           "group.consumer.assignment.interval.ms, and may reach the member in a later heartbeat: Kafka 4.4 answers "
           "the joining member at the old assignment epoch with an empty assignment); GroupMetadataManager "
           "consumerGroupHeartbeat; CurrentAssignmentBuilder"),
    Clause("kafka.consumer-group.assignment",
           "The heartbeat answer carries the member's assignment (topic ids and partitions) when it changed: a sole "
           "member subscribed to a topic is assigned every partition of it, in the join's answer or a later "
           "heartbeat's.",
           "KIP-848 'Assignment' and 'ConsumerGroupHeartbeat API'; ConsumerGroupHeartbeatResponse.json (Assignment); "
           "KIP-1263 (batched, offloaded assignment: group.consumer.assignment.interval.ms, default 1 s, at most "
           "group.consumer.max.assignment.interval.ms, default 15 s; GroupCoordinatorConfig); a topic is assigned "
           "once the coordinator's metadata image holds it (Kafka 4.4 logs 'Bumped group epoch ... with metadata hash "
           "0' and assigns nothing before that)",
           decision="When the assignment comes is the coordinator's: the reference broker computes it in the "
                    "heartbeat that changed the group, Kafka 4.3+ at the next batch (variant "
                    "kafka.consumer-group-assignment-deferred). The cases heartbeat, reporting what they own, until "
                    "it arrives, for at most 15 s (the default cap on the interval)."),
    Clause("kafka.consumer-group.revocation-first",
           "A partition another member owns is assigned only after that member revoked it (its heartbeat's "
           "TopicPartitions no longer hold it).",
           "KIP-848 'Reconciliation of the group' (revocation before assignment); CurrentAssignmentBuilder"),
    Clause("kafka.consumer-group.epoch-after-revocation",
           "A member that must give up partitions keeps its member epoch and is answered only the partitions it "
           "keeps; its epoch reaches the target epoch once its TopicPartitions show the others revoked.",
           "KIP-848 'Member Reconciliation' (the member epoch advances after revocation); CurrentAssignmentBuilder"),
    Clause("kafka.consumer-group.fenced-epoch",
           "A heartbeat at a member epoch other than the member's current one (nor its previous one, resent with "
           "partitions it still holds) gets FENCED_MEMBER_EPOCH (110).",
           "KIP-848 'Fencing'; Errors.FENCED_MEMBER_EPOCH"),
    Clause("kafka.consumer-group.unknown-member",
           "A heartbeat with a MemberEpoch above 0 from a member id the group does not know gets UNKNOWN_MEMBER_ID "
           "(25).",
           "KIP-848 'ConsumerGroupHeartbeat API' (errors); Errors.UNKNOWN_MEMBER_ID"),
    Clause("kafka.consumer-group.leave",
           "A heartbeat with MemberEpoch -1 leaves: the answer carries MemberEpoch -1 and the member is gone (its "
           "next heartbeat gets UNKNOWN_MEMBER_ID (25)).",
           "KIP-848 'Leaving the group'; ConsumerGroupHeartbeatRequest.json (MemberEpoch)"),
    Clause("kafka.consumer-group.static-rejoin",
           "A static member that left with MemberEpoch -2 and rejoins under its InstanceId takes over its previous "
           "member epoch and assignment, without a rebalance.",
           "KIP-848 'Static Membership'; ConsumerGroupHeartbeatRequest.json (InstanceId, MemberEpoch -2)"),
    Clause("kafka.consumer-group.unsupported-assignor",
           "A ServerAssignor the coordinator does not offer gets UNSUPPORTED_ASSIGNOR (112).",
           "KIP-848 'Assignors' (group.consumer.assignors); Errors.UNSUPPORTED_ASSIGNOR"),
    Clause("kafka.consumer-group.invalid-request",
           "A heartbeat with an empty GroupId, or a join (MemberEpoch 0) without RebalanceTimeoutMs or "
           "SubscribedTopicNames, gets INVALID_REQUEST (42).",
           "KIP-848 'ConsumerGroupHeartbeat API' (request validation); GroupMetadataManager "
           "throwIfConsumerGroupHeartbeatRequestIsInvalid"),
    Clause("kafka.consumer-group.describe",
           "ConsumerGroupDescribe lists the group's epoch, assignment epoch and each member with its epoch, "
           "assignment and target assignment; an unknown group gets GROUP_ID_NOT_FOUND (69).",
           "KIP-848 'ConsumerGroupDescribe API'; ConsumerGroupDescribeResponse.json"),
    Clause("kafka.consumer-group.classic-coexistence",
           "A classic JoinGroup whose ProtocolType is not \"consumer\", naming a consumer group that has members, gets "
           "INCONSISTENT_GROUP_PROTOCOL (23): a consumer group takes classic members only of the consumer protocol "
           "(and only where its migration policy allows a downgrade).",
           "KIP-848 'Upgrade & Downgrade' (online migration; a mixed group's classic members use the consumer "
           "embedded protocol); ConsumerGroup.supportsClassicProtocols; Errors.INCONSISTENT_GROUP_PROTOCOL"),
    Clause("kafka.consumer-group.classic-upgrade",
           "A ConsumerGroupHeartbeat join naming an Empty classic group converts it to a consumer group; one naming "
           "a classic group that has members is either refused with GROUP_ID_NOT_FOUND (69) (online upgrade "
           "disabled) or converts the group online (upgrade enabled), and either way the classic members stay: "
           "their classic Heartbeat is still answered NONE or REBALANCE_IN_PROGRESS, and a converted group lists "
           "them in ConsumerGroupDescribe.",
           "KIP-848 'Upgrade & Downgrade' (an empty classic group is converted on the first heartbeat; online "
           "migration under group.consumer.migration.policy, Kafka 4's default bidirectional); GroupMetadataManager "
           "validateOnlineUpgrade (GROUP_ID_NOT_FOUND when the upgrade is disabled)"),
    Clause("kafka.consumer-group.default-assignor",
           "A member naming no ServerAssignor is assigned by one of the coordinator's server-side assignors: once "
           "reconciled, every partition of the topic its group subscribes to is assigned to exactly one member, "
           "each member's count within one of the others', and ConsumerGroupDescribe names the assignor.",
           "KIP-848 'Assignors' (group.consumer.assignors: the first one is the default); GroupCoordinatorConfig "
           "(group.consumer.assignors default [uniform, range])", SHOULD,
           decision="SHOULD: KIP-848 leaves the server assignors to the operator's configuration and uses the "
                    "first when a member names none. The reference broker takes Kafka's default, uniform; a broker "
                    "configured with range first is as correct (variant kafka.consumer-group-range-default). The "
                    "case checks only what both give alike on one topic: each partition to one member, balanced "
                    "within one."),
    Clause("kafka.consumer-group.commit-member-epoch",
           "OffsetCommit v9+ from a consumer group member commits at its current member epoch "
           "(GenerationIdOrMemberEpoch) and gets STALE_MEMBER_EPOCH (113) at another one.",
           "KIP-848 'OffsetCommit API'; OffsetCommitRequest.json v9; Errors.STALE_MEMBER_EPOCH"),
    # -- KIP-932 share groups (ShareGroupHeartbeat 76, ShareGroupDescribe 77, ShareFetch 78, ShareAcknowledge 79) --
    Clause("kafka.share-group.join",
           "A ShareGroupHeartbeat with MemberEpoch 0 and the MemberId the client generated joins: the answer carries "
           "that MemberId, a MemberEpoch above 0 and a HeartbeatIntervalMs above 0.",
           "KIP-932 'Share group membership' and 'ShareGroupHeartbeat API'; ShareGroupHeartbeatRequest.json v1 "
           "(MemberId generated by the consumer)"),
    Clause("kafka.share-group.assignment",
           "The share-group heartbeat answer carries the member's assignment when it changed: a sole member "
           "subscribed to a topic is assigned every partition of it, in the join's answer or a later heartbeat's.",
           "KIP-932 'Share group membership' (server-side assignment); ShareGroupHeartbeatResponse.json (Assignment); "
           "KIP-1263 (group.share.assignment.interval.ms, default 1 s); Kafka 4.4 assigns a share partition only "
           "once the share coordinator initialized its state (GroupMetadataManager: InitializeShareGroupState "
           "before the partition enters the target assignment)",
           decision="When the assignment comes is the coordinator's: the reference broker computes it in the "
                    "heartbeat that changed the group, Kafka after initializing the share partitions and at the "
                    "next batch (variant kafka.share-group-assignment-deferred). The cases heartbeat until it "
                    "arrives, for at most 15 s, and fetch only what they were assigned, as the share consumer does."),
    Clause("kafka.share-group.shared-partitions",
           "With more members subscribed than partitions, every member is assigned a partition, so one partition is "
           "assigned to several members at once.",
           "KIP-932 'Assignors' (the simple assignor: 'partitions can be assigned to multiple members')", SHOULD,
           decision="SHOULD: KIP-932 makes the share-group assignor pluggable (group.share.assignors) and only its "
                    "default, the simple assignor, shares partitions among members; an assignor that leaves the "
                    "extra members idle still delivers every record once (variant "
                    "kafka.share-group-exclusive-partitions)."),
    Clause("kafka.share-group.fenced-epoch",
           "A share-group heartbeat at a member epoch other than the member's current one gets FENCED_MEMBER_EPOCH "
           "(110).",
           "KIP-932 'ShareGroupHeartbeat API' (errors); Errors.FENCED_MEMBER_EPOCH"),
    Clause("kafka.share-group.unknown-member",
           "A share-group heartbeat with a MemberEpoch above 0 from a member id the group does not know gets "
           "UNKNOWN_MEMBER_ID (25).",
           "KIP-932 'ShareGroupHeartbeat API' (errors); Errors.UNKNOWN_MEMBER_ID"),
    Clause("kafka.share-group.leave",
           "A share-group heartbeat with MemberEpoch -1 leaves: the answer carries MemberEpoch -1 and the member is "
           "gone (its next heartbeat gets UNKNOWN_MEMBER_ID (25)).",
           "KIP-932 'Share group membership' (leaving); ShareGroupHeartbeatRequest.json (MemberEpoch -1)"),
    Clause("kafka.share-group.invalid-request",
           "A share-group heartbeat with an empty GroupId or MemberId, or a join (MemberEpoch 0) without "
           "SubscribedTopicNames, gets INVALID_REQUEST (42).",
           "KIP-932 'ShareGroupHeartbeat API'; ShareGroupHeartbeatRequest.json; GroupMetadataManager "
           "throwIfShareGroupHeartbeatRequestIsInvalid"),
    Clause("kafka.share-group.describe",
           "ShareGroupDescribe lists the group's epoch, assignor and each member with its epoch and assignment; an "
           "unknown group gets GROUP_ID_NOT_FOUND (69).",
           "KIP-932 'ShareGroupDescribe API'; ShareGroupDescribeResponse.json"),
    Clause("kafka.share-fetch.acquire",
           "A ShareFetch returns the available records with AcquiredRecords ranges (FirstOffset, LastOffset, "
           "DeliveryCount) covering every offset it hands the member, DeliveryCount 1 on a first delivery, and an "
           "AcquisitionLockTimeoutMs above 0.",
           "KIP-932 'ShareFetch API' and 'In-flight records' (acquisition); ShareFetchResponse.json "
           "(AcquiredRecords, AcquisitionLockTimeoutMs)"),
    Clause("kafka.share-fetch.exclusive",
           "A record acquired by one member is not delivered to another member while its acquisition lock holds.",
           "KIP-932 'In-flight records' ('a record is acquired by only one consumer at a time')"),
    Clause("kafka.share-fetch.initial-offset",
           "A share partition first read by a group starts at the latest offset: records produced before it are "
           "not delivered, records produced after are.",
           "KIP-932 'Share group configuration' (share.auto.offset.reset, default latest)", SHOULD,
           decision="SHOULD: share.auto.offset.reset is a per-group configuration whose default is latest; a broker "
                    "or group configured with earliest delivers the older records too, which a client cannot tell "
                    "from a misconfiguration (variant kafka.share-auto-offset-earliest)."),
    Clause("kafka.share-ack.accept",
           "A record acknowledged with ACCEPT (1), in ShareAcknowledge or piggy-backed on a ShareFetch, is never "
           "delivered again.",
           "KIP-932 'Acknowledgement' (ACCEPT: processed successfully); ShareAcknowledgeRequest.json "
           "(AcknowledgeTypes)"),
    Clause("kafka.share-ack.release",
           "A record acknowledged with RELEASE (2) becomes available again: a later ShareFetch delivers it with its "
           "delivery count one higher.",
           "KIP-932 'Acknowledgement' (RELEASE: made available for another delivery attempt); "
           "ShareFetchRequest.json (AcknowledgeTypes)"),
    Clause("kafka.share-ack.reject",
           "A record acknowledged with REJECT (3) is archived: it is never delivered again.",
           "KIP-932 'Acknowledgement' (REJECT: unprocessable, archived)"),
    Clause("kafka.share-ack.invalid-record-state",
           "Acknowledging a record the member does not hold (acquired by another member, or already acknowledged "
           "while an earlier record is still in flight) fails with INVALID_RECORD_STATE (121) and changes nothing.",
           "KIP-932 'ShareAcknowledge API' (errors) and 'In-flight records' (the share-partition start offset: "
           "records below it are no longer tracked; Apache Kafka 4.4.0 answers a repeated acknowledgement of such a "
           "record NONE, one still in the in-flight window 121, 'The offset cannot be acknowledged. The offset is not "
           "acquired.'); Errors.INVALID_RECORD_STATE"),
    Clause("kafka.share-ack.invalid-batches",
           "Acknowledgement batches that overlap, are not in offset order, or have FirstOffset above LastOffset fail "
           "with INVALID_REQUEST (42).",
           "KIP-932 'ShareAcknowledge API' (AcknowledgementBatches); ShareFetchRequest.json; "
           "Errors.INVALID_REQUEST"),
    Clause("kafka.share-fetch.delivery-count",
           "Each delivery of a record increments its delivery count: a record released and fetched again comes "
           "with DeliveryCount one above the previous delivery's.",
           "KIP-932 'In-flight records' (delivery count); ShareFetchResponse.json (DeliveryCount)"),
    Clause("kafka.share-fetch.delivery-limit",
           "A record delivered as many times as the delivery count limit (group.share.delivery.count.limit, 5 by "
           "default, at most 10) and released again is archived: it is not delivered again.",
           "KIP-932 'In-flight records' ('the record is archived once its delivery count limit is reached'); "
           "GroupConfig share.delivery.count.limit"),
    Clause("kafka.share-fetch.lock-expiry",
           "A record whose acquisition lock times out (AcquisitionLockTimeoutMs) unacknowledged becomes available "
           "again, and the former holder's acknowledgement of it fails with INVALID_RECORD_STATE (121).",
           "KIP-932 'In-flight records' (acquisition lock timeout, group.share.record.lock.duration.ms)"),
    Clause("kafka.share-session.epoch",
           "A ShareFetch at a ShareSessionEpoch other than its share session's next one gets "
           "INVALID_SHARE_SESSION_EPOCH (123).",
           "KIP-932 'Share sessions'; ShareFetchRequest.json (ShareSessionEpoch); Errors.INVALID_SHARE_SESSION_EPOCH"),
    Clause("kafka.share-session.not-found",
           "A ShareFetch or ShareAcknowledge at an epoch above 0 for a member with no share session (never opened, "
           "or closed with epoch -1) gets SHARE_SESSION_NOT_FOUND (122).",
           "KIP-932 'Share sessions'; Errors.SHARE_SESSION_NOT_FOUND"),
    # -- KIP-714 client telemetry (GetTelemetrySubscriptions 71, PushTelemetry 72) --
    Clause("kafka.telemetry.instance-id",
           "GetTelemetrySubscriptions with a zero ClientInstanceId is answered a new non-zero UUID; with a non-zero "
           "one, that same id. The answer has ErrorCode 0, a PushIntervalMs and a TelemetryMaxBytes above 0.",
           "KIP-714 'GetTelemetrySubscriptionsRequest' (ClientInstanceId: null/zero asks the broker to assign one); "
           "GetTelemetrySubscriptionsRequest.json, GetTelemetrySubscriptionsResponse.json"),
    Clause("kafka.telemetry.push-accepted",
           "A PushTelemetry from an instance under the SubscriptionId its GetTelemetrySubscriptions answered, "
           "compressed with one of the AcceptedCompressionTypes (or not at all) and within TelemetryMaxBytes, gets "
           "ErrorCode 0.",
           "KIP-714 'PushTelemetryRequest' and 'Client behaviour' (the client picks an accepted type, else none); "
           "PushTelemetryRequest.json"),
    Clause("kafka.telemetry.unknown-subscription",
           "A PushTelemetry under a SubscriptionId other than the instance's current one gets "
           "UNKNOWN_SUBSCRIPTION_ID (117).",
           "KIP-714 'Error handling' (UNKNOWN_SUBSCRIPTION_ID); PushTelemetryRequest.json (SubscriptionId)"),
    Clause("kafka.telemetry.unsupported-compression",
           "A PushTelemetry whose CompressionType is neither 0 (none) nor one of the AcceptedCompressionTypes gets "
           "UNSUPPORTED_COMPRESSION_TYPE (76).",
           "KIP-714 'Error handling' (UNSUPPORTED_COMPRESSION_TYPE); GetTelemetrySubscriptionsResponse.json "
           "(AcceptedCompressionTypes)"),
    Clause("kafka.telemetry.too-large",
           "A PushTelemetry whose Metrics are larger than the TelemetryMaxBytes answered gets TELEMETRY_TOO_LARGE "
           "(118).",
           "KIP-714 'Error handling' (TELEMETRY_TOO_LARGE); GetTelemetrySubscriptionsResponse.json "
           "(TelemetryMaxBytes)"),
    Clause("kafka.telemetry.null-instance",
           "A PushTelemetry with a zero (null) ClientInstanceId gets INVALID_REQUEST (42).",
           "KIP-714 'Error handling' (INVALID_REQUEST: a request without a client instance id); "
           "PushTelemetryRequest.json (ClientInstanceId)"),
    Clause("kafka.telemetry.push-interval",
           "A PushTelemetry sooner than PushIntervalMs after the instance's previous push gets "
           "THROTTLING_QUOTA_EXCEEDED (89); the first push after a GetTelemetrySubscriptions, and a terminating "
           "push, are not throttled.",
           "KIP-714 'Error handling' (THROTTLING_QUOTA_EXCEEDED) and 'Client behaviour' (first push jittered); "
           "ClientMetricsManager", SHOULD,
           decision="SHOULD: KIP-714 lets the broker rate-limit pushes to the interval it gave, and Kafka does; a "
                    "broker that accepts an early push loses nothing a client relies on (variant "
                    "kafka.telemetry-push-unthrottled)."),
    Clause("kafka.telemetry.terminated",
           "After a PushTelemetry with Terminating=true, a further push from that instance gets INVALID_REQUEST (42).",
           "KIP-714 'PushTelemetryRequest' (Terminating: the client's last push); ClientMetricsManager", SHOULD,
           decision="SHOULD: the KIP describes Terminating as the last push but names no answer to a later one; Kafka "
                    "refuses it with INVALID_REQUEST, and a broker that handles it as any push is also safe for "
                    "clients (variant kafka.telemetry-terminating-forgotten)."),
    Clause("kafka.telemetry.unreadable-metrics",
           "A PushTelemetry whose Metrics do not decompress with its CompressionType into a protobuf message (OTLP "
           "MetricsData) gets INVALID_RECORD (87).",
           "KIP-714 'Error handling' (INVALID_RECORD: the broker cannot decode the metrics); ClientMetricsManager",
           SHOULD,
           decision="SHOULD: Kafka decodes the metrics only when a client telemetry receiver plugin is configured, "
                    "and accepts them unread otherwise (variant kafka.telemetry-metrics-unread)."),
    Clause("kafka.group.unknown-member",
           "Heartbeat, SyncGroup, LeaveGroup or OffsetCommit from an unknown member gets UNKNOWN_MEMBER_ID (25).",
           "GroupCoordinator; Errors.UNKNOWN_MEMBER_ID"),
    Clause("kafka.group.illegal-generation",
           "Heartbeat, SyncGroup or OffsetCommit with a stale generation gets ILLEGAL_GENERATION (22).",
           "GroupCoordinator; Errors.ILLEGAL_GENERATION"),
    Clause("kafka.group.leader-metadata",
           "The JoinGroup leader receives every member's id and protocol metadata; SyncGroup hands each member "
           "the assignment the leader gave it.",
           "JoinGroupResponse.json (Members); SyncGroupResponse.json (Assignment)"),
    Clause("kafka.group.generation",
           "Every completed rebalance increments the group's generation id.",
           "JoinGroupResponse.json (GenerationId); GroupMetadata.initNextGeneration"),
    Clause("kafka.group.rebalance-in-progress",
           "A Heartbeat from a member while a rebalance is pending gets REBALANCE_IN_PROGRESS (27), so it rejoins.",
           "GroupCoordinator.handleHeartbeat; Errors.REBALANCE_IN_PROGRESS"),
    Clause("kafka.group.invalid-session-timeout",
           "JoinGroup with a session timeout outside the broker's bounds gets INVALID_SESSION_TIMEOUT (26).",
           "GroupCoordinator (group.min/max.session.timeout.ms)", SHOULD,
           decision=(
           "SHOULD: the bounds are broker configuration (group.min/max.session.timeout.ms); the "
           "code 26 is Kafka's.")),
    Clause("kafka.commit.round-trip",
           "An offset committed with OffsetCommit is returned by a later OffsetFetch for the same group.",
           f"{GUIDE}, 'OffsetCommit API' and 'OffsetFetch API'"),
    Clause("kafka.commit.no-offset",
           "OffsetFetch for a partition without a committed offset returns offset -1.",
           "OffsetFetchResponse.json (CommittedOffset)"),
    Clause("kafka.commit.fetch-all",
           "OffsetFetch v2+ with null Topics (v8+: a group whose Topics is null) returns every partition the "
           "group committed, each with its committed offset.",
           "OffsetFetchRequest.json ('or null to fetch offsets for all topics', v2+); GroupCoordinatorService."
           "fetchAllOffsets"),
    # --- topics
    Clause("kafka.topics.create",
           "CreateTopics creates the topic with the requested partition count; Metadata then lists it.",
           f"{GUIDE}, 'CreateTopics API'"),
    Clause("kafka.topics.already-exists",
           "CreateTopics for an existing name gets TOPIC_ALREADY_EXISTS (36).",
           "Errors.TOPIC_ALREADY_EXISTS"),
    Clause("kafka.topics.invalid-partitions",
           "CreateTopics with a partition count below 1 (other than -1 on v4+) gets INVALID_PARTITIONS (37).",
           "CreateTopicsRequest.json; Errors.INVALID_PARTITIONS"),
    Clause("kafka.topics.invalid-replication-factor",
           "CreateTopics with a replication factor above the number of brokers (or below 1, other than -1 on v4+) "
           "gets INVALID_REPLICATION_FACTOR (38).",
           "CreateTopicsResponse.json; ReplicationControlManager (InvalidReplicationFactorException)"),
    # --- idempotence
    Clause("kafka.idempotence.init-producer-id",
           "InitProducerId returns a non-negative producer id and epoch.",
           "KIP-98; InitProducerIdResponse.json"),
    Clause("kafka.idempotence.duplicate",
           "An idempotent batch repeating the last sequence is acknowledged without being appended twice.",
           "KIP-98; ProducerStateManager", MUST),
    Clause("kafka.idempotence.out-of-order",
           "An idempotent batch whose base sequence skips ahead gets OUT_OF_ORDER_SEQUENCE_NUMBER (45).",
           "KIP-98; Errors.OUT_OF_ORDER_SEQUENCE_NUMBER"),
    # --- transactions (KIP-98, KIP-447); transaction protocol version 1: the producer adds its partitions itself
    Clause("kafka.txn.epoch-bump",
           "InitProducerId for a transactional id already initialised returns the same producer id with the "
           "epoch one higher.",
           "KIP-98; TransactionCoordinator.handleInitProducerId (prepareIncrementProducerEpoch)", MUST),
    Clause("kafka.txn.fenced",
           "A coordinator request (AddPartitionsToTxn, EndTxn) carrying an epoch older than the transactional id's "
           "current one is refused with PRODUCER_FENCED (90), or INVALID_PRODUCER_EPOCH (47) below version 2.",
           "KIP-98; KIP-588; TransactionCoordinator (PRODUCER_FENCED); KafkaApis (47 for versions < 2)", MUST,
           decision=(
           "Versions below 2 must get 47: older clients do not know 90 (KIP-588). From version 2 on Kafka "
           "answers 90, but 47 is accepted too: it refuses the fenced producer just as well (its abort is "
           "fenced in turn), and Kafka itself answers 47 on the produce path.")),
    Clause("kafka.txn.commit",
           "After AddPartitionsToTxn, transactional produce and EndTxn(commit), a read_committed Fetch returns "
           "the records and the last stable offset equals the high watermark.",
           "KIP-98 ('Transactional messaging'); FetchResponse.json (LastStableOffset)", MUST),
    Clause("kafka.txn.abort",
           "After EndTxn(abort), a read_committed Fetch that returns the aborted records lists the producer's "
           "aborted transaction (ProducerId, FirstOffset at or before its first record).",
           "KIP-98; FetchResponse.json (AbortedTransactions); LogSegment.collectAbortedTxns", MUST),
    Clause("kafka.txn.control-batch",
           "EndTxn writes a transaction marker to every partition of the transaction: a batch with the "
           "transactional and control attribute bits, the producer's id, and one record whose key is version 0 "
           "and type 0 (abort) or 1 (commit).",
           f"{GUIDE}, 'Record Batch' (Control Batches); KIP-98 (EndTransactionMarker)", MUST),
    Clause("kafka.txn.last-stable-offset",
           "While a transaction is open, a read_committed Fetch returns LastStableOffset = the first offset of the "
           "open transaction and no batch at or past it; read_uncommitted returns them.",
           "KIP-98 (last stable offset); ReplicaManager.readFromLog (FetchTxnCommitted)", MUST),
    Clause("kafka.txn.list-offsets",
           "ListOffsets v2+ with IsolationLevel 1 (read_committed) answers the last stable offset for LATEST "
           "while a transaction is open; read_uncommitted answers the high watermark.",
           "KIP-98; ListOffsetsRequest.json (IsolationLevel)", MUST),
    Clause("kafka.txn.invalid-state",
           "EndTxn with no transaction in progress (right after InitProducerId, or committing one already "
           "aborted) answers INVALID_TXN_STATE (48).",
           "TransactionCoordinator.endTransaction (Empty, CompleteAbort); Errors.INVALID_TXN_STATE", MUST,
           decision=(
           "Kafka answers EndTxn once the outcome is in its transaction log, then writes the markers and only then "
           "completes the transaction; a coordinator request for the transactional id meanwhile gets "
           "CONCURRENT_TRANSACTIONS (51), whatever it asks (TransactionCoordinator.scala 563-564 at apache/kafka "
           "1eb7644: the pending transition is checked before the state, so a commit right after an abort gets 51, "
           "then 48). 51 is retriable (ConcurrentTransactionsException extends RetriableException) and producers "
           "ask again (TransactionManager.java EndTxnHandler, AddPartitionsToTxnHandler, InitProducerIdHandler), so "
           "the cases ask again for a few seconds (test_transactions.TXN_NOT_READY) and judge the answer after; a "
           "server that completes before answering never answers 51. The same holds for every transaction "
           "clause's coordinator requests (end-retry, version-gated).")),
    Clause("kafka.txn.init-aborts-ongoing",
           "InitProducerId for a transactional id whose transaction is ongoing aborts that transaction (abort "
           "markers written, nothing of it visible to read_committed) and fences the old epoch; the answer is "
           "CONCURRENT_TRANSACTIONS (51), retried until it succeeds, or success at once.",
           "TransactionCoordinator.handleInitProducerId (Ongoing: prepareFenceProducerEpoch, then "
           "CONCURRENT_TRANSACTIONS); KIP-98", MUST,
           decision=(
           "Kafka aborts and answers 51 so the producer retries (the retry bumps the epoch again). A broker that "
           "finishes the abort before answering and returns 0 at once leaves the client in the same state, so "
           "both are accepted; 51 must end in success within a few retries.")),
    Clause("kafka.txn.invalid-timeout",
           "InitProducerId with a transactional id and a TransactionTimeoutMs of 0 or less answers "
           "INVALID_TRANSACTION_TIMEOUT (50).",
           "TransactionCoordinator.handleInitProducerId; TransactionStateManager.validateTransactionTimeoutMs "
           "(0 < timeout <= transaction.max.timeout.ms)", MUST,
           decision="A timeout above transaction.max.timeout.ms is refused too, but that maximum is the broker's "
                    "setting (15 min by default, at most INT32_MAX), so only the bound every broker shares is "
                    "checked."),
    Clause("kafka.txn.timeout",
           "A transaction left open longer than the TransactionTimeoutMs given to InitProducerId is aborted by "
           "the coordinator: an abort marker is written, the last stable offset moves past it, and the producer "
           "can no longer commit it.",
           "KIP-98 (transaction.timeout.ms); TransactionCoordinator.abortTimedOutTransactions", MUST,
           decision=(
           "Kafka checks every transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s by default), so "
           "the case waits up to the requested timeout plus 12 s. The commit that follows may be refused with "
           "any error (Kafka: 90, or 47 below v2, after the epoch bump; 48 without one); only success fails.")),
    Clause("kafka.txn.produce-unadded",
           "A transactional Produce below v12 to a partition that was not added to the producer's ongoing "
           "transaction is refused with INVALID_TXN_STATE (48).",
           "KIP-890 part 1 (the partition leader verifies the partition with the coordinator); ProduceRequest.json "
           "(v12 note: without transaction version 2 a transaction uses Produce v11 or lower)", MUST,
           decision=(
           "Produce v11 adds TRANSACTION_ABORTABLE (120) (ProduceRequest.json, ProduceResponse.json: 'Version 11 "
           "adds support for new error code TRANSACTION_ABORTABLE (KIP-890)'), and Kafka answers it from v11 on: "
           "its coordinator answers 120 for a partition not in the transaction, which the partition leader turns "
           "into 48 only for Produce v10 and below (KafkaApis.scala 743, AddPartitionsToTxnManager.scala 228 at "
           "apache/kafka 1eb7644). So below v11 the refusal is 48 only; at v11 both 48 and 120 refuse the write.")),
    # --- transaction protocol version 2 (KIP-890 part 2): chosen per request by Produce v12+, TxnOffsetCommit v5+,
    # EndTxn v5+; the cases are UNIMPLEMENTED unless EndTxn v5 and Produce v12 are advertised
    Clause("kafka.txn-v2.implicit-add",
           "A transactional Produce v12+ to a partition not added with AddPartitionsToTxn is appended and adds the "
           "partition to the producer's transaction (starting one): after EndTxn v5 (commit) a read_committed "
           "Fetch returns its records and LastStableOffset = HighWatermark.",
           "KIP-890 part 2; ProduceRequest.json (v12: the request also does AddPartitionsToTxn's work)", MUST),
    Clause("kafka.txn-v2.implicit-offsets",
           "TxnOffsetCommit v5+ for a group not added with AddOffsetsToTxn is accepted and adds the group to the "
           "transaction: after EndTxn v5 (commit) OffsetFetch returns the committed offset.",
           "KIP-890 part 2; TxnOffsetCommitRequest.json (v5: the request also does AddOffsetsToTxn's work)", MUST),
    Clause("kafka.txn-v2.epoch-bump",
           "EndTxn v5+ that ends a transaction answers NONE with the producer id and the epoch one higher (a new "
           "producer id with epoch 0 once the epoch is exhausted), and the producer's next transaction under "
           "that epoch, sequences from 0, is accepted.",
           "KIP-890 part 2 (epoch bump on every transaction); EndTxnResponse.json v5 (ProducerId, ProducerEpoch)",
           MUST),
    Clause("kafka.txn-v2.marker-epoch",
           "The transaction markers EndTxn v5+ writes carry the bumped epoch it answers.",
           "KIP-890 part 2 (markers written with the bumped epoch fence the old one at each partition)", MUST),
    Clause("kafka.txn-v2.old-epoch-fenced",
           "After EndTxn v5+ bumped the epoch, a transactional Produce v12+ under the old epoch (a late write of "
           "the ended transaction) is refused with INVALID_PRODUCER_EPOCH (47) and not appended.",
           "KIP-890 part 2 (late writes of an ended transaction are fenced); Errors.INVALID_PRODUCER_EPOCH", MUST,
           decision=(
           "Kafka's produce path answers 47 (the coordinator's PRODUCER_FENCED is handed to the producer as 47); "
           "PRODUCER_FENCED (90) is accepted too: the late write is refused either way.")),
    Clause("kafka.txn-v2.end-retry",
           "An EndTxn v5+ repeated under the producer id and epoch the previous one ended the transaction with, "
           "for the same outcome, is answered NONE with the same new producer id and epoch (its first answer "
           "was lost); it bumps nothing again.",
           "KIP-890 part 2 (EndTxn retries after the bump); TransactionCoordinator.endTransaction (retry on "
           "epoch bump; CONCURRENT_TRANSACTIONS (51) first while the first end completes is asked again: "
           "kafka.txn.invalid-state's decision)", MUST),
    Clause("kafka.txn-v2.version-gated",
           "EndTxn below v5 keeps version-1 semantics: it ends the transaction without bumping the epoch, and the "
           "producer's next AddPartitionsToTxn under the same epoch succeeds.",
           "KIP-890 part 2 (transaction version 2 is chosen by EndTxn v5+; older clients are unchanged); "
           "CONCURRENT_TRANSACTIONS (51) first while the end completes is asked again (kafka.txn.invalid-state's "
           "decision)", MUST),
    # --- configs (KIP-133, KIP-339)
    Clause("kafka.configs.describe-topic",
           "DescribeConfigs of an existing topic returns its configs, each with a name, a value and its source.",
           "KIP-133; DescribeConfigsResponse.json", MUST),
    Clause("kafka.configs.requested-keys",
           "DescribeConfigs with ConfigurationKeys returns exactly the requested keys the broker knows, no others.",
           "DescribeConfigsRequest.json (ConfigurationKeys: null means all); ConfigHelper.describeConfigs", MUST),
    Clause("kafka.configs.describe-broker",
           "DescribeConfigs of the broker resource (its node id) returns the broker's configs.",
           "KIP-133; ConfigResource.Type.BROKER", MUST),
    Clause("kafka.configs.unknown-topic",
           "DescribeConfigs of a topic that does not exist answers UNKNOWN_TOPIC_OR_PARTITION (3) for it.",
           "ConfigHelper.describeConfigs; Errors.UNKNOWN_TOPIC_OR_PARTITION", MUST),
    Clause("kafka.configs.synonyms",
           "DescribeConfigs v1+ lists synonyms only when IncludeSynonyms is set; the first synonym is the source "
           "of the effective value.",
           "KIP-226; DescribeConfigsRequest.json (IncludeSynonyms)", MUST),
    Clause("kafka.configs.documentation",
           "DescribeConfigs v3+ returns documentation only when IncludeDocumentation is set, else null.",
           "KIP-569; DescribeConfigsRequest.json (IncludeDocumentation)", MUST),
    Clause("kafka.configs.alter-round-trip",
           "AlterConfigs replaces a topic's overrides: DescribeConfigs then shows the new value (source "
           "DYNAMIC_TOPIC_CONFIG), and overrides not named revert to their default.",
           "KIP-133; AlterConfigsRequest.json", MUST),
    Clause("kafka.configs.incremental",
           "IncrementalAlterConfigs applies SET, DELETE, APPEND and SUBTRACT to single configs and leaves the others.",
           "KIP-339; IncrementalAlterConfigsRequest.json", MUST),
    Clause("kafka.configs.validate-only",
           "An AlterConfigs or IncrementalAlterConfigs with ValidateOnly changes nothing.",
           "AlterConfigsRequest.json (ValidateOnly)", MUST),
    Clause("kafka.configs.unknown-config",
           "Altering an unknown topic config name, or setting an invalid value, fails with INVALID_CONFIG (40) "
           "and changes nothing.",
           "ConfigAdminManager (InvalidConfigurationException); Errors.INVALID_CONFIG", MUST),
    Clause("kafka.configs.read-only",
           "Altering a broker config that cannot be changed at run time is refused.",
           "DynamicBrokerConfig.validateConfigs ('Cannot update these configs dynamically')", MUST,
           decision="Kafka answers INVALID_REQUEST (42); INVALID_CONFIG (40) and POLICY_VIOLATION (44) are accepted "
                    "too, since the guide does not fix the code; success fails."),
    Clause("kafka.configs.honoured",
           "A topic's max.message.bytes override is enforced: a larger batch fails with MESSAGE_TOO_LARGE (10).",
           "TopicConfig.MAX_MESSAGE_BYTES_CONFIG; UnifiedLog.analyzeAndValidateRecords", MUST),
    # --- admin
    Clause("kafka.admin.create-partitions",
           "CreatePartitions grows a topic to the requested count; Metadata then lists every partition.",
           "KIP-195; CreatePartitionsRequest.json", MUST),
    Clause("kafka.admin.create-partitions-invalid",
           "CreatePartitions to a count not above the current one fails with INVALID_PARTITIONS (37); an unknown "
           "topic with UNKNOWN_TOPIC_OR_PARTITION (3).",
           "KIP-195; ZkAdminManager/ReplicationControlManager.createPartitions", MUST),
    Clause("kafka.admin.delete-records",
           "DeleteRecords moves the log start offset to the requested offset (LowWatermark); ListOffsets earliest "
           "then returns it.",
           "KIP-107; DeleteRecordsResponse.json", MUST),
    Clause("kafka.admin.delete-records-fetch",
           "A Fetch below the log start offset after DeleteRecords fails with OFFSET_OUT_OF_RANGE (1).",
           "KIP-107; ReplicaManager.readFromLog", MUST),
    Clause("kafka.admin.delete-records-beyond-hw",
           "DeleteRecords beyond the high watermark fails with OFFSET_OUT_OF_RANGE (1).",
           "KIP-107; UnifiedLog.deleteRecordsOnLeader", MUST),
    Clause("kafka.admin.delete-groups",
           "DeleteGroups removes an empty group (later DescribeGroups shows it Dead) and answers GROUP_ID_NOT_FOUND "
           "(69) for an unknown one.",
           "KIP-229; DeleteGroupsResponse.json", MUST),
    Clause("kafka.admin.delete-groups-non-empty",
           "DeleteGroups of a group with live members fails with NON_EMPTY_GROUP (68) and keeps the group.",
           "KIP-229; GroupCoordinator.handleDeleteGroups", MUST),
    Clause("kafka.admin.offset-delete",
           "OffsetDelete removes a group's committed offsets: OffsetFetch then returns -1 for them.",
           "KIP-496; OffsetDeleteRequest.json", MUST),
    Clause("kafka.admin.offset-delete-unknown-group",
           "OffsetDelete for a group that does not exist fails with GROUP_ID_NOT_FOUND (69).",
           "KIP-496; GroupCoordinator.handleDeleteOffsets", MUST),
    Clause("kafka.admin.describe-cluster",
           "DescribeCluster returns the cluster id, the controller and every broker with a reachable host and "
           "port, as Metadata does.",
           "KIP-700; DescribeClusterResponse.json", MUST),
    Clause("kafka.admin.offset-for-leader-epoch",
           "OffsetForLeaderEpoch for the current leader epoch returns the log end offset; an unknown partition "
           "answers UNKNOWN_TOPIC_OR_PARTITION (3).",
           "KIP-101, KIP-279; OffsetsForLeaderEpochResponse.json", MUST),
    Clause("kafka.admin.describe-producers",
           "DescribeProducers lists the idempotent producers that wrote to a partition with their last sequence.",
           "KIP-664; DescribeProducersResponse.json", MUST),
    # --- SASL (KIP-43, KIP-152)
    Clause("kafka.sasl.handshake-mechanisms",
           "SaslHandshake with an unsupported mechanism answers UNSUPPORTED_SASL_MECHANISM (33) with the enabled "
           "mechanisms.",
           "KIP-43; SaslHandshakeResponse.json", MUST),
    Clause("kafka.sasl.before-authentication",
           "Before authentication completes only ApiVersions and SaslHandshake are served; any other request "
           "closes the connection or is refused.",
           "KIP-43, KIP-152; SaslServerAuthenticator (ILLEGAL_SASL_STATE)", MUST,
           decision="Kafka closes the connection; an error answer (34 ILLEGAL_SASL_STATE or 58) with no data is "
                    "accepted too."),
    Clause("kafka.sasl.plain",
           "SASL/PLAIN with valid credentials succeeds (error 0), after which other requests are served.",
           "KIP-43; RFC 4616", MUST),
    Clause("kafka.sasl.wrong-password",
           "SASL with a wrong password fails with SASL_AUTHENTICATION_FAILED (58) and grants no access.",
           "KIP-152; Errors.SASL_AUTHENTICATION_FAILED", MUST),
    Clause("kafka.sasl.scram",
           "SCRAM-SHA-256/512 with valid credentials completes in two SaslAuthenticate round trips and the server "
           "signature verifies.",
           "KIP-84; RFC 5802", MUST),
    Clause("kafka.sasl.scram-tampered",
           "A SCRAM exchange whose client-final message carries a changed nonce or a wrong proof fails with "
           "SASL_AUTHENTICATION_FAILED (58).",
           "RFC 5802 section 5.1; ScramSaslServer", MUST),
    # --- liveness
    Clause("kafka.robustness.survives",
           "After any hostile frame on one connection, the broker still answers a valid ApiVersions request "
           "on a new connection.",
           "Robustness principle; KAFKA-14063", MUST),
]

# Checked on captured traffic by the pipeline (reports/pipeline/captures), not by live cases.
CLAUSES += [
    Clause("kafka.capture.error-code-known",
           "Every ErrorCode a response carries is one of Kafka's defined error codes.",
           "Errors.java (the code table); protocol guide 'Error Codes'", MUST,
           decision="Which codes each API may return is prose in the message definitions' comments, not data, so "
                    "a passive check can only require a defined code (protocols.kafka.errors).",
           sole_reading="A code outside Errors.java's table (spec notes §5: -1 to 128) means nothing to any client, "
                        "so no conforming broker sends one; the decision only narrows what a passive check judges, "
                        "it opens no second behaviour a broker could take."),
    Clause("kafka.capture.request-decodes",
           "Every request frame decodes strictly at the api key and version its header names.",
           "Kafka protocol guide, 'Requests'; the message definitions (validVersions)", MUST,
           unbreakable="It judges the frames a client sent (in captures), which no server can change."),
    Clause("kafka.capture.version-advertised",
           "A request uses an api version inside the range the broker advertised on the connection.",
           "KIP-35 (ApiVersions); protocol guide 'Versioning and Compatibility'", SHOULD,
           decision="Checked per connection: clients send ApiVersions first on every connection (KIP-511).",
           sole_reading="It judges the versions a client sends in a capture, and only against a range advertised on "
                        "that same connection (a connection without ApiVersions is not judged), so no broker "
                        "behaviour changes its outcome and no variant can take another reading."),
]

CATALOGUE = Catalogue("kafka", CLAUSES + client_clauses("kafka", CLIENTS, SCENARIOS))
