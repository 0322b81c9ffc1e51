"""The classic group protocol's data: group states, members, join results and committed offsets (GroupMetadata,
MemberMetadata, OffsetAndMetadata), kept by the coordinator in groups.py."""

from __future__ import annotations

import asyncio
import enum
import uuid
from dataclasses import dataclass, field

from wirecheck.broker.kafka.transitions import Transitions


class GroupState(enum.StrEnum):
    """A classic group's state; its value is the name DescribeGroups and ListGroups answer with."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


EMPTY, PREPARING, COMPLETING = GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE
STABLE, DEAD = GroupState.STABLE, GroupState.DEAD

#: Kafka's classic group moves (ClassicGroupState.java, each state's valid previous states): a rebalance is
#: prepared from Empty, Stable or CompletingRebalance, completes into CompletingRebalance, and its SyncGroup makes
#: the group Stable; a rebalance that ends with no member leaves it Empty. (Dead, Kafka's state of a group being
#: deleted, is only ever answered here for a group that does not exist.)
TRANSITIONS = Transitions("classic group", {
    EMPTY: frozenset({PREPARING}),
    PREPARING: frozenset({COMPLETING, EMPTY}),
    COMPLETING: frozenset({STABLE, PREPARING}),
    STABLE: frozenset({PREPARING}),
    DEAD: frozenset(),
})


def new_member_id(client_id: str) -> str:
    """The client id and a UUID, as Kafka's coordinator makes them: unique, and as long for every member of one
    client (a replay carries an id over only when the new one is as long)."""
    return f"{client_id or 'member'}-{uuid.uuid4()}"


@dataclass
class JoinResult:
    error: int
    generation: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = ""
    members: list = field(default_factory=list)  # [(member_id, group_instance_id, metadata)]


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list  # [(name, metadata bytes)] in the member's preference order
    assignment: bytes = b""
    join_waiter: asyncio.Future | None = None
    sync_waiter: asyncio.Future | None = None
    timer: asyncio.TimerHandle | None = None

    def metadata_for(self, protocol: str) -> bytes:
        return next(meta for name, meta in self.protocols if name == protocol)


@dataclass
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str | None


class Group:
    def __init__(self, group_id: str):
        self.group_id = group_id
        self.state = EMPTY
        self.generation = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader: str | None = None
        self.members: dict[str, Member] = {}
        # member ids handed out with MEMBER_ID_REQUIRED and not joined yet -> expiry (loop time); like Kafka's
        # pending members they lapse after the session timeout, so unanswered ids cannot pile up
        self.pending: dict[str, float] = {}
        self.static: dict[str, str] = {}  # group.instance.id -> its current member id (KIP-345)
        self.offsets: dict[tuple[str, int], CommittedOffset] = {}
        self.rebalance_timer: asyncio.TimerHandle | None = None

    def supported_protocols(self) -> set[str]:
        names = None
        for m in self.members.values():
            mine = {name for name, _ in m.protocols}
            names = mine if names is None else names & mine
        return names or set()

    def move(self, to: GroupState) -> None:
        """To ``to``, where Kafka's classic group moves lead (TRANSITIONS)."""
        self.state = TRANSITIONS.moved(self.state, to)
