"""InitProducerId and the transactional APIs, answered from the coordinator in transactions.py (KIP-98, KIP-890).

Handlers of the Broker (broker.py), one mixin per API family: a decoded request dict in, a response dict out.
"""

from __future__ import annotations

from wirecheck.broker.kafka import group_model, transactions_v2
from wirecheck.broker.kafka.errors import INVALID_REQUEST, UNKNOWN_SERVER_ERROR
from wirecheck.broker.kafka.broker_parts import BrokerParts


class TransactionApis(BrokerParts):
    """A mixin of :class:`Broker` (broker.py)."""

    def init_producer_id(self, req: dict, version: int) -> dict:
        if version < 3 and self.faults.init_producer_id_fails_below_v3:
            return {"ThrottleTimeMs": 0, "ErrorCode": UNKNOWN_SERVER_ERROR, "ProducerId": -1, "ProducerEpoch": -1}
        if req["TransactionalId"] is None and self.faults.init_producer_id_needs_transactional_id:
            return {"ThrottleTimeMs": 0, "ErrorCode": INVALID_REQUEST, "ProducerId": -1, "ProducerEpoch": -1}
        error, pid, epoch = self.transactions.init_producer_id(
            req["TransactionalId"], req["TransactionTimeoutMs"], req.get("ProducerId", -1),
            req.get("ProducerEpoch", -1))
        return {"ThrottleTimeMs": 0, "ErrorCode": error, "ProducerId": pid, "ProducerEpoch": epoch}

    def add_partitions_to_txn(self, req: dict, version: int) -> dict:
        wanted = [(t["Name"], index) for t in req["V3AndBelowTopics"] for index in t["Partitions"]]
        results = self.transactions.add_partitions(req["V3AndBelowTransactionalId"], req["V3AndBelowProducerId"],
                                                   req["V3AndBelowProducerEpoch"], version, wanted)
        by_topic: dict[str, list] = {}
        for (name, index), error in results.items():
            by_topic.setdefault(name, []).append({"PartitionIndex": index, "PartitionErrorCode": error})
        return {"ThrottleTimeMs": 0, "ResultsByTopicV3AndBelow": [
            {"Name": name, "ResultsByPartition": parts} for name, parts in by_topic.items()]}

    def add_offsets_to_txn(self, req: dict, version: int) -> dict:
        error = self.transactions.add_offsets(req["TransactionalId"], req["ProducerId"], req["ProducerEpoch"],
                                              version, req["GroupId"])
        return {"ThrottleTimeMs": 0, "ErrorCode": error}

    def end_txn(self, req: dict, version: int) -> dict:
        # KIP-890 part 2: the epoch bumped, the new one answered (fault txn-v2-bump-any-version: below v5 too)
        if version >= transactions_v2.END_TXN_V2 or self.faults.txn_v2_bump_any_version:
            error, pid, epoch = transactions_v2.end(self.transactions, req["TransactionalId"], req["ProducerId"],
                                                    req["ProducerEpoch"], version, req["Committed"])
            return {"ThrottleTimeMs": 0, "ErrorCode": error,
                    **({"ProducerId": pid, "ProducerEpoch": epoch} if version >= transactions_v2.END_TXN_V2 else {})}
        error = self.transactions.end(req["TransactionalId"], req["ProducerId"], req["ProducerEpoch"], version,
                                      req["Committed"])
        return {"ThrottleTimeMs": 0, "ErrorCode": error}

    def txn_offset_commit(self, req: dict, version: int) -> dict:
        offsets = {(t["Name"], p["PartitionIndex"]): group_model.CommittedOffset(
                       p["CommittedOffset"], p.get("CommittedLeaderEpoch", -1), p["CommittedMetadata"])
                   for t in req["Topics"] for p in t["Partitions"]}
        results = self.transactions.commit_offsets(req["TransactionalId"], req["ProducerId"], req["ProducerEpoch"],
                                                   version, req["GroupId"], offsets)
        by_topic: dict[str, list] = {}
        for (name, index), error in results.items():
            by_topic.setdefault(name, []).append({"PartitionIndex": index, "ErrorCode": error})
        return {"ThrottleTimeMs": 0, "Topics": [{"Name": name, "Partitions": parts}
                                                for name, parts in by_topic.items()]}
