"""Kafka personality: the group coordinator's transitions and committed offsets, over raw sockets."""

from __future__ import annotations

import itertools
import time

import pytest
from kafka.protocol.admin.groups import (DescribeGroupsRequest, DescribeGroupsResponse, ListGroupsRequest,
                                         ListGroupsResponse)
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.group import (HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
                                           JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse,
                                           OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
                                           OffsetFetchResponse, SyncGroupRequest, SyncGroupResponse)
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse

from tests.interop.kafka_support import InProcessBroker, Wire, build

JOIN_V = 7
_ids = itertools.count()


@pytest.fixture(scope="module")
def broker():
    with InProcessBroker() as b:
        yield b


def group_name() -> str:
    return f"g{next(_ids)}"


def join_request(group: str, member_id: str = "", metadata: bytes = b"meta", session_ms: int = 10000,
                 rebalance_ms: int = 5000, protocols=None):
    protocols = protocols or [("range", metadata)]
    return build(JoinGroupRequest, JOIN_V, group_id=group, session_timeout_ms=session_ms,
                 rebalance_timeout_ms=rebalance_ms, member_id=member_id, group_instance_id=None,
                 protocol_type="consumer", protocols=[{"name": n, "metadata": m} for n, m in protocols])


def join(w: Wire, group: str, member_id: str = "", **kw):
    w.send(join_request(group, member_id, **kw))
    return w.recv(JoinGroupResponse, JOIN_V)


def join_new(w: Wire, group: str, **kw):
    """KIP-394: the first JoinGroup gets MEMBER_ID_REQUIRED and an id; the second joins with it."""
    first = join(w, group, **kw)
    assert first.error_code == 79 and first.member_id
    return join(w, group, first.member_id, **kw)


def sync(w: Wire, group: str, generation: int, member_id: str, assignments=()):
    return w.call(SyncGroupRequest, SyncGroupResponse, 5, group_id=group, generation_id=generation,
                  member_id=member_id, group_instance_id=None, protocol_type="consumer", protocol_name="range",
                  assignments=[{"member_id": m, "assignment": a} for m, a in assignments])


def heartbeat(w: Wire, group: str, generation: int, member_id: str) -> int:
    return w.call(HeartbeatRequest, HeartbeatResponse, 4, group_id=group, generation_id=generation,
                  member_id=member_id, group_instance_id=None).error_code


def test_find_coordinator_names_this_broker(broker):
    with broker.wire() as w:
        old = w.call(FindCoordinatorRequest, FindCoordinatorResponse, 2, key="g", key_type=0)
        new = w.call(FindCoordinatorRequest, FindCoordinatorResponse, 6, key_type=0, coordinator_keys=["a", "b"])
    assert (old.error_code, old.host, old.port) == (0, "127.0.0.1", broker.port)
    assert [(c.key, c.port, c.error_code) for c in new.coordinators] == [("a", broker.port, 0), ("b", broker.port, 0)]


def test_single_member_join_sync_heartbeat(broker):
    group = group_name()
    with broker.wire() as w:
        joined = join_new(w, group)
        assert joined.error_code == 0 and joined.generation_id == 1
        assert joined.leader == joined.member_id
        assert [(m.member_id, m.metadata) for m in joined.members] == [(joined.member_id, b"meta")]
        synced = sync(w, group, 1, joined.member_id, [(joined.member_id, b"assign-A")])
        assert (synced.error_code, synced.assignment) == (0, b"assign-A")
        assert heartbeat(w, group, 1, joined.member_id) == 0
        assert heartbeat(w, group, 0, joined.member_id) == 22
        assert heartbeat(w, group, 1, "stranger") == 25


def test_second_member_triggers_rebalance_and_leader_assigns(broker):
    group = group_name()
    with broker.wire() as a, broker.wire() as b:
        ja = join_new(a, group, metadata=b"meta-A")
        sync(a, group, ja.generation_id, ja.member_id, [(ja.member_id, b"all")])
        first_b = join(b, group, metadata=b"meta-B")
        b.send(join_request(group, first_b.member_id, metadata=b"meta-B"))  # blocks until A rejoins
        time.sleep(0.1)
        assert heartbeat(a, group, ja.generation_id, ja.member_id) == 27
        ja2 = join(a, group, ja.member_id, metadata=b"meta-A")
        jb = b.recv(JoinGroupResponse, JOIN_V)
        assert ja2.generation_id == jb.generation_id == ja.generation_id + 1
        assert ja2.leader == jb.leader == ja.member_id
        assert sorted((m.member_id, m.metadata) for m in ja2.members) == sorted(
            [(ja.member_id, b"meta-A"), (jb.member_id, b"meta-B")])
        assert jb.members == []
        b.send(build(SyncGroupRequest, 5, group_id=group, generation_id=jb.generation_id, member_id=jb.member_id,
                     group_instance_id=None, protocol_type="consumer", protocol_name="range", assignments=[]))
        time.sleep(0.05)
        sa = sync(a, group, ja2.generation_id, ja.member_id, [(ja.member_id, b"p0"), (jb.member_id, b"p1")])
        sb = b.recv(SyncGroupResponse, 5)
        assert (sa.assignment, sb.assignment) == (b"p0", b"p1")
        described = a.call(DescribeGroupsRequest, DescribeGroupsResponse, 5, groups=[group],
                           include_authorized_operations=False).groups[0]
        assert described.group_state == "Stable" and len(described.members) == 2
        missing = a.call(DescribeGroupsRequest, DescribeGroupsResponse, 6, groups=["nope"],
                         include_authorized_operations=False).groups[0]
        assert (missing.error_code, missing.group_state) == (69, "Dead")
        listed = a.call(ListGroupsRequest, ListGroupsResponse, 4, states_filter=["Stable"]).groups
        assert group in {g.group_id for g in listed}


def test_leave_triggers_rebalance_for_the_rest(broker):
    group = group_name()
    with broker.wire() as a, broker.wire() as b:
        ja = join_new(a, group)
        sync(a, group, 1, ja.member_id, [(ja.member_id, b"x")])
        first_b = join(b, group)
        b.send(join_request(group, first_b.member_id))
        time.sleep(0.05)
        ja2 = join(a, group, ja.member_id)
        jb = b.recv(JoinGroupResponse, JOIN_V)
        b.send(build(SyncGroupRequest, 5, group_id=group, generation_id=jb.generation_id, member_id=jb.member_id,
                     group_instance_id=None, protocol_type="consumer", protocol_name="range", assignments=[]))
        sync(a, group, ja2.generation_id, ja.member_id, [])
        b.recv(SyncGroupResponse, 5)
        left = b.call(LeaveGroupRequest, LeaveGroupResponse, 5, group_id=group,
                      members=[{"member_id": jb.member_id, "group_instance_id": None}])
        assert left.error_code == 0 and left.members[0].error_code == 0
        assert heartbeat(a, group, ja2.generation_id, ja.member_id) == 27
        ja3 = join(a, group, ja.member_id)
        assert ja3.generation_id == ja2.generation_id + 1 and len(ja3.members) == 1


def test_session_timeout_removes_a_silent_member(broker):
    group = group_name()
    with broker.wire() as w:
        joined = join_new(w, group, session_ms=300)
        sync(w, group, 1, joined.member_id, [(joined.member_id, b"x")])
        time.sleep(0.6)
        assert heartbeat(w, group, 1, joined.member_id) == 25


def test_join_errors(broker):
    with broker.wire() as w:
        assert join(w, "").error_code == 24
        assert join(w, group_name(), session_ms=10).error_code == 26
        assert join(w, group_name(), member_id="never-issued").error_code == 25
        group = group_name()
        join_new(w, group)
        other = join(w, group, protocols=[("roundrobin", b"")])
        assert other.error_code == 23


def test_commit_and_fetch_offsets(broker):
    group = group_name()
    with broker.wire() as w:
        w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
            {"name": group + "-t", "num_partitions": 2, "replication_factor": 1}], timeout_ms=1000)
        joined = join_new(w, group)
        sync(w, group, 1, joined.member_id, [])

        def commit(generation, member, version=8, partition=0):
            return w.call(OffsetCommitRequest, OffsetCommitResponse, version, group_id=group,
                          generation_id_or_member_epoch=generation, member_id=member, group_instance_id=None,
                          topics=[{"name": group + "-t", "partitions": [
                              {"partition_index": partition, "committed_offset": 42, "committed_leader_epoch": -1,
                               "committed_metadata": "m"}]}]).topics[0].partitions[0].error_code

        assert commit(1, joined.member_id) == 0
        assert commit(7, joined.member_id) == 22
        assert commit(1, "stranger") == 25
        assert commit(1, joined.member_id, partition=9) == 3
        assert commit(-1, "") == 25  # a simple commit into a group with members
        assert w.call(OffsetCommitRequest, OffsetCommitResponse, 8, group_id="no-such-group",
                      generation_id_or_member_epoch=3, member_id="m", group_instance_id=None, topics=[
                          {"name": group + "-t", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                                  "committed_leader_epoch": -1,
                                                                  "committed_metadata": ""}]}]
                      ).topics[0].partitions[0].error_code == 22
        old = w.call(OffsetFetchRequest, OffsetFetchResponse, 5, group_id=group,
                     topics=[{"name": group + "-t", "partition_indexes": [0, 1]}])
        assert [(p.committed_offset, p.metadata) for p in old.topics[0].partitions] == [(42, "m"), (-1, "")]
        new = w.call(OffsetFetchRequest, OffsetFetchResponse, 8, groups=[
            {"group_id": group, "topics": None}], require_stable=False)
        assert [(t.name, [p.committed_offset for p in t.partitions]) for t in new.groups[0].topics] == [
            (group + "-t", [42])]


def test_simple_commit_without_membership(broker):
    group = group_name()
    with broker.wire() as w:
        w.call(CreateTopicsRequest, CreateTopicsResponse, 7, topics=[
            {"name": group + "-t", "num_partitions": 1, "replication_factor": 1}], timeout_ms=1000)
        resp = w.call(OffsetCommitRequest, OffsetCommitResponse, 3, group_id=group,
                      generation_id_or_member_epoch=-1, member_id="", topics=[{"name": group + "-t", "partitions": [
                          {"partition_index": 0, "committed_offset": 7, "committed_metadata": None}]}])
        assert resp.topics[0].partitions[0].error_code == 0
        got = w.call(OffsetFetchRequest, OffsetFetchResponse, 3, group_id=group,
                     topics=[{"name": group + "-t", "partition_indexes": [0]}])
        assert got.topics[0].partitions[0].committed_offset == 7


def test_static_member_rejoin_replaces_the_old_incarnation_without_rebalance(broker):
    group = group_name()

    def static_join(w, member_id=""):
        w.send(build(JoinGroupRequest, JOIN_V, group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=5000,
                     member_id=member_id, group_instance_id="instance-1", protocol_type="consumer",
                     protocols=[{"name": "range", "metadata": b"m"}]))
        return w.recv(JoinGroupResponse, JOIN_V)

    with broker.wire() as w:
        first = static_join(w)
        assert first.error_code == 0 and first.generation_id == 1  # static members skip MEMBER_ID_REQUIRED
        sync(w, group, 1, first.member_id, [(first.member_id, b"mine")])
        again = static_join(w)  # e.g. after a restart
        assert again.error_code == 0 and again.member_id != first.member_id
        assert again.generation_id == 1  # Stable and unchanged: no rebalance
        assert w.call(HeartbeatRequest, HeartbeatResponse, 4, group_id=group, generation_id=1,
                      member_id=first.member_id, group_instance_id="instance-1").error_code == 82
        synced = w.call(SyncGroupRequest, SyncGroupResponse, 5, group_id=group, generation_id=1,
                        member_id=again.member_id, group_instance_id="instance-1", protocol_type="consumer",
                        protocol_name="range", assignments=[])
        assert (synced.error_code, synced.assignment) == (0, b"mine")
        left = w.call(LeaveGroupRequest, LeaveGroupResponse, 5, group_id=group,
                      members=[{"member_id": "", "group_instance_id": "instance-1"}])
        assert left.members[0].error_code == 0
        assert w.call(DescribeGroupsRequest, DescribeGroupsResponse, 5, groups=[group],
                      include_authorized_operations=False).groups[0].members == []
