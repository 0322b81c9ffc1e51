"""Probes for the Kafka transaction faults (see test_kafka_faults.py for how they run): each takes a broker and
returns an observation that the fault changes."""

from __future__ import annotations

import time

from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.record.default_records import DefaultRecordBatch

from tests.broker.kafka_admin_probes import with_wire
from tests.broker.test_kafka_data import batches_in
from tests.broker.test_kafka_transactions import (NONE, add_partitions, end, fetch, init, open_txn, produce,
                                                  topic)
from tests.interop.kafka_support import Wire


def epoch_after_second_init(w: Wire) -> int:
    name = topic(w)
    init(w, f"t-{name}")
    return init(w, f"t-{name}")[2]


def old_epoch_add_partitions(w: Wire) -> int:
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    init(w, txn_id)
    return add_partitions(w, txn_id, pid, epoch, [(name, 0)])[(name, 0)]


def committed_lso(w: Wire) -> int:
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    produce(w, name, pid, epoch, 0, [b"a"])
    end(w, txn_id, pid, epoch, commit=True)
    return fetch(w, name).last_stable_offset


def aborted_listed(w: Wire) -> int:
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    produce(w, name, pid, epoch, 0, [b"a"])
    end(w, txn_id, pid, epoch, commit=False)
    return len(fetch(w, name).aborted_transactions)


def last_batch_is_control(w: Wire) -> bool:
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    produce(w, name, pid, epoch, 0, [b"a"])
    end(w, txn_id, pid, epoch, commit=True)
    return DefaultRecordBatch(batches_in(fetch(w, name, isolation=0).records)[-1][1]).is_control_batch


def read_committed_bytes_while_open(w: Wire) -> int:
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    produce(w, name, pid, epoch, 0, [b"a"])
    return len(fetch(w, name).records or b"")


def latest_read_committed_while_open(w: Wire) -> int:
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    produce(w, name, pid, epoch, 0, [b"a", b"b"])
    r = w.call(ListOffsetsRequest, ListOffsetsResponse, 5, replica_id=-1, isolation_level=1, topics=[
        {"name": name, "partitions": [{"partition_index": 0, "timestamp": -1}]}])
    return r.topics[0].partitions[0].offset


def end_with_nothing_begun(w: Wire) -> int:
    name = topic(w)
    error, pid, epoch = init(w, f"t-{name}")
    return end(w, f"t-{name}", pid, epoch, commit=True)


def lso_after_reinit(w: Wire) -> int:
    name = topic(w)
    txn_id, pid, epoch = open_txn(w, name)
    produce(w, name, pid, epoch, 0, [b"a"])
    init(w, txn_id)
    return fetch(w, name).last_stable_offset


def lso_after_timeout(w: Wire) -> int:
    name = topic(w)
    error, pid, epoch = init(w, f"t-{name}", timeout_ms=50)
    assert add_partitions(w, f"t-{name}", pid, epoch, [(name, 0)]) == {(name, 0): NONE}
    produce(w, name, pid, epoch, 0, [b"a"])
    time.sleep(0.3)  # well past the timeout: the clean broker has aborted by now
    return fetch(w, name).last_stable_offset


def init_with_zero_timeout(w: Wire) -> int:
    return init(w, f"t-zero-{topic(w)}", timeout_ms=0)[0]


#: fault -> (probe(broker) -> observation, the clean broker's observation)
TXN_PROBES = {
    "kafka.txn-epoch-not-bumped": (with_wire(epoch_after_second_init), 1),
    "kafka.txn-old-epoch-accepted": (with_wire(old_epoch_add_partitions), 90),
    "kafka.txn-lso-not-advanced": (with_wire(committed_lso), 2),
    "kafka.txn-aborted-not-listed": (with_wire(aborted_listed), 1),
    "kafka.txn-marker-not-control": (with_wire(last_batch_is_control), True),
    "kafka.txn-read-committed-past-lso": (with_wire(read_committed_bytes_while_open), 0),
    "kafka.txn-list-offsets-ignores-isolation": (with_wire(latest_read_committed_while_open), 0),
    "kafka.txn-end-without-partitions-accepted": (with_wire(end_with_nothing_begun), 48),
    "kafka.txn-init-keeps-ongoing": (with_wire(lso_after_reinit), 2),
    "kafka.txn-timeout-ignored": (with_wire(lso_after_timeout), 2),
    "kafka.txn-timeout-unchecked": (with_wire(init_with_zero_timeout), 50),
}
