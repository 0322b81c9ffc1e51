"""Coordinator state that survives a restart under ``--data-dir``: committed offsets, transactional ids and their
transactions, and the producer id counter (what Kafka keeps in __consumer_offsets and __transaction_state).

The state is small, so it is saved whole (``durable.DurableLog.save_coordinator``: write, then rename) after every
request that changes it, before the answer goes out. Producer sequence numbers are not saved: like Kafka's
producer-state recovery, they are rebuilt from the batches in the log (``rebuild_producers``). Group membership
is not kept: members rejoin after a restart, as they do after a coordinator moves.
"""

from __future__ import annotations

from wirecheck.broker.kafka import group_model, groups
from wirecheck.broker.kafka.api_keys import ApiKey
from wirecheck.broker.kafka.transactions import Transaction, Transactions
from wirecheck.broker.kafka.txn_state import TxnState

#: Requests after which the coordinator state is saved.
CHANGING_APIS = frozenset({ApiKey.OFFSET_COMMIT, ApiKey.DELETE_TOPICS, ApiKey.INIT_PRODUCER_ID,
                           ApiKey.ADD_PARTITIONS_TO_TXN, ApiKey.ADD_OFFSETS_TO_TXN, ApiKey.END_TXN,
                           ApiKey.TXN_OFFSET_COMMIT, ApiKey.DELETE_GROUPS, ApiKey.OFFSET_DELETE})


def snapshot(coordinator: groups.Coordinator, transactions: Transactions) -> dict:
    producers = transactions.producers
    return {
        "offsets": [[group_id, topic, partition, c.offset, c.leader_epoch, c.metadata]
                    for group_id, group in coordinator.groups.items()
                    for (topic, partition), c in group.offsets.items()],
        "next_producer_id": producers.next_id,
        "transactional_ids": producers.transactional,
        "epochs": {str(pid): epoch for pid, epoch in producers.epochs.items()},
        "transactions": [_transaction(txn) for txn in transactions.by_id.values()],
    }


def _transaction(txn: Transaction) -> dict:
    return {"id": txn.transactional_id, "producer_id": txn.producer_id, "epoch": txn.epoch,
            "timeout_ms": txn.timeout_ms, "state": txn.state, "partitions": sorted(txn.partitions),
            "groups": sorted(txn.groups),
            "offsets": [[group, topic, partition, c.offset, c.leader_epoch, c.metadata]
                        for group, by_partition in txn.offsets.items()
                        for (topic, partition), c in by_partition.items()]}


def restore(doc: dict, coordinator: groups.Coordinator, transactions: Transactions) -> None:
    for group_id, topic, partition, offset, leader_epoch, metadata in doc["offsets"]:
        coordinator.commit(group_id, topic, partition, group_model.CommittedOffset(offset, leader_epoch, metadata))
    producers = transactions.producers
    producers.next_id = max(producers.next_id, doc["next_producer_id"])
    producers.transactional.update(doc["transactional_ids"])
    for pid, epoch in doc["epochs"].items():
        producers.epochs[int(pid)] = max(epoch, producers.epochs.get(int(pid), -1))
    for entry in doc["transactions"]:
        txn = Transaction(entry["id"], entry["producer_id"], entry["epoch"], entry["timeout_ms"], TxnState(entry["state"]),
                          {tuple(tp) for tp in entry["partitions"]}, set(entry["groups"]))
        for group, topic, partition, offset, leader_epoch, metadata in entry["offsets"]:
            txn.offsets.setdefault(group, {})[(topic, partition)] = group_model.CommittedOffset(offset, leader_epoch,
                                                                                           metadata)
        transactions.by_id[txn.transactional_id] = txn
        transactions.by_producer[txn.producer_id] = txn


def rebuild_producers(storage, producers) -> None:
    """Producer ids, epochs and the last batches' sequences from the idempotent batches in the log."""
    for topic in storage.topics.values():
        for partition in topic.partitions:
            for batch in partition.log.headers():
                if batch.producer_id < 0:
                    continue
                producers.next_id = max(producers.next_id, batch.producer_id + 1)
                if batch.is_control:
                    producers.epochs[batch.producer_id] = max(batch.producer_epoch,
                                                              producers.epochs.get(batch.producer_id, -1))
                    continue
                producers.record(topic.name, partition.index, batch.producer_id, batch.producer_epoch,
                                 batch.base_sequence, batch.last_sequence, batch.base_offset, batch.max_timestamp)
