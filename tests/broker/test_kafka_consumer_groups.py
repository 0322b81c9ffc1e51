"""The reference broker's KIP-848 coordinator (broker/kafka/consumer_groups.py), driven over the wire.

Requests are encoded and answers decoded with the suite's codec (protocols/kafka/messages.py, kio's definitions
for keys 68/69), not the broker's own, so the two codecs check each other. CG_PROBES gives test_kafka_faults.py a
probe per consumer-group fault.
"""

from __future__ import annotations

import itertools
import time
import uuid

import pytest
from wirecheck.protocols.kafka import messages

from tests.interop.kafka_support import InProcessBroker, Wire

_names = itertools.count()
HEARTBEAT, DESCRIBE = 68, 69


def call(w: Wire, key: int, version: int, body: dict) -> dict:
    w.correlation_id += 1
    w.send_raw(messages.encode_request(key, version, w.correlation_id, "wirecheck-test", body))
    frame = w.recv_frame()
    answer = messages.decode_response(key, version, len(frame).to_bytes(4, "big") + frame)
    assert answer["header"]["CorrelationId"] == w.correlation_id
    return answer["body"]


def create_topic(w: Wire, partitions: int) -> str:
    name = f"cg{next(_names)}-{uuid.uuid4().hex[:6]}"
    body = call(w, 19, 7, {"Topics": [{"Name": name, "NumPartitions": partitions, "ReplicationFactor": 1,
                                       "Assignments": [], "Configs": []}], "TimeoutMs": 5000, "ValidateOnly": False})
    assert body["Topics"][0]["ErrorCode"] == 0
    return name


def heartbeat(w: Wire, group: str, member_id: str, epoch: int, version: int = 1, **fields) -> dict:
    body = {"GroupId": group, "MemberId": member_id, "MemberEpoch": epoch, "InstanceId": None, "RackId": None,
            "RebalanceTimeoutMs": -1, "SubscribedTopicNames": None, "SubscribedTopicRegex": None,
            "ServerAssignor": None, "TopicPartitions": None}
    body.update(fields)
    return call(w, HEARTBEAT, version, body)


def join(w: Wire, group: str, topic: str, member_id: str | None = None, version: int = 1, **fields) -> dict:
    member_id = (str(uuid.uuid4()) if version >= 1 else "") if member_id is None else member_id
    fields = {"RebalanceTimeoutMs": 30000, "SubscribedTopicNames": [topic], "TopicPartitions": [], **fields}
    return heartbeat(w, group, member_id, 0, version, **fields)


def owned(answer: dict) -> list[dict]:
    return answer["Assignment"]["TopicPartitions"] if answer["Assignment"] else []


def count(answer: dict) -> int:
    return sum(len(t["Partitions"]) for t in owned(answer))


def fresh(w: Wire, partitions: int = 2) -> tuple[str, str]:
    return f"group{next(_names)}", create_topic(w, partitions)


@pytest.fixture(scope="module")
def broker():
    with InProcessBroker(consumer_session_ms=1000) as b:
        yield b


def test_v0_member_id_is_assigned_and_v1_kept(broker):
    with broker.wire() as w:
        group, topic = fresh(w)
        assert join(w, group, topic, version=0)["MemberId"]
        mine = str(uuid.uuid4())
        assert join(w, group, topic, member_id=mine)["MemberId"] == mine


def test_range_assignor_splits_contiguously(broker):
    with broker.wire() as w:
        group, topic = fresh(w, 4)
        first = join(w, group, topic, ServerAssignor="range")
        second = join(w, group, topic, ServerAssignor="range")
        # the first revokes what range gives the second, then the second takes it
        revoke = heartbeat(w, group, first["MemberId"], first["MemberEpoch"], TopicPartitions=owned(first))
        done = heartbeat(w, group, first["MemberId"], revoke["MemberEpoch"], TopicPartitions=owned(revoke))
        taken = heartbeat(w, group, second["MemberId"], second["MemberEpoch"], TopicPartitions=[])
        parts = sorted([p for t in owned(revoke) for p in t["Partitions"]]), \
            sorted([p for t in owned(taken) for p in t["Partitions"]])
        assert sorted(parts) == [[0, 1], [2, 3]], parts
        assert done["MemberEpoch"] == taken["MemberEpoch"]


def test_a_silent_member_expires_after_the_session_timeout(broker):
    with broker.wire() as w:
        group, topic = fresh(w)
        gone = join(w, group, topic)
        time.sleep(1.5)  # consumer_session_ms=1000 in this module's broker
        assert heartbeat(w, group, gone["MemberId"], gone["MemberEpoch"])["ErrorCode"] == 25


def test_offset_fetch_v9_checks_the_member_epoch(broker):
    with broker.wire() as w:
        group, topic = fresh(w)
        m = join(w, group, topic)
        ask = {"Groups": [{"GroupId": group, "MemberId": m["MemberId"], "MemberEpoch": m["MemberEpoch"],
                           "Topics": None}], "RequireStable": False}
        assert call(w, 9, 9, ask)["Groups"][0]["ErrorCode"] == 0
        ask["Groups"][0]["MemberEpoch"] += 3
        assert call(w, 9, 9, ask)["Groups"][0]["ErrorCode"] == 113  # STALE_MEMBER_EPOCH


def test_an_empty_classic_group_is_taken_over_and_a_busy_one_refused(broker):
    with broker.wire() as w:
        group, topic = fresh(w)
        commit = {"GroupId": group, "GenerationIdOrMemberEpoch": -1, "MemberId": "", "GroupInstanceId": None,
                  "RetentionTimeMs": -1, "Topics": [{"Name": topic, "Partitions": [
                      {"PartitionIndex": 0, "CommittedOffset": 5, "CommittedLeaderEpoch": -1,
                       "CommittedMetadata": ""}]}]}
        assert call(w, 8, 9, commit)["Topics"][0]["Partitions"][0]["ErrorCode"] == 0  # an Empty classic group
        m = join(w, group, topic)
        assert m["ErrorCode"] == 0
        fetched = call(w, 9, 9, {"Groups": [{"GroupId": group, "MemberId": m["MemberId"],
                                             "MemberEpoch": m["MemberEpoch"], "Topics": None}],
                                 "RequireStable": False})
        assert fetched["Groups"][0]["Topics"][0]["Partitions"][0]["CommittedOffset"] == 5  # offsets kept
        described = call(w, DESCRIBE, 1, {"GroupIds": [group], "IncludeAuthorizedOperations": False})
        assert described["Groups"][0]["GroupState"] in ("Stable", "Reconciling")


def test_a_member_that_never_revokes_is_removed_after_its_rebalance_timeout(broker):
    with broker.wire() as w:
        group, topic = fresh(w, 2)
        first = join(w, group, topic, RebalanceTimeoutMs=300)
        second = join(w, group, topic)
        heartbeat(w, group, first["MemberId"], first["MemberEpoch"], TopicPartitions=owned(first))
        epoch = second["MemberEpoch"]
        for _ in range(5):  # first is told to revoke and never does; second stays alive (session 1 s)
            time.sleep(0.2)
            epoch = heartbeat(w, group, second["MemberId"], epoch, TopicPartitions=[])["MemberEpoch"]
        assert heartbeat(w, group, first["MemberId"], first["MemberEpoch"])["ErrorCode"] == 25
        taken = heartbeat(w, group, second["MemberId"], epoch, TopicPartitions=[])
        assert taken["ErrorCode"] == 0 and count(taken) == 2


# -- one probe per consumer-group fault (test_kafka_faults.py): probe(broker) -> observation -----------------


def _two_members(w: Wire, partitions: int = 2):
    group, topic = fresh(w, partitions)
    first = join(w, group, topic)
    second = join(w, group, topic)
    return group, topic, first, second


def wire_probe(fn):
    """A probe for tests/broker/test_kafka_faults.py: ``fn`` over one wire to the broker."""
    def run(b: InProcessBroker):
        with b.wire() as w:
            return fn(w)
    return run


def _revocation(w: Wire) -> tuple:
    group, _, first, second = _two_members(w)
    told = heartbeat(w, group, first["MemberId"], first["MemberEpoch"], TopicPartitions=owned(first))
    return count(second), told["MemberEpoch"] == first["MemberEpoch"]


def _leave_then_heartbeat(w: Wire) -> int:
    group, topic = fresh(w)
    m = join(w, group, topic)
    heartbeat(w, group, m["MemberId"], -1)
    return heartbeat(w, group, m["MemberId"], m["MemberEpoch"])["ErrorCode"]


def _static_rejoin(w: Wire) -> bool:
    group, topic = fresh(w)
    first = join(w, group, topic, InstanceId="i")
    heartbeat(w, group, first["MemberId"], -2, InstanceId="i")
    return join(w, group, topic, InstanceId="i")["MemberEpoch"] == first["MemberEpoch"]


def _describe_target(w: Wire) -> int:
    group, topic = fresh(w)
    join(w, group, topic)
    body = call(w, DESCRIBE, 1, {"GroupIds": [group], "IncludeAuthorizedOperations": False})
    return len(body["Groups"][0]["Members"][0]["TargetAssignment"]["TopicPartitions"])


def _classic_join(w: Wire) -> int:
    group, topic = fresh(w)
    join(w, group, topic)
    body = call(w, 11, 9, {"GroupId": group, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000, "MemberId": "",
                           "GroupInstanceId": None, "ProtocolType": "consumer", "Reason": None,
                           "Protocols": [{"Name": "range", "Metadata": b""}]})
    return body["ErrorCode"]


def _heartbeat_over_a_classic_member(w: Wire) -> int:
    """A classic group with one joined member, then a KIP-848 join of the same group id: refused (69) unless
    the group's classic member is dropped."""
    group, topic = fresh(w)
    member_id, error = "", 79
    while error == 79:  # v4+: MEMBER_ID_REQUIRED first, then the join with the id given
        body = call(w, 11, 9, {"GroupId": group, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000,
                               "MemberId": member_id, "GroupInstanceId": None, "ProtocolType": "consumer",
                               "Reason": None, "Protocols": [{"Name": "range", "Metadata": b""}]})
        member_id, error = body["MemberId"], body["ErrorCode"]
    assert error == 0, error
    return join(w, group, topic)["ErrorCode"]


def _stale_commit(w: Wire) -> int:
    group, topic = fresh(w)
    m = join(w, group, topic)
    body = call(w, 8, 9, {"GroupId": group, "GenerationIdOrMemberEpoch": m["MemberEpoch"] + 1,
                          "MemberId": m["MemberId"], "GroupInstanceId": None, "RetentionTimeMs": -1,
                          "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 1,
                                                                     "CommittedLeaderEpoch": -1,
                                                                     "CommittedMetadata": ""}]}]})
    return body["Topics"][0]["Partitions"][0]["ErrorCode"]


def _second_epoch_above_first(w: Wire) -> bool:
    _, _, first, second = _two_members(w)
    return second["MemberEpoch"] > first["MemberEpoch"]


def _stale_heartbeat(w: Wire) -> int:
    group, topic = fresh(w)
    m = join(w, group, topic)
    return heartbeat(w, group, m["MemberId"], m["MemberEpoch"] + 5)["ErrorCode"]


def _unknown_member(w: Wire) -> int:
    group, topic = fresh(w)
    join(w, group, topic)
    return heartbeat(w, group, "nobody", 1)["ErrorCode"]


CG_PROBES = {
    "kafka.consumer-group-join-epoch-zero": (wire_probe(lambda w: join(w, *fresh(w))["MemberEpoch"] > 0), True),
    "kafka.consumer-group-member-id-ignored": (wire_probe(lambda w: join(w, *fresh(w), member_id="mine")["MemberId"]),
                                               "mine"),
    "kafka.consumer-group-epoch-not-bumped": (wire_probe(_second_epoch_above_first), True),
    "kafka.consumer-group-assignment-omitted": (wire_probe(lambda w: count(join(w, *fresh(w, 3)))), 3),
    "kafka.consumer-group-reassigns-unrevoked": (wire_probe(lambda w: _revocation(w)[0]), 0),
    "kafka.consumer-group-epoch-before-revocation": (wire_probe(lambda w: _revocation(w)[1]), True),
    "kafka.consumer-group-epoch-unchecked": (wire_probe(_stale_heartbeat), 110),
    "kafka.consumer-group-unknown-member-joins": (wire_probe(_unknown_member), 25),
    "kafka.consumer-group-leave-ignored": (wire_probe(_leave_then_heartbeat), 25),
    "kafka.consumer-group-static-rejoin-rebalances": (wire_probe(_static_rejoin), True),
    "kafka.consumer-group-assignor-unchecked":
        (wire_probe(lambda w: join(w, *fresh(w), ServerAssignor="nope")["ErrorCode"]), 112),
    "kafka.consumer-group-fields-unchecked": (wire_probe(lambda w: join(w, "", create_topic(w, 1))["ErrorCode"]), 42),
    "kafka.consumer-group-describe-no-target": (wire_probe(_describe_target), 1),
    "kafka.consumer-group-classic-join-allowed": (wire_probe(_classic_join), 23),
    "kafka.consumer-group-commit-epoch-unchecked": (wire_probe(_stale_commit), 113),
    "kafka.consumer-group-classic-members-dropped": (wire_probe(_heartbeat_over_a_classic_member), 69),
}


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("key", [HEARTBEAT, DESCRIBE])
def test_kip848_answers_decode_strictly(broker, key, version):
    """The broker's definitions of keys 68/69 (kip848_messages.py) agree with kio's, byte for byte."""
    with broker.wire() as w:
        if key == HEARTBEAT:
            group, topic = fresh(w)
            answer = join(w, group, topic, version=version)
            assert answer["ErrorCode"] == 0 and count(answer) == 2
            again = heartbeat(w, group, answer["MemberId"], answer["MemberEpoch"], version,
                              TopicPartitions=owned(answer))
            assert again["ErrorCode"] == 0 and again["Assignment"] is None  # null: unchanged
        else:
            body = call(w, DESCRIBE, version, {"GroupIds": ["absent"], "IncludeAuthorizedOperations": False})
            assert body["Groups"][0]["ErrorCode"] == 69
