"""Transaction protocol version 2 (KIP-890 part 2, "TV2") in the transaction coordinator.

TV2 is chosen per request by the version the client sends (Produce v12+, TxnOffsetCommit v5+, EndTxn v5+), as
Kafka 4's KafkaApis/TransactionCoordinator do; older versions keep version-1 semantics (transactions.py), so old
clients see no change. Hooked into transactions.py at ``check_produce``, ``commit_offsets`` and ``end``:
- a transactional Produce v12+ adds its partition to the producer's transaction itself (starting one if none is
  ongoing): the client sends no AddPartitionsToTxn (ProduceRequest.json v12 note). An epoch other than the
  transactional id's current one is refused INVALID_PRODUCER_EPOCH (47): Kafka's implicit add answers
  PRODUCER_FENCED, and the produce path hands that to the client as 47;
- TxnOffsetCommit v5+ adds its group likewise (no AddOffsetsToTxn; TxnOffsetCommitRequest.json v5 note);
- EndTxn v5+ bumps the epoch at every end, before the markers are written, so the markers carry the new epoch and
  a late batch of the old one is fenced at the partition; the answer carries the producer id and the new epoch
  (EndTxnResponse.json v5). Past epoch 32766 (Short.MaxValue - 1, TransactionMetadata.isEpochExhausted) the
  markers take 32767 and the producer gets a new producer id with epoch 0 (KAFKA-18660);
- an EndTxn v5 repeated with the epoch it left, for the outcome it reached, is a retry whose answer was lost: it
  gets success with the current id and epoch again (TransactionCoordinator isRetry); the other outcome is
  INVALID_TXN_STATE (48). Decision: this retry memory is not saved under --data-dir (a restart forgets it).
"""

from __future__ import annotations

from wirecheck.broker.kafka.errors import (CONCURRENT_TRANSACTIONS, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, NONE,
                                           PRODUCER_FENCED)
from wirecheck.broker.kafka.txn_state import TxnState, ended as txn_ended

PRODUCE_V2, TXN_OFFSET_COMMIT_V2, END_TXN_V2 = 12, 5, 5  # the first version of each with TV2 semantics
EXHAUSTED_EPOCH = 0x7FFF - 1  # an epoch bumped past this rotates the producer id


def produce_adds(txns, topic: str, partition: int, producer_id: int, epoch: int) -> int:
    """Produce v12+: the partition joins the producer's transaction (KIP-890 part 2); the error for the batch."""
    txn = txns.by_producer.get(producer_id)
    if txn is None:
        return INVALID_TXN_STATE  # a transactional batch from a producer id no transactional id holds
    if epoch != txn.epoch and not (epoch < txn.epoch and txns.faults.txn_v2_old_epoch_accepted):
        # variant txn-v2-late-write-producer-fenced: the coordinator's own code, not the produce path's
        return PRODUCER_FENCED if txns.variants.txn_v2_late_write_producer_fenced else INVALID_PRODUCER_EPOCH
    if txns.faults.txn_v2_implicit_add_missing:  # fault: version-1 rules, the partition must be added first
        return NONE if txn.state == TxnState.ONGOING and (topic, partition) in txn.partitions else INVALID_TXN_STATE
    if txn.state != TxnState.ONGOING or (topic, partition) not in txn.partitions:
        txns._begin(txn)
        txn.partitions.add((topic, partition))
        txns.on_change()  # a Produce is not among the requests after which the coordinator state is saved
    return NONE


def offsets_add(txns, txn, group: str) -> None:
    """TxnOffsetCommit v5+: the group joins the transaction as AddOffsetsToTxn would have added it."""
    if txns.faults.txn_v2_offsets_add_missing:  # fault: the group must have been added first (48)
        return
    txns._begin(txn)
    txn.groups.add(group)


def end(txns, transactional_id: str, producer_id: int, epoch: int, version: int,
        commit: bool) -> tuple[int, int, int]:
    """EndTxn v5+: (error, producer id, epoch) — the id and epoch the producer goes on with, -1 on an error."""
    txn = txns.by_id.get(transactional_id)
    if txn is not None and txn.v2_end is not None and not txns.faults.txn_v2_end_retry_fenced:
        left, reached, committed = txn.v2_end
        ended = txn.state == txn_ended(committed)
        if ended and left == (producer_id, epoch) and reached == (txn.producer_id, txn.epoch):
            if txns.still_completing(txn):  # variant txn-completion-lags
                return CONCURRENT_TRANSACTIONS, -1, -1
            if commit == committed:  # a retry of the end that bumped the epoch
                return NONE, txn.producer_id, txn.epoch
            return INVALID_TXN_STATE, -1, -1
    error, txn = txns._current(transactional_id, producer_id, epoch, version)
    if error:
        return error, -1, -1
    if txn.state != TxnState.ONGOING:
        if txn.v2_end is not None and txn.v2_end[1] == (txn.producer_id, txn.epoch):
            return INVALID_TXN_STATE, -1, -1  # ended by a v5 EndTxn: its retry carries the epoch it left
        # Empty (48) or a repeat of a version-1 end (0): as version 1 answers it
        error = txns.end(transactional_id, producer_id, epoch, version, commit)
        return (error, -1, -1) if error else (NONE, txn.producer_id, txn.epoch)
    left = (txn.producer_id, txn.epoch)
    bumped = not txns.faults.txn_v2_epoch_not_bumped
    new_epoch = min(txn.epoch + 1, 0x7FFF) if bumped else txn.epoch
    # the markers carry the new epoch (fault txn-v2-marker-old-epoch: the one the transaction ran under)
    txn.epoch = txn.epoch if txns.faults.txn_v2_marker_old_epoch else new_epoch
    txns._complete(txn, commit)
    txn.epoch = new_epoch
    if not txns.faults.txn_v2_old_epoch_accepted:  # fault: the partitions never learn the new epoch
        txns.producers.epochs[txn.producer_id] = max(new_epoch, txns.producers.epochs.get(txn.producer_id, 0))
    if bumped and new_epoch > EXHAUSTED_EPOCH:
        _rotate(txns, txn)
    txn.v2_end = (left, (txn.producer_id, txn.epoch), commit)
    return NONE, txn.producer_id, txn.epoch


def _rotate(txns, txn) -> None:
    """The epoch is exhausted: the transactional id goes on under a new producer id, epoch 0."""
    del txns.by_producer[txn.producer_id]
    txn.producer_id = txns.producers._new_id()
    txn.epoch = 0
    txns.producers.transactional[txn.transactional_id] = txn.producer_id
    txns.by_producer[txn.producer_id] = txn
