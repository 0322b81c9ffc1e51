"""Transactions (KIP-98, KIP-447), transaction protocol version 1: the producer finds its coordinator with
FindCoordinator key type 1, adds its partitions itself (AddPartitionsToTxn up to v3; v4+ is the broker-to-broker
form), produces with Produce up to v11 and ends with EndTxn up to v4 (Produce v12+ and EndTxn v5+ are protocol
version 2, KIP-890 part 2: test_transactions_v2).

Each case uses its own transactional id and topic, so it is harmless on a live cluster. A target that does not
advertise InitProducerId, AddPartitionsToTxn and EndTxn makes these cases UNIMPLEMENTED.
"""

from __future__ import annotations

import struct
import time

import pytest

from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import (COORDINATOR_NOT_READY, C, DataPath, expect, expect_produced,
                                           short, RECORD_TIME_MS)

case = pytest.mark.case
PRODUCE, FETCH, LIST_OFFSETS, FIND_COORDINATOR = 0, 1, 2, 10
INIT_PRODUCER_ID, ADD_PARTITIONS, END_TXN = 22, 24, 26
ADD_PARTITIONS_MAX, END_TXN_MAX = 3, 4
TV1_PRODUCE_MAX = 11
READ_UNCOMMITTED, READ_COMMITTED = 0, 1
LATEST = -1
TRANSACTION_COORDINATOR = 1  # FindCoordinator KeyType
ABORT, COMMIT = 0, 1  # ControlRecordType
#: the records' timestamp: the run's hour (client.RECORD_TIME_MS). Kafka deletes a segment whose newest record is
#: older than retention.ms (7 days by default; UnifiedLog.scala 2219 at apache/kafka 1eb7644, in the retention pass
#: LogManager runs 30 s after start and every 5 minutes), and a marker, which the broker stamps with its own clock,
#: rolls a new segment after records stamped segment.ms before it (LogSegment.java 164-168): records with a fixed
#: old timestamp vanish under the case.
TIMESTAMP = RECORD_TIME_MS
MARKER_WAIT_S = 5.0  # how long markers may take to land after EndTxn is answered
#: What a transaction coordinator answers while it is not ready (client.COORDINATOR_NOT_READY) or while the
#: transactional id's previous transition is still completing: CONCURRENT_TRANSACTIONS (51). Kafka answers EndTxn
#: once the outcome is in its log and writes the markers after; until they are written the transaction has a
#: pending transition, and InitProducerId, AddPartitionsToTxn and EndTxn get 51 whatever they ask
#: (TransactionCoordinator.scala 230-232, 419-423, 563-564 at apache/kafka 1eb7644). 51 is a RetriableException
#: (ConcurrentTransactionsException.java) and the producer asks again (TransactionManager.java 1340-1342,
#: 1398-1403, 1576-1577), so the helpers do, for client.READY_WAIT_S; the answer after that is judged.
TXN_NOT_READY = COORDINATOR_NOT_READY | {errors.CONCURRENT_TRANSACTIONS}


class Producer:
    """A transactional producer on its own connection: its transactional id, producer id, epoch and sequences."""

    #: Produce versions a version-1 transaction may use: v12+ would add the partition itself (KIP-890 part 2,
    #: ProduceRequest.json v12 note); test_transactions_v2 sends v12
    produce_versions = (3, TV1_PRODUCE_MAX)

    def __init__(self, target, transactional_id: str | None = None, timeout_ms: int = 60000):
        self.client = DataPath(target)
        for key in (INIT_PRODUCER_ID, ADD_PARTITIONS, END_TXN):
            self.client.require(key)
        self.transactional_id = transactional_id or target.unique("txn")
        self.timeout_ms = timeout_ms
        self.producer_id = self.epoch = -1
        self.sequences: dict[str, int] = {}
        with target.precondition("the transaction coordinator found (FindCoordinator key type 1)"):
            self._find_coordinator()

    def _find_coordinator(self) -> None:
        version = self.client.version(FIND_COORDINATOR, low=1)
        body = self.client.call_until_ready(FIND_COORDINATOR, version, {
            "Key": self.transactional_id, "KeyType": TRANSACTION_COORDINATOR,
            "CoordinatorKeys": [self.transactional_id]}, "kafka.group.find-coordinator")
        entry = body["Coordinators"][0] if version >= 4 else body
        expect("kafka.group.find-coordinator", entry["ErrorCode"], errors.NONE)

    def init(self, clause_id: str) -> dict:
        """InitProducerId; on success the producer takes the answered id and epoch. TXN_NOT_READY is asked again
        (CONCURRENT_TRANSACTIONS also while Kafka aborts the id's ongoing transaction), as clients do."""
        body = self.client.call_until_ready(INIT_PRODUCER_ID, self.client.version(INIT_PRODUCER_ID), {
            "TransactionalId": self.transactional_id, "TransactionTimeoutMs": self.timeout_ms,
            "ProducerId": -1, "ProducerEpoch": -1}, clause_id, retriable=TXN_NOT_READY)
        if body["ErrorCode"] == errors.NONE:
            self.producer_id, self.epoch = body["ProducerId"], body["ProducerEpoch"]
            self.sequences.clear()
        return body

    def init_ok(self, clause_id: str) -> None:
        expect(clause_id, self.init(clause_id)["ErrorCode"], errors.NONE)

    def add_partition(self, topic: str, clause_id: str) -> tuple[int, int]:
        """(version, error) of AddPartitionsToTxn for partition 0 of ``topic``; TXN_NOT_READY is asked again."""
        version = self.client.version(ADD_PARTITIONS, ADD_PARTITIONS_MAX)
        body = self.client.call_until_ready(ADD_PARTITIONS, version, {
            "V3AndBelowTransactionalId": self.transactional_id, "V3AndBelowProducerId": self.producer_id,
            "V3AndBelowProducerEpoch": self.epoch,
            "V3AndBelowTopics": [{"Name": topic, "Partitions": [0]}]}, clause_id, retriable=TXN_NOT_READY,
            codes_of=partition_codes)
        try:
            return version, body["ResultsByTopicV3AndBelow"][0]["ResultsByPartition"][0]["PartitionErrorCode"]
        except (IndexError, KeyError):
            raise Divergence(C[clause_id], f"a result for {topic}-0", short(body)) from None

    def produce(self, topic: str, values: list[bytes], clause_id: str) -> int:
        """A transactional batch to partition 0; its base offset."""
        sequence = self.sequences.get(topic, 0)
        batch = records.build_batch(values, base_timestamp=TIMESTAMP, producer_id=self.producer_id,
                                    producer_epoch=self.epoch, base_sequence=sequence, transactional=True)
        version = self.client.version(PRODUCE, self.produce_versions[1], low=self.produce_versions[0])
        body = self.client.call(PRODUCE, version, {
            "TransactionalId": self.transactional_id, "Acks": -1, "TimeoutMs": 5000,
            "TopicData": [{"Name": topic, "PartitionData": [{"Index": 0, "Records": batch}]}]}, clause_id)
        partition = expect_produced(body["Responses"][0]["PartitionResponses"][0], clause_id)
        self.sequences[topic] = sequence + len(values)
        return partition["BaseOffset"]

    def end(self, commit: bool, clause_id: str) -> tuple[int, int]:
        """(version, error) of EndTxn; TXN_NOT_READY is asked again (51: the previous end still completing)."""
        version = self.client.version(END_TXN, END_TXN_MAX)
        body = self.client.call_until_ready(END_TXN, version, {
            "TransactionalId": self.transactional_id, "ProducerId": self.producer_id,
            "ProducerEpoch": self.epoch, "Committed": commit}, clause_id, retriable=TXN_NOT_READY)
        return version, body["ErrorCode"]

    def open_transaction(self, topic: str, values: list[bytes], clause_id: str) -> int:
        """Init, add partition 0 of ``topic`` and produce ``values`` in a transaction left open; the base offset."""
        self.init_ok(clause_id)
        expect(clause_id, self.add_partition(topic, clause_id)[1], errors.NONE)
        return self.produce(topic, values, clause_id)


def partition_codes(body: dict) -> set[int]:
    """The codes of an AddPartitionsToTxn v0-3 answer (PartitionErrorCode, which errors.error_codes does not read)."""
    return {p["PartitionErrorCode"] for t in body.get("ResultsByTopicV3AndBelow") or []
            for p in t["ResultsByPartition"]}


# -- reading back ----------------------------------------------------------------------------------------------


def fetch(client: DataPath, topic: str, isolation: int, clause_id: str, offset: int = 0) -> dict:
    """Partition 0's Fetch answer at this isolation level, asked as clients ask (DataPath.fetch)."""
    partition = client.fetch(topic, offset, clause_id=clause_id, isolation=isolation)
    expect(clause_id, partition["ErrorCode"], errors.NONE)
    return partition


def batches(partition: dict, clause_id: str) -> list[records.RecordBatch]:
    """The partition's batches. A transaction marker outside a control batch breaks kafka.txn.control-batch, before
    a case about something else reads it as data."""
    try:
        found = records.decode_batches(partition["Records"] or b"", allow_partial_tail=True)
    except records.CorruptBatch as exc:  # a wrong CRC-32C is the fetch clause's, whatever the case reads
        raise Divergence(C["kafka.fetch.batch-crc"], "batches with a valid CRC-32C", str(exc)) from None
    except records.DecodeError as exc:
        raise Divergence(C[clause_id], "record batches that decode", str(exc)) from None
    for batch in found:
        if batch.transactional and not batch.control and marker_type(batch) in (ABORT, COMMIT):
            raise Divergence(C["kafka.txn.control-batch"], "transaction markers in control batches",
                             f"a marker (type {marker_type(batch)}) in a batch without the control bit at offset "
                             f"{batch.base_offset}")
    return found


def log_below(client: DataPath, topic: str, end: int, isolation: int, clause_id: str,
              wait_s: float = MARKER_WAIT_S) -> list[records.RecordBatch]:
    """Partition 0's batches from offset 0 up to ``end`` (a high watermark the case read), fetched as clients fetch:
    again from the offset after the last batch each answer brought.

    One Fetch answer may hold less than the partition has below its high watermark: Kafka reads one log segment
    per partition and Fetch (LocalLog.scala 369-371 at apache/kafka 1eb7644: the next segment only when this one
    has nothing more), and it rolls a segment when a batch's timestamp is segment.ms past the segment's first one
    (LogSegment.java 164-168, 705-710), as a marker stamped now is after records stamped days before it. An answer
    bringing nothing is asked again for up to ``wait_s``."""
    found: list[records.RecordBatch] = []
    offset, deadline = 0, time.monotonic() + wait_s
    while offset < end:
        got = [b for b in batches(fetch(client, topic, isolation, clause_id, offset), clause_id)
               if b.base_offset + b.last_offset_delta >= offset]
        if got:
            found += got
            offset = got[-1].base_offset + got[-1].last_offset_delta + 1
        elif time.monotonic() > deadline:
            raise Divergence(C[clause_id], f"the batches of {topic}-0 up to offset {end} (within {wait_s:g} s)",
                             f"none from offset {offset}")
    return found


def list_latest(client: DataPath, topic: str, isolation: int, clause_id: str) -> int:
    version = client.version(LIST_OFFSETS, low=2)
    body = client.call(LIST_OFFSETS, version, {
        "ReplicaId": -1, "IsolationLevel": isolation,
        "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": 0, "Timestamp": LATEST}]}]}, clause_id)
    partition = body["Topics"][0]["Partitions"][0]
    expect(clause_id, partition["ErrorCode"], errors.NONE)
    return partition["Offset"]


def marker_type(batch: records.RecordBatch) -> int | None:
    """The ControlRecordType of a transaction marker, None if the batch is not a well-formed one."""
    if len(batch.records) != 1 or batch.records[0].key is None or len(batch.records[0].key) != 4:
        return None
    version, kind = struct.unpack(">hh", batch.records[0].key)
    return kind if version == 0 else None


def settled(client: DataPath, topic: str, clause_id: str, what: str, wait_s: float = MARKER_WAIT_S) -> dict:
    """The read_committed Fetch answer once the transaction's marker is in (LastStableOffset = HighWatermark);
    ``clause_id`` is the clause of what ended the transaction (EndTxn commit or abort, InitProducerId, the timeout).

    Kafka answers EndTxn once the outcome is in its transaction log and writes the markers after (TV1), so they may
    land a moment later; the answer is polled for up to ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        partition = fetch(client, topic, READ_COMMITTED, clause_id)
        if partition["LastStableOffset"] == partition["HighWatermark"]:
            return partition
        if time.monotonic() > deadline:
            raise Divergence(C[clause_id], f"LastStableOffset = HighWatermark {partition['HighWatermark']} {what} "
                             f"(within {wait_s:g} s)", f"LastStableOffset {partition['LastStableOffset']}")
        time.sleep(0.05)


def check_aborted(client: DataPath, topic: str, producer_id: int, clause_id: str) -> None:
    """The producer's transaction is over (LSO = HW, ``clause_id``) and a read_committed Fetch lists as aborted
    every batch of the producer it returns (what the list holds is kafka.txn.abort's, whatever aborted it)."""
    partition = settled(client, topic, clause_id, "once the transaction is aborted")
    listed = [a["FirstOffset"] for a in partition["AbortedTransactions"] or [] if a["ProducerId"] == producer_id]
    for batch in batches(partition, clause_id):
        if batch.producer_id == producer_id and not batch.control and not any(
                first <= batch.base_offset for first in listed):
            raise Divergence(C["kafka.txn.abort"], f"AbortedTransactions naming producer {producer_id} from offset "
                             f"{batch.base_offset} or before", f"AbortedTransactions "
                             f"{short(partition['AbortedTransactions'])} with the batch at {batch.base_offset}")


def new_topic(client: DataPath, target) -> str:
    """A fresh topic: a transaction on an operator's topic would hold back its read_committed consumers, and the
    last stable offset the cases check would be other writers' too."""
    return client.topic("txn")


def fenced_codes(version: int) -> tuple[int, ...]:
    """What an older epoch gets (see the kafka.txn.fenced clause's decision)."""
    if version < 2:
        return (errors.INVALID_PRODUCER_EPOCH,)
    return errors.PRODUCER_FENCED, errors.INVALID_PRODUCER_EPOCH


# -- cases -----------------------------------------------------------------------------------------------------


@case("kafka.txn.epoch-bump")
def test_init_again_bumps_the_epoch(target):
    clause = "kafka.txn.epoch-bump"
    producer = Producer(target)
    producer.init_ok(clause)
    first = (producer.producer_id, producer.epoch)
    producer.init_ok(clause)
    if (producer.producer_id, producer.epoch) != (first[0], first[1] + 1):
        raise Divergence(C[clause], f"producer id {first[0]} with epoch {first[1] + 1}",
                         f"producer id {producer.producer_id} with epoch {producer.epoch}")


@case("kafka.txn.fenced")
@pytest.mark.parametrize("request_kind", ["add-partitions", "end-txn"])
def test_old_epoch_is_fenced(target, request_kind):
    clause = "kafka.txn.fenced"
    old = Producer(target)
    topic = new_topic(old.client, target)
    with target.precondition("a second producer takes over the transactional id"):
        old.init_ok(clause)
        if request_kind == "end-txn":
            expect(clause, old.add_partition(topic, clause)[1], errors.NONE)
            old.produce(topic, [b"before-fencing"], clause)
        new = Producer(target, old.transactional_id)
        new.init_ok("kafka.txn.epoch-bump")
        if new.epoch <= old.epoch:
            raise Divergence(C["kafka.txn.epoch-bump"], f"an epoch above {old.epoch}", f"epoch {new.epoch}")
    if request_kind == "add-partitions":
        version, code = old.add_partition(topic, clause)
    else:
        version, code = old.end(True, clause)
    expect(clause, code, *fenced_codes(version))


@case("kafka.txn.commit")
def test_committed_records_are_read_committed(target):
    clause = "kafka.txn.commit"
    producer = Producer(target)
    topic = new_topic(producer.client, target)
    producer.open_transaction(topic, [b"c0", b"c1"], clause)
    expect(clause, producer.end(True, clause)[1], errors.NONE)
    partition = settled(producer.client, topic, clause, "after the commit")
    values = [r.value for b in batches(partition, clause) if not b.control for r in b.records]
    if values != [b"c0", b"c1"]:
        raise Divergence(C[clause], "the committed records [b'c0', b'c1'] read_committed", short(values))


@case("kafka.txn.abort")
def test_aborted_transaction_is_listed(target):
    clause = "kafka.txn.abort"
    producer = Producer(target)
    topic = new_topic(producer.client, target)
    producer.open_transaction(topic, [b"a0", b"a1"], clause)
    expect(clause, producer.end(False, clause)[1], errors.NONE)
    check_aborted(producer.client, topic, producer.producer_id, clause)


@case("kafka.txn.control-batch")
@pytest.mark.parametrize("outcome", ["commit", "abort"])
def test_end_txn_writes_a_control_batch(target, outcome):
    clause = "kafka.txn.control-batch"
    producer = Producer(target)
    topic = new_topic(producer.client, target)
    producer.open_transaction(topic, [b"m0"], clause)
    expect(clause, producer.end(outcome == "commit", clause)[1], errors.NONE)
    # the last stable offset moving past the marker is the commit's or the abort's clause
    end = settled(producer.client, topic, f"kafka.txn.{outcome}", f"after the {outcome}")["HighWatermark"]
    found = log_below(producer.client, topic, end, READ_UNCOMMITTED, clause)
    if len(found) != 2:
        raise Divergence(C[clause], "the data batch then the marker", f"{len(found)} batches")
    marker, wanted = found[1], COMMIT if outcome == "commit" else ABORT
    got = (marker.transactional, marker.control, marker.producer_id, marker_type(marker))
    if got != (True, True, producer.producer_id, wanted):
        raise Divergence(C[clause], f"transactional, control, producer {producer.producer_id}, marker type {wanted}",
                         f"transactional {got[0]}, control {got[1]}, producer {got[2]}, marker type {got[3]}")


def log_with_open_transaction(target, clause_id: str) -> tuple[Producer, str]:
    """A topic holding one plain record (offset 0) then two records of a transaction left open (offsets 1-2)."""
    producer = Producer(target)
    topic = new_topic(producer.client, target)
    producer.client.append(topic, records.build_batch([b"plain"], base_timestamp=TIMESTAMP))
    producer.open_transaction(topic, [b"o1", b"o2"], clause_id)
    return producer, topic


@case("kafka.txn.last-stable-offset")
def test_read_committed_stops_at_the_last_stable_offset(target):
    clause = "kafka.txn.last-stable-offset"
    producer, topic = log_with_open_transaction(target, clause)
    committed = fetch(producer.client, topic, READ_COMMITTED, clause)
    past = [b.base_offset for b in batches(committed, clause) if b.base_offset + b.last_offset_delta >= 1]
    if committed["LastStableOffset"] != 1 or past:
        raise Divergence(C[clause], "LastStableOffset 1 and no batch from offset 1 on", f"LastStableOffset "
                         f"{committed['LastStableOffset']}, batches at {past}")
    uncommitted = fetch(producer.client, topic, READ_UNCOMMITTED, clause)
    if uncommitted["HighWatermark"] != 3:  # the log end, whatever is open: the high watermark's own clause
        raise Divergence(C["kafka.fetch.high-watermark"], "read_uncommitted: HighWatermark 3 (three records)",
                         f"HighWatermark {uncommitted['HighWatermark']}")
    values = [r.value for b in batches(uncommitted, clause) for r in b.records]
    if values != [b"plain", b"o1", b"o2"]:
        raise Divergence(C[clause], "read_uncommitted: all three records", short(values))
    producer.end(False, clause)


@case("kafka.txn.list-offsets")
def test_list_offsets_read_committed_is_the_last_stable_offset(target):
    clause = "kafka.txn.list-offsets"
    producer, topic = log_with_open_transaction(target, clause)
    uncommitted = list_latest(producer.client, topic, READ_UNCOMMITTED, clause)
    if uncommitted != 3:  # the log end, whatever is open: ListOffsets LATEST's own clause
        raise Divergence(C["kafka.list-offsets.earliest-latest"], "LATEST 3 read_uncommitted (the log end)",
                         f"{uncommitted} read_uncommitted")
    committed = list_latest(producer.client, topic, READ_COMMITTED, clause)
    if committed != 1:
        raise Divergence(C[clause], "LATEST 1 read_committed (the open transaction's first offset)",
                         f"{committed} read_committed")
    producer.end(False, clause)


@case("kafka.txn.invalid-state")
@pytest.mark.parametrize("history", ["no-transaction", "commit-after-abort"])
def test_end_txn_out_of_order_is_invalid(target, history):
    clause = "kafka.txn.invalid-state"
    producer = Producer(target)
    if history == "no-transaction":
        producer.init_ok(clause)
    else:
        topic = new_topic(producer.client, target)
        producer.open_transaction(topic, [b"x"], clause)
        expect(clause, producer.end(False, clause)[1], errors.NONE)
    expect(clause, producer.end(True, clause)[1], errors.INVALID_TXN_STATE)


@case("kafka.txn.init-aborts-ongoing")
def test_init_during_a_transaction_aborts_it(target):
    clause = "kafka.txn.init-aborts-ongoing"
    producer = Producer(target)
    topic = new_topic(producer.client, target)
    producer.open_transaction(topic, [b"i0", b"i1"], clause)
    old_epoch = producer.epoch
    producer.init_ok(clause)  # CONCURRENT_TRANSACTIONS (51) first is allowed: init() asks again
    if producer.epoch <= old_epoch:
        raise Divergence(C[clause], f"an epoch above {old_epoch}", f"epoch {producer.epoch}")
    check_aborted(producer.client, topic, producer.producer_id, clause)


@case("kafka.txn.invalid-timeout")
@pytest.mark.parametrize("timeout_ms", [0, -1], ids=["zero", "negative"])
def test_init_with_a_timeout_of_zero_or_less_is_refused(target, timeout_ms):
    clause = "kafka.txn.invalid-timeout"
    producer = Producer(target, timeout_ms=timeout_ms)
    expect(clause, producer.init(clause)["ErrorCode"], errors.INVALID_TRANSACTION_TIMEOUT)


@case("kafka.txn.timeout")
def test_transaction_past_its_timeout_is_aborted(target):
    clause = "kafka.txn.timeout"
    timeout_ms = 500
    producer = Producer(target, timeout_ms=timeout_ms)
    topic = new_topic(producer.client, target)
    producer.open_transaction(topic, [b"late"], clause)
    target.depends_on_server_timers("the transaction's abort waits for the server's timeout sweep")
    # Kafka sweeps every 10 s (see the clause's decision)
    end = settled(producer.client, topic, clause, "once the transaction timed out",
                  wait_s=timeout_ms / 1000 + 12)["HighWatermark"]
    found = log_below(producer.client, topic, end, READ_UNCOMMITTED, clause)
    if not found or not found[-1].control or marker_type(found[-1]) != ABORT:
        raise Divergence(C[clause], "an abort marker after the timed-out records",
                         short([(b.base_offset, b.control) for b in found]))
    check_aborted(producer.client, topic, producer.producer_id, clause)
    _, code = producer.end(True, clause)
    if code == errors.NONE:
        raise Divergence(C[clause], "the late commit refused", "EndTxn(commit) answered 0")
