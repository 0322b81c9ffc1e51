"""Topics, Metadata, coordinators, groups, commits and idempotent produce."""

from __future__ import annotations

import time

import pytest

from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import (
    READY_WAIT_S,
    RETRY_BACKOFF_S,
    C,
    DataPath,
    expect,
    expect_produced,
    short)
from wirecheck.suites.kafka.topics_groups import (PROTOCOL_METADATA, assignment, code_of, committed, create,
                                                  fetch_committed, find_coordinator, group_state, heartbeat,
                                                  idempotent_batch, init_producer, join, join_request,
                                                  join_single_member, joined_group, partition_count, subscription,
                                                  sync_single_member)

case = pytest.mark.case


# -- topics and metadata ---------------------------------------------------------------------------------------


@case("kafka.topics.already-exists")
def test_creating_an_existing_topic_fails(target):
    client = DataPath(target)
    name = target.unique("dup")
    expect("kafka.topics.create", create(client, name, 1, "kafka.topics.create"), errors.NONE)
    expect("kafka.topics.already-exists", create(client, name, 1, "kafka.topics.already-exists"),
           errors.TOPIC_ALREADY_EXISTS)


@case("kafka.topics.invalid-partitions")
@pytest.mark.parametrize("partitions", [0, -5])
def test_invalid_partition_count(target, partitions):
    client = DataPath(target)
    expect("kafka.topics.invalid-partitions",
           create(client, target.unique("bad"), partitions, "kafka.topics.invalid-partitions"),
           errors.INVALID_PARTITIONS)


@case("kafka.topics.invalid-replication-factor")
@pytest.mark.parametrize("above", [1, 100, None], ids=["brokers+1", "brokers+100", "int16-max"])
def test_replication_factor_above_the_broker_count(target, above):
    clause = "kafka.topics.invalid-replication-factor"
    client = DataPath(target)
    body = client.call(3, client.version(3, low=4), {"Topics": [], "AllowAutoTopicCreation": False}, clause)
    replication = 0x7FFF if above is None else len(body["Brokers"]) + above
    expect(clause, create(client, target.unique("rf"), 1, clause, replication), errors.INVALID_REPLICATION_FACTOR)


@case("kafka.topics.create")
def test_created_topic_has_its_partitions(target):
    client = DataPath(target)
    name = target.unique("three")
    expect("kafka.topics.create", create(client, name, 3, "kafka.topics.create"), errors.NONE)
    client.wait_until_usable(name, 3)
    body = client.call(3, client.version(3, low=4), {"Topics": [{"Name": name}], "AllowAutoTopicCreation": False},
                       "kafka.topics.create")
    partitions = sorted(p["PartitionIndex"] for p in body["Topics"][0]["Partitions"])
    if partitions != [0, 1, 2]:
        raise Divergence(C["kafka.topics.create"], "partitions [0, 1, 2]", short(partitions))


@case("kafka.metadata.empty-list")
def test_empty_topic_list_lists_no_topics(target):
    client = DataPath(target)
    client.topic(shared=True)  # some topic exists
    body = client.call(3, client.version(3, low=4), {"Topics": [], "AllowAutoTopicCreation": False},
                       "kafka.metadata.empty-list")
    if body["Topics"]:
        raise Divergence(C["kafka.metadata.empty-list"], "no topics", short([t["Name"] for t in body["Topics"]]))


@case("kafka.metadata.brokers")
def test_metadata_lists_brokers_and_leaders(target):
    client = DataPath(target)
    name = client.topic(shared=True)
    body = client.call(3, client.version(3, low=4), {"Topics": [{"Name": name}], "AllowAutoTopicCreation": False},
                       "kafka.metadata.brokers")
    nodes = {b["NodeId"] for b in body["Brokers"] if b["Host"] and 0 < b["Port"] < 65536}
    if not nodes:
        raise Divergence(C["kafka.metadata.brokers"], "at least one broker with a host and port",
                         short(body["Brokers"]))
    leaders = {p["LeaderId"] for t in body["Topics"] for p in t["Partitions"]}
    if not leaders <= nodes:
        raise Divergence(C["kafka.metadata.brokers"], f"leaders among the brokers {sorted(nodes)}",
                         f"leaders {sorted(leaders)}")


@case("kafka.metadata.unknown-topic")
def test_metadata_without_auto_create_reports_unknown_topic(target):
    client = DataPath(target)
    name = target.unique("absent")
    # asked twice: a broker that creates the topic anyway may answer the first as Apache Kafka 4 answers the
    # Metadata that auto-creates (3 too: DefaultAutoTopicCreationManager.sendCreateTopicRequest); the second then
    # lists the topic it created
    for _ in range(2):
        body = client.call(3, client.version(3, low=4), {"Topics": [{"Name": name}], "AllowAutoTopicCreation": False},
                           "kafka.metadata.unknown-topic")
        topics = [t for t in body["Topics"] if t["Name"] == name]
        if not topics:
            raise Divergence(C["kafka.metadata.unknown-topic"], f"an entry for {name} with error 3",
                             short(body["Topics"]))
        expect("kafka.metadata.unknown-topic", code_of(topics[0]), errors.UNKNOWN_TOPIC_OR_PARTITION)


# -- coordinators, groups ----------------------------------------------------------------------------------


@case("kafka.metadata.invalid-topic")
@pytest.mark.parametrize("name", ["", ".", "..", "x" * 250, "bad name", "caf\u00e9"],
                         ids=["empty", "dot", "dotdot", "250-chars", "space", "non-ascii"])
def test_metadata_names_an_invalid_topic_invalid(target, name):
    """Metadata for a name Kafka's Topic.validate rejects, with auto-creation on: the answer's entry for it carries
    INVALID_TOPIC_EXCEPTION (a SHOULD: another code is NON-STRICT, see the clause's decision)."""
    client = DataPath(target)
    body = client.call(3, client.version(3, low=4), {"Topics": [{"Name": name}], "AllowAutoTopicCreation": True},
                       "kafka.metadata.invalid-topic")
    entries = [t for t in body["Topics"] if t["Name"] == name]
    if len(entries) != 1:
        raise Divergence(C["kafka.metadata.invalid-topic"], f"one entry for {name!r}", short(body["Topics"]))
    expect("kafka.metadata.invalid-topic", entries[0]["ErrorCode"], errors.INVALID_TOPIC_EXCEPTION)


@case("kafka.group.find-coordinator")
def test_coordinator_is_a_known_broker(target):
    client = DataPath(target)
    coordinator = find_coordinator(client, target.unique("g"))
    body = client.call(3, client.version(3, low=4), {"Topics": [], "AllowAutoTopicCreation": False},
                       "kafka.group.find-coordinator")
    brokers = {(b["NodeId"], b["Host"], b["Port"]) for b in body["Brokers"]}
    if (coordinator["NodeId"], coordinator["Host"], coordinator["Port"]) not in brokers:
        raise Divergence(C["kafka.group.find-coordinator"], f"one of the Metadata brokers {sorted(brokers)}",
                         f"{coordinator['NodeId']} {coordinator['Host']}:{coordinator['Port']}")


@case("kafka.group.member-id-required")
def test_first_join_requires_a_member_id(target):
    client = DataPath(target)
    version = client.version(11, 9, low=4)
    answer = join(client, target.unique("g"), "", version, "kafka.group.member-id-required")
    expect("kafka.group.member-id-required", answer["ErrorCode"], errors.MEMBER_ID_REQUIRED)
    if not answer["MemberId"]:
        raise Divergence(C["kafka.group.member-id-required"], "a member id to rejoin with", "an empty MemberId")


@case("kafka.group.leader-metadata")
def test_the_only_member_leads_and_gets_its_assignment(target):
    client = DataPath(target)
    group = target.unique("g")
    with target.precondition("a topic to subscribe to, the group coordinator found"):
        topic = client.topic(shared=True)
        metadata, assigned = subscription(topic), assignment(topic, partition_count(client, topic))
        find_coordinator(client, group)
    _, joined = join_single_member(client, group, metadata)
    member = joined["MemberId"]
    if joined["Leader"] != member or [m["MemberId"] for m in joined["Members"]] != [member]:
        raise Divergence(C["kafka.group.leader-metadata"], "the only member is the leader and sees itself",
                         short({"Leader": joined["Leader"], "Members": joined["Members"]}))
    if joined["Members"][0]["Metadata"] != metadata:
        raise Divergence(C["kafka.group.leader-metadata"], "the leader gets each member's protocol metadata",
                         short(joined["Members"][0]["Metadata"]))
    synced = sync_single_member(client, group, member, joined["GenerationId"], assigned,
                                "kafka.group.leader-metadata")
    expect("kafka.group.leader-metadata", synced["ErrorCode"], errors.NONE)
    if synced["Assignment"] != assigned:
        raise Divergence(C["kafka.group.leader-metadata"], "the leader's assignment back", short(synced))


@case("kafka.group.illegal-generation")
def test_heartbeat_of_another_generation_is_illegal(target):
    client = DataPath(target)
    group, _, member, generation, _, _ = joined_group(target, client)
    clause = "kafka.group.illegal-generation"
    expect(clause, heartbeat(client, group, generation, member, clause), errors.NONE)
    expect(clause, heartbeat(client, group, generation + 5, member, clause), errors.ILLEGAL_GENERATION)


@case("kafka.group.illegal-generation")
def test_sync_of_another_generation_is_illegal(target):
    client = DataPath(target)
    group, _, member, generation, _, assigned = joined_group(target, client)
    clause = "kafka.group.illegal-generation"
    # the group is stable and the member known, so only the generation can make this SyncGroup fail
    synced = sync_single_member(client, group, member, generation + 5, assigned, clause)
    expect(clause, synced["ErrorCode"], errors.ILLEGAL_GENERATION)


@case("kafka.group.unknown-member")
def test_heartbeat_of_an_unknown_member(target):
    client = DataPath(target)
    group, _, _, generation, _, _ = joined_group(target, client)
    clause = "kafka.group.unknown-member"
    expect(clause, heartbeat(client, group, generation, "wirecheck-unknown-member", clause), errors.UNKNOWN_MEMBER_ID)


@case("kafka.group.generation")
def test_a_rebalance_moves_the_generation_on(target):
    client = DataPath(target)
    group, version, member, generation, metadata, _ = joined_group(target, client)
    rejoined = join(client, group, member, version, "kafka.group.generation", metadata)
    expect("kafka.group.generation", rejoined["ErrorCode"], errors.NONE)
    if rejoined["GenerationId"] <= generation:
        raise Divergence(C["kafka.group.generation"], f"a generation above {generation} after a rebalance",
                         f"generation {rejoined['GenerationId']}")


# -- commits --------------------------------------------------------------------------------------------------


@case("kafka.commit.round-trip")
def test_committed_offset_is_fetched_back(target):
    client = DataPath(target)
    topic, group = client.topic(shared=True), target.unique("g")
    with target.precondition("the group coordinator found"):
        find_coordinator(client, group)
    committed(client, group, topic, 42)


@case("kafka.commit.no-offset")
def test_uncommitted_partition_fetches_minus_one(target):
    client = DataPath(target)
    topic, group = client.topic(shared=True), target.unique("g")
    with target.precondition("the group coordinator found"):
        find_coordinator(client, group)
    got = fetch_committed(client, group, topic, "kafka.commit.no-offset")
    if got != -1:
        raise Divergence(C["kafka.commit.no-offset"], "offset -1", f"{got}")


# -- idempotence ----------------------------------------------------------------------------------------------


@case("kafka.idempotence.init-producer-id")
def test_init_producer_id(target):
    init_producer(DataPath(target))


@case("kafka.idempotence.out-of-order")
def test_sequence_gap_is_out_of_order(target):
    client = DataPath(target)
    topic = client.topic(shared=True)
    producer = init_producer(client)
    clause = "kafka.idempotence.out-of-order"
    expect_produced(client.produce(topic, idempotent_batch([b"a", b"b"], producer, 0), clause_id=clause), clause)
    gap = client.produce(topic, idempotent_batch([b"c"], producer, 5), clause_id=clause)
    expect_produced(gap, clause, errors.OUT_OF_ORDER_SEQUENCE_NUMBER)


@case("kafka.idempotence.duplicate")
def test_duplicate_batch_is_not_appended_twice(target):
    client = DataPath(target)
    topic = client.topic(shared=True)
    producer = init_producer(client)
    marker = target.unique("dup").encode()  # found by content: other writers may share the partition
    batch = idempotent_batch([marker, b"b"], producer, 0)
    first = expect_produced(client.produce(topic, batch, clause_id="kafka.idempotence.duplicate"),
                            "kafka.idempotence.duplicate")
    again = client.produce(topic, batch, clause_id="kafka.idempotence.duplicate")
    expect_produced(again, "kafka.idempotence.duplicate", errors.NONE, errors.DUPLICATE_SEQUENCE_NUMBER)
    with target.precondition(f"{topic}-0 read back from offset {first['BaseOffset']}"):
        _, found = client.records_from(topic, first["BaseOffset"], "kafka.idempotence.duplicate")
    stored = [value for _, _, value in found]
    if stored.count(marker) != 1:
        raise Divergence(C["kafka.idempotence.duplicate"], "the batch stored once (the retry not appended)",
                         f"stored {stored.count(marker)} times")


@case("kafka.group.invalid-session-timeout")
@pytest.mark.parametrize("timeout_ms", [1, 2**31 - 1], ids=["1ms", "int32-max"])
def test_session_timeout_out_of_bounds(target, timeout_ms):
    client = DataPath(target)
    group = target.unique("g")
    with target.precondition("the group coordinator found"):
        find_coordinator(client, group)
    version = client.version(11, 9)
    answer = client.call(11, version, {
        "GroupId": group, "SessionTimeoutMs": timeout_ms, "RebalanceTimeoutMs": 10000, "MemberId": "",
        "GroupInstanceId": None, "ProtocolType": "consumer",
        "Protocols": [{"Name": "range", "Metadata": PROTOCOL_METADATA}]}, "kafka.group.invalid-session-timeout")
    expect("kafka.group.invalid-session-timeout", answer["ErrorCode"], errors.INVALID_SESSION_TIMEOUT)


@case("kafka.group.rebalance-in-progress")
def test_heartbeat_during_rebalance(target):
    first = DataPath(target)
    group, version, member, generation, metadata, _ = joined_group(target, first)
    # a second member arrives on its own connection; its join stays pending until the first one rejoins
    second = DataPath(target)
    second.session.deadline = max(second.session.deadline, 12.0)
    with target.precondition("a second member asks to join"):
        answer = join(second, group, "", version, "kafka.group.member-id-required", metadata)
        if version >= 4:  # its own clause: a direct join waits out the rebalance, which evicts the first member
            expect("kafka.group.member-id-required", answer["ErrorCode"], errors.MEMBER_ID_REQUIRED)
    if version >= 4:
        second.send(11, version, join_request(group, answer["MemberId"], metadata))
    # The join is not answered until the rebalance ends, and a request on another connection may be handled before
    # it: Kafka answers REBALANCE_IN_PROGRESS once the join has put the group in PreparingRebalance
    # (GroupMetadataManager.classicGroupHeartbeatToClassicGroup: PREPARING_REBALANCE), and DescribeGroups shows it.
    observer = DataPath(target)
    with target.precondition(f"group {group} rebalancing (DescribeGroups: PreparingRebalance)"):
        deadline = time.monotonic() + READY_WAIT_S
        while (state := group_state(observer, group, "kafka.group.rebalance-in-progress")) != "PreparingRebalance":
            if time.monotonic() > deadline:
                raise Divergence(C["kafka.group.rebalance-in-progress"], "the group PreparingRebalance once a new "
                                 "member asked to join", f"GroupState {state!r} after {READY_WAIT_S:g} s")
            time.sleep(RETRY_BACKOFF_S)
    clause = "kafka.group.rebalance-in-progress"
    expect(clause, heartbeat(first, group, generation, member, clause), errors.REBALANCE_IN_PROGRESS)
