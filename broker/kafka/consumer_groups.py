"""The KIP-848 consumer group coordinator: ConsumerGroupHeartbeat (68), ConsumerGroupDescribe (69), and the
member-epoch checks of OffsetCommit/OffsetFetch v9+ for its members.

The protocol (KIP-848, Kafka's GroupMetadataManager and CurrentAssignmentBuilder):

* a member joins with MemberEpoch 0 (v0: an empty MemberId, the coordinator names it; v1: its own UUID) and
  then heartbeats with the epoch it was given; -1 leaves, -2 leaves temporarily (static members, InstanceId);
* the group epoch moves on whenever membership, a subscription, the assignor or a subscribed topic's
  partition count changes; the server-side assignor then computes a target assignment at that epoch;
* reconciliation: a member first gives up (revokes) what its target no longer holds: its epoch stays until a
  heartbeat's TopicPartitions show those partitions gone; only then does it reach the target epoch, and a
  partition still owned by another member is handed over only once that member revoked it;
* a heartbeat carries the member's assignment when it changed (and on joining); null means unchanged.

Decisions: HeartbeatIntervalMs and the session timeout are the coordinator's configuration
(group.consumer.heartbeat.interval.ms / session.timeout.ms, Kafka: 5 s / 45 s; here options); a member naming
no ServerAssignor gets "uniform", the first of Kafka's group.consumer.assignors [uniform, range] (variant
consumer-group-range-default: range first); the target assignment at a new group epoch is computed at once, in the
heartbeat that bumped it (variant consumer-group-assignment-deferred: at the group's next heartbeat, as Kafka 4.3+
computes it in batches, KIP-1263, so the member that bumped it is answered at the old assignment epoch; a group's
first assignment comes at once); a non-empty classic group is not converted online
(group.consumer.migration.policy=disabled; Kafka 4's default, bidirectional, converts it and keeps the classic
members): a heartbeat for it gets GROUP_ID_NOT_FOUND; an Empty classic group is taken over (its committed
offsets stay). Membership is not journalled under --data-dir (members rejoin after a restart; committed
offsets are kept as before).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass, field

from wirecheck.broker.kafka.consumer_group_offsets import MemberEpochOffsets
from wirecheck.broker.kafka.member_sessions import MemberSessions
from wirecheck.broker.kafka import assignors, consumer_group_describe, groups
from wirecheck.broker.kafka.consumer_group_checks import LEAVE, LEAVE_STATIC, Refused, validate
from wirecheck.broker.kafka.errors import (FENCED_INSTANCE_ID, FENCED_MEMBER_EPOCH, GROUP_ID_NOT_FOUND,
                                           INCONSISTENT_GROUP_PROTOCOL, NONE, UNKNOWN_MEMBER_ID,
                                           UNRELEASED_INSTANCE_ID)
from wirecheck.broker.kafka.consumer_group_describe import by_topic
from wirecheck.broker.kafka.faults import KafkaFaults

STABLE, UNREVOKED, UNRELEASED = "stable", "unrevoked_partitions", "unreleased_partitions"

Partition = tuple[bytes, int]


@dataclass
class Member:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    subscribed: list[str] = field(default_factory=list)
    regex: str | None = None
    assignor: str | None = None
    epoch: int = 0
    previous_epoch: int = -1
    state: str = STABLE
    assigned: set[Partition] = field(default_factory=set)
    revoking: set[Partition] = field(default_factory=set)
    session_timer: asyncio.TimerHandle | None = None
    revocation_timer: asyncio.TimerHandle | None = None
    #: the member epoch at which each partition it owns (assigned or pending revocation) was assigned to it: an
    #: OffsetCommit at an older member epoch is judged by these (KIP-1251)
    assigned_at: dict[Partition, int] = field(default_factory=dict)

    def owns(self) -> set[Partition]:
        return self.assigned | self.revoking

    def cancel_timers(self) -> None:
        for timer in (self.session_timer, self.revocation_timer):
            if timer is not None:
                timer.cancel()


@dataclass
class ConsumerGroup:
    group_id: str
    epoch: int = 0
    assignment_epoch: int = 0
    assignor: str = assignors.DEFAULT
    members: dict[str, Member] = field(default_factory=dict)
    target: dict[str, set[Partition]] = field(default_factory=dict)
    topics_seen: dict[bytes, int] = field(default_factory=dict)  # subscribed topic id -> partition count

    def state(self) -> str:
        if not self.members:
            return "Empty"
        if self.assignment_epoch != self.epoch:
            return "Assigning"
        if any(m.epoch != self.assignment_epoch or m.state != STABLE for m in self.members.values()):
            return "Reconciling"
        return "Stable"


class ConsumerGroups(MemberSessions, MemberEpochOffsets):
    def __init__(self, classic: groups.Coordinator, storage, faults: KafkaFaults | None = None,
                 heartbeat_interval_ms: int = 1000, session_timeout_ms: int = 45000,
                 default_assignor: str = assignors.DEFAULT, deferred_assignment: bool = False):
        self.classic = classic  # committed offsets live in the classic coordinator's group of the same id
        self.storage = storage
        self.faults = KafkaFaults() if faults is None else faults
        self.default_assignor = default_assignor  # the first of group.consumer.assignors: a member naming none
        self.deferred_assignment = deferred_assignment  # a new target assignment waits for the next heartbeat
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.session_timeout_ms = session_timeout_ms
        self.groups: dict[str, ConsumerGroup] = {}

    # ------------------------------------------------------------------------------------------ heartbeat

    def heartbeat(self, req: dict, version: int, client_id: str, client_host: str) -> dict:
        try:
            member, full = self._heartbeat(req, version, client_id, client_host)
        except Refused as refused:
            # Apache Kafka answers a refused heartbeat with only the error set, the rest at the message's defaults
            # (MemberEpoch 0): GroupCoordinatorService.consumerGroupHeartbeat handleOperationException and
            # ConsumerGroupHeartbeatRequest.getErrorResponse (group-coordinator/src/main/java/org/apache/kafka/coordinator/group/
            # GroupCoordinatorService.java; clients/.../common/requests/ConsumerGroupHeartbeatRequest.java)
            return {"ThrottleTimeMs": 0, "ErrorCode": refused.code, "ErrorMessage": refused.message,
                    "MemberId": None, "MemberEpoch": 0, "HeartbeatIntervalMs": 0, "Assignment": None}
        answer = {"ThrottleTimeMs": 0, "ErrorCode": NONE, "ErrorMessage": None, "MemberId": member.member_id,
                  "MemberEpoch": member.epoch, "HeartbeatIntervalMs": self.heartbeat_interval_ms,
                  "Assignment": None}
        if self.faults.consumer_group_join_epoch_zero and req["MemberEpoch"] == 0:
            answer["MemberEpoch"] = 0  # fault: the joining member is not given the group's epoch
        if full and member.epoch >= 0 and not self.faults.consumer_group_assignment_omitted:
            answer["Assignment"] = {"TopicPartitions": by_topic(member.assigned)}
        return answer

    def _heartbeat(self, req: dict, version: int, client_id: str, client_host: str) -> tuple[Member, bool]:
        epoch = req["MemberEpoch"]
        validate(req, version, self.faults)
        group = self._group_for(req["GroupId"], create=epoch == 0)
        if group.assignment_epoch != group.epoch:  # deferred by an earlier heartbeat: computed now
            self._assign(group)
        if epoch == LEAVE or epoch == LEAVE_STATIC:
            return self._leave(group, req), False
        before = None
        if epoch == 0 or (self.faults.consumer_group_unknown_member_joins
                          and req["MemberId"] not in group.members):  # fault: an unknown member joins
            member = self._join(group, req, version, client_id, client_host)
        else:
            member = self._known(group, req)
            before = (member.epoch, frozenset(member.assigned))
        changed = self._update_subscription(group, member, req)
        if changed or self._topics_changed(group):
            self._bump(group)
        owned = req["TopicPartitions"]
        self._reconcile(group, member, None if owned is None else
                        {(t["TopicId"], p) for t in owned for p in t["Partitions"]})
        self._touch(group, member)
        full = before is None or before != (member.epoch, frozenset(member.assigned)) or (
            owned is not None and {(t["TopicId"], p) for t in owned for p in t["Partitions"]} != member.assigned)
        return member, full

    def _group_for(self, group_id: str, create: bool) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        classic = self.classic.groups.get(group_id)
        if classic is not None and classic.members:
            if not self.faults.consumer_group_classic_members_dropped or not create:
                raise Refused(GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
            for member_id in list(classic.members):  # fault: taken over as if Empty, its members forgotten
                self.classic._remove(classic, member_id)
        if not create:
            raise Refused(GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        # an Empty classic group is taken over (KIP-848), its committed offsets kept
        group = self.groups[group_id] = ConsumerGroup(group_id, assignor=self.default_assignor)
        return group

    def _join(self, group: ConsumerGroup, req: dict, version: int, client_id: str, client_host: str) -> Member:
        member_id = req["MemberId"] or str(uuid.uuid4())  # v0: the coordinator names the member
        if self.faults.consumer_group_member_id_ignored and version >= 1:
            member_id = str(uuid.uuid4())  # fault: the client's own id (v1) replaced
        instance = req["InstanceId"]
        if instance is not None:
            holder = next((m for m in group.members.values() if m.instance_id == instance), None)
            if holder is not None and holder.epoch != LEAVE_STATIC and holder.member_id != member_id:
                raise Refused(UNRELEASED_INSTANCE_ID, f"Static member {instance} has not left the group.")
            if holder is not None and holder.epoch == LEAVE_STATIC \
                    and not self.faults.consumer_group_static_rejoin_rebalances:
                # KIP-848: the new incarnation takes over the old one's epoch and assignment, no rebalance
                self._drop(group, holder)
                member = Member(member_id, instance, req["RackId"], client_id, client_host, req["RebalanceTimeoutMs"],
                                holder.subscribed, holder.regex, holder.assignor, holder.previous_epoch,
                                holder.previous_epoch, holder.state, holder.assigned, holder.revoking,
                                assigned_at=holder.assigned_at)
                group.members[member_id] = member
                group.target[member_id] = group.target.pop(holder.member_id, set())
                return member
            if holder is not None:
                self._remove(group, holder)
        old = group.members.get(member_id)
        if old is not None:  # rejoining with epoch 0: the old incarnation's partitions are released
            self._remove(group, old)
        member = Member(member_id, instance, req["RackId"], client_id, client_host, req["RebalanceTimeoutMs"])
        group.members[member_id] = member
        self._bump(group)
        return member

    def _known(self, group: ConsumerGroup, req: dict) -> Member:
        member = group.members.get(req["MemberId"])
        if member is None:
            raise Refused(UNKNOWN_MEMBER_ID, f"Member {req['MemberId']} is not a member of group {group.group_id}.")
        if req["InstanceId"] is not None and member.instance_id != req["InstanceId"]:
            raise Refused(FENCED_INSTANCE_ID, f"Static member {req['InstanceId']} was replaced.")
        epoch = req["MemberEpoch"]
        if epoch != member.epoch and not self.faults.consumer_group_epoch_unchecked:
            owned = req["TopicPartitions"]
            resent = epoch == member.previous_epoch and owned is not None and \
                {(t["TopicId"], p) for t in owned for p in t["Partitions"]} <= member.assigned
            if epoch > member.epoch or not resent:  # a lost answer may be retried at the previous epoch
                raise Refused(FENCED_MEMBER_EPOCH, f"The member epoch {epoch} is fenced; the current one is "
                                                   f"{member.epoch}.")
        if req["RebalanceTimeoutMs"] > 0:
            member.rebalance_timeout_ms = req["RebalanceTimeoutMs"]
        return member

    def _leave(self, group: ConsumerGroup, req: dict) -> Member:
        member = group.members.get(req["MemberId"])
        if member is None and req["InstanceId"] is not None:
            member = next((m for m in group.members.values() if m.instance_id == req["InstanceId"]), None)
        if member is None:
            raise Refused(UNKNOWN_MEMBER_ID, f"Member {req['MemberId']} is not a member of group {group.group_id}.")
        if self.faults.consumer_group_leave_ignored and req["MemberEpoch"] == LEAVE:
            return Member(member.member_id, None, None, "", "", 0, epoch=req["MemberEpoch"])
        if req["MemberEpoch"] == LEAVE_STATIC:
            # stays, holding its assignment, until its session ends or a new incarnation takes over
            member.previous_epoch, member.epoch = member.epoch, LEAVE_STATIC
            self._touch(group, member)
            return member
        self._remove(group, member)
        self._bump(group)
        member.epoch = LEAVE
        return member

    # ------------------------------------------------------------------------------------------ assignment

    def _update_subscription(self, group: ConsumerGroup, member: Member, req: dict) -> bool:
        changed = False
        names = req["SubscribedTopicNames"]
        if names is not None and sorted(set(names)) != member.subscribed:
            member.subscribed, changed = sorted(set(names)), True
        regex = req.get("SubscribedTopicRegex")
        if regex is not None and (regex or None) != member.regex:
            member.regex, changed = regex or None, True
        if req["ServerAssignor"] is not None and req["ServerAssignor"] != member.assignor:
            member.assignor, changed = req["ServerAssignor"], True
        return changed

    def _subscribed_topics(self, member: Member) -> set[bytes]:
        names = set(member.subscribed)
        if member.regex:
            names |= {n for n in self.storage.topics if re.fullmatch(member.regex, n)}
        return {self.storage.topics[n].topic_id for n in names if n in self.storage.topics}

    def _topics_changed(self, group: ConsumerGroup) -> bool:
        return self._topic_counts(group) != group.topics_seen

    def _topic_counts(self, group: ConsumerGroup) -> dict[bytes, int]:
        wanted = set().union(*(self._subscribed_topics(m) for m in group.members.values()))
        return {t: len(self.storage.by_id[t].partitions) for t in wanted if t in self.storage.by_id}

    def _bump(self, group: ConsumerGroup) -> None:
        """A new group epoch and the target assignment at it (deferred: at the next heartbeat)."""
        if not self.faults.consumer_group_epoch_not_bumped or group.epoch == 0:
            group.epoch += 1
        if not self.deferred_assignment or group.assignment_epoch == 0:  # a group's first one: at once
            self._assign(group)

    def _assign(self, group: ConsumerGroup) -> None:
        """The target assignment at the group epoch."""
        chosen = [m.assignor for m in group.members.values() if m.assignor in assignors.ASSIGNORS]
        group.assignor = max(set(chosen), key=chosen.count) if chosen else self.default_assignor  # most members' pick
        group.topics_seen = self._topic_counts(group)
        subscriptions = {m.member_id: self._subscribed_topics(m) for m in group.members.values()}
        group.target = assignors.ASSIGNORS[group.assignor](subscriptions, group.topics_seen, group.target)
        group.assignment_epoch = group.epoch

    def _reconcile(self, group: ConsumerGroup, member: Member, owned: set[Partition] | None) -> None:
        """CurrentAssignmentBuilder: revoke first, then take what nobody else still owns."""
        if member.state == UNREVOKED:
            if owned is None or owned & member.revoking:
                return  # still waiting for the member to give them up
            for partition in member.revoking:
                member.assigned_at.pop(partition, None)
            member.revoking = set()
            if member.revocation_timer is not None:
                member.revocation_timer.cancel()
                member.revocation_timer = None
        elif member.epoch == group.assignment_epoch and member.state == STABLE:
            return
        target = group.target.get(member.member_id, set())
        revoke = member.assigned - target
        if revoke and not self.faults.consumer_group_epoch_before_revocation:
            member.assigned -= revoke
            member.revoking = revoke
            member.state = UNREVOKED
            member.revocation_timer = asyncio.get_running_loop().call_later(
                member.rebalance_timeout_ms / 1000, self._revocation_deadline, group, member.member_id)
            return
        member.assigned -= revoke
        for partition in revoke:  # (fault consumer-group-epoch-before-revocation: revoked without a wait)
            member.assigned_at.pop(partition, None)
        others = set().union(*(m.owns() for m in group.members.values() if m is not member))
        if self.faults.consumer_group_reassigns_unrevoked:
            others = set()
        wanted = target - member.assigned
        free = wanted - others
        member.assigned |= free
        member.assigned_at.update(dict.fromkeys(free, group.assignment_epoch))
        if member.epoch != group.assignment_epoch:
            member.previous_epoch, member.epoch = member.epoch, group.assignment_epoch
        member.state = UNRELEASED if wanted - free else STABLE

    def _revocation_deadline(self, group: ConsumerGroup, member_id: str) -> None:
        """A member that has not revoked within its rebalance timeout is fenced (removed)."""
        member = group.members.get(member_id)
        if member is not None and member.state == UNREVOKED:
            self._remove(group, member)
            self._bump(group)

    # ------------------------------------------------------------------------------------------ membership

    def _remove(self, group: ConsumerGroup, member: Member) -> None:
        self._drop(group, member)
        group.target.pop(member.member_id, None)

    @staticmethod
    def _drop(group: ConsumerGroup, member: Member) -> None:
        member.cancel_timers()
        group.members.pop(member.member_id, None)

    # ------------------------------------------------------------------------------------------ classic side

    def classic_join_error(self, group_id: str) -> int:
        """A classic JoinGroup on a consumer group with members is INCONSISTENT_GROUP_PROTOCOL; an Empty consumer
        group is given back to the classic protocol."""
        group = self.groups.get(group_id)
        if group is None:
            return NONE
        if group.members and not self.faults.consumer_group_classic_join_allowed:
            return INCONSISTENT_GROUP_PROTOCOL
        self.forget(group_id)
        return NONE

    def forget(self, group_id: str) -> None:
        group = self.groups.pop(group_id, None)
        for member in (group.members.values() if group else ()):
            member.cancel_timers()

    # ------------------------------------------------------------------------------------------ describe

    def describe(self, req: dict, version: int) -> dict:
        return consumer_group_describe.describe(self.groups, self.classic.groups, self.storage, self.faults, req)

    def close(self) -> None:
        for group_id in list(self.groups):
            self.forget(group_id)
