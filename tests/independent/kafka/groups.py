"""The classic (pre-KIP-848) consumer group coordinator, in memory.

States: Empty -> PreparingRebalance -> CompletingRebalance -> Stable, as in
Kafka's group membership protocol.  JoinGroup calls park on a future until the
rebalance completes (every known member rejoined, or the rebalance timeout
expired); SyncGroup calls park until the leader sends the assignment.
"""
from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field

from . import errors as E
from .defects import defect

MIN_SESSION_TIMEOUT_MS = 6000      # group.min.session.timeout.ms default
MAX_SESSION_TIMEOUT_MS = 1800000   # group.max.session.timeout.ms default
OFFSET_METADATA_MAX_BYTES = 4096   # offset.metadata.max.bytes default

EMPTY, PREPARING, COMPLETING, STABLE, DEAD = (
    "Empty",
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
)


class GroupError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class JoinResult:
    error: int
    generation: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = ""
    members: list[dict] = field(default_factory=list)


@dataclass
class Member:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_future: asyncio.Future | None = None
    sync_future: asyncio.Future | None = None
    expiry: asyncio.TimerHandle | None = None

    def metadata_for(self, protocol: str) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        return b""


@dataclass
class Offset:
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_time_ms: int


class Group:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.state = EMPTY
        self.generation = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader: str | None = None
        self.members: dict[str, Member] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}  # member ids handed out with MEMBER_ID_REQUIRED
        self.offsets: dict[tuple[str, int], Offset] = {}
        self.rebalance_timer: asyncio.TimerHandle | None = None
        self.initial_delay = False

    # ------------------------------------------------------------------
    def candidate_protocols(self) -> set[str]:
        sets = [set(n for n, _ in m.protocols) for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def select_protocol(self) -> str:
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            for name, _ in m.protocols:  # each member votes for its first supported candidate
                if name in candidates:
                    votes[name] = votes.get(name, 0) + 1
                    break
        return max(sorted(votes), key=lambda n: votes[n])

    def all_joined(self) -> bool:
        return not self.pending and all(m.join_future is not None for m in self.members.values())


class Coordinator:
    def __init__(self, initial_rebalance_delay_ms: int = 0) -> None:
        self.groups: dict[str, Group] = {}
        self.initial_delay_ms = initial_rebalance_delay_ms

    def _loop(self) -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    # ------------------------------------------------------------------ timers
    def _schedule_expiry(self, group: Group, member: Member) -> None:
        if member.expiry is not None:
            member.expiry.cancel()
        member.expiry = self._loop().call_later(
            member.session_timeout_ms / 1000, self._expire_member, group, member.member_id
        )

    def _expire_member(self, group: Group, member_id: str) -> None:
        member = group.members.get(member_id)
        if member is None:
            return
        if member.join_future is not None or member.sync_future is not None:
            self._schedule_expiry(group, member)  # still waiting on us: keep alive
            return
        self._remove_member(group, member)

    def _expire_pending(self, group: Group, member_id: str) -> None:
        group.pending.pop(member_id, None)
        self._maybe_complete(group)

    # ------------------------------------------------------------------ rebalance
    def _prepare_rebalance(self, group: Group) -> None:
        if group.state == COMPLETING:
            # members waiting for an assignment must rejoin
            for m in group.members.values():
                if m.sync_future is not None and not m.sync_future.done():
                    m.sync_future.set_result((E.REBALANCE_IN_PROGRESS, b""))
                m.sync_future = None
        if group.state == PREPARING:
            return
        delay_ms = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
        if group.state == EMPTY and self.initial_delay_ms > 0:
            # group.initial.rebalance.delay.ms: let more members arrive first
            delay_ms = self.initial_delay_ms
            group.initial_delay = True
        group.state = PREPARING
        if group.rebalance_timer is not None:
            group.rebalance_timer.cancel()
        group.rebalance_timer = self._loop().call_later(delay_ms / 1000, self._rebalance_deadline, group)

    def _rebalance_deadline(self, group: Group) -> None:
        group.rebalance_timer = None
        group.initial_delay = False
        if group.state != PREPARING:
            return
        for m in list(group.members.values()):
            if m.join_future is None:  # did not rejoin in time
                self._drop(group, m)
        self._complete_join(group)

    def _maybe_complete(self, group: Group) -> None:
        if group.state == PREPARING and group.all_joined() and not group.initial_delay:
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        if group.rebalance_timer is not None:
            group.rebalance_timer.cancel()
            group.rebalance_timer = None
        if not defect("join-generation-not-bumped"):
            group.generation += 1
        if not group.members:
            group.state = EMPTY
            group.protocol_name = None
            group.leader = None
            return
        group.protocol_name = group.select_protocol()
        if group.leader not in group.members:
            group.leader = next(iter(group.members))
        group.state = COMPLETING
        member_list = [
            {"member_id": m.member_id, "group_instance_id": m.instance_id, "metadata": m.metadata_for(group.protocol_name)}
            for m in group.members.values()
        ]
        for m in group.members.values():
            fut, m.join_future = m.join_future, None
            if fut is not None and not fut.done():
                fut.set_result(self._join_result(group, m, member_list))
            self._schedule_expiry(group, m)

    def _join_result(self, group: Group, m: Member, member_list: list[dict] | None = None) -> JoinResult:
        if member_list is None:
            member_list = [
                {"member_id": x.member_id, "group_instance_id": x.instance_id, "metadata": x.metadata_for(group.protocol_name or "")}
                for x in group.members.values()
            ]
        return JoinResult(
            error=E.NONE,
            generation=group.generation,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader or "",
            member_id=m.member_id,
            members=member_list if m.member_id == group.leader else [],
        )

    def _drop(self, group: Group, member: Member) -> None:
        if member.expiry is not None:
            member.expiry.cancel()
        for fut in (member.join_future, member.sync_future):
            if fut is not None and not fut.done():
                fut.set_result(JoinResult(E.UNKNOWN_MEMBER_ID) if fut is member.join_future else (E.UNKNOWN_MEMBER_ID, b""))
        group.members.pop(member.member_id, None)

    def _remove_member(self, group: Group, member: Member) -> None:
        self._drop(group, member)
        if group.state in (STABLE, COMPLETING):
            self._prepare_rebalance(group)
        self._maybe_complete(group)

    # ------------------------------------------------------------------ JoinGroup
    async def join(
        self,
        *,
        version: int,
        group_id: str,
        member_id: str,
        instance_id: str | None,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        client_id: str,
        client_host: str,
    ) -> JoinResult:
        if not group_id:
            return JoinResult(E.INVALID_GROUP_ID, member_id=member_id)
        if not MIN_SESSION_TIMEOUT_MS <= session_timeout_ms <= MAX_SESSION_TIMEOUT_MS:
            return JoinResult(E.INVALID_SESSION_TIMEOUT, member_id=member_id)
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id)
        names = [n for n, _ in protocols]
        if not protocol_type or not protocols:
            return JoinResult(E.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        if group.members:
            if protocol_type != group.protocol_type or not (group.candidate_protocols() & set(names)):
                return JoinResult(E.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)

        # static membership: an instance id maps to one member id at a time
        if instance_id is not None:
            holder = next((m for m in group.members.values() if m.instance_id == instance_id), None)
            if holder is not None:
                if member_id and member_id != holder.member_id:
                    return JoinResult(E.FENCED_INSTANCE_ID, member_id=member_id)
                if not member_id:
                    # a restarted static member replaces its old incarnation
                    self._drop(group, holder)
                    if group.state in (STABLE, COMPLETING):
                        self._prepare_rebalance(group)

        if not member_id:
            new_id = f"{client_id or 'member'}-{uuid.uuid4()}"
            if version >= 4 and instance_id is None:
                # KIP-394: hand out the id and let the client come back with it
                group.pending[new_id] = self._loop().call_later(
                    session_timeout_ms / 1000, self._expire_pending, group, new_id
                )
                return JoinResult(E.MEMBER_ID_REQUIRED, member_id=new_id)
            member_id = new_id
        elif member_id in group.pending:
            group.pending.pop(member_id).cancel()
        elif member_id not in group.members:
            return JoinResult(E.UNKNOWN_MEMBER_ID, member_id=member_id)

        member = group.members.get(member_id)
        fut = self._loop().create_future()
        if member is None:
            member = Member(
                member_id, instance_id, client_id, client_host, session_timeout_ms,
                rebalance_timeout_ms, protocol_type, list(protocols),
            )
            group.members[member_id] = member
            if group.protocol_type is None or len(group.members) == 1:
                group.protocol_type = protocol_type
            member.join_future = fut
            self._prepare_rebalance(group)
        else:
            changed = member.protocols != list(protocols)
            member.protocols = list(protocols)
            member.session_timeout_ms = session_timeout_ms
            member.rebalance_timeout_ms = rebalance_timeout_ms
            if group.state in (COMPLETING, STABLE) and not changed and member_id != group.leader:
                # nothing changed: hand back the current generation (lost response, etc.)
                self._schedule_expiry(group, member)
                return self._join_result(group, member)
            if group.state == COMPLETING and not changed:
                self._schedule_expiry(group, member)
                return self._join_result(group, member)
            if member.join_future is not None and not member.join_future.done():
                # duplicate join while waiting: the older call gets told to retry
                member.join_future.set_result(JoinResult(E.REBALANCE_IN_PROGRESS, member_id=member_id))
            member.join_future = fut
            self._prepare_rebalance(group)
        if member.expiry is not None:
            member.expiry.cancel()
            member.expiry = None
        self._maybe_complete(group)
        return await fut

    # ------------------------------------------------------------------ SyncGroup
    async def sync(
        self,
        *,
        group_id: str,
        generation: int,
        member_id: str,
        instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: dict[str, bytes],
    ) -> tuple[int, bytes]:
        if not group_id:
            return E.INVALID_GROUP_ID, b""
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            return E.UNKNOWN_MEMBER_ID, b""
        member = group.members[member_id]
        if instance_id is not None and member.instance_id not in (None, instance_id):
            return E.FENCED_INSTANCE_ID, b""
        if generation != group.generation and not defect("sync-ignores-generation"):
            return E.ILLEGAL_GENERATION, b""
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
            protocol_name is not None and protocol_name != group.protocol_name
        ):
            return E.INCONSISTENT_GROUP_PROTOCOL, b""
        if group.state == EMPTY:
            return E.UNKNOWN_MEMBER_ID, b""
        if group.state == PREPARING:
            return E.REBALANCE_IN_PROGRESS, b""
        self._schedule_expiry(group, member)
        if group.state == STABLE:
            return E.NONE, member.assignment
        # CompletingRebalance
        fut = self._loop().create_future()
        if member.sync_future is not None and not member.sync_future.done():
            member.sync_future.set_result((E.REBALANCE_IN_PROGRESS, b""))
        member.sync_future = fut
        if member_id == group.leader:
            for m in group.members.values():
                m.assignment = assignments.get(m.member_id, b"")
            group.state = STABLE
            for m in group.members.values():
                f, m.sync_future = m.sync_future, None
                if f is not None and not f.done():
                    f.set_result((E.NONE, m.assignment))
                self._schedule_expiry(group, m)
        return await fut

    # ------------------------------------------------------------------ Heartbeat
    def heartbeat(self, *, group_id: str, generation: int, member_id: str, instance_id: str | None) -> int:
        if not group_id:
            return E.INVALID_GROUP_ID
        group = self.groups.get(group_id)
        if group is None or group.state == EMPTY or member_id not in group.members:
            return E.UNKNOWN_MEMBER_ID
        member = group.members[member_id]
        if instance_id is not None and member.instance_id not in (None, instance_id):
            return E.FENCED_INSTANCE_ID
        if generation != group.generation:
            return E.ILLEGAL_GENERATION
        self._schedule_expiry(group, member)
        if group.state == PREPARING and not defect("heartbeat-ignores-rebalance"):
            return E.REBALANCE_IN_PROGRESS
        return E.NONE

    # ------------------------------------------------------------------ LeaveGroup
    def leave(self, group_id: str, member_id: str, instance_id: str | None) -> int:
        group = self.groups.get(group_id)
        if group is None:
            return E.UNKNOWN_MEMBER_ID
        if instance_id is not None:
            holder = next((m for m in group.members.values() if m.instance_id == instance_id), None)
            if holder is None:
                return E.UNKNOWN_MEMBER_ID
            if member_id and member_id != holder.member_id:
                return E.FENCED_INSTANCE_ID
            self._remove_member(group, holder)
            return E.NONE
        if member_id in group.pending:
            group.pending.pop(member_id).cancel()
            self._maybe_complete(group)
            return E.NONE
        member = group.members.get(member_id)
        if member is None:
            return E.UNKNOWN_MEMBER_ID
        self._remove_member(group, member)
        return E.NONE

    # ------------------------------------------------------------------ offsets
    def commit_check(self, group_id: str, generation: int, member_id: str, instance_id: str | None) -> int:
        """Group-level validation of an OffsetCommit; creates simple groups."""
        group = self.groups.get(group_id)
        if group is None:
            if generation < 0:
                self.groups[group_id] = Group(group_id)
                return E.NONE
            return E.ILLEGAL_GENERATION
        if generation < 0 and group.state == EMPTY:
            return E.NONE
        if instance_id is not None:
            holder = next((m for m in group.members.values() if m.instance_id == instance_id), None)
            if holder is not None and holder.member_id != member_id:
                return E.FENCED_INSTANCE_ID
        if group.state == COMPLETING:
            return E.REBALANCE_IN_PROGRESS
        if member_id not in group.members:
            return E.UNKNOWN_MEMBER_ID
        if generation != group.generation:
            return E.ILLEGAL_GENERATION
        self._schedule_expiry(group, group.members[member_id])
        return E.NONE

    def store_offset(self, group_id: str, topic: str, partition: int, offset: int, epoch: int, metadata: str | None) -> None:
        if defect("commit-not-stored"):
            return
        self.groups[group_id].offsets[(topic, partition)] = Offset(offset, epoch, metadata, int(time.time() * 1000))

    def fetch_offsets(self, group_id: str) -> dict[tuple[str, int], Offset]:
        group = self.groups.get(group_id)
        return group.offsets if group is not None else {}

    # ------------------------------------------------------------------ describe / list
    def describe(self, group_id: str) -> dict:
        group = self.groups.get(group_id)
        if group is None:
            return {"group_state": DEAD, "protocol_type": "", "protocol_data": "", "members": []}
        stable = group.state == STABLE
        members = []
        for m in group.members.values():
            members.append(
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.instance_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "member_metadata": m.metadata_for(group.protocol_name or "") if stable else b"",
                    "member_assignment": m.assignment if stable else b"",
                }
            )
        return {
            "group_state": group.state,
            "protocol_type": group.protocol_type or "",
            "protocol_data": (group.protocol_name or "") if stable else "",
            "members": members,
        }

    def list(self) -> list[Group]:
        return [g for g in self.groups.values() if g.state != DEAD]
