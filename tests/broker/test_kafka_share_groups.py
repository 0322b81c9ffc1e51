"""The reference broker's KIP-932 share groups (share_groups.py, share_partitions.py, share_fetch.py), driven in
process with the suite's codec (kio's definitions of keys 76-79). SHARE_PROBES gives test_kafka_faults.py a probe
per share-group fault (its brokers run with a 300 ms acquisition lock, so expiry is observable).
"""

from __future__ import annotations

import itertools
import time
import uuid

import pytest
from wirecheck.broker.kafka import kip932_messages
from wirecheck.broker.kafka.faults import KafkaFaults
from wirecheck.broker.kafka.share_groups import simple
from wirecheck.broker.kafka.share_partitions import (
    ACCEPT,
    REJECT,
    RELEASE,
    SharePartition,
)

from tests.broker.test_kafka_consumer_groups import call, create_topic, wire_probe
from tests.interop.kafka_support import InProcessBroker, Wire, record_batch

HEARTBEAT, DESCRIBE, SHARE_FETCH, SHARE_ACK = 76, 77, 78, 79
LOCK_MS = 300
_names = itertools.count()


class Member:
    """A share-group member on one wire: joins, fetches partition 0 and acknowledges in its share session."""

    def __init__(self, w: Wire, group: str, topic: str):
        self.w, self.group, self.topic = w, group, topic
        self.member_id, self.epoch, self.session = str(uuid.uuid4()), 0, 0
        self.topic_id = None

    def heartbeat(self, **fields) -> dict:
        body = {"GroupId": self.group, "MemberId": self.member_id, "MemberEpoch": self.epoch, "RackId": None,
                "SubscribedTopicNames": None, **fields}
        return call(self.w, HEARTBEAT, 1, body)

    def join(self) -> dict:
        answer = self.heartbeat(MemberEpoch=0, SubscribedTopicNames=[self.topic])
        self.epoch = answer["MemberEpoch"]
        if answer["Assignment"]:
            self.topic_id = answer["Assignment"]["TopicPartitions"][0]["TopicId"]
        return answer

    def fetch(self, acks=(), epoch: int | None = None, wait_ms: int = 0) -> dict:
        epoch = self.session if epoch is None else epoch
        body = {"GroupId": self.group, "MemberId": self.member_id, "ShareSessionEpoch": epoch, "MaxWaitMs": wait_ms,
                "MinBytes": 1, "MaxBytes": 1 << 20, "MaxRecords": 100, "BatchSize": 100, "ShareAcquireMode": 0,
                "IsRenewAck": False, "Topics": [{"TopicId": self.topic_id, "Partitions": [
                    {"PartitionIndex": 0, "AcknowledgementBatches": list(acks)}]}], "ForgottenTopicsData": []}
        answer = call(self.w, SHARE_FETCH, 2, body)
        if answer["ErrorCode"] == 0 and epoch == self.session:
            self.session += 1
        return answer

    def acknowledge(self, batches) -> dict:
        body = {"GroupId": self.group, "MemberId": self.member_id, "ShareSessionEpoch": self.session,
                "IsRenewAck": False, "Topics": [{"TopicId": self.topic_id, "Partitions": [
                    {"PartitionIndex": 0, "AcknowledgementBatches": list(batches)}]}]}
        answer = call(self.w, SHARE_ACK, 2, body)
        if answer["ErrorCode"] == 0:
            self.session += 1
        return answer


def acquired(answer: dict) -> dict[int, int]:
    return {o: r["DeliveryCount"] for t in answer["Responses"] for p in t["Partitions"]
            for r in p["AcquiredRecords"] for o in range(r["FirstOffset"], r["LastOffset"] + 1)}


def ack(first: int, last: int, kind: int) -> dict:
    return {"FirstOffset": first, "LastOffset": last, "AcknowledgeTypes": [kind]}


def produce(w: Wire, topic: str, count: int) -> None:
    body = {"TransactionalId": None, "Acks": 1, "TimeoutMs": 1000, "TopicData": [
        {"Name": topic, "PartitionData": [{"Index": 0, "Records": record_batch([b"v"] * count)}]}]}
    assert call(w, 0, 9, body)["Responses"][0]["PartitionResponses"][0]["ErrorCode"] == 0


def opened(w: Wire, partitions: int = 1, members: int = 1) -> list[Member]:
    """Members joined to a fresh group on a fresh topic, each with an open share session (latest: empty)."""
    topic, group = create_topic(w, partitions), f"share{next(_names)}"
    out = [Member(w, group, topic) for _ in range(members)]
    for m in out:
        m.join()
        m.fetch()
    return out


def holding(w: Wire, count: int = 1, members: int = 1) -> list[Member]:
    """The first member holds ``count`` fresh records (offsets 0..count-1)."""
    out = opened(w, members=members)
    produce(w, out[0].topic, count)
    assert set(acquired(out[0].fetch(wait_ms=500))) == set(range(count))
    return out


@pytest.fixture(scope="module")
def broker():
    with InProcessBroker(share_lock_ms=LOCK_MS) as b:
        yield b


def test_two_members_share_the_only_partition_and_records_go_to_one(broker):
    with broker.wire() as w:
        a, b = opened(w, members=2)
        a.heartbeat()
        assert b.join()["Assignment"]["TopicPartitions"][0]["Partitions"] == [0]
        produce(w, a.topic, 4)
        mine = acquired(a.fetch(wait_ms=500))
        assert mine == {0: 1, 1: 1, 2: 1, 3: 1}
        assert acquired(b.fetch()) == {}
        released = a.acknowledge([ack(0, 1, ACCEPT), ack(2, 3, RELEASE)])
        assert released["Responses"][0]["Partitions"][0]["ErrorCode"] == 0
        assert acquired(b.fetch()) == {2: 2, 3: 2}
        again = a.fetch(acks=[ack(2, 2, ACCEPT)])  # held by the other member now
        assert again["Responses"][0]["Partitions"][0]["AcknowledgeErrorCode"] == 121


def test_expired_locks_archive_at_the_delivery_limit(broker):
    with broker.wire() as w:
        (a,) = holding(w)
        counts = [1]
        for _ in range(6):
            time.sleep(LOCK_MS / 1000 + 0.1)
            got = acquired(a.fetch())
            if not got:
                break
            counts.append(got[0])
        assert counts == [1, 2, 3, 4, 5]


def test_closing_the_session_ends_it_and_acks_at_epoch_zero_are_invalid(broker):
    with broker.wire() as w:
        (a,) = opened(w)
        assert a.fetch(epoch=-1)["ErrorCode"] == 42  # a closing ShareFetch cannot fetch
        assert a.fetch(epoch=0, acks=[ack(0, 0, ACCEPT)])["ErrorCode"] == 42
        closing = call(w, SHARE_FETCH, 2, {"GroupId": a.group, "MemberId": a.member_id, "ShareSessionEpoch": -1,
                                           "MaxWaitMs": 0, "MinBytes": 1, "MaxBytes": 1, "MaxRecords": 1,
                                           "BatchSize": 1, "Topics": [], "ForgottenTopicsData": []})
        assert closing["ErrorCode"] == 0
        assert a.fetch(epoch=1)["ErrorCode"] == 122


def test_simple_assignor_shares_partitions_only_when_members_outnumber_them():
    t = b"t" * 16
    both = simple({"a": {t}, "b": {t}, "c": {t}}, {t: 2}, {})
    assert sorted(len(v) for v in both.values()) == [1, 1, 1] and set().union(*both.values()) == {(t, 0), (t, 1)}
    assert simple({"a": {t}, "b": {t}}, {t: 1}, {}, exclusive=True) in ({"a": {(t, 0)}, "b": set()},
                                                                          {"a": set(), "b": {(t, 0)}})


def test_the_in_flight_window_is_bounded():
    share = SharePartition(0, 30000, 5, 3, KafkaFaults())
    assert share.acquire("m", 0, 10, 100) == [(0, 2, 1)]
    assert share.first_acquirable(10) is None  # three records locked: the window is full
    share.acknowledge(0, 1, [ACCEPT])
    assert share.start == 2 and len(share.records) == 1


def test_transaction_markers_are_archived_undelivered():
    share = SharePartition(0, 30000, 5, 100, KafkaFaults())
    assert share.acquire("m", 0, 2, 10) == [(0, 1, 1)]
    share.skip_control(2, 2)  # a marker after the two records, and another past the in-flight end
    share.skip_control(5, 5)
    share.acknowledge(0, 1, [ACCEPT])
    assert share.start == 3 and share.acquire("m", 3, 7, 10) == [(3, 4, 1), (6, 6, 1)]


def test_a_huge_acknowledgement_range_is_refused_at_once(broker):
    with broker.wire() as w:
        (a,) = holding(w)
        started = time.monotonic()
        answer = a.acknowledge([ack(0, (1 << 62), ACCEPT)])
        assert answer["Responses"][0]["Partitions"][0]["ErrorCode"] == 121
        assert time.monotonic() - started < 1


# -- one probe per share-group fault, for test_kafka_faults.py -----------------------------------------------------


def _after_ack(kind: int):
    def probe(w: Wire):
        (a,) = holding(w)
        a.acknowledge([ack(0, 0, kind)])
        return acquired(a.fetch(wait_ms=100))
    return probe


def _describe(w: Wire) -> int:
    (a,) = opened(w)
    body = call(w, DESCRIBE, 1, {"GroupIds": [a.group], "IncludeAuthorizedOperations": False})
    return sum(len(t["Partitions"]) for m in body["Groups"][0]["Members"] for t in m["Assignment"]["TopicPartitions"])


def _deliveries(w: Wire) -> int:
    (a,) = holding(w)
    for n in range(1, 8):
        a.acknowledge([ack(0, 0, RELEASE)])
        if not acquired(a.fetch()):
            return n
    return 8


def _expired(w: Wire) -> dict:
    _, b = holding(w, members=2)
    time.sleep(LOCK_MS / 1000 + 0.1)
    return acquired(b.fetch())


def _leave_then_heartbeat(w: Wire) -> int:
    (a,) = opened(w)
    a.heartbeat(MemberEpoch=-1)
    return a.heartbeat()["ErrorCode"]


def _stale_epoch(w: Wire) -> int:
    (a,) = opened(w)
    return a.heartbeat(MemberEpoch=a.epoch + 5)["ErrorCode"]


def _unknown_member(w: Wire) -> int:
    (a,) = opened(w)
    return a.heartbeat(MemberId="nobody")["ErrorCode"]


def _empty_group_id(w: Wire) -> int:
    (a,) = opened(w)
    return a.heartbeat(GroupId="", MemberEpoch=0)["ErrorCode"]


def _acquired_count(w: Wire) -> int:
    (a,) = opened(w)
    produce(w, a.topic, 2)
    return len(acquired(a.fetch(wait_ms=500)))


def _foreign_ack(w: Wire) -> int:
    _, b = holding(w, members=2)
    return b.acknowledge([ack(0, 0, ACCEPT)])["Responses"][0]["Partitions"][0]["ErrorCode"]


def _overlapping_acks(w: Wire) -> int:
    (a,) = holding(w, 3)
    return a.acknowledge([ack(0, 1, ACCEPT), ack(1, 2, ACCEPT)])["Responses"][0]["Partitions"][0]["ErrorCode"]


def _wrong_session_epoch(w: Wire) -> int:
    (a,) = opened(w)
    return a.fetch(epoch=5)["ErrorCode"]


def _no_session(w: Wire) -> int:
    a = Member(w, f"share{next(_names)}", create_topic(w, 1))
    a.join()
    return a.fetch(epoch=1)["ErrorCode"]


SHARE_PROBES = {
    "kafka.share-group-join-epoch-zero": (wire_probe(lambda w: opened(w)[0].epoch > 0), True),
    "kafka.share-group-assignment-omitted": (wire_probe(lambda w: Member(w, f"share{next(_names)}", create_topic(w, 1))
                                                    .join()["Assignment"] is not None), True),
    "kafka.share-group-epoch-unchecked": (wire_probe(_stale_epoch), 110),
    "kafka.share-group-unknown-member-joins": (wire_probe(_unknown_member), 25),
    "kafka.share-group-leave-ignored": (wire_probe(_leave_then_heartbeat), 25),
    "kafka.share-group-fields-unchecked": (wire_probe(_empty_group_id), 42),
    "kafka.share-group-describe-no-assignment": (wire_probe(_describe), 1),
    "kafka.share-fetch-acquired-records-omitted": (wire_probe(_acquired_count), 2),
    "kafka.share-records-acquired-twice": (wire_probe(lambda w: acquired(holding(w, members=2)[1].fetch())), {}),
    "kafka.share-accept-redelivers": (wire_probe(_after_ack(ACCEPT)), {}),
    "kafka.share-release-ignored": (wire_probe(_after_ack(RELEASE)), {0: 2}),
    "kafka.share-reject-redelivers": (wire_probe(_after_ack(REJECT)), {}),
    "kafka.share-ack-state-unchecked": (wire_probe(_foreign_ack), 121),
    "kafka.share-ack-batches-unchecked": (wire_probe(_overlapping_acks), 42),
    "kafka.share-delivery-count-frozen": (wire_probe(_after_ack(RELEASE)), {0: 2}),
    "kafka.share-delivery-limit-ignored": (wire_probe(_deliveries), 5),
    "kafka.share-lock-never-expires": (wire_probe(_expired), {0: 2}),
    "kafka.share-session-epoch-unchecked": (wire_probe(_wrong_session_epoch), 123),
    "kafka.share-session-unknown-opens": (wire_probe(_no_session), 122),
}



def _as_json(fd) -> dict:
    """A field of kio's definitions (folded by the suite's protocols.kafka.kio_definitions) in the JSON model."""
    out = {"name": fd.name, "type": fd.type, "versions": str(fd.versions)}
    if str(fd.nullable_versions) != "none":
        out["nullableVersions"] = str(fd.nullable_versions)
    if fd.tag is not None and str(fd.tagged_versions) != "none":
        out["tag"], out["taggedVersions"] = fd.tag, str(fd.tagged_versions)
    if fd.default is not None:
        out["default"] = fd.default
    if fd.fields is not None:
        out["fields"] = [_as_json(child) for child in fd.fields]
    return out


@pytest.mark.parametrize("key", kip932_messages.SHARE_KEYS)
def test_the_brokers_share_definitions_are_kios(key):
    """kip932_messages.py writes the facts down for the broker (which imports nothing of the suite); they are the
    definitions kio generates from Apache Kafka's JSON, field for field."""
    from wirecheck.protocols.kafka import kio_definitions

    for folded in kio_definitions.definitions(key):
        ours = kip932_messages.definition(folded.name)
        assert ours == {"name": folded.name, "type": folded.kind, "apiKey": key,
                        "validVersions": str(folded.valid_versions), "flexibleVersions": str(folded.flexible_versions),
                        "fields": [_as_json(fd) for fd in folded.fields]}
