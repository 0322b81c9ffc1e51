"""The reference coordinator's transaction states move only where its table leads (Kafka's TransactionState
``validPreviousStates``, with the Prepare states folded into the Complete ones), unless a fault asks otherwise."""

from __future__ import annotations

import pytest

from wirecheck.broker.kafka.txn_state import NEXT, IllegalTransition, TxnState, moved

#: Kafka's valid previous states (TransactionState.java), Prepare states read through to their Complete state
KAFKA_PREVIOUS = {
    TxnState.EMPTY: {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},
    TxnState.ONGOING: {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},  # and Ongoing itself
    TxnState.COMPLETE_COMMIT: {TxnState.ONGOING},
    TxnState.COMPLETE_ABORT: {TxnState.ONGOING},
}


def test_the_table_is_kafkas_read_forwards():
    assert set(NEXT) == set(TxnState)
    assert {to: {state for state, nexts in NEXT.items() if to in nexts} for to in TxnState} == KAFKA_PREVIOUS


def test_a_move_the_table_does_not_lead_to_is_a_broker_defect_unless_a_fault_asks():
    with pytest.raises(IllegalTransition, match="Ongoing -> Empty"):
        moved(TxnState.ONGOING, TxnState.EMPTY)
    assert moved(TxnState.ONGOING, TxnState.EMPTY, faulted=True) is TxnState.EMPTY


def test_the_states_answer_as_kafkas_names():
    assert [str(state) for state in TxnState] == ["Empty", "Ongoing", "CompleteCommit", "CompleteAbort"]
