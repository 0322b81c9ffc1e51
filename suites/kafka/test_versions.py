"""The "advertised equals implemented" matrix: every advertised version of every API answers a valid request
with a response that decodes strictly at that version (field order, version-gated fields, header version).

One case per (API, version) known to the definitions; versions the target does not advertise are
UNIMPLEMENTED (counted, not failed). Each case sends two requests on one connection:

- for the core APIs (``VALID``), a valid request on real things (a topic the sweep created, a new group, an
  idempotent producer): it must decode at the version (else the version is not implemented, this case's clause)
  and succeed, ErrorCode 0 after the retriable "not yet" answers Kafka's clients retry (else the API's own clause,
  ``VALID``'s second column: a version whose handler crashes is that API's failure, not "not implemented");
- for every API, a harmless request (``HARMLESS``: names that do not exist, unique per run, or validating only,
  so it works on a live cluster), which walks an error path: it must decode at the version; an
  UNKNOWN_SERVER_ERROR (-1) there, or a close after the valid request was answered, is the error path's own clause
  (``ERROR_PATHS``), not "version not implemented".
"""

from __future__ import annotations

import time
import uuid

import pytest

from wirecheck.protocols.kafka import errors, messages, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, DataPath, Kafka, short

case = pytest.mark.case
CLAUSE = "kafka.api-versions.advertised-implemented"

ZERO_ID = uuid.UUID(int=0)


def _api_versions(names):
    return {"ClientSoftwareName": "wirecheck", "ClientSoftwareVersion": "0.1.0"}


def _metadata(names):
    return {"Topics": [{"Name": names("absent"), "TopicId": ZERO_ID}], "AllowAutoTopicCreation": False}


def _produce(names):
    batch = records.build_batch([b"wirecheck"], base_timestamp=int(time.time() * 1000))
    return {"TransactionalId": None, "Acks": 1, "TimeoutMs": 1000,
            "TopicData": [{"Name": names("absent"), "TopicId": ZERO_ID,
                           "PartitionData": [{"Index": 0, "Records": batch}]}]}


def _fetch(names):
    return {"ReplicaId": -1, "MaxWaitMs": 0, "MinBytes": 0, "MaxBytes": 65536, "IsolationLevel": 0,
            "SessionId": 0, "SessionEpoch": -1,
            "Topics": [{"Topic": names("absent"), "TopicId": ZERO_ID,
                        "Partitions": [{"Partition": 0, "FetchOffset": 0, "PartitionMaxBytes": 65536}]}]}


def _list_offsets(names):
    return {"ReplicaId": -1, "IsolationLevel": 0,
            "Topics": [{"Name": names("absent"), "Partitions": [{"PartitionIndex": 0, "Timestamp": -1}]}]}


def _offset_commit(names):
    return {"GroupId": names("group"), "GenerationIdOrMemberEpoch": -1, "MemberId": "",
            "Topics": [{"Name": names("absent"), "TopicId": ZERO_ID,
                        "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 0}]}]}


def _offset_fetch(names):
    group, topic = names("group"), names("absent")
    return {"GroupId": group, "Topics": [{"Name": topic, "PartitionIndexes": [0]}],
            "Groups": [{"GroupId": group, "Topics": [{"Name": topic, "TopicId": ZERO_ID, "PartitionIndexes": [0]}]}]}


def _find_coordinator(names):
    group = names("group")
    return {"Key": group, "KeyType": 0, "CoordinatorKeys": [group]}


def _heartbeat(names):
    return {"GroupId": names("group"), "GenerationId": 1, "MemberId": "wirecheck-member"}


def _leave_group(names):
    return {"GroupId": names("group"), "MemberId": "wirecheck-member",
            "Members": [{"MemberId": "wirecheck-member"}]}


def _sync_group(names):
    return {"GroupId": names("group"), "GenerationId": 1, "MemberId": "wirecheck-member",
            "ProtocolType": "consumer", "ProtocolName": "range", "Assignments": []}


def _describe_groups(names):
    return {"Groups": [names("group")]}


def _list_groups(names):
    return {}


def _create_topics(names):
    return {"Topics": [{"Name": names("validate"), "NumPartitions": 1, "ReplicationFactor": 1}],
            "timeoutMs": 5000, "validateOnly": True}


def _delete_topics(names):
    absent = names("absent")
    return {"TopicNames": [absent], "Topics": [{"Name": absent}], "TimeoutMs": 5000}


def _init_producer_id(names):
    return {"TransactionalId": None, "TransactionTimeoutMs": 60000}


def _describe_configs(names):
    return {"Resources": [{"ResourceType": 2, "ResourceName": names("absent"), "ConfigurationKeys": None}],
            "IncludeSynonyms": True, "IncludeDocumentation": True}


def _alter_configs(names):
    return {"Resources": [{"ResourceType": 2, "ResourceName": names("absent"),
                           "Configs": [{"Name": "retention.ms", "Value": "1000", "ConfigOperation": 0}]}],
            "ValidateOnly": True}


def _delete_records(names):
    return {"Topics": [{"Name": names("absent"), "Partitions": [{"PartitionIndex": 0, "Offset": 0}]}],
            "TimeoutMs": 5000}


def _offset_for_leader_epoch(names):
    return {"ReplicaId": -1, "Topics": [{"Topic": names("absent"), "Partitions": [
        {"Partition": 0, "CurrentLeaderEpoch": -1, "LeaderEpoch": 0}]}]}


def _create_partitions(names):
    return {"Topics": [{"Name": names("absent"), "Count": 2, "Assignments": None}], "TimeoutMs": 5000,
            "ValidateOnly": True}


def _delete_groups(names):
    return {"GroupsNames": [names("group")]}


def _offset_delete(names):
    return {"GroupId": names("group"), "Topics": [{"Name": names("absent"), "Partitions": [{"PartitionIndex": 0}]}]}


def _describe_cluster(names):
    return {"IncludeClusterAuthorizedOperations": False, "EndpointType": 1, "IncludeFencedBrokers": False}


def _describe_producers(names):
    return {"Topics": [{"Name": names("absent"), "PartitionIndexes": [0]}]}


# -- every other client-facing key: a request naming what does not exist (an unknown producer id, group, token,
# cluster id), validating only, or one the broker refuses (an ACL of filter-only values): nothing changes

UNKNOWN_PRODUCER_ID = 2**62  # no broker hands out producer ids this high
ABSENT_ID = 2**31 - 2  # a broker or voter id no cluster of this suite's has
ANY, LITERAL, TOPIC = 1, 3, 2  # ACL filter values (AclOperation/AclPermissionType ANY, PatternType LITERAL)


def _join_group(names):
    # a session timeout below any group.min.session.timeout.ms: INVALID_SESSION_TIMEOUT (26) at once, before the
    # initial rebalance delay a real join waits (3 s by default, longer than a conformance deadline)
    return {"GroupId": names("group"), "SessionTimeoutMs": 1, "RebalanceTimeoutMs": 1, "MemberId": "",
            "GroupInstanceId": None, "ProtocolType": "consumer", "Protocols": [{"Name": "range", "Metadata": b""}]}


def _sasl_handshake(names):
    return {"Mechanism": "WIRECHECK-NONE"}  # after login (or on a PLAINTEXT listener): ILLEGAL_SASL_STATE (34)


def _sasl_authenticate(names):
    return {"AuthBytes": b""}


def _txn(names):
    return {"TransactionalId": names("txn"), "ProducerId": UNKNOWN_PRODUCER_ID, "ProducerEpoch": 0}


def _add_partitions_to_txn(names):
    topics = [{"Name": names("absent"), "Partitions": [0]}]
    return {"V3AndBelowTransactionalId": names("txn"), "V3AndBelowProducerId": UNKNOWN_PRODUCER_ID,
            "V3AndBelowProducerEpoch": 0, "V3AndBelowTopics": topics,
            "Transactions": [{**_txn(names), "VerifyOnly": True, "Topics": topics}]}


def _add_offsets_to_txn(names):
    return {**_txn(names), "GroupId": names("group")}


def _end_txn(names):
    return {**_txn(names), "Committed": False}


def _txn_offset_commit(names):
    return {**_txn(names), "GroupId": names("group"), "GenerationId": -1, "MemberId": "", "GroupInstanceId": None,
            "Topics": [{"Name": names("absent"), "Partitions": [
                {"PartitionIndex": 0, "CommittedOffset": 0, "CommittedLeaderEpoch": -1, "CommittedMetadata": None}]}]}


def _acl_filter(names):
    return {"ResourceTypeFilter": TOPIC, "ResourceNameFilter": names("absent"), "PatternTypeFilter": LITERAL,
            "PrincipalFilter": f"User:{names('nobody')}", "HostFilter": None, "Operation": ANY, "PermissionType": ANY}


def _create_acls(names):
    # ANY is a filter value, never an ACL's: the creation is refused (InvalidRequestException per creation)
    return {"Creations": [{"ResourceType": ANY, "ResourceName": names("absent"), "ResourcePatternType": ANY,
                           "Principal": f"User:{names('nobody')}", "Host": "*", "Operation": ANY,
                           "PermissionType": ANY}]}


def _alter_replica_log_dirs(names):
    return {"Dirs": [{"Path": "/wirecheck-absent-dir", "Topics": [{"Name": names("absent"), "Partitions": [0]}]}]}


def _create_delegation_token(names):
    # where tokens are enabled and the principal may, a token lives 1 ms (MaxLifetimeMs): expired at once
    return {"OwnerPrincipalType": None, "OwnerPrincipalName": None, "Renewers": [], "MaxLifetimeMs": 1}


def _elect_leaders(names):
    return {"ElectionType": 0, "TopicPartitions": [{"Topic": names("absent"), "Partitions": [0]}], "TimeoutMs": 1000}


def _alter_partition_reassignments(names):
    return {"TimeoutMs": 1000, "Topics": [{"Name": names("absent"), "Partitions": [
        {"PartitionIndex": 0, "Replicas": None}]}]}  # null: cancel a reassignment (there is none)


def _alter_client_quotas(names):
    return {"Entries": [{"Entity": [{"EntityType": "client-id", "EntityName": names("client")}],
                         "Ops": [{"Key": "producer_byte_rate", "Value": 1024.0, "Remove": False}]}],
            "ValidateOnly": True}


def _update_features(names):
    return {"timeoutMs": 1000, "FeatureUpdates": [{"Feature": names("feature"), "MaxVersionLevel": 1,
                                                   "AllowDowngrade": False, "UpgradeType": 1}], "ValidateOnly": True}


def _group_leave(names):
    """A KIP-848/932/1071 heartbeat leaving (MemberEpoch -1) a group that does not exist."""
    return {"GroupId": names("group"), "MemberId": str(uuid.uuid4()), "MemberEpoch": -1, "RebalanceTimeoutMs": -1}


def _share_fetch(names):
    return {"GroupId": names("group"), "MemberId": str(uuid.uuid4()), "ShareSessionEpoch": 0, "MaxWaitMs": 0,
            "MinBytes": 0, "MaxBytes": 65536, "MaxRecords": 10, "BatchSize": 10,
            "Topics": [{"TopicId": uuid.uuid4(), "Partitions": [{"PartitionIndex": 0, "AcknowledgementBatches": []}]}],
            "ForgottenTopicsData": []}


def _raft_voter(names):
    return {"ClusterId": names("cluster"), "TimeoutMs": 1000, "VoterId": ABSENT_ID, "VoterDirectoryId": uuid.uuid4(),
            "Listeners": [], "AckWhenCommitted": True}


def _described_groups(names):
    return {"GroupIds": [names("group")], "IncludeAuthorizedOperations": False}


#: api key -> harmless request body builder: every client-facing key Kafka 4 defines (NOT_CLIENT_FACING aside), so
#: that a key the target does not advertise is listed UNIMPLEMENTED version by version
HARMLESS = {
    18: _api_versions, 3: _metadata, 0: _produce, 1: _fetch, 2: _list_offsets, 8: _offset_commit,
    9: _offset_fetch, 10: _find_coordinator, 12: _heartbeat, 13: _leave_group, 14: _sync_group,
    15: _describe_groups, 16: _list_groups, 19: _create_topics, 20: _delete_topics, 22: _init_producer_id,
    32: _describe_configs, 33: _alter_configs, 44: _alter_configs, 21: _delete_records,
    23: _offset_for_leader_epoch, 37: _create_partitions, 42: _delete_groups, 47: _offset_delete,
    60: _describe_cluster, 61: _describe_producers,
    11: _join_group, 17: _sasl_handshake, 36: _sasl_authenticate,
    24: _add_partitions_to_txn, 25: _add_offsets_to_txn, 26: _end_txn, 28: _txn_offset_commit,
    29: _acl_filter, 30: _create_acls, 31: lambda names: {"Filters": [_acl_filter(names)]},
    34: _alter_replica_log_dirs, 35: lambda names: {"Topics": [{"Topic": names("absent"), "Partitions": [0]}]},
    38: _create_delegation_token, 39: lambda names: {"Hmac": names("hmac").encode(), "RenewPeriodMs": 1},
    40: lambda names: {"Hmac": names("hmac").encode(), "ExpiryTimePeriodMs": -1},
    41: lambda names: {"Owners": [{"PrincipalType": "User", "PrincipalName": names("nobody")}]},
    43: _elect_leaders, 45: _alter_partition_reassignments,
    46: lambda names: {"TimeoutMs": 1000, "Topics": [{"Name": names("absent"), "PartitionIndexes": [0]}]},
    48: lambda names: {"Components": [{"EntityType": "client-id", "MatchType": 0, "Match": names("client")}],
                       "Strict": True},
    49: _alter_client_quotas,
    50: lambda names: {"Users": [{"Name": names("nobody")}]},
    51: lambda names: {"Deletions": [{"Name": names("nobody"), "Mechanism": 1}], "Upsertions": []},
    55: lambda names: {"Topics": [{"TopicName": "__cluster_metadata", "Partitions": [{"PartitionIndex": 0}]}]},
    57: _update_features, 64: lambda names: {"BrokerId": ABSENT_ID},
    65: lambda names: {"TransactionalIds": [names("txn")]},
    66: lambda names: {"StateFilters": [], "ProducerIdFilters": [UNKNOWN_PRODUCER_ID], "DurationFilter": -1,
                       "TransactionalIdPattern": None},
    68: _group_leave, 69: _described_groups,
    71: lambda names: {"ClientInstanceId": uuid.uuid4()},  # one telemetry instance more for the broker to remember
    72: lambda names: {"ClientInstanceId": ZERO_ID, "SubscriptionId": 0, "Terminating": False, "CompressionType": 0,
                       "Metrics": b""},  # a zero instance id: INVALID_REQUEST (42)
    74: lambda names: {"ResourceTypes": [TOPIC]},
    75: lambda names: {"Topics": [{"Name": names("absent")}], "ResponsePartitionLimit": 10, "Cursor": None},
    76: _group_leave, 77: _described_groups, 78: _share_fetch,
    79: lambda names: {"GroupId": names("group"), "MemberId": str(uuid.uuid4()), "ShareSessionEpoch": 1, "Topics": []},
    80: _raft_voter, 81: _raft_voter, 88: _group_leave, 89: _described_groups,
    90: lambda names: {"Groups": [{"GroupId": names("group"), "Topics": [{"TopicName": names("absent"),
                                                                          "Partitions": [0]}]}]},
    91: lambda names: {"GroupId": names("group"), "Topics": [{"TopicName": names("absent"), "Partitions": [
        {"PartitionIndex": 0, "StartOffset": 0}]}]},
    92: lambda names: {"GroupId": names("group"), "Topics": [{"TopicName": names("absent")}]},
}

# -- valid requests on real things: ErrorCode 0 is the answer at every advertised version ---------------------


class Things:
    """What the valid requests name: a topic (its id, where versions address topics by id), a group, names."""

    def __init__(self, topic: str, topic_id: uuid.UUID, names):
        self.topic, self.topic_id, self.names = topic, topic_id, names
        self.group = names("group")


#: target address -> the sweep's topic: created by the first case that needs it (a precondition, mirrored to the
#: oracle under --differential as every request is), named in every later case's transcript
_TOPICS: dict[tuple, str] = {}


def things(target) -> Things:
    key = tuple(target.address) if isinstance(target.address, (list, tuple)) else (target.address,)
    path = DataPath(target)
    if key not in _TOPICS:
        _TOPICS[key] = path.topic("versions", shared=True)
    name = _TOPICS[key]
    target.transcript.note(f"the sweep's topic: {name}")
    topic_id = ZERO_ID
    if path.advertised().get(3, (0, -1))[1] >= 10:  # asked in each case: an id the server chose is the case's
        with target.precondition(f"the id of topic {name}"):
            body = path.call(3, path.version(3, low=10), {"Topics": [{"Name": name, "TopicId": ZERO_ID}],
                                                         "AllowAutoTopicCreation": False}, "kafka.metadata.brokers")
            ids = [t["TopicId"] for t in body["Topics"] if t["Name"] == name and t["ErrorCode"] == errors.NONE]
            if not ids:
                raise Divergence(C["kafka.metadata.brokers"], f"topic {name} described, with its id",
                                 short(body["Topics"]))
            topic_id = ids[0]
    return Things(name, topic_id, target.unique)


def _valid_produce(t: Things) -> dict:
    batch = records.build_batch([b"wirecheck"], base_timestamp=int(time.time() * 1000))
    return {"TransactionalId": None, "Acks": 1, "TimeoutMs": 5000,
            "TopicData": [{"Name": t.topic, "TopicId": t.topic_id, "PartitionData": [{"Index": 0, "Records": batch}]}]}


def _valid_fetch(t: Things) -> dict:
    return {"ReplicaId": -1, "MaxWaitMs": 0, "MinBytes": 0, "MaxBytes": 65536, "IsolationLevel": 0,
            "SessionId": 0, "SessionEpoch": -1,
            "Topics": [{"Topic": t.topic, "TopicId": t.topic_id,
                        "Partitions": [{"Partition": 0, "FetchOffset": 0, "PartitionMaxBytes": 65536}]}]}


#: api key -> (a valid request on real things, the clause its ErrorCode 0 answer is: the API's own)
VALID = {
    18: (lambda t: _api_versions(t.names), "kafka.api-versions.advertised"),
    3: (lambda t: {"Topics": [{"Name": t.topic, "TopicId": ZERO_ID}], "AllowAutoTopicCreation": False},
        "kafka.metadata.brokers"),
    0: (_valid_produce, "kafka.produce.base-offset"),
    1: (_valid_fetch, "kafka.fetch.records"),
    2: (lambda t: {"ReplicaId": -1, "IsolationLevel": 0,
                   "Topics": [{"Name": t.topic, "Partitions": [{"PartitionIndex": 0, "Timestamp": -1}]}]},
        "kafka.list-offsets.earliest-latest"),
    9: (lambda t: {"GroupId": t.group, "Topics": [{"Name": t.topic, "PartitionIndexes": [0]}],
                   "Groups": [{"GroupId": t.group, "Topics": [{"Name": t.topic, "TopicId": t.topic_id,
                                                                 "PartitionIndexes": [0]}]}]},
        "kafka.commit.no-offset"),
    10: (lambda t: {"Key": t.group, "KeyType": 0, "CoordinatorKeys": [t.group]}, "kafka.group.find-coordinator"),
    19: (lambda t: _create_topics(t.names), "kafka.topics.create"),
    22: (lambda t: _init_producer_id(t.names), "kafka.idempotence.init-producer-id"),
    32: (lambda t: {"Resources": [{"ResourceType": 2, "ResourceName": t.topic, "ConfigurationKeys": None}],
                    "IncludeSynonyms": False, "IncludeDocumentation": False}, "kafka.configs.describe-topic"),
    60: (lambda t: _describe_cluster(t.names), "kafka.admin.describe-cluster"),
    61: (lambda t: {"Topics": [{"Name": t.topic, "PartitionIndexes": [0]}]}, "kafka.admin.describe-producers"),
}

#: api keys asked of the group's coordinator only: as clients do, the sweep finds it first (FindCoordinator), and
#: judges the valid request only where the coordinator is the target itself (a client would connect there)
TO_THE_COORDINATOR = {9}

#: api key -> the clause of the error path its harmless request walks (an unknown topic, group or member)
ERROR_PATHS = {
    3: "kafka.metadata.unknown-topic", 0: "kafka.produce.unknown-topic", 1: "kafka.fetch.unknown-topic",
    2: "kafka.list-offsets.unknown-topic", 32: "kafka.configs.unknown-topic", 12: "kafka.group.unknown-member",
    47: "kafka.admin.offset-delete-unknown-group", 42: "kafka.admin.delete-groups",
}

#: How long a "not yet" answer is asked again: Kafka's clients retry a RetriableException (Errors.java) after
#: retry.backoff.ms (100 ms, doubling to retry.backoff.max.ms 1 s, KIP-580) until default.api.timeout.ms (60 s);
#: a coordinator's first load took about 3 s on a busy two-core machine (Apache Kafka 4.4.0), so 15 s bounds it.
NOT_YET_WAIT_S = 15.0


#: keys the definitions hold that no client sends: WriteTxnMarkers (27) is the transaction coordinator's to the
#: partition leaders (a CLUSTER_ACTION, ApiKeys.clusterAction)
NOT_CLIENT_FACING = {27}

#: (api key, version) a broker may advertise without implementing: Produce 0-2 (KAFKA-18659, Kafka 4 keeps
#: advertising them for old librdkafka and rejects them by closing or with UNSUPPORTED_VERSION).
ADVERTISED_ONLY = {(0, 0), (0, 1), (0, 2)}

MATRIX = [(messages.api_name(key), version) for key in HARMLESS for version in messages.encodable_versions(key)]


@case(CLAUSE)
@pytest.mark.parametrize(("api", "api_version"), MATRIX, ids=[f"{a}-v{v}" for a, v in MATRIX])
def test_advertised_version_is_implemented(target, api, api_version):
    api_key = messages.api_key_by_name(api)
    client = Kafka(target)
    client.denial_blocks = False  # TOPIC_AUTHORIZATION_FAILED at this version's shape is still that version
    client.require(api_key, api_version)
    if (api_key, api_version) in ADVERTISED_ONLY:
        target.beyond_comparison(f"{api} v{api_version} may be advertised only (KAFKA-18659): answered, refused or "
                                 "closed, each permitted")
        correlation_id = client.send(api_key, api_version, HARMLESS[api_key](target.unique))
        check_advertised_only(client, api, api_key, api_version, correlation_id)
        return
    valid = VALID.get(api_key)
    if valid is not None:
        probe_valid(target, api, api_key, api_version, *valid)
    # the error path: answered at this version (a close or a crash there is the path's own clause once the valid
    # request was served; without a valid one, a close is this version not implemented)
    path_clause = ERROR_PATHS.get(api_key, CLAUSE) if valid is not None else CLAUSE
    correlation_id = client.send(api_key, api_version, HARMLESS[api_key](target.unique))
    answer = client.receive(api_key, api_version, correlation_id, path_clause)
    if answer.get("ErrorCode") == errors.UNSUPPORTED_VERSION:
        raise Divergence(C[CLAUSE], f"{api} v{api_version} handled (it is advertised)",
                         f"ErrorCode 35 UNSUPPORTED_VERSION: {short(answer)}")
    if errors.UNKNOWN_SERVER_ERROR in errors.error_codes(answer):
        raise Divergence(C[ERROR_PATHS.get(api_key, CLAUSE)], f"{api} v{api_version}: the error answer its "
                         "harmless request (names that do not exist) calls for", f"UNKNOWN_SERVER_ERROR (-1): "
                         f"{short(answer)}")


def probe_valid(target, api: str, api_key: int, api_version: int, build, own_clause: str) -> None:
    """A valid request on real things at this version: decoded at the version (this case's clause) and answered
    ErrorCode 0 everywhere (the API's own clause), once the retriable "not yet" answers are past."""
    client = DataPath(target)  # its own connection: a denial (ACLs on a user's cluster) blocks, it judges nothing
    t = things(target)
    if api_key in TO_THE_COORDINATOR and not coordinator_is_the_target(target, client, t.group):
        return
    answer = until_ready(target, client, api_key, api_version, build(t), CLAUSE)
    codes = errors.error_codes(answer) - {errors.NONE}
    if errors.UNSUPPORTED_VERSION in codes:
        raise Divergence(C[CLAUSE], f"{api} v{api_version} handled (it is advertised)",
                         f"ErrorCode 35 UNSUPPORTED_VERSION: {short(answer)}")
    if codes:
        raise Divergence(C[own_clause], f"a valid {api} v{api_version} request answered with ErrorCode 0",
                         ", ".join(f"ErrorCode {c} ({errors.name(c)})" for c in sorted(codes)) +
                         f": {short(answer)}")


def until_ready(target, client, api_key: int, api_version: int, body: dict, clause_id: str) -> dict:
    """The answer, asked again while it carries a retriable code (the server's "not yet"), for NOT_YET_WAIT_S."""
    deadline = time.monotonic() + NOT_YET_WAIT_S
    backoff = 0.1
    while True:
        answer = client.call(api_key, api_version, body, clause_id)
        waiting = sorted(c for c in errors.error_codes(answer) if errors.is_retriable(c))
        if not waiting or time.monotonic() + backoff > deadline:
            return answer
        target.transcript.note(f"retriable {waiting}: {messages.api_name(api_key)} v{api_version} asked again in "
                               f"{backoff:g} s")
        time.sleep(backoff)
        backoff = min(backoff * 2, 1.0)


def coordinator_is_the_target(target, client, group: str) -> bool:
    """FindCoordinator for ``group`` (ready, or kafka.group.find-coordinator breaks): whether it names the target."""
    with target.precondition(f"the coordinator of group {group} found"):
        version = client.version(10)
        answer = until_ready(target, client, 10, version, {"Key": group, "KeyType": 0, "CoordinatorKeys": [group]},
                             "kafka.group.find-coordinator")
        entry = answer["Coordinators"][0] if version >= 4 else answer
        if entry["ErrorCode"] != errors.NONE:
            raise Divergence(C["kafka.group.find-coordinator"], f"the coordinator of {group} (ErrorCode 0)",
                             f"ErrorCode {entry['ErrorCode']} ({errors.name(entry['ErrorCode'])})")
    here = (entry["Host"], entry["Port"]) == tuple(target.address)
    if not here:
        target.transcript.note(f"{group}'s coordinator is {entry['Host']}:{entry['Port']}, not the target: the "
                               "valid request is not judged here")
    return here


def check_advertised_only(client, api, api_key, api_version, correlation_id):
    """A version a broker may advertise but reject: closing is fine, and so is a well-formed answer."""
    reply = client.session.recv()
    if reply.ended:
        return
    if not reply.is_frame:
        raise Divergence(C[CLAUSE], f"a {api} v{api_version} response, or the connection closed", str(reply))
    try:
        messages.decode_response(api_key, api_version, reply.frame)
    except messages.DecodeError as exc:
        raise Divergence(C[CLAUSE], f"a {api} v{api_version} response, or the connection closed",
                         f"undecodable: {exc}") from None


SHAPES = [(messages.api_name(key), version) for key in (3, 18) for version in messages.encodable_versions(key)]


@case("kafka.encoding.response-shape")
@pytest.mark.parametrize(("api", "api_version"), SHAPES, ids=[f"{a}-v{v}" for a, v in SHAPES])
def test_response_has_exactly_the_requested_versions_shape(target, api, api_version):
    # Metadata and ApiVersions gain fields in most versions: an answer in a neighbouring version's layout, or
    # with a tagged-field section in a non-flexible version, fails the strict decode.
    api_key = messages.api_key_by_name(api)
    client = Kafka(target)
    client.require(api_key, api_version)
    client.call(api_key, api_version, HARMLESS[api_key](target.unique), "kafka.encoding.response-shape")


def test_matrix_covers_every_version_of_the_harmless_apis():
    assert len(MATRIX) > 100
    assert ("Fetch", 18) in MATRIX and ("Produce", 0) in MATRIX


def test_matrix_covers_every_client_facing_api_key():
    assert set(HARMLESS) == set(messages.api_keys()) - NOT_CLIENT_FACING
