"""Steps the KIP-848 consumer group cases share (and the share group and stateful cases reuse): a member's
heartbeat, its assignment by topic, settling a group, the topic layout the cases create."""

from __future__ import annotations

import time
import uuid

from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.kafka.client import C, DataPath, expect, short
from wirecheck.suites.kafka.topics_groups import find_coordinator


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

