"""The share-group member the KIP-932 cases drive by hand (suites/kafka/test_share_groups.py and the stateful model,
test_share_stateful.py): one connection per member, its membership, share session and what it acquired.
"""

from __future__ import annotations

import time
import uuid

from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, DataPath, expect, short, RECORD_TIME_MS
from wirecheck.suites.kafka.consumer_groups import (
    ASSIGNMENT_WAIT_S,
    HEARTBEAT_PAUSE_S,
    partitions_of,
    topic_layout,
)
from wirecheck.suites.kafka.topics_groups import find_coordinator

HEARTBEAT, DESCRIBE, SHARE_FETCH, SHARE_ACK = 76, 77, 78, 79
GAP, ACCEPT, RELEASE, REJECT = 0, 1, 2, 3
FENCED_MEMBER_EPOCH, INVALID_RECORD_STATE = 110, 121
SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH = 122, 123
LEAVE = -1
EXPECT_MS, NOTHING_MS = 500, 300  # MaxWaitMs when records should come, and when none should


class ShareMember:
    """One share-group member on its own connection: its id, epoch, assignment and share session epoch."""

    def __init__(self, target, group: str, topic: str, topic_id, partitions: int):
        self.client = DataPath(target)
        self.hb_version = self.client.version(HEARTBEAT, 1, low=1)
        self.fetch_version = self.client.version(SHARE_FETCH, 2, low=1)
        self.group, self.topic, self.topic_id, self.partitions = group, topic, topic_id, partitions
        self.member_id = str(uuid.uuid4())  # v1: the client generates it (KIP-932)
        self.epoch = 0
        self.owned: set[tuple] = set()
        self.session_epoch = 0  # the next ShareSessionEpoch to send: 0 opens
        self.pending: dict[int, int] = {}  # what the opening fetch acquired, not yet taken
        self.oracle_owned: set[int] | None = None  # --differential: the partitions the oracle assigned, by index

    # -- membership --------------------------------------------------------------------------------------

    def heartbeat(self, clause_id: str, **fields) -> dict:
        body = {"GroupId": self.group, "MemberId": self.member_id, "MemberEpoch": self.epoch, "RackId": None,
                "SubscribedTopicNames": None, **fields}
        return self.client.call(HEARTBEAT, self.hb_version, body, clause_id)

    def join(self, clause_id: str = "kafka.share-group.join") -> dict:
        body = {"GroupId": self.group, "MemberId": self.member_id, "MemberEpoch": 0, "RackId": None,
                "SubscribedTopicNames": [self.topic]}
        # a coordinator still loading is asked again (client.COORDINATOR_NOT_READY), as the share consumer does
        answer = self.client.call_until_ready(HEARTBEAT, self.hb_version, body, clause_id)
        expect(clause_id, answer["ErrorCode"], errors.NONE)
        if answer["MemberEpoch"] <= 0:
            raise Divergence(C["kafka.share-group.join"], "a MemberEpoch above 0", short(answer))
        self.take(answer)
        return answer

    def take(self, answer: dict) -> None:
        self.epoch = answer["MemberEpoch"]
        if answer["Assignment"] is not None:
            self.owned = partitions_of(answer["Assignment"])
        oracle = self.client.oracle_answer(HEARTBEAT, self.hb_version)  # --differential: what the oracle assigned
        if oracle is not None and oracle["ErrorCode"] == errors.NONE:
            if oracle["Assignment"] is not None:
                self.oracle_owned = {p for _, p in partitions_of(oracle["Assignment"])}
            elif self.oracle_owned is None:
                self.oracle_owned = set()

    def settle(self, clause_id: str, done, expected: str) -> None:
        """Heartbeats until ``done()`` holds: the coordinator assigns a share partition once its state is initialized
        and at its next assignment batch (KIP-932, KIP-1263), in a later heartbeat; only its absence after
        ASSIGNMENT_WAIT_S breaks ``clause_id``. The share consumer fetches only what it was assigned, and so do
        the cases (Kafka answers a ShareFetch of a partition whose share state is not initialized yet with
        UNKNOWN_SERVER_ERROR)."""
        deadline = time.monotonic() + ASSIGNMENT_WAIT_S
        while not done() or not self._oracle_caught_up(deadline):
            if time.monotonic() > deadline:
                raise Divergence(C[clause_id], f"{expected}, within {ASSIGNMENT_WAIT_S:.0f} s of heartbeats",
                                 f"member epoch {self.epoch} assigned {sorted(p[1] for p in self.owned)}")
            time.sleep(HEARTBEAT_PAUSE_S)
            answer = self.heartbeat(clause_id)
            expect(clause_id, answer["ErrorCode"], errors.NONE)
            self.take(answer)

    def _oracle_caught_up(self, deadline: float) -> bool:
        """--differential: the oracle has assigned this member the same partitions (by index: topic ids are each
        server's), so the case goes on from the same state on both; True without an oracle, and once the deadline
        is near (the oracle is not under test: its lag is left to the comparison)."""
        if self.oracle_owned is None or time.monotonic() + HEARTBEAT_PAUSE_S > deadline:
            return True
        return self.oracle_owned == {p for _, p in self.owned}

    def assigned_everything(self) -> None:
        """A sole member: heartbeats until every partition of the topic is assigned to it."""
        everything = {(self.topic_id, p) for p in range(self.partitions)}
        self.settle("kafka.share-group.assignment", lambda: self.owned == everything,
                    f"the sole member assigned the {self.partitions} partitions of {self.topic}")

    def settled(self, describe_clause: str = "kafka.share-group.describe") -> bool:
        """The group's target assignment is the one this member was last answered (ShareGroupDescribe: GroupEpoch,
        AssignmentEpoch and its MemberEpoch equal): what it owns now is what the assignor gave it."""
        body = self.client.call(DESCRIBE, self.client.version(DESCRIBE, 1, low=1),
                                {"GroupIds": [self.group], "IncludeAuthorizedOperations": False}, describe_clause)
        group = body["Groups"][0]
        expect(describe_clause, group["ErrorCode"], errors.NONE)
        return group["GroupEpoch"] == group["AssignmentEpoch"] == self.epoch

    # -- share sessions ----------------------------------------------------------------------------------

    def fetch(self, clause_id: str, acks: list[dict] | None = None, wait_ms: int = EXPECT_MS,
              epoch: int | None = None, partitions: bool = True, max_records: int = 500) -> dict:
        """One ShareFetch of partition 0 at the session's next epoch (or ``epoch``), with ``acks`` piggy-backed;
        the session epoch moves on when the answer has no top-level error."""
        epoch = self.session_epoch if epoch is None else epoch
        parts = [{"PartitionIndex": 0, "AcknowledgementBatches": acks or []}] if partitions or acks else []
        body = {"GroupId": self.group, "MemberId": self.member_id, "ShareSessionEpoch": epoch, "MaxWaitMs": wait_ms,
                "MinBytes": 1, "MaxBytes": 1 << 20, "MaxRecords": max_records, "BatchSize": max_records,
                "ShareAcquireMode": 0, "IsRenewAck": False,
                "Topics": [{"TopicId": self.topic_id, "Partitions": parts}] if parts else [],
                "ForgottenTopicsData": []}
        correlation_id = self.client.send(SHARE_FETCH, self.fetch_version, body)
        answer = self.client.receive(SHARE_FETCH, self.fetch_version, correlation_id, clause_id,
                                     deadline=self.client.session.deadline + wait_ms / 1000)
        if answer["ErrorCode"] == errors.NONE and epoch == self.session_epoch:
            self.session_epoch = epoch + 1 if epoch >= 0 else 0
        return answer

    def acknowledge(self, clause_id: str, acks: list[dict], epoch: int | None = None) -> dict:
        epoch = self.session_epoch if epoch is None else epoch
        body = {"GroupId": self.group, "MemberId": self.member_id, "ShareSessionEpoch": epoch, "IsRenewAck": False,
                "Topics": [{"TopicId": self.topic_id,
                            "Partitions": [{"PartitionIndex": 0, "AcknowledgementBatches": acks}]}]}
        answer = self.client.call(SHARE_ACK, self.fetch_version, body, clause_id)
        if answer["ErrorCode"] == errors.NONE and epoch == self.session_epoch:
            self.session_epoch = epoch + 1 if epoch >= 0 else 0
        return answer

    def open(self) -> None:
        """The first ShareFetch: opens the share session (and, on first use, the share partition at latest)."""
        answer = self.fetch("kafka.share-fetch.acquire", wait_ms=0)
        expect("kafka.share-fetch.acquire", answer["ErrorCode"], errors.NONE)
        self.pending = acquired(answer, "kafka.share-fetch.acquire")  # it may acquire what is already there

    def take_records(self, clause_id: str, want: int = 1, wait_ms: int = EXPECT_MS,
                     acks: list[dict] | None = None, tries: int = 3) -> dict[int, int]:
        """ShareFetches until ``want`` offsets are acquired (at most ``tries``): offset -> delivery count, with
        what the opening fetch acquired."""
        got, self.pending = dict(self.pending), {}
        for _ in range(tries):
            got.update(acquired(self.fetch(clause_id, acks=acks, wait_ms=wait_ms), clause_id))
            acks = None
            if len(got) >= want:
                break
        return got


def partition_of(answer: dict, clause_id: str) -> dict | None:
    expect(clause_id, answer["ErrorCode"], errors.NONE)
    for topic in answer["Responses"]:
        for partition in topic["Partitions"]:
            if partition["PartitionIndex"] == 0:
                return partition
    return None


def acquired(answer: dict, clause_id: str) -> dict[int, int]:
    """offset -> delivery count of what one ShareFetch answer acquired (partition 0), each offset a record the
    answer carries (kafka.share-fetch.acquire)."""
    partition = partition_of(answer, clause_id)
    if partition is None:
        return {}
    expect(clause_id, partition["ErrorCode"], errors.NONE)
    ranges = {o: r["DeliveryCount"] for r in partition["AcquiredRecords"]
              for o in range(r["FirstOffset"], r["LastOffset"] + 1)}
    carried = {b.base_offset + r.offset_delta for b in records.decode_batches(partition["Records"] or b"",
                                                                              allow_partial_tail=True)
               for r in b.records}
    if carried - set(ranges) and not ranges:
        raise Divergence(C["kafka.share-fetch.acquire"], "AcquiredRecords covering the records returned",
                         f"records at {sorted(carried)[:10]} and no AcquiredRecords")
    if set(ranges) - carried:
        raise Divergence(C["kafka.share-fetch.acquire"], "records for every acquired offset",
                         f"acquired {sorted(set(ranges) - carried)[:10]} without their records")
    return ranges


def ack(first: int, last: int, kind: int) -> dict:
    return {"FirstOffset": first, "LastOffset": last, "AcknowledgeTypes": [kind]}


def ack_error(answer: dict, clause_id: str, fetch: bool) -> int:
    """The acknowledgement's error: top-level when the target refuses the whole request, else the partition's."""
    if answer["ErrorCode"] != errors.NONE:
        return answer["ErrorCode"]
    partition = partition_of(answer, clause_id)
    if partition is None:
        raise Divergence(C[clause_id], "an answer for the acknowledged partition", short(answer))
    return partition["AcknowledgeErrorCode" if fetch else "ErrorCode"]


class Setup:
    """A fresh one-partition topic and a fresh share group on it."""

    def __init__(self, target, partitions: int = 1):
        self.target = target
        self.client = DataPath(target)
        self.client.version(HEARTBEAT, 1, low=1)  # UNIMPLEMENTED unless share groups are advertised
        self.client.version(SHARE_FETCH, 2, low=1)
        self.client.version(SHARE_ACK, 2, low=1)
        self.group = target.unique("sg")
        with target.precondition("a topic for the share group, its id described, the coordinator found"):
            self.topic = self.client.topic("sg", partitions)
            self.topic_id, self.partitions = topic_layout(self.client, self.topic)
            find_coordinator(self.client, self.group)  # as the share consumer does before its first heartbeat

    def member(self) -> ShareMember:
        return ShareMember(self.target, self.group, self.topic, self.topic_id, self.partitions)

    def joined(self) -> ShareMember:
        """The group's first member, assigned every partition, its share session open (a precondition)."""
        m = self.member()
        with self.target.precondition(f"member joined share group {self.group}, was assigned the topic and "
                                      "opened its share session"):
            m.join()
            m.assigned_everything()
            m.open()
            self.started(m)
        return m

    def started(self, m: ShareMember) -> dict[int, int]:
        """Wait until the share partition's start is fixed. It starts at the latest offset when it is initialized,
        which Kafka does in the background after the first ShareFetch arrives (Apache Kafka 4.4.0 on the wire: a
        record produced right after that fetch may fall before the start, and is never delivered). So markers are
        produced, each fetched once, until one is acquired (the start is at or before it), for at most
        ASSIGNMENT_WAIT_S; what was acquired is accepted, and the case's own records come after. Returns every
        offset acquired on the way (offset -> delivery count), the opening fetch's too."""
        clause = "kafka.share-fetch.acquire"
        deadline = time.monotonic() + ASSIGNMENT_WAIT_S
        everything: dict[int, int] = {}
        while True:
            marker = self.produce(1)[0]
            got = m.take_records(clause, want=1, tries=1)
            everything.update(got)
            if got:
                answer = m.acknowledge(clause, [ack(o, o, ACCEPT) for o in sorted(got)])
                expect(clause, ack_error(answer, clause, fetch=False), errors.NONE)
            if marker in got:
                return everything
            if time.monotonic() > deadline:
                raise Divergence(C[clause], f"a record produced after the share partition's first fetch acquired, "
                                 f"within {ASSIGNMENT_WAIT_S:.0f} s", f"acquired {sorted(got)}")

    def another(self) -> ShareMember:
        """A further member, its session open, once the coordinator assigned it partition 0 or settled the group
        without it (an assignor that keeps extra members idle, as KIP-932 permits), a precondition."""
        m = self.member()
        with self.target.precondition(f"another member joined share group {self.group} and opened its session"):
            m.join()
            m.settle("kafka.share-group.assignment", lambda: (self.topic_id, 0) in m.owned or m.settled(),
                     "partition 0 assigned, or the group settled")
            m.open()
        return m

    def produce(self, count: int) -> list[int]:
        """``count`` records appended: their offsets."""
        with self.target.precondition(f"{count} records produced to {self.topic}"):
            batch = records.build_batch([b"v%d" % i for i in range(count)], base_timestamp=RECORD_TIME_MS)
            base = self.client.append(self.topic, batch)
            # the cases acknowledge these offsets: the base offset is judged under its own clause first (only this
            # case writes the topic, so the log ends right after the batch)
            end = self.client.list_offset(self.topic, -1)["Offset"]
            if end != base + count:
                raise Divergence(C["kafka.produce.base-offset"], f"base offset {end - count} (the log ends at {end} "
                                 f"after {count} records)", f"BaseOffset {base}")
        return list(range(base, base + count))


def holding(target, count: int = 1) -> tuple[Setup, ShareMember, list[int]]:
    """A joined member that acquired ``count`` freshly produced records (a precondition)."""
    s = Setup(target)
    m = s.joined()
    offsets = s.produce(count)
    with target.precondition(f"the member acquired the {count} records produced"):
        got = m.take_records("kafka.share-fetch.acquire", want=count)
        if set(offsets) - set(got):
            raise Divergence(C["kafka.share-fetch.acquire"], f"offsets {offsets} acquired", f"{sorted(got)}")
    return s, m, offsets
