"""Consumer group commits (seed §Offset Commit, §Offset Fetch)."""

import pytest

from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.rustlog.client import C, new_topic, partition_count, short

case = pytest.mark.case


@case("rustlog.commit.round-trip")
def test_commit_then_fetch(target):
    client, topic = new_topic(target, partitions=2, shared=True)
    group = target.unique("g")
    for offset in (5, 2, 7):  # the last commit wins, even when it moves backwards
        if client.commit(group, topic, 1, offset) is not True:
            raise Divergence(C["rustlog.commit.round-trip"], "success true", "success false")
    got = client.committed(group, topic, 1)
    if got != 7:
        raise Divergence(C["rustlog.commit.round-trip"], "offset 7", repr(got))
    other = client.committed(group, topic, 0)
    if other is not None:  # one of our commits to partition 1 is the round trip's; any other value no-commit-null's
        clause = "rustlog.commit.round-trip" if other in (5, 2, 7) else "rustlog.commit.no-commit-null"
        raise Divergence(C[clause], "partition 0 uncommitted (null)", repr(other))


@case("rustlog.commit.group-isolation")
def test_groups_are_isolated(target):
    client, topic = new_topic(target, shared=True)
    a, b = target.unique("ga"), target.unique("gb")
    client.commit(a, topic, 0, 10)
    client.commit(b, topic, 0, 20)
    got = (client.committed(a, topic, 0), client.committed(b, topic, 0))
    if got != (10, 20):
        raise Divergence(C["rustlog.commit.group-isolation"], "(10, 20)", str(got))


@case("rustlog.commit.no-commit-null")
def test_nothing_committed_is_null(target):
    client, topic = new_topic(target, shared=True)
    got = client.committed(target.unique("fresh"), topic, 0)
    if got is not None:
        raise Divergence(C["rustlog.commit.no-commit-null"], "offset null", repr(got))


@case("rustlog.commit.unknown-topic")
@pytest.mark.parametrize("where", ["topic", "partition"])
def test_commit_to_unknown_topic_or_partition_fails(target, where):
    client, topic = new_topic(target, shared=True)
    name, partition = (target.unique("missing"), 0) if where == "topic" else \
        (topic, partition_count(target, client, topic))
    answer = client.call({"type": "OffsetCommit", "group": target.unique("g"), "topic": name,
                          "partition": partition, "offset": 1}, "rustlog.commit.unknown-topic")
    if answer != {"type": "OffsetCommitResponse", "success": False}:
        raise Divergence(C["rustlog.commit.unknown-topic"], "OffsetCommitResponse success false", short(answer))
