"""Transaction protocol version 2 (KIP-890 part 2, "TV2") and the version boundary around it.

A TV2 producer sends no AddPartitionsToTxn: its transactional Produce v12+ adds the partition, TxnOffsetCommit v5+
adds the group, and EndTxn v5+ bumps the epoch at every end, answering the producer id and epoch to go on with;
the markers carry the new epoch, so a late write of the ended transaction is fenced. The version is the switch:
below Produce v12 and EndTxn v5 the version-1 rules hold (KIP-890 part 1: a Produce to a partition not added is
refused). AddPartitionsToTxn v4+ (VerifyOnly, batched by transaction) is the brokers' own form and not a client
request, so no case sends it.

The TV2 cases need EndTxn v5 and Produce v12 advertised (TxnOffsetCommit v5 for its case), else UNIMPLEMENTED.
Each case uses its own transactional id and topic.
"""

from __future__ import annotations

import time

import pytest

from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import COORDINATOR_NOT_READY, C, expect, expect_produced, short
from wirecheck.suites.kafka.transactions import (COMMIT, END_TXN, PRODUCE, READ_UNCOMMITTED,
                                                      TIMESTAMP, TXN_NOT_READY, Producer,
                                                      MARKER_WAIT_S, batches, fetch, log_below, marker_type,
                                                      new_topic, settled)
from wirecheck.suites.kafka.topics_groups import find_coordinator

case = pytest.mark.case
OFFSET_FETCH, TXN_OFFSET_COMMIT = 9, 28
PRODUCE_V2, END_TXN_V2, TXN_OFFSET_COMMIT_V2 = 12, 5, 5  # the first versions with TV2 semantics
GATED_END_TXN_MAX = 4  # the highest EndTxn with version-1 semantics
OFFSET_FETCH_MAX = 9
REQUIRE_STABLE_FROM = 7  # OffsetFetch v7+ carries RequireStable (KIP-447)
ABORTABLE_PRODUCE = 11  # Produce v11 adds TRANSACTION_ABORTABLE (ProduceRequest.json, KIP-890)


class TV2Producer(Producer):
    """A producer speaking transaction version 2: Produce v12 without AddPartitionsToTxn, EndTxn v5."""

    produce_versions = (PRODUCE_V2, PRODUCE_V2)

    def __init__(self, target):
        super().__init__(target)
        self.client.require(END_TXN, END_TXN_V2)
        self.client.require(PRODUCE, PRODUCE_V2)

    def send(self, topic: str, values: list[bytes], clause_id: str, epoch: int | None = None) -> dict:
        """A transactional Produce v12 of ``values`` to partition 0 at ``epoch`` (default the current one), the next
        sequence; the partition's answer, whatever its error (the sequence moves on only on success)."""
        epoch = self.epoch if epoch is None else epoch
        sequence = self.sequences.get(topic, 0)
        batch = records.build_batch(values, base_timestamp=TIMESTAMP, producer_id=self.producer_id,
                                    producer_epoch=epoch, base_sequence=sequence, transactional=True)
        body = self.client.call(PRODUCE, PRODUCE_V2, {
            "TransactionalId": self.transactional_id, "Acks": -1, "TimeoutMs": 5000,
            "TopicData": [{"Name": topic, "PartitionData": [{"Index": 0, "Records": batch}]}]}, clause_id)
        partition = body["Responses"][0]["PartitionResponses"][0]
        if partition["ErrorCode"] == errors.NONE:
            self.sequences[topic] = sequence + len(values)
        return partition

    def end_v2(self, commit: bool, clause_id: str, epoch: int | None = None) -> dict:
        """EndTxn v5 under ``epoch`` (default the current one); the answer, unjudged, once it is not TXN_NOT_READY
        (51 while the previous end's markers are still being written: test_transactions.TXN_NOT_READY)."""
        return self.client.call_until_ready(END_TXN, END_TXN_V2, {
            "TransactionalId": self.transactional_id, "ProducerId": self.producer_id,
            "ProducerEpoch": self.epoch if epoch is None else epoch, "Committed": commit}, clause_id,
            retriable=TXN_NOT_READY)

    def end_ok(self, commit: bool, clause_id: str) -> tuple[int, int]:
        """EndTxn v5 answered NONE; the producer goes on with the id and epoch answered. The (id, epoch) it left."""
        body = self.end_v2(commit, clause_id)
        expect(clause_id, body["ErrorCode"], errors.NONE)
        left = (self.producer_id, self.epoch)
        self.producer_id, self.epoch = body["ProducerId"], body["ProducerEpoch"]
        self.sequences.clear()  # a new epoch starts its sequences at 0
        return left

    def one_transaction(self, topic: str, values: list[bytes], clause_id: str) -> tuple[int, int]:
        """Init, produce ``values`` (the partition added by the Produce) and commit; the (id, epoch) it ran under."""
        self.init_ok(clause_id)
        expect_produced(self.send(topic, values, clause_id), clause_id)
        return self.end_ok(True, clause_id)


def bumped(left: tuple[int, int], now: tuple[int, int]) -> bool:
    """The id and epoch an EndTxn v5 answers after a transaction under ``left``: the epoch one higher, or a new
    producer id at epoch 0 once the epoch is exhausted (KIP-890; TransactionMetadata.isEpochExhausted)."""
    return now == (left[0], left[1] + 1) or (left[1] >= 0x7FFF - 1 and now[0] != left[0] and now[1] == 0)


def committed_values(producer: Producer, topic: str, clause_id: str) -> list[bytes]:
    partition = settled(producer.client, topic, clause_id, "after the commit")
    return [r.value for b in batches(partition, clause_id) if not b.control for r in b.records]


# -- TV2 -------------------------------------------------------------------------------------------------------


@case("kafka.txn-v2.implicit-add")
def test_produce_v12_adds_its_partition(target):
    clause = "kafka.txn-v2.implicit-add"
    producer = TV2Producer(target)
    topic = new_topic(producer.client, target)
    producer.one_transaction(topic, [b"v0", b"v1"], clause)
    values = committed_values(producer, topic, clause)
    if values != [b"v0", b"v1"]:
        raise Divergence(C[clause], "the committed records [b'v0', b'v1'] read_committed", short(values))


@case("kafka.txn-v2.epoch-bump")
def test_end_txn_v5_bumps_the_epoch(target):
    clause = "kafka.txn-v2.epoch-bump"
    producer = TV2Producer(target)
    topic = new_topic(producer.client, target)
    left = producer.one_transaction(topic, [b"first"], clause)
    if not bumped(left, (producer.producer_id, producer.epoch)):
        raise Divergence(C[clause], f"producer id {left[0]} with epoch {left[1] + 1}",
                         f"producer id {producer.producer_id} with epoch {producer.epoch}")
    expect_produced(producer.send(topic, [b"second"], clause), clause)  # the next transaction, new epoch, seq 0
    left = producer.end_ok(False, clause)
    if not bumped(left, (producer.producer_id, producer.epoch)):
        raise Divergence(C[clause], f"after the abort, producer id {left[0]} with epoch {left[1] + 1}",
                         f"producer id {producer.producer_id} with epoch {producer.epoch}")


@case("kafka.txn-v2.marker-epoch")
def test_markers_carry_the_bumped_epoch(target):
    clause = "kafka.txn-v2.marker-epoch"
    producer = TV2Producer(target)
    topic = new_topic(producer.client, target)
    left = producer.one_transaction(topic, [b"m"], clause)
    end = settled(producer.client, topic, "kafka.txn-v2.implicit-add", "after the commit")["HighWatermark"]
    found = [b for b in log_below(producer.client, topic, end, READ_UNCOMMITTED, clause) if b.control]
    if len(found) != 1 or marker_type(found[0]) != COMMIT:  # one commit marker: the control-batch clause's
        raise Divergence(C["kafka.txn.control-batch"], "one commit marker", short([(b.base_offset, marker_type(b))
                                                                                   for b in found]))
    # on an exhausted epoch the markers close the old producer id at epoch 32767 (the id answered is new)
    wanted = (left[0], left[1] + 1) if producer.producer_id == left[0] else (left[0], 0x7FFF)
    if (found[0].producer_id, found[0].producer_epoch) != wanted:
        raise Divergence(C[clause], f"the marker under producer id {wanted[0]}, epoch {wanted[1]}",
                         f"producer id {found[0].producer_id}, epoch {found[0].producer_epoch}")


@case("kafka.txn-v2.old-epoch-fenced")
def test_a_late_write_of_the_old_epoch_is_fenced(target):
    clause = "kafka.txn-v2.old-epoch-fenced"
    producer = TV2Producer(target)
    topic = new_topic(producer.client, target)
    producer.init_ok(clause)
    old_epoch = producer.epoch
    expect_produced(producer.send(topic, [b"on-time"], clause), clause)
    late_sequence = producer.sequences[topic]
    producer.end_ok(True, clause)
    producer.sequences[topic] = late_sequence  # the batch the ended transaction would have sent next
    before = settled(producer.client, topic, "kafka.txn-v2.implicit-add", "after the commit")["HighWatermark"]
    answer = producer.send(topic, [b"late"], clause, epoch=old_epoch)
    expect_produced(answer, clause, errors.INVALID_PRODUCER_EPOCH, errors.PRODUCER_FENCED)
    after = fetch(producer.client, topic, READ_UNCOMMITTED, clause)["HighWatermark"]
    if after != before:
        raise Divergence(C[clause], f"HighWatermark {before}: the refused batch not appended", f"{after}")


@case("kafka.txn-v2.end-retry")
def test_end_txn_v5_retried_is_answered_again(target):
    clause = "kafka.txn-v2.end-retry"
    producer = TV2Producer(target)
    topic = new_topic(producer.client, target)
    left = producer.one_transaction(topic, [b"r"], clause)
    now = (producer.producer_id, producer.epoch)
    producer.producer_id, producer.epoch = left  # as a producer whose first answer was lost
    body = producer.end_v2(True, clause)
    got = (body["ErrorCode"], body["ProducerId"], body["ProducerEpoch"])
    if got != (errors.NONE, *now):
        raise Divergence(C[clause], f"ErrorCode 0, producer id {now[0]}, epoch {now[1]} again",
                         f"ErrorCode {errors.name(got[0])}, producer id {got[1]}, epoch {got[2]}")


@case("kafka.txn-v2.implicit-offsets")
def test_txn_offset_commit_v5_adds_its_group(target):
    clause = "kafka.txn-v2.implicit-offsets"
    producer = TV2Producer(target)
    producer.client.require(TXN_OFFSET_COMMIT, TXN_OFFSET_COMMIT_V2)
    topic = new_topic(producer.client, target)
    group = target.unique("txn-group")
    with target.precondition("the group coordinator found"):  # as the producer looks it up before committing
        find_coordinator(producer.client, group)                # (TransactionManager.java TxnOffsetCommitHandler)
    producer.init_ok(clause)
    expect_produced(producer.send(topic, [b"o"], clause), clause)
    body = producer.client.call_until_ready(TXN_OFFSET_COMMIT, TXN_OFFSET_COMMIT_V2, {
        "TransactionalId": producer.transactional_id, "GroupId": group, "ProducerId": producer.producer_id,
        "ProducerEpoch": producer.epoch, "GenerationId": -1, "MemberId": "", "GroupInstanceId": None,
        "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 1,
                                                   "CommittedLeaderEpoch": -1, "CommittedMetadata": ""}]}]}, clause,
        retriable=TXN_NOT_READY)
    try:
        code = body["Topics"][0]["Partitions"][0]["ErrorCode"]
    except (IndexError, KeyError):
        raise Divergence(C[clause], f"a result for {topic}-0", short(body)) from None
    expect(clause, code, errors.NONE)
    producer.end_ok(True, clause)
    offset = committed_offset(producer, group, topic, clause)
    if offset != 1:
        raise Divergence(C[clause], "committed offset 1 once the transaction committed", f"{offset}")


def committed_offset(producer: Producer, group: str, topic: str, clause_id: str) -> int:
    """The group's committed offset for partition 0, asked as a read_committed consumer asks: RequireStable, so an
    offset whose transaction's markers are not written yet is answered UNSTABLE_OFFSET_COMMIT (88, retriable)
    instead of the offset before it (KIP-447; OffsetMetadataManager.java 764-767 at apache/kafka 1eb7644), and
    asked again. Below OffsetFetch v7 there is no RequireStable: the offset is asked again while it is still -1,
    for as long as markers may take (test_transactions.MARKER_WAIT_S)."""
    version = producer.client.version(OFFSET_FETCH, OFFSET_FETCH_MAX, low=1)
    request = {"GroupId": group, "Topics": [{"Name": topic, "PartitionIndexes": [0]}], "RequireStable": True,
               "Groups": [{"GroupId": group, "Topics": [{"Name": topic, "PartitionIndexes": [0]}]}]}
    deadline = time.monotonic() + MARKER_WAIT_S
    while True:
        body = producer.client.call_until_ready(OFFSET_FETCH, version, request, clause_id,
                                                retriable=COORDINATOR_NOT_READY | {errors.UNSTABLE_OFFSET_COMMIT})
        partition = (body["Groups"][0]["Topics"] if version >= 8 else body["Topics"])[0]["Partitions"][0]
        expect(clause_id, partition["ErrorCode"], errors.NONE)
        if version >= REQUIRE_STABLE_FROM or partition["CommittedOffset"] != -1 or time.monotonic() > deadline:
            return partition["CommittedOffset"]
        time.sleep(0.05)


# -- the version boundary: version-1 rules below Produce v12 and EndTxn v5 --------------------------------------


@case("kafka.txn.produce-unadded")
@pytest.mark.parametrize("produce", ["below-v11", "v11"])
def test_produce_below_v12_to_a_partition_not_added_is_refused(target, produce):
    """Below v11 only INVALID_TXN_STATE (48); v11 clients also know TRANSACTION_ABORTABLE (120), which Kafka answers
    them (see the clause's decision)."""
    clause = "kafka.txn.produce-unadded"
    producer = Producer(target)
    if produce == "v11":
        producer.client.require(PRODUCE, ABORTABLE_PRODUCE)
    topic = new_topic(producer.client, target)
    producer.init_ok(clause)
    version = ABORTABLE_PRODUCE if produce == "v11" else producer.client.version(PRODUCE, ABORTABLE_PRODUCE - 1, low=3)
    batch = records.build_batch([b"unadded"], base_timestamp=TIMESTAMP, producer_id=producer.producer_id,
                                producer_epoch=producer.epoch, base_sequence=0, transactional=True)
    body = producer.client.call(PRODUCE, version, {
        "TransactionalId": producer.transactional_id, "Acks": -1, "TimeoutMs": 5000,
        "TopicData": [{"Name": topic, "PartitionData": [{"Index": 0, "Records": batch}]}]}, clause)
    refusals = (errors.INVALID_TXN_STATE, errors.TRANSACTION_ABORTABLE) if produce == "v11" else \
        (errors.INVALID_TXN_STATE,)
    expect_produced(body["Responses"][0]["PartitionResponses"][0], clause, *refusals)


@case("kafka.txn-v2.version-gated")
def test_end_txn_below_v5_keeps_the_epoch(target):
    clause = "kafka.txn-v2.version-gated"
    producer = Producer(target)
    topic = new_topic(producer.client, target)
    producer.open_transaction(topic, [b"g"], clause)
    version = producer.client.version(END_TXN, GATED_END_TXN_MAX)
    body = producer.client.call_until_ready(END_TXN, version, {
        "TransactionalId": producer.transactional_id, "ProducerId": producer.producer_id,
        "ProducerEpoch": producer.epoch, "Committed": True}, clause, retriable=TXN_NOT_READY)
    expect(clause, body["ErrorCode"], errors.NONE)
    # the same epoch goes on; 51 while the commit's markers are written is asked again (TXN_NOT_READY)
    expect(clause, producer.add_partition(topic, clause)[1], errors.NONE)
    expect(clause, producer.end(False, clause)[1], errors.NONE)
    settled(producer.client, topic, clause, "after the abort: no transaction left open")
