"""The transaction faults (KIP-98, KIP-890), one switch per clause they break."""

from wirecheck.broker.switches import Switch


class TransactionFaults:
    """Transactions, KIP-98 and KIP-890 (txn_apis.py, transactions.py, transactions_v2.py)."""

    txn_epoch_not_bumped = Switch(
        "InitProducerId for a known transactional id bumps its epoch (KIP-98, TransactionCoordinator); this "
        "answers the same epoch again")
    txn_old_epoch_accepted = Switch(
        "A transactional request with an older epoch is fenced, PRODUCER_FENCED (90) or INVALID_PRODUCER_EPOCH (47) "
        "(KIP-98, KIP-588); this accepts it")
    txn_lso_not_advanced = Switch(
        "A commit marker ends the transaction, so the last stable offset moves past it (KIP-98); this leaves the "
        "LSO at the committed transaction's first offset")
    txn_aborted_not_listed = Switch(
        "read_committed Fetch lists the aborted transactions of the records it returns (FetchResponse.json "
        "AbortedTransactions); this lists none, so aborted records look committed")
    txn_marker_not_control = Switch(
        "A transaction marker is a control batch (protocol guide 'Control Batches'); this writes it without the "
        "control attribute bit (the transaction still ends there)")
    txn_read_committed_past_lso = Switch(
        "read_committed Fetch stops at the last stable offset (KIP-98); this returns records of open transactions")
    txn_list_offsets_ignores_isolation = Switch(
        "ListOffsets LATEST with read_committed answers the last stable offset (ListOffsetsRequest.json "
        "IsolationLevel); this answers the high watermark")
    txn_end_without_partitions_accepted = Switch(
        "EndTxn with no transaction in progress answers INVALID_TXN_STATE (48) (TransactionCoordinator); this "
        "answers 0")
    txn_init_keeps_ongoing = Switch(
        "InitProducerId aborts the transactional id's ongoing transaction (TransactionCoordinator."
        "handleInitProducerId); this leaves it open, so its partitions' LSO never moves")
    txn_timeout_ignored = Switch(
        "A transaction open longer than its TransactionTimeoutMs is aborted by the coordinator (KIP-98, "
        "transaction.timeout.ms); this keeps it open")
    txn_timeout_unchecked = Switch(
        "A transactional InitProducerId needs 0 < TransactionTimeoutMs <= transaction.max.timeout.ms "
        "(TransactionStateManager.validateTransactionTimeoutMs); this accepts any timeout")
    txn_v2_implicit_add_any_version = Switch(
        "A transactional Produce below v12 to a partition not in the transaction is refused INVALID_TXN_STATE "
        "(KIP-890 part 1); this adds the partition at every version, as v12 does")
    txn_v2_implicit_add_missing = Switch(
        "A transactional Produce v12+ adds its partition to the transaction (KIP-890 part 2); this keeps "
        "version-1 rules and refuses a partition not added with INVALID_TXN_STATE (48)")
    txn_v2_offsets_add_missing = Switch(
        "TxnOffsetCommit v5+ adds its group to the transaction (KIP-890 part 2); this refuses a group not added "
        "with AddOffsetsToTxn (48)")
    txn_v2_epoch_not_bumped = Switch(
        "EndTxn v5+ bumps the epoch and answers it (KIP-890 part 2, EndTxnResponse v5); this answers the same "
        "epoch")
    txn_v2_marker_old_epoch = Switch(
        "The markers of an EndTxn v5+ carry the bumped epoch (KIP-890 part 2); this writes them under the "
        "transaction's own epoch")
    txn_v2_old_epoch_accepted = Switch(
        "After EndTxn v5+ a Produce under the old epoch is fenced, INVALID_PRODUCER_EPOCH (47) (KIP-890 part 2); "
        "this appends the late write")
    txn_v2_end_retry_fenced = Switch(
        "An EndTxn v5+ retried under the epoch it bumped is answered success with the new epoch again "
        "(KIP-890 part 2); this fences it")
    txn_v2_bump_any_version = Switch(
        "EndTxn below v5 keeps the epoch (KIP-890: version 2 is chosen by EndTxn v5+); this bumps it at every "
        "version, so an old client's next request is fenced")
    init_producer_id_fails_below_v3 = Switch(
        "InitProducerId gives an idempotent producer an id and epoch at every version it advertises (KIP-98, "
        "InitProducerIdRequest.json: v0 is aiokafka's, v1 kafkajs'); this answers UNKNOWN_SERVER_ERROR (-1) "
        "below v3, a defect only old clients meet")
    init_producer_id_needs_transactional_id = Switch(
        "InitProducerId with a null TransactionalId gives an idempotent producer an id and epoch (KIP-98, "
        "InitProducerIdRequest.json); this refuses it with INVALID_REQUEST (42), as a transactions-only broker")
