"""Consumer registrations, groups, assignment and read positions (notes §5.1, §5.4), as one state object.

Rules, each with its HTTP outcome in server.py:
  register(id, group, topics, policy)   new -> OK; same again -> "Already registered"; different -> conflict
  poll(id)                               per assigned reader: a position served to this consumer is committed
                                         first (implicit commit); one served to another consumer is dropped
                                         (rewind: at-least-once); then the chunk at the committed offset is served
  commit(id)                             what was served to this consumer becomes committed
  goodbye(id, commit)                    optional commit, then the consumer leaves and the group is re-dealt
Assignment: the group's consumers sorted by "<group>-<id>"; range index r of every reader goes to consumer
r mod n. A new group starts at the current end of every existing reader ("startFromLatest", the default) or at
0 ("startFromEarliest").
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Consumer:
    id: str
    group: str
    topics: frozenset[bytes]
    connection: object = None  # connection-bound consumers: the connection they registered on


@dataclass
class Position:
    committed: int = 0
    served_end: int | None = None
    served_to: str | None = None


@dataclass
class Group:
    name: str
    earliest: bool
    positions: dict[tuple, Position] = field(default_factory=dict)
    initial: dict[tuple, int] = field(default_factory=dict)  # reader -> where a position starts


class Consumers:
    def __init__(self, ranges: int, committed: dict | None = None):
        self.ranges = ranges
        self.consumers: dict[str, Consumer] = {}
        self.groups: dict[str, Group] = {}
        self.saved = committed or {}  # (group, reader key) -> committed offset, from durable storage

    def register(self, consumer: Consumer, earliest: bool, reader_ends: dict[tuple, int],
                 accept_different: bool = False) -> str:
        """"new", "same" or "conflict"."""
        known = self.consumers.get(consumer.id)
        if known is not None:
            if (known.group, known.topics) == (consumer.group, consumer.topics):
                known.connection = consumer.connection or known.connection
                return "same"
            if not accept_different:
                return "conflict"
        self.consumers[consumer.id] = consumer
        group = self.groups.get(consumer.group)
        if group is None:
            group = self.groups[consumer.group] = Group(consumer.group, earliest)
        for key, end in reader_ends.items():
            if key[0] in consumer.topics and key not in group.initial:
                group.initial[key] = 0 if group.earliest else end
        return "new"

    def members(self, group: str) -> list[Consumer]:
        return sorted((c for c in self.consumers.values() if c.group == group), key=lambda c: f"{group}-{c.id}")

    def assigned(self, consumer: Consumer, keys) -> list[tuple]:
        members = self.members(consumer.group)
        topics = frozenset().union(*(c.topics for c in members))
        index = members.index(consumer)
        return [k for k in keys if k[0] in topics and k[2] % len(members) == index]

    def position(self, group: Group, key: tuple) -> Position:
        pos = group.positions.get(key)
        if pos is None:
            start = self.saved.get((group.name, key), group.initial.get(key, 0))
            pos = group.positions[key] = Position(committed=start)
        return pos

    def commit_served(self, consumer: Consumer) -> bool:
        """Commit what was served to ``consumer``; False if a reader of its is being read by another one."""
        group = self.groups[consumer.group]
        clash = False
        for key, pos in group.positions.items():
            if pos.served_to == consumer.id:
                pos.committed, pos.served_end, pos.served_to = pos.served_end, None, None
                self.saved[(group.name, key)] = pos.committed
            elif pos.served_to is not None and key[2] % max(1, len(self.members(group.name))) == \
                    self.members(group.name).index(consumer):
                clash = True
        return not clash

    def leave(self, consumer: Consumer) -> None:
        self.consumers.pop(consumer.id, None)
