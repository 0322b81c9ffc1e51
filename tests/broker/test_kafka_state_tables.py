"""The reference coordinator's state machines move only where their tables lead, which are Kafka's (each state's
``validPreviousStates``): transactions (TransactionState.java, the Prepare states folded into the Complete ones)
and classic groups (ClassicGroupState.java); a move elsewhere is a broker defect unless a fault asks for it."""

from __future__ import annotations

import pytest

from wirecheck.broker.kafka import group_model
from wirecheck.broker.kafka.group_model import GroupState
from wirecheck.broker.kafka.transitions import IllegalTransition
from wirecheck.broker.kafka.txn_state import TRANSITIONS, TxnState

#: Kafka's valid previous states (TransactionState.java), Prepare states read through to their Complete state
KAFKA_PREVIOUS = {
    TxnState.EMPTY: {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},
    TxnState.ONGOING: {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},  # and Ongoing itself
    TxnState.COMPLETE_COMMIT: {TxnState.ONGOING},
    TxnState.COMPLETE_ABORT: {TxnState.ONGOING},
}


def test_the_table_is_kafkas_read_forwards():
    assert set(TRANSITIONS.next) == set(TxnState)
    assert {to: TRANSITIONS.previous(to) for to in TxnState} == KAFKA_PREVIOUS


def test_a_move_the_table_does_not_lead_to_is_a_broker_defect_unless_a_fault_asks():
    with pytest.raises(IllegalTransition, match="transaction state Ongoing -> Empty"):
        TRANSITIONS.moved(TxnState.ONGOING, TxnState.EMPTY)
    assert TRANSITIONS.moved(TxnState.ONGOING, TxnState.EMPTY, faulted=True) is TxnState.EMPTY


def test_the_states_answer_as_kafkas_names():
    assert [str(state) for state in TxnState] == ["Empty", "Ongoing", "CompleteCommit", "CompleteAbort"]


#: Kafka's classic group states' valid previous states (ClassicGroupState.java), Dead left out: the reference broker
#: deletes a group at once and answers Dead only for a group it does not have
KAFKA_GROUP_PREVIOUS = {
    GroupState.EMPTY: {GroupState.PREPARING_REBALANCE},
    GroupState.PREPARING_REBALANCE: {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY},
    GroupState.COMPLETING_REBALANCE: {GroupState.PREPARING_REBALANCE},
    GroupState.STABLE: {GroupState.COMPLETING_REBALANCE},
    GroupState.DEAD: set(),
}


def test_the_classic_group_table_is_kafkas_read_forwards():
    table = group_model.TRANSITIONS
    assert set(table.next) == set(GroupState)
    assert {to: table.previous(to) for to in GroupState} == KAFKA_GROUP_PREVIOUS
    group = group_model.Group("g")
    with pytest.raises(IllegalTransition, match="classic group state Empty -> Stable"):
        group.move(GroupState.STABLE)


def test_the_share_record_table_is_kafkas_validate_transition():
    """SharePartition.RecordState.validateTransition: Available only to Acquired; Acquired to Available,
    Acknowledged or Archived; Acknowledged and Archived final. Available to Archived: records the start offset moves
    past undelivered (the one move Kafka makes outside validateTransition)."""
    from wirecheck.broker.kafka.share_partitions import TRANSITIONS as SHARE, InFlight, RecordState

    assert SHARE.next == {
        RecordState.AVAILABLE: {RecordState.ACQUIRED, RecordState.ARCHIVED},
        RecordState.ACQUIRED: {RecordState.AVAILABLE, RecordState.ACKNOWLEDGED, RecordState.ARCHIVED},
        RecordState.ACKNOWLEDGED: set(),
        RecordState.ARCHIVED: set(),
    }
    record = InFlight()
    with pytest.raises(IllegalTransition, match="share record state available -> acknowledged"):
        record.move(RecordState.ACKNOWLEDGED)
