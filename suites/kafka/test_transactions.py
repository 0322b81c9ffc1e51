"""Transactions (KIP-98, KIP-447), transaction protocol version 1: the producer finds its coordinator with
FindCoordinator key type 1, adds its partitions itself (AddPartitionsToTxn up to v3; v4+ is the broker-to-broker
form), produces with Produce up to v11 and ends with EndTxn up to v4 (Produce v12+ and EndTxn v5+ are protocol
version 2, KIP-890 part 2: test_transactions_v2).

Each case uses its own transactional id and topic, so it is harmless on a live cluster. A target that does not
advertise InitProducerId, AddPartitionsToTxn and EndTxn makes these cases UNIMPLEMENTED.
"""

from __future__ import annotations

import pytest

from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, expect, short
from wirecheck.suites.kafka.transactions import (ABORT, COMMIT, Producer, READ_COMMITTED, READ_UNCOMMITTED, batches,
                                                 check_aborted, fenced_codes, fetch, list_latest, log_below,
                                                 log_with_open_transaction, marker_type, new_topic, settled)

case = pytest.mark.case


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
