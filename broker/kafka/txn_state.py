"""A transaction's states and the moves between them, as data.

Kafka's coordinator lists, for each state, the states it may be entered from (TransactionState.java,
``validPreviousStates``): Empty from Empty, CompleteCommit and CompleteAbort; Ongoing from Ongoing, Empty and the
two Complete states; CompleteCommit through PrepareCommit, and CompleteAbort through PrepareAbort, from Ongoing. The
reference coordinator writes its markers at once, so it has no Prepare states of its own: a transaction moves from
Ongoing straight to the Complete state. Any other move is a defect of the broker, unless a fault asks for it.
"""

from __future__ import annotations

import enum

from wirecheck.broker.kafka.transitions import Transitions


class TxnState(enum.StrEnum):
    """Its value is the name Kafka's DescribeTransactions and ListTransactions answer with."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"


TRANSITIONS = Transitions("transaction", {
    TxnState.EMPTY: frozenset({TxnState.EMPTY, TxnState.ONGOING}),
    TxnState.ONGOING: frozenset({TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT}),
    TxnState.COMPLETE_COMMIT: frozenset({TxnState.EMPTY, TxnState.ONGOING}),
    TxnState.COMPLETE_ABORT: frozenset({TxnState.EMPTY, TxnState.ONGOING}),
})


def ended(committed: bool) -> TxnState:
    """The state an EndTxn leaves its transaction in."""
    return TxnState.COMPLETE_COMMIT if committed else TxnState.COMPLETE_ABORT
