"""KIP-848 consumer groups: ConsumerGroupHeartbeat (68), ConsumerGroupDescribe (69), and OffsetCommit v9+ by
member epoch. A target that does not advertise the APIs is UNIMPLEMENTED for every case here.

Each case drives the protocol by hand, as a member would: it joins with MemberEpoch 0, then heartbeats with the
epoch it was given and the partitions it owns (TopicPartitions), so that the coordinator's reconciliation can be
watched one step at a time.
"""

from __future__ import annotations

import time
import uuid

import pytest
from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.kafka.client import C, DataPath, expect, short
from wirecheck.suites.kafka.test_topics_groups import find_coordinator

case = pytest.mark.case

HEARTBEAT, DESCRIBE, OFFSET_COMMIT, JOIN_GROUP = 68, 69, 8, 11
FENCED_MEMBER_EPOCH, UNSUPPORTED_ASSIGNOR, STALE_MEMBER_EPOCH = 110, 112, 113
LEAVE, LEAVE_STATIC = -1, -2
REBALANCE_TIMEOUT_MS = 30000
#: KIP-1263 (Kafka 4.3+): the coordinator computes target assignments in batches, at most every
#: group.consumer.assignment.interval.ms (default 1 s, capped by group.consumer.max.assignment.interval.ms, default
#: 15 s: GroupCoordinatorConfig), and a member learns its new epoch and assignment in a later heartbeat; a topic
#: created just before is assigned once the coordinator's metadata image holds it. The cases heartbeat until then,
#: as the Java consumer does, for at most this long.
ASSIGNMENT_WAIT_S = 15.0
HEARTBEAT_PAUSE_S = 0.25  # between those heartbeats (KIP-848 sets no minimum spacing, only HeartbeatIntervalMs)


class Member:
    """One KIP-848 member on its own connection: its id, epoch and the partitions it owns."""

    def __init__(self, target, group: str, topic: str, instance_id: str | None = None):
        self.client = DataPath(target)
        self.version = self.client.version(HEARTBEAT, 1)
        self.group, self.topic, self.instance_id = group, topic, instance_id
        # v1: the client generates its member id (KIP-1082); v0: the coordinator assigns it
        self.member_id = str(uuid.uuid4()) if self.version >= 1 else ""
        self.epoch = 0
        self.owned: set[tuple] = set()
        self.topic_id, self.partitions = None, 0  # the topic's, as Metadata describes it

    def request(self, **fields) -> dict:
        body = {"GroupId": self.group, "MemberId": self.member_id, "MemberEpoch": self.epoch,
                "InstanceId": self.instance_id, "RackId": None, "RebalanceTimeoutMs": -1,
                "SubscribedTopicNames": None, "SubscribedTopicRegex": None, "ServerAssignor": None,
                "TopicPartitions": None}
        body.update(fields)
        return body

    def send(self, clause_id: str, **fields) -> dict:
        return enabled(self.client.call(HEARTBEAT, self.version, self.request(**fields), clause_id))

    def join(self, **fields) -> dict:
        """MemberEpoch 0 with a subscription; the answer's id, epoch and assignment are taken. An answer without
        a member id or an epoch above 0 breaks kafka.consumer-group.join (every later step builds on them)."""
        clause = "kafka.consumer-group.join"
        fields = {"MemberEpoch": 0, "RebalanceTimeoutMs": REBALANCE_TIMEOUT_MS, "SubscribedTopicNames": [self.topic],
                  "TopicPartitions": [], **fields}
        # a coordinator still loading is asked again (client.COORDINATOR_NOT_READY), as the Java consumer's
        # heartbeat manager does
        answer = enabled(self.client.call_until_ready(HEARTBEAT, self.version, self.request(**fields), clause))
        expect(clause, answer["ErrorCode"], errors.NONE)
        if not answer["MemberId"] or answer["MemberEpoch"] <= 0:
            raise Divergence(C[clause], "a member id and a MemberEpoch above 0", short(answer))
        self.take(answer)
        return answer

    def heartbeat(self, clause_id: str, owned: set[tuple] | None = None) -> dict:
        """A heartbeat reporting ``owned`` (default: what this member owns now)."""
        owned = self.owned if owned is None else owned
        answer = self.send(clause_id, TopicPartitions=by_topic(owned))
        expect(clause_id, answer["ErrorCode"], errors.NONE)
        self.take(answer)
        return answer

    def take(self, answer: dict) -> None:
        self.member_id = answer["MemberId"] or self.member_id
        self.epoch = answer["MemberEpoch"]
        if answer["Assignment"] is not None:
            self.owned = partitions_of(answer["Assignment"])

    def everything(self) -> set[tuple]:
        return {(self.topic_id, p) for p in range(self.partitions)}


def settle(clause_id: str, done, expected: str, members: list[Member], owned: dict | None = None) -> None:
    """Heartbeats from ``members`` in turn, each reporting what it owns (``owned[member]`` if given: partitions it
    has not revoked yet), until ``done()`` holds: the target assignment is computed and delivered in a later
    heartbeat (KIP-848 'Assignment'; KIP-1263 batching), so only its absence after ASSIGNMENT_WAIT_S breaks
    ``clause_id``."""
    owned = owned or {}
    deadline = time.monotonic() + ASSIGNMENT_WAIT_S
    while not done():
        if time.monotonic() > deadline:
            raise Divergence(C[clause_id], f"{expected}, within {ASSIGNMENT_WAIT_S:.0f} s of heartbeats",
                             "; ".join(f"member epoch {m.epoch} owning {sorted(p[1] for p in m.owned)}"
                                       for m in members))
        time.sleep(HEARTBEAT_PAUSE_S)
        for m in members:
            m.heartbeat(clause_id, owned.get(m))


def enabled(answer: dict) -> dict:
    """A ConsumerGroupHeartbeat answer, unless the broker says the consumer group protocol is off: Apache Kafka
    advertises the API but answers UNSUPPORTED_VERSION (35) when group.coordinator.rebalance.protocols leaves out
    "consumer" (KafkaApis.handleConsumerGroupHeartbeat, isConsumerGroupProtocolEnabled; the 3.x default)."""
    if answer["ErrorCode"] == errors.UNSUPPORTED_VERSION:
        raise Unimplemented("ConsumerGroupHeartbeat answered UNSUPPORTED_VERSION (35): the consumer group protocol "
                            "is not enabled on this broker (group.coordinator.rebalance.protocols)")
    return answer


def partitions_of(assignment: dict | None) -> set[tuple]:
    if assignment is None:
        return set()
    return {(t["TopicId"], p) for t in assignment["TopicPartitions"] for p in t["Partitions"]}


def by_topic(partitions: set[tuple]) -> list[dict]:
    topics: dict = {}
    for topic_id, index in sorted(partitions):
        topics.setdefault(topic_id, []).append(index)
    return [{"TopicId": t, "Partitions": ps} for t, ps in topics.items()]


def topic_layout(client: DataPath, topic: str) -> tuple[uuid.UUID, int]:
    """The topic's id (Metadata v10+) and partition count."""
    body = client.call(3, client.version(3, 12, low=10), {
        "Topics": [{"TopicId": uuid.UUID(int=0), "Name": topic}], "AllowAutoTopicCreation": False,
        "IncludeClusterAuthorizedOperations": False, "IncludeTopicAuthorizedOperations": False},
        "kafka.metadata.brokers")
    described = body["Topics"][0]
    expect("kafka.metadata.brokers", described["ErrorCode"], errors.NONE)
    return described["TopicId"], len(described["Partitions"])


def member(target, partitions: int = 1, group: str | None = None, topic: str | None = None,
           instance_id: str | None = None) -> Member:
    """A member of a fresh group (or ``group``), not joined yet, subscribed to ``topic`` or else to a topic of at
    least ``partitions`` partitions: a user's named topic where one fits (each group is fresh, so what other cases
    write there changes no assignment), else a fresh one."""
    client = DataPath(target)
    client.version(HEARTBEAT, 1)  # UNIMPLEMENTED unless the target advertises ConsumerGroupHeartbeat
    group = group or target.unique("cg")
    with target.precondition("a topic for the group, its id and partitions described, the coordinator found"):
        topic = topic or client.topic("cg", partitions, shared=True)
        layout = topic_layout(client, topic)
        # as the Java consumer does before its first heartbeat: Kafka creates __consumer_offsets on the first
        # FindCoordinator that needs it, and answers a heartbeat NOT_COORDINATOR until then
        find_coordinator(client, group)
    client.session.close()  # the member talks on its own connection; a model makes many members
    m = Member(target, group, topic, instance_id)
    m.topic_id, m.partitions = layout
    return m


def joined(target, partitions: int = 1, **options) -> Member:
    """The first member of a fresh group, joined and assigned every partition of its topic, in the join's answer or
    a later heartbeat's (a precondition: a failing join or assignment makes the case BLOCKED)."""
    m = member(target, partitions, **options)
    with target.precondition(f"member joined group {m.group} and was assigned all {m.partitions} partitions"):
        m.join()
        settle("kafka.consumer-group.assignment", lambda: m.owned == m.everything(),
               f"the sole member assigned the {m.partitions} partitions of {m.topic}", [m])
    return m


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


def two_members(target) -> tuple[Member, Member]:
    """A owns all of two or more partitions; B joins (a precondition). B's epoch is the target assignment's: above
    A's once the coordinator has computed the assignment at the new group epoch, else A's own (KIP-1263: computed
    later), never below it."""
    a = joined(target, 2)
    b = member(target, group=a.group, topic=a.topic)
    with target.precondition(f"a second member joined group {a.group}"):
        b.join()
        if b.epoch < a.epoch:
            raise Divergence(C["kafka.consumer-group.group-epoch"], f"a member epoch of at least {a.epoch} (the "
                             "target assignment's, which no member's epoch passes)", f"MemberEpoch {b.epoch}")
    return a, b


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
