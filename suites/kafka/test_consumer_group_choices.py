"""KIP-848 where conforming brokers differ: the server assignor a member gets when it names none (the first of the
operator's group.consumer.assignors), and what a ConsumerGroupHeartbeat does to a classic group of the same id
(group.consumer.migration.policy). Each case checks only what every permitted reading gives alike.
"""

from __future__ import annotations

import pytest
from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, DataPath, expect, short
from wirecheck.suites.kafka.consumer_groups import (
    DESCRIBE,
    JOIN_GROUP,
    REBALANCE_TIMEOUT_MS,
    member,
    settle,
)
from wirecheck.suites.kafka.topics_groups import (
    assignment,
    committed,
    fetch_committed,
    find_coordinator,
    heartbeat,
    join,
    subscription,
    sync_single_member,
)

case = pytest.mark.case


def classic_group(target, topic: str, partitions: int) -> tuple[DataPath, str, str, int]:
    """A fresh classic group whose one member (of the consumer protocol) joined and synced, owning the topic:
    (its connection, the group, the member id, the generation). A precondition."""
    client, group = DataPath(target), target.unique("cg-classic")
    with target.precondition(f"classic group {group} joined and synced by its only member"):
        find_coordinator(client, group)
        version = client.version(JOIN_GROUP, 9)
        client.session.deadline = max(client.session.deadline, 12.0)  # a broker may delay the first rebalance
        member_id = ""
        for _ in range(2):  # v4+: MEMBER_ID_REQUIRED first, then the join with the id given
            joined = join(client, group, member_id, version, "kafka.group.member-id-required", subscription(topic))
            member_id = joined["MemberId"]
            if joined["ErrorCode"] != errors.MEMBER_ID_REQUIRED:
                break
        expect("kafka.group.member-id-required", joined["ErrorCode"], errors.NONE)
        synced = sync_single_member(client, group, member_id, joined["GenerationId"], assignment(topic, partitions),
                                    "kafka.group.leader-metadata")
        expect("kafka.group.leader-metadata", synced["ErrorCode"], errors.NONE)
    return client, group, member_id, joined["GenerationId"]


def describe(client: DataPath, group: str, clause: str) -> dict:
    body = client.call(DESCRIBE, client.version(DESCRIBE, 1), {"GroupIds": [group],
                                                               "IncludeAuthorizedOperations": False}, clause)
    return body["Groups"][0]


@case("kafka.consumer-group.default-assignor")
def test_a_member_naming_no_assignor_gets_a_valid_assignment(target):
    clause = "kafka.consumer-group.default-assignor"
    a = member(target, 3)
    b = member(target, group=a.group, topic=a.topic)
    with target.precondition(f"two members joined group {a.group}"):
        a.join()
        b.join()
    everything = a.everything()

    def balanced() -> bool:
        counts = sorted((len(a.owned), len(b.owned)))
        return a.owned | b.owned == everything and not a.owned & b.owned and counts[1] - counts[0] <= 1

    # each reports what it was last answered: revocations acknowledged, then the partitions taken over
    settle(clause, balanced, f"the {a.partitions} partitions split between the two members, each once, within one "
                             "of each other", [a, b])
    group = describe(a.client, a.group, clause)
    expect(clause, group["ErrorCode"], errors.NONE)
    if not group["AssignorName"]:
        raise Divergence(C[clause], "AssignorName naming the server assignor used", short(group))


@case("kafka.consumer-group.classic-upgrade")
def test_a_heartbeat_takes_over_an_empty_classic_group(target):
    clause = "kafka.consumer-group.classic-upgrade"
    m = member(target)
    # read back too: a commit not stored is kafka.commit.round-trip's failure, not the conversion's
    with target.precondition(f"an offset committed into group {m.group} (an Empty classic group)"):
        committed(m.client, m.group, m.topic, 7)
    answer = m.send(clause, MemberEpoch=0, RebalanceTimeoutMs=REBALANCE_TIMEOUT_MS, SubscribedTopicNames=[m.topic],
                    TopicPartitions=[])
    expect(clause, answer["ErrorCode"], errors.NONE)
    kept = fetch_committed(m.client, m.group, m.topic, clause)
    if kept != 7:
        raise Divergence(C[clause], "the committed offset 7 kept through the conversion", f"committed offset {kept}")


@case("kafka.consumer-group.classic-upgrade")
def test_a_heartbeat_leaves_a_classic_groups_members_in_place(target):
    clause = "kafka.consumer-group.classic-upgrade"
    m = member(target, 2)
    classic, group, classic_member, generation = classic_group(target, m.topic, m.partitions)
    m.group = group
    # refused (online upgrade disabled) or converted with its classic member (upgrade enabled, Apache Kafka 4's
    # default: group.consumer.migration.policy=bidirectional, GroupCoordinatorConfig.java)
    target.beyond_comparison("a consumer heartbeat on a classic group with members: refused or an online upgrade, "
                             "as the operator's group.consumer.migration.policy says")
    answer = m.send(clause, MemberEpoch=0, RebalanceTimeoutMs=REBALANCE_TIMEOUT_MS, SubscribedTopicNames=[m.topic],
                    TopicPartitions=[])
    expect(clause, answer["ErrorCode"], errors.NONE, errors.GROUP_ID_NOT_FOUND)
    expect(clause, heartbeat(classic, group, generation, classic_member, clause), errors.NONE,
           errors.REBALANCE_IN_PROGRESS)
    if answer["ErrorCode"] == errors.NONE:
        described = describe(m.client, group, clause)
        if classic_member not in {x["MemberId"] for x in described["Members"]}:
            raise Divergence(C[clause], f"the converted group listing its classic member {classic_member}",
                             short(described))
