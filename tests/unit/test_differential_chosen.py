"""Values a server chooses under --differential (targets/server_chosen.py, ProtocolSpec.chosen_fields): Kafka's
broker ids are mapped one to one between the target and the oracle by what the field means, compared through
that mapping instead of stopping the comparison, and written back into the requests that carry them."""

from __future__ import annotations

import importlib.resources
import json
import re
import uuid
from fnmatch import fnmatchcase

from wirecheck.protocols.kafka import messages
from wirecheck.protocols.registry import all_specs
from wirecheck.targets.differential import Comparator
from wirecheck.targets.server_chosen import ServerChosen, _encoded
from wirecheck.targets.transport.outcome import Outcome, Reply

KAFKA = all_specs()["kafka"]
COMPARE = Comparator(KAFKA, KAFKA.primary, across_implementations=True, sent=b"topic t")  # names topic "t"
METADATA_V12 = messages.encode_request(3, 12, 7, "c", {"Topics": None, "AllowAutoTopicCreation": False,
                                                       "IncludeTopicAuthorizedOperations": False})
FIND_COORDINATOR_V4 = messages.encode_request(10, 4, 8, "c", {"KeyType": 0, "CoordinatorKeys": ["g"]})


def metadata(node: int, leader: int | None = None, replicas: list[int] | None = None) -> Reply:
    leader = node if leader is None else leader
    topic = {"ErrorCode": 0, "Name": "t", "TopicId": uuid.UUID(int=1), "IsInternal": False,
             "Partitions": [{"ErrorCode": 0, "PartitionIndex": 0, "LeaderId": leader, "LeaderEpoch": 0,
                             "ReplicaNodes": replicas or [node], "IsrNodes": [node], "OfflineReplicas": []}],
             "TopicAuthorizedOperations": -2147483648}
    return Reply(Outcome.FRAME, messages.encode_response(3, 12, 7, {
        "ThrottleTimeMs": 0, "Brokers": [{"NodeId": node, "Host": "h", "Port": 1, "Rack": None}], "ClusterId": "c",
        "ControllerId": node, "Topics": [topic]}))


def coordinator(node: int) -> Reply:
    return Reply(Outcome.FRAME, messages.encode_response(10, 4, 8, {"ThrottleTimeMs": 0, "Coordinators": [
        {"Key": "g", "NodeId": node, "Host": "h", "Port": 1, "ErrorCode": 0, "ErrorMessage": None}]}))


def test_a_mapping_is_learnt_at_first_sight_and_held_to():
    chosen = ServerChosen()
    assert chosen.same("broker-id", 0, 111)
    assert chosen.same("broker-id", 0, 111) and chosen.same("broker-id", [0, 0], [111, 111])
    assert not chosen.same("broker-id", 0, 112)  # 0 is 111 on the other server, not 112
    assert not chosen.same("broker-id", 1, 111)  # one to one: 111 is already broker 0's
    assert chosen.same("broker-id", 1, 112)  # a second broker gets a mapping of its own
    assert not chosen.same("broker-id", [0], [111, 112])  # a list keeps its length and order
    assert not chosen.same("broker-id", [0, 1], [112, 111])
    assert chosen.same("broker-id", -1, -1) and not chosen.same("broker-id", -1, 111)  # -1: no broker, no choice
    assert chosen.same("broker-id", "0", "111") and not chosen.same("broker-id", "0", "1")  # a config resource
    assert chosen.same("other-kind", 0, 5)  # each kind maps on its own


def test_a_broker_id_chosen_otherwise_is_no_difference_but_a_broken_mapping_is():
    chosen = ServerChosen()
    assert COMPARE.difference(METADATA_V12, metadata(0), metadata(111), chosen) is None
    assert COMPARE.difference(FIND_COORDINATOR_V4, coordinator(0), coordinator(111), chosen) is None
    path, ours, theirs = COMPARE.difference(FIND_COORDINATOR_V4, coordinator(0), coordinator(5), chosen)
    assert path.endswith("CoordinatorV4.NodeId") and (ours, theirs) == (0, 5)
    path, _, _ = COMPARE.difference(METADATA_V12, metadata(0, leader=-1), metadata(111), ServerChosen())
    assert path.endswith(".LeaderId")  # no leader there, a leader here: a difference
    # a replay compares a server with itself: without a mapping the ids must be equal
    assert COMPARE.difference(METADATA_V12, metadata(0), metadata(111)) is not None


def test_requests_carry_the_oracles_broker_ids():
    chosen = ServerChosen.for_spec(KAFKA)
    create = messages.encode_request(19, 7, 9, "c", {"Topics": [{
        "Name": "t", "NumPartitions": -1, "ReplicationFactor": -1,
        "Assignments": [{"PartitionIndex": 0, "BrokerIds": [0]}], "Configs": []}],
        "timeoutMs": 1000, "validateOnly": False})
    describe = messages.encode_request(32, 4, 10, "c", {"Resources": [
        {"ResourceType": 4, "ResourceName": "0", "ConfigurationKeys": None},
        {"ResourceType": 2, "ResourceName": "0", "ConfigurationKeys": None}],  # a topic named "0" stays
        "IncludeSynonyms": False, "IncludeDocumentation": False})
    assert chosen.apply(create) == create  # nothing learnt yet: the bytes as the case wrote them
    assert COMPARE.difference(METADATA_V12, metadata(0), metadata(111), chosen) is None
    body = messages.decode_request(chosen.apply(create))["body"]
    assert body["Topics"][0]["Assignments"][0]["BrokerIds"] == [111]
    resources = messages.decode_request(chosen.apply(describe))["body"]["Resources"]
    assert [r["ResourceName"] for r in resources] == ["111", "0"]
    fetch = messages.encode_request(1, 12, 11, "c", {"ReplicaId": -1, "MaxWaitMs": 0, "MinBytes": 1,
                                                     "MaxBytes": 100, "IsolationLevel": 0, "SessionId": 0,
                                                     "SessionEpoch": -1, "Topics": [], "ForgottenTopicsData": [],
                                                     "RackId": ""})
    assert chosen.apply(fetch) == fetch  # a client's ReplicaId -1 names no broker
    assert chosen.apply(b"\x00\x00\x00\x02\xff\xff") == b"\x00\x00\x00\x02\xff\xff"  # hostile bytes go as sent


def _broker_id_fields() -> set[tuple[str, str]]:
    """(message name, leaf field) of every field Apache Kafka's message JSON marks "entityType": "brokerId"."""
    comment = re.compile(r"^\s*//.*$", re.MULTILINE)
    found = set()

    def walk(fields, message):
        for field in fields or ():
            if field.get("entityType") == "brokerId":
                found.add((message, field["name"]))
            walk(field.get("fields"), message)

    for resource in importlib.resources.files("kafka.protocol.schemas.resources").iterdir():
        if resource.name.endswith(".json"):
            definition = json.loads(comment.sub("", resource.read_text()))
            walk(definition.get("fields"), definition["name"])
            for struct in definition.get("commonStructs", ()):
                walk(struct.get("fields"), definition["name"])
    return found


def test_every_broker_id_field_of_the_message_json_is_declared():
    declared = {**KAFKA.chosen_fields, **KAFKA.chosen_request_fields}
    fields = _broker_id_fields()
    assert len(fields) > 20
    missing = [(message, name) for message, name in fields
               if not any(fnmatchcase(f"{message}V1.X.{name}", pattern) or fnmatchcase(f"{message}.X.{name}", pattern)
                          or fnmatchcase(f"{message}.{name}", pattern) for pattern in declared)]
    assert not missing, missing


def test_a_counted_kind_agrees_on_any_count_but_not_on_a_sentinel():
    """Group epochs count each coordinator's own steps: 1 here and 2 there agree, and so do 2 and 4 afterwards;
    a join's 0 or a leave's -1 agrees only with itself; a request carries the oracle's count answered beside the
    target's, and a count neither answered moves by the latest difference, so a made-up future epoch stays ahead."""
    chosen = ServerChosen(sentinels={"group-epoch": (0, -1, -2)}, counters=("group-epoch",))
    assert chosen.same("group-epoch", 1, 2) and chosen.mapped_value("group-epoch", 1) == 2
    assert chosen.mapped_value("group-epoch", 0) == 0 and chosen.mapped_value("group-epoch", -1) == -1
    assert chosen.same("group-epoch", 0, 0) and not chosen.same("group-epoch", 0, 3)
    assert not chosen.same("group-epoch", -1, 4)
    assert chosen.same("group-epoch", 2, 4)  # the oracle counted a step more: current 2 is its 4
    assert chosen.mapped_value("group-epoch", 2) == 4 and chosen.mapped_value("group-epoch", 1) == 2
    assert chosen.mapped_value("group-epoch", 7) == 9  # a future epoch no server answered stays ahead of both


def test_a_counted_kind_is_counted_per_scope():
    """Two members of one group stand at different epochs: each member's count maps on its own (the MemberId beside
    it), so a request carrying one member's epoch never gets the other member's count from the oracle."""
    chosen = ServerChosen(sentinels={"group-epoch": (0, -1, -2)}, counters={"group-epoch": "MemberId"},
                          request_fields={"ConsumerGroupHeartbeatRequest.MemberEpoch": "group-epoch"})
    assert chosen.same("group-epoch", 5, 7, "a") and chosen.same("group-epoch", 5, 9, "b")
    assert chosen.mapped_value("group-epoch", 5, "a") == 7 and chosen.mapped_value("group-epoch", 5, "b") == 9
    assert chosen.mapped_value("group-epoch", 4, "b") == 8  # b's stale epoch stays stale by b's own difference
    request = {"MemberId": "b", "MemberEpoch": 5}
    assert chosen._rewrite("ConsumerGroupHeartbeatRequest.MemberEpoch", 5, request) == 9


def test_a_zero_uuid_is_never_carried_over():
    """One server answering a topic id where the other answers none (zero) must not make every later request that
    names a topic by name (TopicId zero) name the other server's topic by id."""
    real = uuid.uuid4()
    assert _encoded(uuid.UUID(int=0), real) is None and _encoded(real, uuid.UUID(int=0)) is None
    assert _encoded(real, uuid.uuid4()) is not None
