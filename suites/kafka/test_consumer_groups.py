"""KIP-848 consumer groups: ConsumerGroupHeartbeat (68), ConsumerGroupDescribe (69), and OffsetCommit v9+ by
member epoch. A target that does not advertise the APIs is UNIMPLEMENTED for every case here.

Each case drives the protocol by hand, as a member would: it joins with MemberEpoch 0, then heartbeats with the
epoch it was given and the partitions it owns (TopicPartitions), so that the coordinator's reconciliation can be
watched one step at a time.
"""

from __future__ import annotations

import uuid

import pytest
from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, expect, short
from wirecheck.suites.kafka.consumer_groups import (DESCRIBE, FENCED_MEMBER_EPOCH, JOIN_GROUP, LEAVE, LEAVE_STATIC,
                                                    OFFSET_COMMIT, REBALANCE_TIMEOUT_MS, STALE_MEMBER_EPOCH,
                                                    UNSUPPORTED_ASSIGNOR, by_topic, joined, member, partitions_of,
                                                    settle, two_members)

case = pytest.mark.case


@case("kafka.consumer-group.join")
def test_a_member_joins_with_epoch_zero(target):
    clause = "kafka.consumer-group.join"
    m = member(target)
    mine = m.member_id
    answer = m.join()
    if m.version >= 1 and answer["MemberId"] != mine:
        raise Divergence(C[clause], f"MemberId {mine} (v1: the client's own)", f"MemberId {answer['MemberId']!r}")
    if not answer["MemberId"] or answer["MemberEpoch"] <= 0 or answer["HeartbeatIntervalMs"] <= 0:
        raise Divergence(C[clause], "a member id, MemberEpoch > 0 and HeartbeatIntervalMs > 0", short(answer))


@case("kafka.consumer-group.group-epoch")
def test_a_new_member_bumps_the_group_epoch(target):
    clause = "kafka.consumer-group.group-epoch"
    first, second = two_members(target)
    before = first.epoch
    settle(clause, lambda: second.epoch > before, f"the joining member at a MemberEpoch above {before} (the "
                                                  "group's before the join) once the new target assignment is "
                                                  "computed", [first, second])


@case("kafka.consumer-group.assignment")
def test_the_heartbeat_carries_the_assignment(target):
    clause = "kafka.consumer-group.assignment"
    m = member(target, 3)
    with target.precondition(f"member joined group {m.group}"):
        m.join()
    settle(clause, lambda: m.owned == m.everything(),
           f"Assignment: the {m.partitions} partitions of {m.topic} (its topic id)", [m])


@case("kafka.consumer-group.revocation-first")
def test_partitions_move_only_after_their_owner_revoked_them(target):
    clause = "kafka.consumer-group.revocation-first"
    a, b = two_members(target)
    everything = set(a.owned)

    def told_to_revoke() -> bool:
        if b.owned & everything:
            raise Divergence(C[clause], "none of the partitions the first member still owns",
                             f"{sorted(b.owned & everything)} assigned to the joining member")
        return a.owned < everything

    # the first member reports all it had until the coordinator asks it to revoke some: nothing moves meanwhile
    settle(clause, told_to_revoke, "the first member asked to revoke some of its partitions", [a, b],
           owned={a: everything})
    a.heartbeat(clause, owned=everything)  # told to revoke some, it still owns them all until it says otherwise
    b.heartbeat(clause)
    told_to_revoke()
    a.heartbeat(clause)  # reports only what it keeps: the rest is revoked
    settle(clause, lambda: bool(b.owned), "the revoked partitions handed to the joining member once revoked",
           [b])
    if b.owned & a.owned:
        raise Divergence(C[clause], "the revoked partitions, once revoked, and none the first member keeps",
                         f"joining member {sorted(b.owned)}, first member {sorted(a.owned)}")


@case("kafka.consumer-group.epoch-after-revocation")
def test_the_member_epoch_waits_for_revocation(target):
    clause = "kafka.consumer-group.epoch-after-revocation"
    a, b = two_members(target)
    before, everything = a.epoch, set(a.owned)

    def told_to_revoke() -> bool:
        if a.epoch != before:
            raise Divergence(C[clause], f"MemberEpoch {before} (unchanged) while it still owns the "
                                        f"{len(everything)} partitions", f"MemberEpoch {a.epoch}, assignment "
                                                                         f"{sorted(p[1] for p in a.owned)}")
        return a.owned < everything

    settle(clause, told_to_revoke, f"an assignment of fewer than the {len(everything)} partitions it owns, at "
                                   f"MemberEpoch {before}", [a, b], owned={a: everything})
    settle(clause, lambda: a.epoch > before, f"a MemberEpoch above {before} once the partitions are revoked", [a])


@case("kafka.consumer-group.fenced-epoch")
def test_a_stale_member_epoch_is_fenced(target):
    clause = "kafka.consumer-group.fenced-epoch"
    m = joined(target)
    answer = m.send(clause, MemberEpoch=m.epoch + 5, TopicPartitions=by_topic(m.owned))
    expect(clause, answer["ErrorCode"], FENCED_MEMBER_EPOCH)


@case("kafka.consumer-group.unknown-member")
def test_an_unknown_member_is_refused(target):
    clause = "kafka.consumer-group.unknown-member"
    m = joined(target)
    answer = m.send(clause, MemberId=str(uuid.uuid4()), MemberEpoch=m.epoch)
    expect(clause, answer["ErrorCode"], errors.UNKNOWN_MEMBER_ID)


@case("kafka.consumer-group.leave")
def test_a_member_leaves_with_epoch_minus_one(target):
    clause = "kafka.consumer-group.leave"
    m = joined(target)
    epoch = m.epoch
    answer = m.send(clause, MemberEpoch=LEAVE)
    expect(clause, answer["ErrorCode"], errors.NONE)
    if answer["MemberEpoch"] != LEAVE:
        raise Divergence(C[clause], "MemberEpoch -1", f"MemberEpoch {answer['MemberEpoch']}")
    again = m.send(clause, MemberEpoch=epoch, TopicPartitions=by_topic(m.owned))
    expect(clause, again["ErrorCode"], errors.UNKNOWN_MEMBER_ID)


@case("kafka.consumer-group.static-rejoin")
def test_a_static_member_rejoins_where_it_left(target):
    clause = "kafka.consumer-group.static-rejoin"
    instance = target.unique("instance")
    first = joined(target, 2, instance_id=instance)
    left = first.send(clause, MemberEpoch=LEAVE_STATIC)
    expect(clause, left["ErrorCode"], errors.NONE)
    again = member(target, group=first.group, topic=first.topic, instance_id=instance)
    with target.precondition(f"instance {instance} rejoined group {first.group}"):
        answer = again.join()
    if answer["MemberEpoch"] != first.epoch or again.owned != first.owned:
        raise Divergence(C[clause], f"MemberEpoch {first.epoch} and partitions {sorted(first.owned)} (the old "
                                    "incarnation's)", short(answer))


@case("kafka.consumer-group.unsupported-assignor")
def test_an_unknown_server_assignor_is_refused(target):
    clause = "kafka.consumer-group.unsupported-assignor"
    m = member(target)
    answer = m.send(clause, MemberEpoch=0, RebalanceTimeoutMs=REBALANCE_TIMEOUT_MS, SubscribedTopicNames=[m.topic],
                    TopicPartitions=[], ServerAssignor="wirecheck-no-such-assignor")
    expect(clause, answer["ErrorCode"], UNSUPPORTED_ASSIGNOR)


@case("kafka.consumer-group.invalid-request")
@pytest.mark.parametrize("flaw", ["empty-group-id", "no-subscription", "no-rebalance-timeout"])
def test_a_join_missing_required_fields_is_invalid(target, flaw):
    clause = "kafka.consumer-group.invalid-request"
    m = member(target)
    fields = {"MemberEpoch": 0, "RebalanceTimeoutMs": REBALANCE_TIMEOUT_MS, "SubscribedTopicNames": [m.topic],
              "TopicPartitions": []}
    fields.update({"empty-group-id": {"GroupId": ""}, "no-subscription": {"SubscribedTopicNames": None},
                   "no-rebalance-timeout": {"RebalanceTimeoutMs": -1}}[flaw])
    answer = m.send(clause, **fields)
    expect(clause, answer["ErrorCode"], errors.INVALID_REQUEST)


@case("kafka.consumer-group.describe")
def test_describe_lists_members_epochs_and_assignments(target):
    clause = "kafka.consumer-group.describe"
    m = joined(target, 2)
    missing = target.unique("cg-missing")
    body = m.client.call(DESCRIBE, m.client.version(DESCRIBE, 1),
                         {"GroupIds": [m.group, missing], "IncludeAuthorizedOperations": False}, clause)
    described = {g["GroupId"]: g for g in body["Groups"]}
    group = described.get(m.group)
    if group is None or missing not in described:
        raise Divergence(C[clause], f"both groups {m.group} and {missing} described", short(body))
    expect(clause, group["ErrorCode"], errors.NONE)
    expect(clause, described[missing]["ErrorCode"], errors.GROUP_ID_NOT_FOUND)
    members = {x["MemberId"]: x for x in group["Members"]}
    mine = members.get(m.member_id)
    if mine is None or len(members) != 1:
        raise Divergence(C[clause], f"the one member {m.member_id}", f"members {sorted(members)}")
    current, target_assignment = partitions_of(mine["Assignment"]), partitions_of(mine["TargetAssignment"])
    if (mine["MemberEpoch"] != m.epoch or current != m.owned or target_assignment != m.owned
            or group["GroupEpoch"] < m.epoch or group["AssignmentEpoch"] != m.epoch):
        raise Divergence(C[clause], f"member epoch {m.epoch}, assignment and target assignment "
                                    f"{sorted(m.owned)}, group and assignment epoch {m.epoch}", short(group))


@case("kafka.consumer-group.classic-coexistence")
def test_a_classic_join_on_a_consumer_group_is_inconsistent(target):
    clause = "kafka.consumer-group.classic-coexistence"
    m = joined(target)
    version = m.client.version(JOIN_GROUP, 9)
    # not "consumer": a broker allowing online downgrade would take a consumer-protocol classic member in
    answer = m.client.call(JOIN_GROUP, version, {
        "GroupId": m.group, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000, "MemberId": "",
        "GroupInstanceId": None, "ProtocolType": "connect",
        "Protocols": [{"Name": "sessioned", "Metadata": b"wirecheck"}]}, clause)
    expect(clause, answer["ErrorCode"], errors.INCONSISTENT_GROUP_PROTOCOL)


@case("kafka.consumer-group.commit-member-epoch")
def test_offset_commit_checks_the_member_epoch(target):
    clause = "kafka.consumer-group.commit-member-epoch"
    m = joined(target)
    version = m.client.version(OFFSET_COMMIT, 9, low=9)

    def commit(epoch: int) -> int:
        body = m.client.call(OFFSET_COMMIT, version, {
            "GroupId": m.group, "GenerationIdOrMemberEpoch": epoch, "MemberId": m.member_id,
            "GroupInstanceId": None, "RetentionTimeMs": -1, "Topics": [{"Name": m.topic, "Partitions": [
                {"PartitionIndex": 0, "CommittedOffset": 0, "CommittedLeaderEpoch": -1,
                 "CommittedMetadata": "wc"}]}]}, clause)
        return body["Topics"][0]["Partitions"][0]["ErrorCode"]

    expect(clause, commit(m.epoch), errors.NONE)
    expect(clause, commit(m.epoch + 1), STALE_MEMBER_EPOCH)
