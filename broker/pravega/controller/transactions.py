"""Transactions, the ControllerService calls the Java client's transactional writer makes: a transaction is one
segment per active segment of its stream, named after its parent and its id, which the writer appends to; the
commit merges each into its parent (MergeSegments), the abort deletes them.

Upstream (Pravega v0.13.0): the segment names are NameUtils.getTransactionNameFromId (shared/protocol/src/main/java/
io/pravega/shared/NameUtils.java:260-267: parent + "#transaction." + the id's two halves as 16 hex digits each); the
controller creates them with the transaction (StreamTransactionMetadataTasks.createTxn) and its commit event
processor merges them in the stream's order (CommitRequestHandler). The reference commits and aborts at once, so a
transaction is never seen COMMITTING or ABORTING; it keeps transactions in memory only (a restart forgets open
ones), and does not time them out (the lease is not enforced).

A transaction id has upstream's shape (PersistentStreamBase.generateNewTxnId: the high half is a counter's top 32
bits over the stream's epoch, the low half the counter's low 64 bits, which stay non-negative): the Rust client
(pravega-client 0.3.7, the ``pravega`` Python binding) joins the halves with a sign-extending cast, so an id whose
low half is negative names a transaction segment nobody created (NoSuchSegment, then its writer panics). Without a
persisted counter the low half is 63 random bits: unique across restarts, never negative.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from dataclasses import dataclass

import grpc

from wirecheck.broker.pravega.controller import controller_pb2 as pb
from wirecheck.broker.pravega.controller.model import segment_name
from wirecheck.broker.pravega.controller.store_link import StoreError

log = logging.getLogger("wirecheck.broker.pravega.controller")
TRANSACTION_DELIMITER = "#transaction."
_MASK = (1 << 64) - 1


def transaction_segment(parent: str, txn: uuid.UUID) -> str:
    return f"{parent}{TRANSACTION_DELIMITER}{txn.int >> 64:016x}{txn.int & _MASK:016x}"


def new_transaction_id(epoch: int) -> uuid.UUID:
    return uuid.UUID(int=(epoch << 64) | secrets.randbits(63))


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def to_wire(txn: uuid.UUID) -> pb.TxnId:
    return pb.TxnId(highBits=_signed(txn.int >> 64), lowBits=_signed(txn.int & _MASK))


def from_wire(txn: pb.TxnId) -> uuid.UUID:
    return uuid.UUID(int=((txn.highBits & _MASK) << 64) | (txn.lowBits & _MASK))


@dataclass
class Transaction:
    parents: list[str]  # the parent segments' names, in the stream's order
    state: int = pb.TxnState.OPEN

    def segments(self, txn: uuid.UUID) -> list[tuple[str, str]]:
        return [(parent, transaction_segment(parent, txn)) for parent in self.parents]


class TransactionCalls:
    """Mixed into the ControllerService: uses its metadata, store link, lock, ``_stream`` and ``_range``."""

    def _transactions(self) -> dict[tuple[str, str, uuid.UUID], Transaction]:
        """(scope, stream, id) -> the transaction: made on first use, so the mixin needs no constructor of its own."""
        if not hasattr(self, "_open_transactions"):
            self._open_transactions: dict[tuple[str, str, uuid.UUID], Transaction] = {}
        return self._open_transactions

    async def createTransaction(self, request, context):
        stream = await self._stream(request.streamInfo, context)
        txn = new_transaction_id(stream.epoch)
        active = list(stream.active())
        made = Transaction([segment_name(stream.scope, stream.name, s.id) for s in active])
        async with self._lock:
            try:
                for _parent, segment in made.segments(txn):
                    await self.store.create_segment(segment)
            except StoreError as exc:
                await context.abort(grpc.StatusCode.UNAVAILABLE, f"transaction segments not created: {exc}")
            self._transactions()[(stream.scope, stream.name, txn)] = made
        return pb.CreateTxnResponse(txnId=to_wire(txn), activeSegments=[self._range(stream, s) for s in active],
                                    delegationToken="")

    def _find(self, request) -> tuple[uuid.UUID, Transaction | None]:
        txn = from_wire(request.txnId)
        return txn, self._transactions().get((request.streamInfo.scope, request.streamInfo.stream, txn))

    async def commitTransaction(self, request, context):
        # a commit merges each transaction segment into its parent's
        return await self._end(request, pb.TxnState.COMMITTED, "commit",
                               lambda parent, segment: self.store.merge_segments(parent, segment))

    async def abortTransaction(self, request, context):
        # an abort deletes the transaction's segments
        return await self._end(request, pb.TxnState.ABORTED, "abort",
                               lambda _parent, segment: self.store.delete_segment(segment))

    async def _end(self, request, final: int, what: str, step):
        """Commit or abort: ``step(parent, segment)`` on each of the transaction's segments, then ``final``; ending
        it twice the same way is done already, the other way a failure."""
        status = pb.TxnStatus
        if (request.streamInfo.scope, request.streamInfo.stream) not in self.meta.streams:
            return status(status=status.STREAM_NOT_FOUND)
        txn, found = self._find(request)
        if found is None:
            return status(status=status.TRANSACTION_NOT_FOUND)
        if found.state == final:
            return status(status=status.SUCCESS)
        if found.state != pb.TxnState.OPEN:
            return status(status=status.FAILURE)
        async with self._lock:
            try:
                for parent, segment in found.segments(txn):
                    await step(parent, segment)
            except StoreError as exc:
                log.warning("%s transaction %s: %s", what, txn, exc)
                return status(status=status.FAILURE)
            found.state = final
        return status(status=status.SUCCESS)

    async def pingTransaction(self, request, context):
        status = pb.PingTxnStatus
        _txn, found = self._find(request)
        if found is None:
            return status(status=status.UNKNOWN)
        return status(status={pb.TxnState.OPEN: status.OK, pb.TxnState.COMMITTED: status.COMMITTED,
                              pb.TxnState.ABORTED: status.ABORTED}.get(found.state, status.UNKNOWN))

    async def checkTransactionState(self, request, context):
        _txn, found = self._find(request)
        return pb.TxnState(state=found.state if found is not None else pb.TxnState.UNKNOWN)

