"""The transaction coordinator (KIP-98, KIP-447 client side): one state machine per transactional id.

Follows TransactionCoordinator / TransactionStateManager (Kafka 3.x), transaction protocol version 1 (the
producer calls AddPartitionsToTxn itself); version 2 (KIP-890 part 2: Produce v12+, TxnOffsetCommit v5+, EndTxn
v5+) is in transactions_v2.py, hooked in at check_produce, commit_offsets and the EndTxn handler:
- InitProducerId with a transactional id bumps the epoch (producers.py fences the old one). An ongoing
  transaction is fenced (epoch bumped), aborted (markers written) and the request answered CONCURRENT_TRANSACTIONS
  (51): the producer asks again and the retry bumps the epoch once more, as Kafka's coordinator does. Decision: a
  KIP-360 request naming its producer id and epoch gets its answer once the abort is written instead (Kafka would
  need its lastProducerEpoch bookkeeping to accept the retry);
- AddPartitionsToTxn / AddOffsetsToTxn move Empty or Complete* to Ongoing; TxnOffsetCommit stashes offsets that
  EndTxn(commit) applies and EndTxn(abort) drops;
- EndTxn writes a control batch (transaction marker) to every partition of the transaction and completes it at
  once (one broker: there is no PrepareCommit/PrepareAbort window for EndTxn to answer 51 in);
  EndTxn with no transaction is INVALID_TXN_STATE, a retried EndTxn of the same outcome is NONE;
- a producer id or epoch that is not the transactional id's current one: INVALID_PRODUCER_ID_MAPPING (49) or
  PRODUCER_FENCED (90), which request versions below 2 get as INVALID_PRODUCER_EPOCH (47), as KafkaApis
  converts it for older clients.
- a transactional InitProducerId needs 0 < TransactionTimeoutMs <= transaction.max.timeout.ms (900000 here), else
  INVALID_TRANSACTION_TIMEOUT (50);
- a transaction still Ongoing after the TransactionTimeoutMs its producer asked for is aborted, its epoch bumped
  first (abortTimedOutTransactions with prepareFenceProducerEpoch), so the producer's late EndTxn is fenced.
  Decision: a timer per transaction fires at the timeout itself, instead of Kafka's 10 s sweep.
- variant txn-completion-lags: Kafka answers EndTxn once the outcome is in its log and completes the transaction
  only after the markers are written; the first coordinator request for the transactional id after an end gets
  CONCURRENT_TRANSACTIONS (51), as Kafka's pending transition answers (TransactionCoordinator.endTransaction).
- Produce v11 to a partition not in the transaction gets TRANSACTION_ABORTABLE (120), as Apache Kafka 4.4 answers
  on the wire: its coordinator's verification answers 120, which the partition leader turns into INVALID_TXN_STATE
  only for Produce v10 and below (KafkaApis.scala 743, AddPartitionsToTxnManager.scala 228, KIP-890); variant
  txn-unadded-invalid-state answers 48 at v11 too.
Transaction state is in memory, while the markers themselves are in the (durable) log.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from wirecheck.broker.kafka import group_model, groups, records, transactions_v2
from wirecheck.broker.kafka.faults import KafkaFaults, KafkaVariants
from wirecheck.broker.kafka.txn_state import TRANSITIONS, TxnState, ended
from wirecheck.broker.kafka.errors import (CONCURRENT_TRANSACTIONS, INVALID_PRODUCER_EPOCH,
                                           INVALID_PRODUCER_ID_MAPPING, INVALID_TRANSACTION_TIMEOUT,
                                           INVALID_TXN_STATE, NONE, OPERATION_NOT_ATTEMPTED, PRODUCER_FENCED,
                                           TRANSACTION_ABORTABLE, UNKNOWN_TOPIC_OR_PARTITION)

MAX_TIMEOUT_MS = 900_000  # transaction.max.timeout.ms default
ABORTABLE_PRODUCE = 11  # Produce v11+ knows 120 (ProduceRequest.json, KIP-890)



@dataclass
class Transaction:
    transactional_id: str
    producer_id: int
    epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    partitions: set[tuple[str, int]] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    offsets: dict[str, dict[tuple[str, int], group_model.CommittedOffset]] = field(default_factory=dict)
    timer: asyncio.TimerHandle | None = None  # the transaction timeout while Ongoing
    v2_end: tuple | None = None  # ((pid, epoch) left, (pid, epoch) reached, committed) of the last EndTxn v5+
    completing: bool = False  # variant txn-completion-lags: ended, and no request has been told 51 since
    held_abort: list[tuple[str, int]] = field(default_factory=list)  # fault safety-abort-marker-delayed: unwritten

    def move(self, to: TxnState, faulted: bool = False) -> None:
        """To ``to``, where the state table (txn_state.TRANSITIONS) leads, or where a fault moves it regardless."""
        self.state = TRANSITIONS.moved(self.state, to, faulted)


class Transactions:
    def __init__(self, producers, storage, coordinator: groups.Coordinator, faults: KafkaFaults | None = None,
                 variants: KafkaVariants | None = None):
        self.faults = KafkaFaults() if faults is None else faults
        self.variants = KafkaVariants() if variants is None else variants
        self.producers = producers
        self.storage = storage
        self.coordinator = coordinator
        self.by_id: dict[str, Transaction] = {}
        self.by_producer: dict[int, Transaction] = {}
        self.on_change = lambda: None  # called when a timeout aborts a transaction (the durable state saves)

    # ------------------------------------------------------------------------------------------ requests

    def init_producer_id(self, transactional_id: str | None, timeout_ms: int, producer_id: int,
                         epoch: int) -> tuple[int, int, int]:
        # variant txn-max-timeout-int32: transaction.max.timeout.ms set to its top, so only <= 0 is refused
        max_timeout = 2**31 - 1 if self.variants.txn_max_timeout_int32 else MAX_TIMEOUT_MS
        if transactional_id and not 0 < timeout_ms <= max_timeout and not self.faults.txn_timeout_unchecked:
            return INVALID_TRANSACTION_TIMEOUT, -1, -1
        txn = self.by_id.get(transactional_id) if transactional_id else None
        if txn is not None and self.still_completing(txn):
            return CONCURRENT_TRANSACTIONS, -1, -1
        if txn is not None and txn.state == TxnState.ONGOING and not self.faults.txn_init_keeps_ongoing:
            if producer_id == -1:
                self._fence_and_abort(txn)
                if not self.variants.txn_init_aborts_at_once:  # variant: the abort is done, answer now
                    return CONCURRENT_TRANSACTIONS, -1, -1
            else:
                self._complete(txn, commit=False)
        error, pid, new_epoch = self.producers.init(transactional_id, producer_id, epoch)
        if error or not transactional_id:
            return error, pid, new_epoch
        if txn is not None and self.faults.txn_epoch_not_bumped:
            self.producers.epochs[pid] = new_epoch = txn.epoch
        if txn is None:
            txn = self.by_id[transactional_id] = Transaction(transactional_id, pid, new_epoch, timeout_ms)
            self.by_producer[pid] = txn
        txn.epoch, txn.timeout_ms = new_epoch, timeout_ms
        txn.move(TxnState.EMPTY, faulted=self.faults.txn_init_keeps_ongoing)
        return NONE, pid, new_epoch

    def add_partitions(self, transactional_id: str, producer_id: int, epoch: int, version: int,
                       wanted: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        # Apache Kafka checks the partitions before the coordinator sees the producer: any unknown one fails the
        # whole request, the others OPERATION_NOT_ATTEMPTED (KafkaApis.handleAddPartitionsToTxnRequest,
        # nonExistingTopicErrors, core/src/main/scala/kafka/server/KafkaApis.scala)
        unknown = {tp for tp in wanted if self.storage.partition(*tp) is None}
        if unknown:  # all or nothing: the others are not attempted
            return {tp: UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else OPERATION_NOT_ATTEMPTED for tp in wanted}
        error, txn = self._current(transactional_id, producer_id, epoch, version)
        if error:
            return {tp: error for tp in wanted}
        self._begin(txn)
        txn.partitions.update(wanted)
        return {tp: NONE for tp in wanted}

    def add_offsets(self, transactional_id: str, producer_id: int, epoch: int, version: int, group: str) -> int:
        error, txn = self._current(transactional_id, producer_id, epoch, version)
        if error:
            return error
        self._begin(txn)
        txn.groups.add(group)
        return NONE

    def commit_offsets(self, transactional_id: str, producer_id: int, epoch: int, version: int, group: str,
                       offsets: dict[tuple[str, int], group_model.CommittedOffset]) -> dict[tuple[str, int], int]:
        """TxnOffsetCommit: held until EndTxn. The group must have been added with AddOffsetsToTxn. The group
        coordinator answers it, so the transaction coordinator's pending completion is not its answer."""
        error, txn = self._current(transactional_id, producer_id, epoch, version, coordinator_request=False)
        if not error and version >= transactions_v2.TXN_OFFSET_COMMIT_V2:
            transactions_v2.offsets_add(self, txn, group)  # TV2: the group joins the transaction itself
        if not error and (txn.state != TxnState.ONGOING or group not in txn.groups):
            error = INVALID_TXN_STATE
        results = {}
        for tp, committed in offsets.items():
            # a topic Kafka does not know is answered before the group coordinator sees the producer
            # (KafkaApis.handleTxnOffsetCommitRequest: metadataCache.contains(topic.name))
            unknown_topic = UNKNOWN_TOPIC_OR_PARTITION if tp[0] not in self.storage.topics else NONE
            partition_error = unknown_topic or error or (
                UNKNOWN_TOPIC_OR_PARTITION if self.storage.partition(*tp) is None else NONE)
            if not partition_error:
                txn.offsets.setdefault(group, {})[tp] = committed
            results[tp] = partition_error
        return results

    def end(self, transactional_id: str, producer_id: int, epoch: int, version: int, commit: bool) -> int:
        error, txn = self._current(transactional_id, producer_id, epoch, version)
        if error:
            return error
        if txn.state == TxnState.ONGOING:
            self._complete(txn, commit)
            return NONE
        if txn.state == ended(commit):
            return NONE  # a retry of the EndTxn that completed it
        if txn.state == TxnState.EMPTY and self.faults.txn_end_without_partitions_accepted:
            return NONE
        return INVALID_TXN_STATE

    def check_produce(self, topic: str, partition: int, producer_id: int, epoch: int, version: int = 0) -> int:
        """A transactional batch is accepted only for a partition its producer's ongoing transaction added
        (KIP-890 part 1); from Produce v12 the batch adds it (TV2)."""
        if version >= transactions_v2.PRODUCE_V2 or self.faults.txn_v2_implicit_add_any_version:
            return transactions_v2.produce_adds(self, topic, partition, producer_id, epoch)
        txn = self.by_producer.get(producer_id)
        if txn is None or epoch < txn.epoch:
            return INVALID_PRODUCER_EPOCH if txn is not None else INVALID_TXN_STATE
        if txn.state != TxnState.ONGOING or (topic, partition) not in txn.partitions:
            abortable = version >= ABORTABLE_PRODUCE and not self.variants.txn_unadded_invalid_state
            return TRANSACTION_ABORTABLE if abortable else INVALID_TXN_STATE
        return NONE

    # ------------------------------------------------------------------------------------------ state

    def _current(self, transactional_id: str, producer_id: int, epoch: int, version: int,
                 coordinator_request: bool = True) -> tuple[int, Transaction | None]:
        txn = self.by_id.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return INVALID_PRODUCER_ID_MAPPING, None
        if epoch != txn.epoch and not (epoch < txn.epoch and self.faults.txn_old_epoch_accepted):
            modern = version >= 2 and not self.variants.txn_fenced_invalid_epoch  # variant: 47 at every version
            return (PRODUCER_FENCED if modern else INVALID_PRODUCER_EPOCH), None
        if coordinator_request and self.still_completing(txn):
            return CONCURRENT_TRANSACTIONS, None
        return NONE, txn

    def still_completing(self, txn: Transaction) -> bool:
        """Variant txn-completion-lags: the transaction's end is not complete for the first request that asks."""
        completing, txn.completing = txn.completing, False
        return completing

    def _begin(self, txn: Transaction) -> None:
        if txn.state != TxnState.ONGOING:
            txn.move(TxnState.ONGOING)
            txn.partitions.clear()
            txn.groups.clear()
            txn.offsets.clear()
            self._start_timer(txn)

    def _start_timer(self, txn: Transaction) -> None:
        if not self.faults.txn_timeout_ignored:
            txn.timer = asyncio.get_running_loop().call_later(txn.timeout_ms / 1000, self._time_out, txn)

    def resume_timers(self) -> None:
        """Transactions restored Ongoing after a restart get their whole timeout again (called in the loop)."""
        for txn in self.by_id.values():
            if txn.state == TxnState.ONGOING and txn.timer is None:
                self._start_timer(txn)

    def _time_out(self, txn: Transaction) -> None:
        """The coordinator aborts a transaction past its timeout, bumping the epoch first to fence its producer."""
        if txn.state != TxnState.ONGOING:
            return
        if self.variants.txn_timeout_no_fence:  # variant: aborted under the same epoch, so a late commit gets 48
            self._complete(txn, commit=False)
        else:
            self._fence_and_abort(txn)
        self.on_change()

    def _fence_and_abort(self, txn: Transaction) -> None:
        """Bump the epoch first: the markers and every later request carry the new one (prepareFenceProducerEpoch)."""
        txn.epoch = self.producers.epochs[txn.producer_id] = (txn.epoch + 1) & 0x7FFF
        self._complete(txn, commit=False)

    def _complete(self, txn: Transaction, commit: bool) -> None:
        if txn.timer is not None:
            txn.timer.cancel()
            txn.timer = None
        now = int(time.time() * 1000)
        held, txn.held_abort = txn.held_abort, []
        if not commit and self.faults.safety_abort_marker_delayed:
            # fault: the markers are written when the next transaction ends
            txn.held_abort, markers = sorted(set(held) | txn.partitions), []
        else:
            markers = [*((tp, False) for tp in held), *((tp, commit) for tp in sorted(txn.partitions))]
        for (topic_name, index), marker_commits in markers:
            topic = self.storage.topics.get(topic_name)
            partition = self.storage.partition(topic_name, index)
            if partition is None:
                continue  # deleted since (every other added partition gets its marker, written to or not)
            data, batch = records.control_batch(txn.producer_id, txn.epoch, marker_commits, now)
            if self.faults.txn_marker_not_control:
                # fault: the marker's bytes lack the control bit; the broker still ends the transaction with it
                data = records.control_batch(txn.producer_id, txn.epoch, marker_commits, now, control=False)[0]
            first = partition.open_transactions.get(txn.producer_id)
            self.storage.append(topic, partition, data, batch, None)
            if marker_commits and first is not None and self.faults.txn_lso_not_advanced:
                partition.open_transactions[txn.producer_id] = first
        if commit:
            for group, offsets in txn.offsets.items():
                for (topic_name, index), committed in offsets.items():
                    self.coordinator.commit(group, topic_name, index, committed)
        txn.move(ended(commit))
        txn.completing = self.variants.txn_completion_lags
        txn.partitions.clear()
        txn.groups.clear()
        txn.offsets.clear()
        self.storage.notify_append()
