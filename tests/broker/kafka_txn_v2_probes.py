"""Probes for the transaction-version-2 faults (KIP-890; see test_kafka_faults.py for how they run): each takes a
broker and returns an observation that the fault changes."""

from __future__ import annotations

from tests.broker.kafka_admin_probes import with_wire
from tests.broker.test_kafka_transactions import add_partitions, end, init, topic
from tests.broker.test_kafka_transactions_v2 import end_v5, markers, offsets_v5, produce
from tests.interop.kafka_support import Wire


def started(w: Wire) -> tuple[str, str, int, int]:
    name = topic(w)
    _, pid, epoch = init(w, f"t-{name}")
    return name, f"t-{name}", pid, epoch


def produce_v11_unadded(w: Wire) -> int:
    name, _, pid, epoch = started(w)
    return produce(w, name, pid, epoch, 0, [b"a"], version=11)


def produce_v12_unadded(w: Wire) -> int:
    name, _, pid, epoch = started(w)
    return produce(w, name, pid, epoch, 0, [b"a"])


def offsets_v5_unadded(w: Wire) -> int:
    name, txn_id, pid, epoch = started(w)
    return offsets_v5(w, txn_id, f"g-{name}", pid, epoch, name)


def epoch_step_of_end_v5(w: Wire) -> int:
    name, txn_id, pid, epoch = started(w)
    produce(w, name, pid, epoch, 0, [b"a"])
    return end_v5(w, txn_id, pid, epoch, commit=True)[2] - epoch


def marker_epoch_step(w: Wire) -> int:
    name, txn_id, pid, epoch = started(w)
    produce(w, name, pid, epoch, 0, [b"a"])
    end_v5(w, txn_id, pid, epoch, commit=True)
    return markers(w, name)[0][1] - epoch


def late_write(w: Wire) -> int:
    name, txn_id, pid, epoch = started(w)
    produce(w, name, pid, epoch, 0, [b"a"])
    end_v5(w, txn_id, pid, epoch, commit=True)
    return produce(w, name, pid, epoch, 1, [b"late"])


def end_v5_retried(w: Wire) -> int:
    name, txn_id, pid, epoch = started(w)
    produce(w, name, pid, epoch, 0, [b"a"])
    end_v5(w, txn_id, pid, epoch, commit=True)
    return end_v5(w, txn_id, pid, epoch, commit=True)[0]


def add_after_end_v4(w: Wire) -> int:
    name, txn_id, pid, epoch = started(w)
    add_partitions(w, txn_id, pid, epoch, [(name, 0)])
    end(w, txn_id, pid, epoch, commit=True, version=4)
    return add_partitions(w, txn_id, pid, epoch, [(name, 0)])[(name, 0)]


#: fault -> (probe(broker) -> observation, the clean broker's observation)
TXN_V2_PROBES = {
    "kafka.txn-v2-implicit-add-any-version": (with_wire(produce_v11_unadded), 120),  # Produce v11: 120, v10-: 48
    "kafka.txn-v2-implicit-add-missing": (with_wire(produce_v12_unadded), 0),
    "kafka.txn-v2-offsets-add-missing": (with_wire(offsets_v5_unadded), 0),
    "kafka.txn-v2-epoch-not-bumped": (with_wire(epoch_step_of_end_v5), 1),
    "kafka.txn-v2-marker-old-epoch": (with_wire(marker_epoch_step), 1),
    "kafka.txn-v2-old-epoch-accepted": (with_wire(late_write), 47),
    "kafka.txn-v2-end-retry-fenced": (with_wire(end_v5_retried), 0),
    "kafka.txn-v2-bump-any-version": (with_wire(add_after_end_v4), 0),
}
