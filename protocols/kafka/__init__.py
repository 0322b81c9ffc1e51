"""Kafka: message codecs and scapy layers generated from Kafka's JSON definitions, record batches, error codes
and the clause catalogue.

Modules: ``schema`` (load the definitions), ``codec`` (struct codec compiled from them), ``messages`` (the
API: encode/decode frames, versions, header rules), ``misread`` (what an answer that does not decode is instead,
and its clause), ``layers`` (scapy packets generated from the same codecs), ``records`` + ``compression`` (record
batch v2, legacy message sets), ``errors``, ``clauses``.
"""

from __future__ import annotations

from wirecheck.protocols.framing import I32_PREFIX
from wirecheck.protocols.kafka import errors, layers, messages, records
from wirecheck.protocols.batches import reseal_edited
from wirecheck.protocols.clients import all_client_clauses as client_clauses
from wirecheck.protocols.kafka.faults import FAULTS, SAFETY_FAULTS, VARIANTS
from wirecheck.protocols.kafka.states import STATES
from wirecheck.protocols.kafka.request_fields import map_request
from wirecheck.protocols.kafka.clauses import CATALOGUE
from wirecheck.protocols.kafka.clients import CLIENTS, SCENARIO_DEPENDS_ON, SCENARIOS
from wirecheck.protocols.kafka.client_defects import CLIENT_DEFECTS
from wirecheck.protocols.spec import BY_CONTENT, CaptureSupport, Endpoint, ProtocolSpec

DEFAULT_PORT = 9092
MAX_BODY = 104_857_600  # socket.request.max.bytes default (SocketServerConfigs.SOCKET_REQUEST_MAX_BYTES_DEFAULT)
HELLO_CORRELATION_ID = 0x57C0  # arbitrary, recognisable in captures


def hello() -> bytes:
    """ApiVersions v0: every Kafka broker since 0.10 answers it, whatever else it supports."""
    return messages.encode_request(messages.API_VERSIONS, 0, HELLO_CORRELATION_ID, "wirecheck-probe", {})


def is_hello_answer(frame: bytes) -> bool:
    try:
        decoded = messages.decode_response(messages.API_VERSIONS, 0, frame)
    except messages.DecodeError:
        return False
    body = decoded["body"]
    return (decoded["header"]["CorrelationId"] == HELLO_CORRELATION_ID and body["ErrorCode"] == 0
            and any(entry["ApiKey"] == messages.API_VERSIONS for entry in body["ApiKeys"]))


#: correlation id -> (api key, version) of the requests described last: a response does not say what it answers,
#: so describe() guesses from the request with the same correlation id (display only; bounded).
_RECENT_REQUESTS: dict[int, tuple[int, int]] = {}
_RECENT_LIMIT = 4096


def describe(frame: bytes) -> str:
    """A request (suite -> target) as a readable one-liner; remembers its correlation id for its answer."""
    try:
        decoded = messages.decode_request(frame)
    except Exception:  # describe never raises: it runs on hostile bytes
        return _unknown(frame)
    header = decoded["header"]
    key, version, correlation = header["RequestApiKey"], header["RequestApiVersion"], header["CorrelationId"]
    if len(_RECENT_REQUESTS) >= _RECENT_LIMIT:
        _RECENT_REQUESTS.clear()
    _RECENT_REQUESTS[correlation] = (key, version)
    return (f"{messages.api_name(key)} v{version} request corr={correlation} "
            f"client={header.get('ClientId')!r} {decoded['body']!r}")[:2000]


def answers_request(answer: bytes, request: bytes) -> bool:
    """A response carries its request's correlation id (response header: after the length; request header: after
    the length, api key and version)."""
    return len(answer) >= 8 and len(request) >= 12 and answer[4:8] == request[8:12]


#: requests never asked again on "not yet": each may have taken effect in part before a partition's error (records
#: appended to another partition, a fetch or share session's epoch moved on), so a second one is another request
_NOT_RETRIED = frozenset({0, 1, 78, 79})  # Produce, Fetch, ShareFetch, ShareAcknowledge


def not_yet(request: bytes, answer: bytes) -> bool:
    """Does the answer only say "not yet" (every error code it carries one of errors.NOT_YET) to a request that can
    be asked again as it is?"""
    try:
        header = messages.decode_request(request)["header"]
        if header["RequestApiKey"] in _NOT_RETRIED:
            return False
        body = messages.decode_response(header["RequestApiKey"], header["RequestApiVersion"], answer)["body"]
    except Exception:  # noqa: BLE001 - an answer that does not decode says something else
        return False
    codes = errors.every_error_code(body) - {errors.NONE}
    return bool(codes) and codes <= errors.NOT_YET


def describe_answer(frame: bytes) -> str:
    """A response (target -> suite), decoded as the request with its correlation id asked for. Never read as a
    request: a response's correlation id can parse as an api key and version."""
    correlation = int.from_bytes(frame[4:8], "big", signed=True) if len(frame) >= 8 else None
    guess = _RECENT_REQUESTS.get(correlation)
    if guess is None:
        return _unknown(frame, "response")
    key, version = guess
    try:
        body = messages.decode_response(key, version, frame)["body"]
    except Exception as exc:  # noqa: BLE001 - hostile or broken answers are shown, not raised
        return (f"Kafka response corr={correlation} ({len(frame)} bytes), not a {messages.api_name(key)} "
                f"v{version} response: {exc}")[:2000]
    return f"{messages.api_name(key)} v{version} response corr={correlation} {body!r}"[:2000]


def _unknown(frame: bytes, what: str = "frame") -> str:
    length = int.from_bytes(frame[:4], "big", signed=True) if len(frame) >= 4 else None
    correlation = int.from_bytes(frame[4:8], "big", signed=True) if len(frame) >= 8 else None
    return f"Kafka {what} length={length} corr?={correlation} ({len(frame)} bytes)"


SPEC = ProtocolSpec(
    name="kafka",
    catalogue=CATALOGUE,
    endpoints=(Endpoint("broker", default_port=DEFAULT_PORT, framing=I32_PREFIX, max_body=MAX_BODY, hello=hello, hello_clause="kafka.header.api-versions-v0",
                        is_hello_answer=is_hello_answer, describe=describe, describe_answer=describe_answer,
                        dissect=layers.dissect, answers_request=answers_request),),
    message_param="api",
    version_param="api_version",
    capture=CaptureSupport("wirecheck.protocols.kafka.capture", unframeable_clause="kafka.framing.size-prefix"),
    faults=FAULTS,
    states=STATES,
    variants=VARIANTS,
    safety_faults=SAFETY_FAULTS,
    safety="wirecheck.targets.safety.kafka",
    login=True,  # SASL when --target-option kafka.sasl=USER:PASSWORD is given
    # where a broker listens, ids it generates (topic, cluster, producer, member, fetch session), throttling
    # and free-text messages
    volatile_fields=("*.Host", "*.Port", "*.TopicId", "*.ClusterId", "*.ProducerId", "*.MemberId", "*.SessionId",
                     "*.Leader",  # JoinGroup's leader is a member id
                     "*.ThrottleTimeMs", "*.ErrorMessage",
                     # KIP-714: the client instance id the broker assigns, the subscription id it derives
                     "*.ClientInstanceId",
                     # batch timestamps (a control batch's are the broker's clock) and the CRC that covers them
                     "*.Records.base_timestamp", "*.Records.max_timestamp", "*.Records.crc",
                     # the producer id a stored batch carries is the one the broker handed out
                     "*.Records.producer_id",
                     # a SCRAM server-first message: the server's nonce and the user's salt are its own choice
                     "SaslAuthenticateResponse*.AuthBytes"),
    # every group on the server, whoever made it (a real client's traffic is not mirrored)
    server_listings={"ListGroupsResponse*.Groups": "GroupId",
                     # a Metadata request for every topic (null) lists every topic on the server
                     "MetadataResponse*.Topics": "Name",
                     # describing a resource's configs lists every config the server has (each has its own set):
                     # compared in the configs the case named
                     "DescribeConfigsResponse*.Configs": "Name"},
    # Apache Kafka answers a ListOffsets topic's partitions in its own (hash map) order
    unordered_lists={"ListOffsetsResponse*.Partitions": "PartitionIndex",
                     # Kafka answers groups in its coordinator's order: GroupCoordinatorService (deleteGroups,
                     # describeGroups, consumerGroupDescribe, shareGroupDescribe, streamsGroupDescribe) groups the
                     # ids by their __consumer_offsets partition in a HashMap and concatenates the partitions' answers
                     "DeleteGroupsResponse*.Results": "GroupId",
                     **{f"{api}Response*.Groups": "GroupId" for api in (
                         "DescribeGroups", "ConsumerGroupDescribe", "ShareGroupDescribe", "StreamsGroupDescribe")},
                     # a classic group's members come from a HashMap of member ids the coordinator generated
                     # (ClassicGroup.allMembers): ordered by what each member holds, its id left out
                     "DescribeGroupsResponse*.Members": BY_CONTENT},
    # each server advertises its own versions and features (the cases judge the lists, and pick a version both
    # servers speak)
    implementation_fields=("ApiVersionsResponse*.ApiKeys*", "ApiVersionsResponse*Features*",
                           # a created topic's effective configs (KIP-525): which topic configs a server has, and
                           # their defaults, are its own (Apache Kafka 4.4 lists 37, with its tiered-storage ones)
                           "CreateTopicsResponse*.Configs*",
                           # a config's synonyms are the server's own broker config names and precedence (Kafka's
                           # retention.ms has log.retention.{ms,minutes,hours}), its documentation free text
                           "DescribeConfigsResponse*.Synonyms*", "DescribeConfigsResponse*.Documentation",
                           # which tagged fields an ApiVersions answer carries follows from the features the server
                           # has (SupportedFeatures, FinalizedFeatures*: KIP-584), declared above
                           "ApiVersionsResponse*._tagged_fields.keys",
                           # an operator's setting, as the telemetry interval below (group.consumer.heartbeat.
                           # interval.ms: Kafka's default 5000, the reference broker's 1000 for faster suites)
                           "ConsumerGroupHeartbeatResponse*.HeartbeatIntervalMs",
                           "ShareGroupHeartbeatResponse*.HeartbeatIntervalMs",
                           # an operator's telemetry subscription (metrics, interval, size limit, codecs)
                           *(f"GetTelemetrySubscriptionsResponse*.{name}" for name in (
                               "AcceptedCompressionTypes*", "PushIntervalMs", "TelemetryMaxBytes",
                               "DeltaTemporality", "RequestedMetrics*"))),
    # when a member's assignment reaches it is the coordinator's (KIP-848: the target assignment is computed
    # asynchronously, and Kafka 4.3+ batches it, KIP-1263; KIP-932: Kafka assigns a share partition only once its
    # state is initialised in the share coordinator, GroupMetadataManager.shareGroupHeartbeat /
    # initializeShareGroupState, so the first heartbeat answers an empty assignment and a later one the partitions);
    # so is the group state that follows it (KIP-848 ConsumerGroupState: Assigning until the target assignment is
    # computed, Reconciling until every member has it, then Stable)
    timed_fields=tuple(f"{api}Response*.{field}" for api, field in (
        ("ConsumerGroupHeartbeat", "Assignment*"), ("ShareGroupHeartbeat", "Assignment*"),
        ("ConsumerGroupDescribe", "Assignment*"), ("ConsumerGroupDescribe", "TargetAssignment*"),
        ("ShareGroupDescribe", "Assignment*"), ("ConsumerGroupDescribe", "GroupState"),
        ("ShareGroupDescribe", "GroupState"))),
    # Kafka reads for a share fetch only the partitions whose fetch lock it could take and that have records to
    # acquire (DelayedShareFetch.onComplete, acquirablePartitions), and lists each it read, with nothing acquired
    # too: whether a quiet partition is listed is its locks' timing. A client reads both alike (no records, no error)
    silent_entries={"ShareFetchResponse*.Partitions": ("ErrorCode", "AcknowledgeErrorCode", "Records",
                                                        "AcquiredRecords"),
                    "ShareFetchResponse*.Responses": ("Partitions",)},
    derived_fields=("*ResponseFrame*.length",),  # follows from what the frame carries, which is compared
    field_decoders={"*.Records": records.batches_as_fields},
    reseal=reseal_edited,
    clients=CLIENTS,
    client_depends_on=SCENARIO_DEPENDS_ON,  # a scenario failing beside a failed clause it needs: BLOCKED by it
    client_defects=CLIENT_DEFECTS,  # what a client version cannot read although the protocol permits it
    # producers that report offsets are told the wrong ones; kcat reads to the high watermark, which is never reached;
    # each other scenario by a fault that breaks it within seconds (kcat: True for kcat's clauses only, False for the
    # others', None for all)
    client_faults={fault: tuple(c for c in client_clauses("kafka", CLIENTS, SCENARIOS)
                                if c.rsplit(".", 1)[1] in scenarios and kcat in (None, ".kcat." in c))
                   for fault, scenarios, kcat in (
                       ("kafka.base-offset-echoed", ("produce-consume", "compression"), False),
                       ("kafka.hw-off-by-one", ("produce-consume", "compression"), True),
                       ("kafka.commit-not-stored", ("consumer-group-protocol", "group-rebalance", "mixed-group",
                                                    "group-consume", "group-admin"), None),
                       ("kafka.create-partitions-count-ignored", ("cluster-admin",), None),
                       ("kafka.init-producer-id-needs-transactional-id", ("idempotent",), None),
                       ("kafka.txn-aborted-not-listed", ("transactions",), None),
                       # a TV2 Produce must add its partition itself: refused INVALID_TXN_STATE, the producer fails
                       ("kafka.txn-v2-implicit-add-missing", ("transactions-v2",), None),
                       ("kafka.alter-configs-not-applied", ("admin",), None),
                       # an accepted record comes back, so a share consumer receives it twice
                       ("kafka.share-accept-redelivers", ("share-group",), None),
                       # librdkafka's pushes all get UNKNOWN_SUBSCRIPTION_ID, which its telemetry log reports
                       ("kafka.telemetry-subscription-id-unstable", ("telemetry",), None),
                       # every SASL client but kcat logs in with SCRAM too and checks the server's signature; kcat
                       # (librdkafka before 2.6.1: PLAIN only) sends the empty PLAIN authzid that fault refuses
                       ("kafka.sasl-scram-signature-wrong", ("sasl",), False),
                       ("kafka.sasl-plain-authzid-required", ("sasl",), True))},  # a replay's carried-over producer id sits inside a record batch's CRC
    # the broker ids a cluster gave its nodes (node.id: 0 on the reference broker, any number on another): every
    # field Apache Kafka's message JSON marks "entityType": "brokerId" (clients/src/main/resources/common/message/,
    # e.g. MetadataResponse.json Brokers.NodeId), plus the Kafka 4 share APIs' endpoint ids (kio's classes carry no
    # entity types; their CurrentLeader is left unset, LeaderId 0, by a broker that leads the partition, so it is
    # compared as it is); tests/unit/test_differential_chosen.py keeps this list level with the JSON
    chosen_fields={**{pattern: "broker-id" for pattern in (
        *(f"MetadataResponse*.{name}" for name in ("NodeId", "ControllerId", "LeaderId", "ReplicaNodes", "IsrNodes",
                                                   "OfflineReplicas")),
        "FindCoordinatorResponse*.NodeId", "DescribeClusterResponse*.ControllerId", "DescribeClusterResponse*.BrokerId",
        *(f"DescribeQuorumResponse*.{name}" for name in ("LeaderId", "NodeId", "ReplicaId")),
        *(f"DescribeTopicPartitionsResponse*.{name}" for name in (
            "LeaderId", "ReplicaNodes", "IsrNodes", "EligibleLeaderReplicas", "LastKnownElr", "OfflineReplicas")),
        *(f"FetchResponse*.{name}" for name in ("LeaderId", "PreferredReadReplica", "NodeId")),
        *(f"ListPartitionReassignmentsResponse*.{name}" for name in ("Replicas", "AddingReplicas", "RemovingReplicas")),
        "ProduceResponse*.LeaderId", *(f"{api}Response*.NodeId" for api in ("Produce", "ShareFetch",
                                                                             "ShareAcknowledge")),
        # a broker's config resource is named by its id as text ("0"); a topic's name is compared as it is
        *(f"{api}Response*.ResourceName" for api in ("DescribeConfigs", "AlterConfigs", "IncrementalAlterConfigs")))},
        # KIP-714: the subscription id is the broker's own digest of the subscription (any int32, negative too)
        "GetTelemetrySubscriptionsResponse*.SubscriptionId": "telemetry-subscription",
        # KIP-848 / KIP-932: a group's epoch counts the coordinator's own changes to the group (members, their
        # subscriptions, the topics' metadata, and in Apache Kafka steps of its own: a share group's epoch is bumped
        # again once the share partitions' state is initialised, GroupMetadataManager.shareGroupHeartbeat /
        # initializeShareGroupState; 4.3+ defers assignments, KIP-1263), and a member's epoch follows the group's as
        # it reconciles. So the numbers are the coordinator's count (chosen_counters: not even one to one, since
        # Apache Kafka counts steps the reference broker does not); 0 (join), -1 (leave) and -2 (a static member's
        # leave) are the protocol's own and compared as they are (chosen_sentinels). What the cases check of epochs
        # (a join starts from 0, the epoch grows, a stale epoch is fenced) they check themselves.
        **{f"{api}Response*.{name}": "group-epoch" for api, names in (
            ("ConsumerGroupHeartbeat", ("MemberEpoch",)), ("ShareGroupHeartbeat", ("MemberEpoch",)),
            ("ConsumerGroupDescribe", ("GroupEpoch", "AssignmentEpoch", "MemberEpoch")),
            ("ShareGroupDescribe", ("GroupEpoch", "AssignmentEpoch", "MemberEpoch"))) for name in names}},
    chosen_sentinels={"telemetry-subscription": (), "group-epoch": (0, -1, -2)},
    # each member's epoch is its own count (two members of one group stand at different epochs), kept apart by the
    # MemberId beside it; a group's epoch has none beside it
    chosen_counters={"group-epoch": "MemberId"},
    not_yet=not_yet,
    # requests that name a broker (a replica assignment; a follower's ReplicaId, -1 from a client, stays as sent)
    chosen_request_fields={**{pattern: "broker-id" for pattern in (
        "CreateTopicsRequest.*.BrokerIds", "CreatePartitionsRequest.*.BrokerIds",
        "AlterPartitionReassignmentsRequest.*.Replicas",
        "FetchRequest*ReplicaId", "ListOffsetsRequest.ReplicaId", "OffsetForLeaderEpochRequest.ReplicaId",
        # a BROKER or BROKER_LOGGER config resource's name (request_fields.BROKER_RESOURCES; other names stay)
        *(f"{api}Request.Resources.ResourceName" for api in ("DescribeConfigs", "AlterConfigs",
                                                               "IncrementalAlterConfigs")))},
        "PushTelemetryRequest.SubscriptionId": "telemetry-subscription",
        # a member's heartbeat, and a consumer-group member's commit and fetch, carry the epoch the coordinator gave
        **{pattern: "group-epoch" for pattern in (
            "ConsumerGroupHeartbeatRequest.MemberEpoch", "ShareGroupHeartbeatRequest.MemberEpoch",
            "OffsetCommitRequest.GenerationIdOrMemberEpoch", "OffsetFetchRequest.Groups.MemberEpoch")}},
    map_request=map_request,
    field_clauses={"ProduceResponse*.BaseOffset": "kafka.produce.base-offset",
                   "FetchResponse*.HighWatermark": "kafka.fetch.high-watermark"},
)
