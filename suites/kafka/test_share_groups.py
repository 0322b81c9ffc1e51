"""KIP-932 share groups: ShareGroupHeartbeat (76), ShareGroupDescribe (77), ShareFetch (78), ShareAcknowledge (79).
A target that does not advertise the APIs is UNIMPLEMENTED for every case here.

Each case drives members by hand on their own connections (share_members.ShareMember): it joins a fresh group, opens a
share session with a first ShareFetch (which also fixes the share partition's start: latest by default), produces
to a fresh topic, then fetches and acknowledges. Waits are the clients' own (MaxWaitMs 500 when records are
expected, 300 when none should come). The lock-expiry case waits for the lock the target reports
(AcquisitionLockTimeoutMs), and only when it is at most 3 s: a broker at Kafka's default (30 s, at least 15 s)
is UNIMPLEMENTED there; the reference broker takes --kafka-share-lock-ms. The stateful model of delivery is
test_share_stateful.py.
"""

from __future__ import annotations

import time
import uuid

import pytest
from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.kafka.client import C, expect, short
from wirecheck.suites.kafka.share_members import (
    ACCEPT,
    DESCRIBE,
    FENCED_MEMBER_EPOCH,
    INVALID_RECORD_STATE,
    INVALID_SHARE_SESSION_EPOCH,
    LEAVE,
    NOTHING_MS,
    REJECT,
    RELEASE,
    SHARE_SESSION_NOT_FOUND,
    Setup,
    ack,
    ack_error,
    acquired,
    holding,
)
from wirecheck.suites.kafka.consumer_groups import partitions_of

case = pytest.mark.case

MAX_LOCK_WAIT_MS = 3000  # the longest acquisition lock the expiry case waits out
MAX_DELIVERY_LIMIT = 10  # group.share.max.delivery.count.limit: no broker allows more deliveries


# ------------------------------------------------------------------------------------------------ membership

@case("kafka.share-group.join")
def test_a_member_joins_with_epoch_zero(target):
    clause = "kafka.share-group.join"
    m = Setup(target).member()
    answer = m.join()
    if answer["MemberId"] not in (None, m.member_id) or answer["HeartbeatIntervalMs"] <= 0:
        raise Divergence(C[clause], f"MemberId {m.member_id} (the client's own) and HeartbeatIntervalMs > 0",
                         short(answer))


@case("kafka.share-group.assignment")
def test_the_sole_member_is_assigned_every_partition(target):
    clause = "kafka.share-group.assignment"
    s = Setup(target, partitions=2)
    m = s.member()
    with target.precondition(f"member joined share group {s.group}"):
        m.join()
    wanted = {(s.topic_id, p) for p in range(s.partitions)}
    m.settle(clause, lambda: m.owned == wanted, f"Assignment: the {s.partitions} partitions of {s.topic}")


@case("kafka.share-group.shared-partitions")
def test_members_share_a_partition(target):
    clause = "kafka.share-group.shared-partitions"
    s = Setup(target)
    a, b = s.member(), s.member()
    wanted = {(s.topic_id, 0)}
    with target.precondition(f"two members joined share group {s.group}"):
        a.join()
        a.assigned_everything()  # its share partition initialized: what follows is the assignor's choice alone
        b.join()
    b.settle(clause, lambda: wanted <= b.owned or b.settled(), "partition 0 assigned, or the group settled")
    a.settle(clause, a.settled, "the first member at the group's epoch")
    if a.owned != wanted or b.owned != wanted:
        raise Divergence(C[clause], f"partition 0 of {s.topic} assigned to both members",
                         f"first {sorted(a.owned)}, second {sorted(b.owned)}")


@case("kafka.share-group.fenced-epoch")
def test_a_stale_member_epoch_is_fenced(target):
    clause = "kafka.share-group.fenced-epoch"
    m = Setup(target).member()
    with target.precondition("member joined"):
        m.join()
    expect(clause, m.heartbeat(clause, MemberEpoch=m.epoch + 5)["ErrorCode"], FENCED_MEMBER_EPOCH)


@case("kafka.share-group.unknown-member")
def test_an_unknown_member_is_refused(target):
    clause = "kafka.share-group.unknown-member"
    m = Setup(target).member()
    with target.precondition("member joined"):
        m.join()
    answer = m.heartbeat(clause, MemberId=str(uuid.uuid4()), MemberEpoch=m.epoch)
    expect(clause, answer["ErrorCode"], errors.UNKNOWN_MEMBER_ID)


@case("kafka.share-group.leave")
def test_a_member_leaves_with_epoch_minus_one(target):
    clause = "kafka.share-group.leave"
    m = Setup(target).member()
    with target.precondition("member joined"):
        m.join()
    answer = m.heartbeat(clause, MemberEpoch=LEAVE)
    expect(clause, answer["ErrorCode"], errors.NONE)
    if answer["MemberEpoch"] != LEAVE:
        raise Divergence(C[clause], "MemberEpoch -1", f"MemberEpoch {answer['MemberEpoch']}")
    expect(clause, m.heartbeat(clause)["ErrorCode"], errors.UNKNOWN_MEMBER_ID)


@case("kafka.share-group.invalid-request")
@pytest.mark.parametrize("flaw", ["empty-group-id", "empty-member-id", "no-subscription"])
def test_a_join_missing_required_fields_is_invalid(target, flaw):
    clause = "kafka.share-group.invalid-request"
    m = Setup(target).member()
    fields = {"MemberEpoch": 0, "SubscribedTopicNames": [m.topic]}
    fields.update({"empty-group-id": {"GroupId": ""}, "empty-member-id": {"MemberId": ""},
                   "no-subscription": {"SubscribedTopicNames": None}}[flaw])
    expect(clause, m.heartbeat(clause, **fields)["ErrorCode"], errors.INVALID_REQUEST)


@case("kafka.share-group.describe")
def test_describe_lists_members_and_assignments(target):
    clause = "kafka.share-group.describe"
    m = Setup(target).member()
    with target.precondition("member joined and was assigned the topic"):
        m.join()
        m.assigned_everything()
    missing = target.unique("sg-missing")
    body = m.client.call(DESCRIBE, m.client.version(DESCRIBE, 1, low=1),
                         {"GroupIds": [m.group, missing], "IncludeAuthorizedOperations": False}, clause)
    described = {g["GroupId"]: g for g in body["Groups"]}
    if m.group not in described or missing not in described:
        raise Divergence(C[clause], f"both groups {m.group} and {missing} described", short(body))
    group = described[m.group]
    expect(clause, group["ErrorCode"], errors.NONE)
    expect(clause, described[missing]["ErrorCode"], errors.GROUP_ID_NOT_FOUND)
    members = {x["MemberId"]: x for x in group["Members"]}
    mine = members.get(m.member_id)
    if mine is None or len(members) != 1:
        raise Divergence(C[clause], f"the one member {m.member_id}", f"members {sorted(members)}")
    if mine["MemberEpoch"] != m.epoch or partitions_of(mine["Assignment"]) != m.owned or group["GroupEpoch"] < m.epoch \
            or not group["AssignorName"]:
        raise Divergence(C[clause], f"member epoch {m.epoch}, assignment {sorted(m.owned)}, group epoch >= {m.epoch}"
                                    " and an assignor", short(group))


# ------------------------------------------------------------------------------------------------ acquisition

@case("kafka.share-fetch.acquire")
def test_share_fetch_acquires_the_records(target):
    clause = "kafka.share-fetch.acquire"
    s = Setup(target)
    m = s.joined()
    offsets = s.produce(3)
    answer = m.fetch(clause)
    got = acquired(answer, clause)
    for _ in range(2):
        if set(offsets) <= set(got):
            break
        answer = m.fetch(clause)
        got.update(acquired(answer, clause))
    if {o: got.get(o) for o in offsets} != {o: 1 for o in offsets} or answer["AcquisitionLockTimeoutMs"] <= 0:
        raise Divergence(C[clause], f"offsets {offsets} acquired with DeliveryCount 1 and a lock above 0 ms",
                         f"acquired {got}, AcquisitionLockTimeoutMs {answer['AcquisitionLockTimeoutMs']}")


@case("kafka.share-fetch.exclusive")
def test_a_locked_record_goes_to_no_other_member(target):
    clause = "kafka.share-fetch.exclusive"
    s, _a, offsets = holding(target, 2)
    b = s.another()
    got = b.take_records(clause, want=1, wait_ms=NOTHING_MS, tries=1)
    if set(got) & set(offsets):
        raise Divergence(C[clause], f"none of {offsets} (locked by the first member)", f"acquired {sorted(got)}")


@case("kafka.share-fetch.initial-offset")
def test_a_new_share_partition_starts_at_latest(target):
    clause = "kafka.share-fetch.initial-offset"
    s = Setup(target)
    old = s.produce(2)
    m = s.member()
    with target.precondition("member joined and was assigned the topic"):
        m.join()
        m.assigned_everything()
    with target.precondition("the share partition's start fixed (a marker produced after it acquired)"):
        m.open()  # the share partition's first use
        got = s.started(m)  # everything acquired so far: none of the old records may be among it
    new = s.produce(1)
    got.update(m.take_records(clause, want=1))
    if set(got) & set(old) or not set(new) <= set(got):
        raise Divergence(C[clause], f"offset {new} delivered, none of {old} (produced before the first fetch)",
                         f"acquired {sorted(got)}")


# ------------------------------------------------------------------------------------------------ acknowledgement

@case("kafka.share-ack.accept")
def test_an_accepted_record_is_not_delivered_again(target):
    clause = "kafka.share-ack.accept"
    _s, m, offsets = holding(target, 2)
    expect(clause, ack_error(m.acknowledge(clause, [ack(offsets[0], offsets[-1], ACCEPT)]), clause, fetch=False),
           errors.NONE)
    got = m.take_records(clause, want=1, wait_ms=NOTHING_MS, tries=1)
    if set(got) & set(offsets):
        raise Divergence(C[clause], f"none of the accepted {offsets}", f"acquired again {sorted(got)}")


@case("kafka.share-ack.release")
def test_a_released_record_is_delivered_again(target):
    clause = "kafka.share-ack.release"
    _s, m, offsets = holding(target, 1)
    answer = m.fetch(clause, acks=[ack(offsets[0], offsets[0], RELEASE)])  # piggy-backed on the next fetch
    expect(clause, ack_error(answer, clause, fetch=True), errors.NONE)
    got = acquired(answer, clause)
    if offsets[0] not in got:
        got.update(m.take_records(clause, want=1))
    if got.get(offsets[0]) != 2:
        raise Divergence(C[clause], f"offset {offsets[0]} delivered again with DeliveryCount 2", f"acquired {got}")


@case("kafka.share-ack.reject")
def test_a_rejected_record_is_not_delivered_again(target):
    clause = "kafka.share-ack.reject"
    _s, m, offsets = holding(target, 1)
    expect(clause, ack_error(m.acknowledge(clause, [ack(offsets[0], offsets[0], REJECT)]), clause, fetch=False),
           errors.NONE)
    got = m.take_records(clause, want=1, wait_ms=NOTHING_MS, tries=1)
    if offsets[0] in got:
        raise Divergence(C[clause], f"offset {offsets[0]} (rejected) not delivered again", f"acquired {got}")


@case("kafka.share-ack.invalid-record-state")
@pytest.mark.parametrize("whose", ["another-members", "already-accepted"])
def test_acknowledging_a_record_not_held_is_refused(target, whose):
    clause = "kafka.share-ack.invalid-record-state"
    s, a, offsets = holding(target, 2)
    # the second record: the first stays acquired, so the share partition's start cannot pass the acknowledged one
    # (Kafka stops tracking records below the start, and ignores a repeated acknowledgement of those)
    batch = [ack(offsets[1], offsets[1], ACCEPT)]
    if whose == "another-members":
        b = s.another()
        expect(clause, ack_error(b.acknowledge(clause, batch), clause, fetch=False), INVALID_RECORD_STATE)
        # and it changed nothing: the holder's own acknowledgement still succeeds
        expect(clause, ack_error(a.acknowledge(clause, batch), clause, fetch=False), errors.NONE)
    else:
        expect(clause, ack_error(a.acknowledge(clause, batch), clause, fetch=False), errors.NONE)
        expect(clause, ack_error(a.acknowledge(clause, batch), clause, fetch=False), INVALID_RECORD_STATE)


@case("kafka.share-ack.invalid-batches")
@pytest.mark.parametrize("flaw", ["overlapping", "unsorted", "first-above-last"])
def test_malformed_acknowledgement_batches_are_invalid(target, flaw):
    clause = "kafka.share-ack.invalid-batches"
    _s, m, offsets = holding(target, 3)
    first, last = offsets[0], offsets[-1]
    batches = {"overlapping": [ack(first, first + 1, ACCEPT), ack(first + 1, last, ACCEPT)],
               "unsorted": [ack(last, last, ACCEPT), ack(first, first, ACCEPT)],
               "first-above-last": [ack(last, first, ACCEPT)]}[flaw]
    expect(clause, ack_error(m.acknowledge(clause, batches), clause, fetch=False), errors.INVALID_REQUEST)


@case("kafka.share-fetch.delivery-count")
def test_each_delivery_counts(target):
    clause = "kafka.share-fetch.delivery-count"
    _s, m, offsets = holding(target, 1)
    expect(clause, ack_error(m.acknowledge(clause, [ack(offsets[0], offsets[0], RELEASE)]), clause, fetch=False),
           errors.NONE)
    got = m.take_records(clause, want=1)
    if got.get(offsets[0]) != 2:
        raise Divergence(C[clause], f"offset {offsets[0]} again with DeliveryCount 2", f"acquired {got}")


@case("kafka.share-fetch.delivery-limit")
def test_a_record_released_at_the_limit_is_archived(target):
    clause = "kafka.share-fetch.delivery-limit"
    _s, m, offsets = holding(target, 1)
    offset, counts = offsets[0], [1]
    while len(counts) <= MAX_DELIVERY_LIMIT:
        expect(clause, ack_error(m.acknowledge(clause, [ack(offset, offset, RELEASE)]), clause, fetch=False),
               errors.NONE)
        got = m.take_records(clause, want=1, wait_ms=NOTHING_MS, tries=1)
        if offset not in got:
            return  # archived: the limit was reached
        counts.append(got[offset])
    raise Divergence(C[clause], f"offset {offset} archived after at most {MAX_DELIVERY_LIMIT} deliveries",
                     f"delivered {len(counts)} times (delivery counts {counts})")


@case("kafka.share-fetch.lock-expiry")
def test_an_expired_lock_gives_the_record_back(target):
    clause = "kafka.share-fetch.lock-expiry"
    s = Setup(target)
    a = s.joined()
    offsets = s.produce(1)
    with target.precondition("the member acquired the record produced"):
        answer = a.fetch("kafka.share-fetch.acquire")
        got = acquired(answer, "kafka.share-fetch.acquire")
        if offsets[0] not in got:
            got.update(a.take_records("kafka.share-fetch.acquire"))
            if offsets[0] not in got:
                raise Divergence(C["kafka.share-fetch.acquire"], f"offset {offsets[0]} acquired", f"{sorted(got)}")
    lock_ms = answer["AcquisitionLockTimeoutMs"]
    if lock_ms > MAX_LOCK_WAIT_MS:
        raise Unimplemented(f"the acquisition lock is {lock_ms} ms; this case waits out at most {MAX_LOCK_WAIT_MS} "
                            "ms (a target configured with a shorter group.share.record.lock.duration.ms)")
    time.sleep(max(lock_ms, 0) / 1000 + 0.3)
    b = s.another()
    got = b.take_records(clause, want=1)
    if got.get(offsets[0]) != 2:
        raise Divergence(C[clause], f"offset {offsets[0]} delivered again (DeliveryCount 2) after the {lock_ms} ms "
                                    "lock", f"acquired {got}")
    code = ack_error(a.acknowledge(clause, [ack(offsets[0], offsets[0], ACCEPT)]), clause, fetch=False)
    expect(clause, code, INVALID_RECORD_STATE)


# ------------------------------------------------------------------------------------------------ sessions

@case("kafka.share-session.epoch")
def test_a_wrong_session_epoch_is_refused(target):
    clause = "kafka.share-session.epoch"
    m = Setup(target).joined()
    answer = m.fetch(clause, epoch=m.session_epoch + 5, wait_ms=0)
    expect(clause, answer["ErrorCode"], INVALID_SHARE_SESSION_EPOCH)


@case("kafka.share-session.not-found")
@pytest.mark.parametrize("how", ["never-opened", "closed", "acknowledge"])
def test_a_missing_session_is_not_found(target, how):
    clause = "kafka.share-session.not-found"
    s = Setup(target)
    if how == "never-opened":
        m = s.member()
        with target.precondition("member joined and was assigned the topic"):
            m.join()
            m.assigned_everything()
        expect(clause, m.fetch(clause, epoch=1, wait_ms=0)["ErrorCode"], SHARE_SESSION_NOT_FOUND)
        return
    m = s.joined()
    closed = m.fetch(clause, epoch=LEAVE, wait_ms=0, partitions=False)
    expect(clause, closed["ErrorCode"], errors.NONE)
    if how == "closed":
        expect(clause, m.fetch(clause, epoch=1, wait_ms=0)["ErrorCode"], SHARE_SESSION_NOT_FOUND)
    else:
        expect(clause, m.acknowledge(clause, [], epoch=1)["ErrorCode"], SHARE_SESSION_NOT_FOUND)
