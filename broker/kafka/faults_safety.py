"""Safety faults: each breaks one guarantee a client's history shows (wirecheck safety kafka, reports/safety/
checker.py), none of them visible to a single conformance exchange. protocols/kafka/faults.py SAFETY_FAULTS names
the anomaly each must cause."""

from wirecheck.broker.switches import Switch


class SafetyFaults:
    """Durability, idempotence and transaction isolation (produce_apis.py, durable.py, storage.py, transactions.py)."""

    safety_duplicate_on_retry = Switch(
        "A retried idempotent batch (same producer, epoch and sequences as one of the last five) is answered with "
        "the first append's offset, not appended again (KIP-98, ProducerStateManager); this appends it again")
    safety_unsynced_tail_lost = Switch(
        "An acknowledged batch survives a crash (acks=all: fsync before the answer, --fsync batch); this loses each "
        "partition's last batch at every restart, as a broker acknowledging from its page cache loses a power cut")
    safety_log_end_reused = Switch(
        "Each offset is handed out once (a log only grows); after a restart this recovers the log end one short, so "
        "the next batch is given the last stored record's offset again")
    safety_aborted_index_lost = Switch(
        "read_committed never returns an aborted transaction's records (KIP-98); after a restart this forgets which "
        "transactions were aborted, so Fetch lists none and their records read as committed")
    safety_abort_marker_delayed = Switch(
        "An abort's markers end that transaction (KIP-98; KIP-890 fixes late markers); this holds them back until "
        "the producer's next transaction ends, so they abort that one's records on the same partitions too")
