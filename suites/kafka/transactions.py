"""Steps the transaction cases share (and the KIP-890 cases reuse): a transactional producer, its batches, the
markers a fetch reads back, waiting for a transaction to settle."""

from __future__ import annotations

import struct
import time

from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import (COORDINATOR_NOT_READY, C, DataPath, expect, expect_produced,
                                           short, RECORD_TIME_MS)


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


def log_with_open_transaction(target, clause_id: str) -> tuple[Producer, str]:
    """A topic holding one plain record (offset 0) then two records of a transaction left open (offsets 1-2)."""
    producer = Producer(target)
    topic = new_topic(producer.client, target)
    producer.client.append(topic, records.build_batch([b"plain"], base_timestamp=TIMESTAMP))
    producer.open_transaction(topic, [b"o1", b"o2"], clause_id)
    return producer, topic

