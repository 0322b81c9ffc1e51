"""The classic group coordinator (JoinGroup/SyncGroup/Heartbeat/LeaveGroup) and committed offsets.

States and transitions follow Kafka's GroupCoordinator/GroupMetadata (classic protocol):

    Empty --join--> PreparingRebalance --all known members rejoined, or rebalance timeout-->
    CompletingRebalance --leader's SyncGroup--> Stable --join with new metadata / leave / session expiry-->
    PreparingRebalance ...

Each completed rebalance increments the generation; the leader (kept across rebalances while it stays a
member, else the first member) receives every member's metadata for the chosen protocol, followers receive
none; SyncGroup hands each member exactly the assignment the leader sent. Timers: a member is removed when
no heartbeat/join/sync arrives for its session timeout; a rebalance completes without the members that have
not rejoined within the largest rebalance timeout.

Decision: no group.initial.rebalance.delay.ms (Kafka's default is 3 s for a new group); the first rebalance
completes as soon as every known member has joined, which keeps tests fast and changes no message.
Static membership (KIP-345): a member joining with a known group.instance.id and no member id replaces the
old incarnation (fenced with FENCED_INSTANCE_ID, 82) without a rebalance when the group is Stable and its
metadata is unchanged; requests naming the instance id with a stale member id are fenced too.
"""


from __future__ import annotations

import asyncio

from wirecheck.broker.kafka.faults import KafkaFaults
from wirecheck.broker.kafka.group_model import (EMPTY, PREPARING, COMPLETING, STABLE, new_member_id, JoinResult,
                                                Member, CommittedOffset, Group)
from wirecheck.broker.kafka.errors import (NONE, ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL, INVALID_GROUP_ID,
                                           UNKNOWN_MEMBER_ID, INVALID_SESSION_TIMEOUT, REBALANCE_IN_PROGRESS,
                                           MEMBER_ID_REQUIRED, FENCED_INSTANCE_ID)


class Coordinator:
    def __init__(self, min_session_ms: int = 6000, max_session_ms: int = 1800000, faults: KafkaFaults | None = None):
        self.groups: dict[str, Group] = {}
        self.min_session_ms = min_session_ms
        self.max_session_ms = max_session_ms
        self.faults = KafkaFaults() if faults is None else faults

    # ------------------------------------------------------------------------------------------ join

    async def join(self, group_id: str, member_id: str, group_instance_id: str | None, client_id: str,
                   client_host: str, session_timeout_ms: int, rebalance_timeout_ms: int, protocol_type: str,
                   protocols: list, require_known_member_id: bool) -> JoinResult:
        if not group_id:
            return JoinResult(INVALID_GROUP_ID, member_id=member_id)
        if not self.min_session_ms <= session_timeout_ms <= self.max_session_ms:
            return JoinResult(INVALID_SESSION_TIMEOUT, member_id=member_id)
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id)
        if not protocols or (group.members and (
                protocol_type != group.protocol_type
                or not group.supported_protocols() & {name for name, _ in protocols})):
            return JoinResult(INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        static_id = group.static.get(group_instance_id) if group_instance_id else None
        if member_id == "" and static_id is not None:
            # KIP-345: a static member rejoining under a new member id replaces its old incarnation, which is
            # fenced; in a Stable group with unchanged metadata this needs no rebalance.
            return await self._replace_static(group, static_id, client_id, protocols, session_timeout_ms,
                                              rebalance_timeout_ms)
        if member_id == "":
            member_id = new_member_id(client_id)
            if require_known_member_id and not group_instance_id:
                # KIP-394: a dynamic member of JoinGroup v4+ gets an id first, then joins with it
                now = asyncio.get_running_loop().time()
                for stale in [m for m, expiry in group.pending.items() if expiry < now]:
                    del group.pending[stale]
                group.pending[member_id] = now + session_timeout_ms / 1000
                return JoinResult(MEMBER_ID_REQUIRED, member_id=member_id)
        elif static_id is not None and static_id != member_id:
            return JoinResult(FENCED_INSTANCE_ID, member_id=member_id)
        elif member_id not in group.members and member_id not in group.pending:
            return JoinResult(UNKNOWN_MEMBER_ID, member_id=member_id)
        group.pending.pop(member_id, None)
        if group_instance_id:
            group.static[group_instance_id] = member_id

        member = group.members.get(member_id)
        if member is None:
            member = Member(member_id, group_instance_id, client_id, client_host, session_timeout_ms,
                            rebalance_timeout_ms, protocol_type, list(protocols))
            group.members[member_id] = member
            if group.protocol_type is None:
                group.protocol_type = protocol_type
            self._prepare_rebalance(group)
        else:
            changed = member.protocols != list(protocols)
            member.protocols = list(protocols)
            member.session_timeout_ms = session_timeout_ms
            member.rebalance_timeout_ms = rebalance_timeout_ms
            if group.state == STABLE and not changed and member_id != group.leader:
                # A follower rejoining with unchanged metadata gets the current generation at once.
                self._touch(group, member)
                return self._join_result(group, member)
            if group.state in (STABLE, COMPLETING, EMPTY):
                self._prepare_rebalance(group)
        if member.join_waiter is not None and not member.join_waiter.done():
            member.join_waiter.set_result(JoinResult(UNKNOWN_MEMBER_ID, member_id=member_id))  # superseded
        member.join_waiter = asyncio.get_running_loop().create_future()
        self._touch(group, member)
        waiter = member.join_waiter
        self._maybe_complete_join(group)
        return await waiter

    async def _replace_static(self, group: Group, old_id: str, client_id: str, protocols: list,
                              session_timeout_ms: int, rebalance_timeout_ms: int) -> JoinResult:
        old = group.members.pop(old_id)
        if old.timer:
            old.timer.cancel()
        if old.join_waiter is not None and not old.join_waiter.done():
            old.join_waiter.set_result(JoinResult(FENCED_INSTANCE_ID, member_id=old_id))
        self._finish_sync(old, FENCED_INSTANCE_ID)
        new_id = new_member_id(client_id)
        member = Member(new_id, old.group_instance_id, client_id, old.client_host, session_timeout_ms,
                        rebalance_timeout_ms, old.protocol_type, list(protocols), assignment=old.assignment)
        group.members[new_id] = member
        group.static[old.group_instance_id] = new_id
        if group.leader == old_id:
            group.leader = new_id
        if group.state == STABLE and old.protocols == member.protocols:
            self._touch(group, member)
            return self._join_result(group, member)
        if group.state != PREPARING:
            self._prepare_rebalance(group)
        member.join_waiter = asyncio.get_running_loop().create_future()
        waiter = member.join_waiter
        self._touch(group, member)
        self._maybe_complete_join(group)
        return await waiter

    def check_instance(self, group_id: str, member_id: str, group_instance_id: str | None) -> int:
        """FENCED_INSTANCE_ID when a static instance id now belongs to another member id (KIP-345)."""
        group = self.groups.get(group_id)
        if group is None or not group_instance_id:
            return NONE
        current = group.static.get(group_instance_id)
        return FENCED_INSTANCE_ID if current is not None and current != member_id else NONE

    def _prepare_rebalance(self, group: Group) -> None:
        if group.state == PREPARING:
            return
        if group.state == COMPLETING:  # members waiting in SyncGroup must rejoin
            for m in group.members.values():
                self._finish_sync(m, REBALANCE_IN_PROGRESS)
        group.move(PREPARING)
        timeout = max((m.rebalance_timeout_ms for m in group.members.values()), default=0) / 1000
        if group.rebalance_timer:
            group.rebalance_timer.cancel()
        group.rebalance_timer = asyncio.get_running_loop().call_later(timeout, self._rebalance_deadline, group)

    def _rebalance_deadline(self, group: Group) -> None:
        group.rebalance_timer = None
        if group.state != PREPARING:
            return
        for member_id in [m.member_id for m in group.members.values() if m.join_waiter is None]:
            self._remove(group, member_id)
        self._maybe_complete_join(group, force=True)

    def _maybe_complete_join(self, group: Group, force: bool = False) -> None:
        if group.state != PREPARING:
            return
        if not force and any(m.join_waiter is None for m in group.members.values()):
            return
        if group.rebalance_timer:
            group.rebalance_timer.cancel()
            group.rebalance_timer = None
        if not self.faults.generation_not_bumped or group.generation == 0:
            group.generation += 1
        if not group.members:
            group.move(EMPTY)
            group.protocol_name, group.protocol_type, group.leader = None, None, None
            return
        group.protocol_name = self._choose_protocol(group)
        if group.leader not in group.members:
            group.leader = next(iter(group.members))
        group.move(COMPLETING)
        for member in group.members.values():
            waiter, member.join_waiter = member.join_waiter, None
            if waiter is not None and not waiter.done():
                waiter.set_result(self._join_result(group, member))
            self._touch(group, member)

    def _choose_protocol(self, group: Group) -> str:
        """Each member votes for its most preferred protocol that all support; most votes wins (GroupMetadata)."""
        candidates = group.supported_protocols()
        votes: dict[str, int] = {}
        for m in group.members.values():
            choice = next(name for name, _ in m.protocols if name in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=lambda name: votes[name])

    def _join_result(self, group: Group, member: Member) -> JoinResult:
        members = []
        if member.member_id == group.leader:
            members = [(m.member_id, m.group_instance_id,
                        m.metadata_for(group.protocol_name) if not self.faults.leader_gets_no_metadata else b"")
                       for m in group.members.values()]
        return JoinResult(NONE, group.generation, group.protocol_type, group.protocol_name, group.leader or "",
                          member.member_id, members)

    # ------------------------------------------------------------------------------------------ sync

    async def sync(self, group_id: str, member_id: str, generation: int, protocol_type: str | None,
                   protocol_name: str | None, assignments: list) -> tuple[int, str | None, str | None, bytes]:
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            return UNKNOWN_MEMBER_ID, None, None, b""
        if generation != group.generation and not self.faults.sync_generation_unchecked:
            return ILLEGAL_GENERATION, None, None, b""
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
                protocol_name is not None and protocol_name != group.protocol_name):
            return INCONSISTENT_GROUP_PROTOCOL, None, None, b""
        member = group.members[member_id]
        self._touch(group, member)
        if group.state == PREPARING:
            return REBALANCE_IN_PROGRESS, None, None, b""
        if group.state == STABLE:
            return NONE, group.protocol_type, group.protocol_name, member.assignment
        # CompletingRebalance: wait for the leader's assignment
        member.sync_waiter = asyncio.get_running_loop().create_future()
        waiter = member.sync_waiter
        if member_id == group.leader:
            given = dict(assignments)
            for m in group.members.values():
                m.assignment = given.get(m.member_id, b"")
            group.move(STABLE)
            for m in group.members.values():
                self._finish_sync(m, NONE)
        error = await waiter
        if error:
            return error, None, None, b""
        return NONE, group.protocol_type, group.protocol_name, member.assignment

    def _finish_sync(self, member: Member, error: int) -> None:
        waiter, member.sync_waiter = member.sync_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(error)

    # ------------------------------------------------------------------------------------------ heartbeat, leave

    def heartbeat(self, group_id: str, member_id: str, generation: int) -> int:
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            # fault heartbeat-unknown-member-ok: a group's unknown member is answered as alive
            return NONE if group and self.faults.heartbeat_unknown_member_ok else UNKNOWN_MEMBER_ID
        if generation != group.generation and not self.faults.heartbeat_generation_unchecked:
            return ILLEGAL_GENERATION
        self._touch(group, group.members[member_id])
        if group.state == PREPARING and not self.faults.heartbeat_ignores_rebalance:
            return REBALANCE_IN_PROGRESS
        return NONE

    def leave(self, group_id: str, member_id: str) -> int:
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            return UNKNOWN_MEMBER_ID
        self._remove(group, member_id)
        self._after_membership_change(group)
        return NONE

    def leave_member(self, group_id: str, member_id: str, group_instance_id: str | None) -> int:
        """LeaveGroup v3+: a static member may leave by its instance id alone (empty member id)."""
        group = self.groups.get(group_id)
        if group is not None and group_instance_id:
            current = group.static.get(group_instance_id)
            if current is None:
                return UNKNOWN_MEMBER_ID
            if member_id not in ("", current):  # "" is JoinGroupRequest.UNKNOWN_MEMBER_ID
                return FENCED_INSTANCE_ID
            member_id = current
        return self.leave(group_id, member_id)

    def _after_membership_change(self, group: Group) -> None:
        if group.state in (STABLE, COMPLETING):
            self._prepare_rebalance(group)
        self._maybe_complete_join(group)

    def _remove(self, group: Group, member_id: str) -> None:
        member = group.members.pop(member_id)
        if member.group_instance_id and group.static.get(member.group_instance_id) == member_id:
            del group.static[member.group_instance_id]
        if member.timer:
            member.timer.cancel()
        if member.join_waiter is not None and not member.join_waiter.done():
            member.join_waiter.set_result(JoinResult(UNKNOWN_MEMBER_ID, member_id=member_id))
        self._finish_sync(member, UNKNOWN_MEMBER_ID)
        if group.leader == member_id:
            group.leader = None

    def _touch(self, group: Group, member: Member) -> None:
        """Restart the member's session timer (any join, sync or heartbeat counts as liveness)."""
        if member.timer:
            member.timer.cancel()
        member.timer = asyncio.get_running_loop().call_later(
            member.session_timeout_ms / 1000, self._expire, group, member.member_id)

    def _expire(self, group: Group, member_id: str) -> None:
        member = group.members.get(member_id)
        if member is None:
            return
        if member.join_waiter is not None:  # waiting in JoinGroup: alive until the rebalance timeout decides
            self._touch(group, member)
            return
        self._remove(group, member_id)
        self._after_membership_change(group)

    # ------------------------------------------------------------------------------------------ offsets

    def commit_check(self, group_id: str, member_id: str, generation: int) -> int:
        """Whether a commit is allowed, in GroupCoordinator.handleCommitOffsets' order.

        Generation < 0 into a missing or Empty group is a 'simple' commit (no group management). Commits
        during PreparingRebalance are allowed (members commit before rejoining); CompletingRebalance refuses.
        """
        if not group_id:
            return INVALID_GROUP_ID
        group = self.groups.get(group_id)
        if group is None:
            return NONE if generation < 0 else ILLEGAL_GENERATION
        if generation < 0 and group.state == EMPTY:
            return NONE
        if group.state == COMPLETING:
            return REBALANCE_IN_PROGRESS
        if member_id not in group.members:
            return UNKNOWN_MEMBER_ID
        if generation != group.generation:
            return ILLEGAL_GENERATION
        return NONE

    def commit(self, group_id: str, topic: str, partition: int, offset: CommittedOffset) -> None:
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id)
        group.offsets[(topic, partition)] = offset

    def committed(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        group = self.groups.get(group_id)
        return group.offsets if group is not None else {}

    def delete(self, group_id: str) -> None:
        """DeleteGroups of an empty group: the group and its committed offsets go."""
        group = self.groups.pop(group_id)
        if group.rebalance_timer:
            group.rebalance_timer.cancel()

    def forget_topic(self, topic: str) -> None:
        for group in self.groups.values():
            for key in [k for k in group.offsets if k[0] == topic]:
                del group.offsets[key]

    def close(self) -> None:
        for group in self.groups.values():
            if group.rebalance_timer:
                group.rebalance_timer.cancel()
            for m in group.members.values():
                if m.timer:
                    m.timer.cancel()
