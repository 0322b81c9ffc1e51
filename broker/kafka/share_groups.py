"""The KIP-932 share group coordinator: ShareGroupHeartbeat (76) and ShareGroupDescribe (77).

The protocol (KIP-932 'Share group membership', ShareGroupHeartbeatRequest.json v1):

* a member joins with MemberEpoch 0 and a MemberId it generated (a UUID, kept for its lifetime), then heartbeats
  at the epoch it was given; -1 leaves;
* the group epoch moves on with membership and subscriptions; the "simple" assignor then computes the target
  assignment, and a member takes it at once: share groups have no revocation step, since a partition may be
  assigned to several members (records, not partitions, are what members hold exclusively);
* a heartbeat answer carries the assignment when it changed (and on joining); null means unchanged.

Decisions: the target assignment at a new group epoch is computed in the heartbeat that bumped it (variant
share-group-assignment-deferred: at the group's next heartbeat, the first one at once, as Kafka 4.3+ batches it,
KIP-1263); the heartbeat interval and session timeout are the consumer-group options (group.share.heartbeat.
interval.ms / session.timeout.ms, Kafka: 5 s / 45 s); a group id held by a consumer or classic group with members
is not a share group (GROUP_ID_NOT_FOUND). A member leaving (or timing out) releases its acquired records.
Membership and share-partition state are not journalled under --data-dir.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from wirecheck.broker.kafka.member_sessions import MemberSessions
from wirecheck.broker.kafka import assignors
from wirecheck.broker.kafka.consumer_group_checks import LEAVE, Refused
from wirecheck.broker.kafka.errors import (FENCED_MEMBER_EPOCH, GROUP_ID_NOT_FOUND, INVALID_REQUEST, NONE,
                                           UNKNOWN_MEMBER_ID)
from wirecheck.broker.kafka.consumer_group_describe import by_topic
from wirecheck.broker.kafka.faults import KafkaFaults, KafkaVariants

Partition = tuple[bytes, int]
ASSIGNOR = "simple"


@dataclass
class ShareMember:
    member_id: str
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed: list[str] = field(default_factory=list)
    epoch: int = 0
    assigned: set[Partition] = field(default_factory=set)
    session_timer: asyncio.TimerHandle | None = None


@dataclass
class ShareGroup:
    group_id: str
    epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, set[Partition]] = field(default_factory=dict)
    topics_seen: dict[bytes, int] = field(default_factory=dict)

    def state(self) -> str:
        if not self.members:
            return "Empty"
        if any(m.epoch != self.assignment_epoch for m in self.members.values()):
            return "Reconciling"
        return "Stable"


def simple(subscriptions: dict[str, set[bytes]], counts: dict[bytes, int], previous: dict[str, set[Partition]],
           exclusive: bool = False) -> dict[str, set[Partition]]:
    """KIP-932's simple assignor, our reading: every subscribed partition to at least one subscriber, balanced (the
    uniform assignor) while members do not outnumber partitions; members beyond that share partitions, each taking
    one in turn, so that no member is idle. ``exclusive`` (variant): the extra members stay idle instead."""
    target = assignors.uniform(subscriptions, counts, previous)
    if exclusive:
        return target
    for member in sorted(subscriptions):
        if target[member]:
            continue
        choices = sorted((t, p) for t in subscriptions[member] for p in range(counts.get(t, 0)))
        if choices:
            holders = {tp: sum(tp in held for held in target.values()) for tp in choices}
            target[member].add(min(choices, key=lambda tp: (holders[tp], tp)))
    return target


def named(storage, partitions: set[Partition]) -> list[dict]:
    """An assignment as ShareGroupDescribe lists it: topic id, topic name, partitions."""
    return [{**entry, "TopicName": getattr(storage.by_id.get(entry["TopicId"]), "name", "")}
            for entry in by_topic(partitions)]


class ShareGroups(MemberSessions):
    def __init__(self, storage, consumer_groups, faults: KafkaFaults, variants: KafkaVariants,
                 heartbeat_interval_ms: int, session_timeout_ms: int, on_leave=None):
        self.storage = storage
        self.consumer_groups = consumer_groups  # a group id is either a share group or not (KIP-932)
        self.faults, self.variants = faults, variants
        self.heartbeat_interval_ms, self.session_timeout_ms = heartbeat_interval_ms, session_timeout_ms
        self.on_leave = on_leave  # (group id, member id): the member's locks go
        self.groups: dict[str, ShareGroup] = {}

    # ------------------------------------------------------------------------------------------ heartbeat

    def heartbeat(self, req: dict, version: int, client_id: str, client_host: str) -> dict:
        try:
            member, full = self._heartbeat(req, client_id, client_host)
        except Refused as refused:
            # Apache Kafka answers a refused heartbeat with only the error set, the rest at the message's defaults
            # (MemberEpoch 0): GroupCoordinatorService.shareGroupHeartbeat handleOperationException and
            # ShareGroupHeartbeatRequest.getErrorResponse (group-coordinator/src/main/java/org/apache/kafka/coordinator/group/
            # GroupCoordinatorService.java; clients/.../common/requests/ShareGroupHeartbeatRequest.java)
            return {"ThrottleTimeMs": 0, "ErrorCode": refused.code, "ErrorMessage": refused.message,
                    "MemberId": None, "MemberEpoch": 0, "HeartbeatIntervalMs": 0, "Assignment": None}
        answer = {"ThrottleTimeMs": 0, "ErrorCode": NONE, "ErrorMessage": None, "MemberId": member.member_id,
                  "MemberEpoch": member.epoch, "HeartbeatIntervalMs": self.heartbeat_interval_ms,
                  "Assignment": None}
        if self.faults.share_group_join_epoch_zero and req["MemberEpoch"] == 0:
            answer["MemberEpoch"] = 0  # fault: the joining member is not given the group's epoch
        if full and member.epoch > 0 and not self.faults.share_group_assignment_omitted:
            answer["Assignment"] = {"TopicPartitions": by_topic(member.assigned)}
        return answer

    def _heartbeat(self, req: dict, client_id: str, client_host: str) -> tuple[ShareMember, bool]:
        self._validate(req)
        epoch = req["MemberEpoch"]
        group = self._group_for(req["GroupId"], create=epoch == 0)
        if group.assignment_epoch != group.epoch:  # deferred by an earlier heartbeat: computed now
            self._assign(group)
        if epoch == LEAVE:
            return self._leave(group, req["MemberId"]), False
        member = group.members.get(req["MemberId"])
        joining = epoch == 0 or (member is None and self.faults.share_group_unknown_member_joins)
        if joining:
            if member is not None:  # rejoining: the old incarnation's records go back
                self._remove(group, member)
            member = group.members[req["MemberId"]] = ShareMember(req["MemberId"], req["RackId"], client_id,
                                                                  client_host, sorted(set(req["SubscribedTopicNames"]
                                                                                          or ())))
            self._bump(group)
        elif member is None:
            raise Refused(UNKNOWN_MEMBER_ID, f"Member {req['MemberId']} is not a member of group {group.group_id}.")
        elif epoch != member.epoch and not self.faults.share_group_epoch_unchecked:
            raise Refused(FENCED_MEMBER_EPOCH, f"The member epoch {epoch} is fenced; the current one is "
                                               f"{member.epoch}.")
        before = (member.epoch, frozenset(member.assigned))
        names = req["SubscribedTopicNames"]
        if names is not None and sorted(set(names)) != member.subscribed:
            member.subscribed = sorted(set(names))
            self._bump(group)
        elif self._topic_counts(group) != group.topics_seen:
            self._bump(group)
        if req["RackId"] is not None:
            member.rack_id = req["RackId"]
        member.assigned = set(group.target.get(member.member_id, set()))  # no revocation step (see above)
        member.epoch = group.assignment_epoch
        self._touch(group, member)
        return member, joining or before != (member.epoch, frozenset(member.assigned))

    def _validate(self, req: dict) -> None:
        """ShareGroupHeartbeatRequest.json: what a request must carry (GroupMetadataManager's checks)."""
        if self.faults.share_group_fields_unchecked:
            return
        if not req["GroupId"]:
            raise Refused(INVALID_REQUEST, "GroupId can't be empty.")
        if not req["MemberId"]:
            raise Refused(INVALID_REQUEST, "MemberId can't be empty.")
        if req["RackId"] == "":
            raise Refused(INVALID_REQUEST, "RackId can't be empty.")
        if req["MemberEpoch"] < LEAVE:
            raise Refused(INVALID_REQUEST, f"MemberEpoch {req['MemberEpoch']} is invalid.")
        if req["MemberEpoch"] == 0 and not req["SubscribedTopicNames"]:
            raise Refused(INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")

    def _group_for(self, group_id: str, create: bool) -> ShareGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if self.consumer_groups.groups.get(group_id) or getattr(
                self.consumer_groups.classic.groups.get(group_id), "members", None):
            raise Refused(GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        if not create:
            raise Refused(GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
        group = self.groups[group_id] = ShareGroup(group_id)
        return group

    def _leave(self, group: ShareGroup, member_id: str) -> ShareMember:
        member = group.members.get(member_id)
        if member is None:
            raise Refused(UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
        if self.faults.share_group_leave_ignored:
            return ShareMember(member_id, None, "", "", epoch=LEAVE)  # fault: answered -1, still a member
        self._remove(group, member)
        self._bump(group)
        member.epoch = LEAVE
        return member

    # ------------------------------------------------------------------------------------------ assignment

    def _subscribed_topics(self, member: ShareMember) -> set[bytes]:
        return {self.storage.topics[n].topic_id for n in member.subscribed if n in self.storage.topics}

    def _topic_counts(self, group: ShareGroup) -> dict[bytes, int]:
        wanted = set().union(*(self._subscribed_topics(m) for m in group.members.values()))
        return {t: len(self.storage.by_id[t].partitions) for t in wanted if t in self.storage.by_id}

    def _bump(self, group: ShareGroup) -> None:
        group.epoch += 1
        group.topics_seen = self._topic_counts(group)
        if not self.variants.share_group_assignment_deferred or group.assignment_epoch == 0:
            self._assign(group)

    def _assign(self, group: ShareGroup) -> None:
        subscriptions = {m.member_id: self._subscribed_topics(m) for m in group.members.values()}
        group.target = simple(subscriptions, group.topics_seen, group.target,
                              exclusive=self.variants.share_group_exclusive_partitions)
        group.assignment_epoch = group.epoch

    # ------------------------------------------------------------------------------------------ membership

    def _remove(self, group: ShareGroup, member: ShareMember) -> None:
        if member.session_timer is not None:
            member.session_timer.cancel()
        group.members.pop(member.member_id, None)
        group.target.pop(member.member_id, None)
        if self.on_leave is not None:
            self.on_leave(group.group_id, member.member_id)

    # ------------------------------------------------------------------------------------------ describe

    def describe(self, req: dict, version: int) -> dict:
        """ShareGroupDescribeResponse.json: the group's epochs, state, assignor and members."""
        described = []
        for group_id in req["GroupIds"]:
            group = self.groups.get(group_id)
            if group is None:
                # as Apache Kafka's GroupMetadataManager.shareGroupDescribe: the id, the error, its message, and
                # the message's defaults for the rest (GroupState "", epochs 0)
                described.append({"ErrorCode": GROUP_ID_NOT_FOUND, "ErrorMessage": f"Group {group_id} not found.",
                                  "GroupId": group_id, "GroupState": "", "GroupEpoch": 0,
                                  "AssignmentEpoch": 0, "AssignorName": "", "Members": []})
                continue
            hide = self.faults.share_group_describe_no_assignment
            described.append({
                "ErrorCode": NONE, "ErrorMessage": None, "GroupId": group_id, "GroupState": group.state(),
                "GroupEpoch": group.epoch, "AssignmentEpoch": group.assignment_epoch, "AssignorName": ASSIGNOR,
                "Members": [{
                    "MemberId": m.member_id, "RackId": m.rack_id, "MemberEpoch": m.epoch, "ClientId": m.client_id,
                    "ClientHost": m.client_host, "SubscribedTopicNames": m.subscribed,
                    "Assignment": {"TopicPartitions": [] if hide else named(self.storage, m.assigned)},
                } for m in group.members.values()]})
        return {"ThrottleTimeMs": 0, "Groups": described}

    def close(self) -> None:
        for group in self.groups.values():
            for member in group.members.values():
                if member.session_timer is not None:
                    member.session_timer.cancel()
