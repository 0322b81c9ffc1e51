"""Server-side partition assignors of KIP-848 consumer groups: "uniform" (the default) and "range".

An assignor sees each member's subscribed topics and the subscribed topics' partition counts, plus the target
assignment it computed last time, and returns the new target. Partitions are (topic id, partition) pairs.

uniform: every partition goes to one of its subscribers, each member's count within one of any other member
subscribed to the same topics, and a partition stays where it was whenever balance allows (Kafka's
UniformAssignor aims at the same: balanced, then sticky). range: per topic, the subscribers in member-id order
take contiguous ranges, the first ``count % n`` one partition more (RangeAssignor).
"""

from __future__ import annotations

Partition = tuple[bytes, int]


def uniform(subscriptions: dict[str, set[bytes]], counts: dict[bytes, int],
            previous: dict[str, set[Partition]]) -> dict[str, set[Partition]]:
    owners: dict[Partition, str] = {}
    target: dict[str, set[Partition]] = {m: set() for m in subscriptions}
    every = sorted((t, p) for t, n in counts.items() for p in range(n)
                   if any(t in topics for topics in subscriptions.values()))
    fair = -(-len(every) // max(len(subscriptions), 1))  # ceil: what a member may keep before balancing
    for member in sorted(subscriptions):  # sticky first: keep what is still subscribed, up to a fair share
        for tp in sorted(previous.get(member, ())):
            still_exists = 0 <= tp[1] < counts.get(tp[0], 0)
            if still_exists and tp[0] in subscriptions[member] and tp not in owners and len(target[member]) < fair:
                owners[tp] = member
                target[member].add(tp)
    for tp in every:  # the rest to the least loaded subscriber
        if tp not in owners:
            member = min((m for m in subscriptions if tp[0] in subscriptions[m]),
                         key=lambda m: (len(target[m]), m))
            owners[tp] = member
            target[member].add(tp)
    _balance(subscriptions, target)
    return target


def _balance(subscriptions: dict[str, set[bytes]], target: dict[str, set[Partition]]) -> None:
    """Move one partition at a time from a member holding two more than a co-subscriber, until none does."""
    moved = True
    while moved:
        moved = False
        for donor in sorted(target, key=lambda m: (-len(target[m]), m)):
            for tp in sorted(target[donor]):
                takers = [m for m in subscriptions if tp[0] in subscriptions[m]
                          and len(target[m]) + 1 < len(target[donor])]
                if takers:
                    taker = min(takers, key=lambda m: (len(target[m]), m))
                    target[donor].discard(tp)
                    target[taker].add(tp)
                    moved = True
                    break
            if moved:
                break


def range_(subscriptions: dict[str, set[bytes]], counts: dict[bytes, int],
           previous: dict[str, set[Partition]]) -> dict[str, set[Partition]]:
    target: dict[str, set[Partition]] = {m: set() for m in subscriptions}
    for topic, count in counts.items():
        members = sorted(m for m, topics in subscriptions.items() if topic in topics)
        if not members:
            continue
        share, extra = divmod(count, len(members))
        start = 0
        for i, member in enumerate(members):
            size = share + (1 if i < extra else 0)
            target[member].update((topic, p) for p in range(start, start + size))
            start += size
    return target


ASSIGNORS = {"uniform": uniform, "range": range_}
DEFAULT = "uniform"
