"""Fetch (with its long poll and read_committed) and ListOffsets.

Handlers of the Broker (broker.py), one mixin per API family: a decoded request dict in, a response dict out.
"""

from __future__ import annotations

import struct
import time
import zlib

from wirecheck.broker.kafka import records
from wirecheck.broker.kafka.errors import (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
                                                      INVALID_REQUEST, NONE, OFFSET_OUT_OF_RANGE, UNKNOWN_TOPIC_ID,
                                                      UNKNOWN_TOPIC_OR_PARTITION)
from wirecheck.broker.kafka.broker_parts import BrokerParts
from wirecheck.broker.kafka.settings import CLOSE

# ListOffsets special timestamps (ListOffsetsRequest.java)
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5


class FetchApis(BrokerParts):
    """A mixin of :class:`Broker` (broker.py)."""

    async def fetch(self, req: dict, version: int) -> dict:
        session_id, epoch = req.get("SessionId", 0), req.get("SessionEpoch", -1)
        # This broker never creates fetch sessions (it answers SessionId 0, which KIP-227 allows): a request
        # naming a session, or an incremental epoch without one, is refused as FetchSessionHandler would.
        if session_id != 0 and not (self.faults.fetch_unknown_session_served and epoch > 0):
            return {"ThrottleTimeMs": 0, "ErrorCode": FETCH_SESSION_ID_NOT_FOUND, "SessionId": 0, "Responses": []}
        if epoch not in (-1, 0):
            return {"ThrottleTimeMs": 0, "ErrorCode": INVALID_FETCH_SESSION_EPOCH, "SessionId": 0, "Responses": []}
        wait_s = min(max(req["MaxWaitMs"], 0) / 1000, self.settings.max_fetch_wait_s)
        if self.faults.fetch_no_long_poll:
            wait_s = 0
        deadline = time.monotonic() + wait_s
        if req["MaxWaitMs"] <= 0 and self.variants.fetch_immediate_empty:
            response = self._fetch_once(req, version)[0]
            for topic in response["Responses"]:  # nothing read yet: a client's next fetch gets it
                for partition in topic["Partitions"]:
                    partition["Records"] = b""
                    if partition["AbortedTransactions"]:
                        partition["AbortedTransactions"] = []
            return response
        while True:
            response, size, has_error = self._fetch_once(req, version)
            remaining = deadline - time.monotonic()
            # variant fetch-early-partial: any bytes end the wait, MinBytes or not (MaxWaitMs is only a bound)
            enough = size >= req["MinBytes"] or (size > 0 and self.variants.fetch_early_partial)
            if has_error or enough or remaining <= 0:
                return response
            await self.storage.wait_for_append(remaining)

    def _fetch_once(self, req: dict, version: int) -> tuple[dict, int, bool]:
        by_id = version >= 13
        budget = req.get("MaxBytes", 0x7FFFFFFF)
        read_committed = req.get("IsolationLevel", 0) == 1
        total, has_error, responses = 0, False, []
        for t in req["Topics"]:
            if by_id:
                topic = self.storage.by_id.get(t["TopicId"])
                name = topic.name if topic else None
            else:
                name = t["Topic"]
            parts = []
            for p in t["Partitions"]:
                out = {"PartitionIndex": p["Partition"], "ErrorCode": NONE, "HighWatermark": -1,
                       "LastStableOffset": -1, "LogStartOffset": -1,
                       "AbortedTransactions": [] if read_committed else None, "PreferredReadReplica": -1,
                       "Records": b""}
                parts.append(out)
                # A partition Kafka does not know is answered before any read by FetchResponse.partitionResponse
                # (KafkaApis.handleFetchRequest's "erroneous" partitions), whose AbortedTransactions keeps the
                # generated default, an empty list (clients/.../common/requests/FetchResponse.java; the field has no
                # "default" in FetchResponse.json), whatever the isolation level
                if name is None:
                    out.update(ErrorCode=UNKNOWN_TOPIC_ID if by_id else UNKNOWN_TOPIC_OR_PARTITION,
                               AbortedTransactions=[])
                    has_error = True
                    continue
                error = self._partition_error(name, p["Partition"])
                if error and self.faults.fetch_unknown_partition_no_error:
                    continue  # fault: an empty partition with error 0
                if error:
                    out.update(ErrorCode=error, AbortedTransactions=[])
                    has_error = True
                    continue
                partition = self.storage.partition(name, p["Partition"])
                hw = partition.high_watermark + (1 if self.faults.hw_off_by_one else 0)
                lso = partition.last_stable_offset if partition.open_transactions else hw
                out.update(HighWatermark=hw, LastStableOffset=lso, LogStartOffset=partition.log_start)
                if self.faults.log_start_offset_unset:
                    out.update(LogStartOffset=-1)  # fault: the field left at its default
                offset = p["FetchOffset"]
                if offset < partition.log_start and self.faults.fetch_below_log_start_clamped:
                    offset = partition.log_start  # fault: reads from the log start instead of refusing
                if offset < partition.log_start or offset > partition.high_watermark:
                    if not self.faults.fetch_beyond_hw_empty or offset < partition.log_start:
                        # Kafka's read fails with OffsetOutOfRangeException, answered from ReplicaManager's
                        # createLogReadResult(e): HighWatermark, LogStartOffset and LastStableOffset unknown (-1),
                        # no aborted transactions (null) (core/src/main/scala/kafka/server/ReplicaManager.scala;
                        # KafkaApis.handleFetchRequest: abortedTransactions.orElse(null))
                        out.update(ErrorCode=OFFSET_OUT_OF_RANGE, HighWatermark=-1, LastStableOffset=-1,
                                   LogStartOffset=-1, AbortedTransactions=None)
                        has_error = True
                    continue
                if self.faults.fetch_ignores_offset:
                    offset = partition.log_start  # fault: an offset in range, read from the log start
                limit = min(p["PartitionMaxBytes"], budget - total)
                stops_at_lso = read_committed and not self.faults.txn_read_committed_past_lso
                end = partition.last_stable_offset if stops_at_lso else None
                batches = partition.read(offset, max(limit, 0), at_least_one=(total == 0), end=end)
                if self.faults.fetch_crc_ieee:  # fault: served batches re-checksummed with CRC-32 IEEE
                    batches = [_crc_ieee(b) for b in batches]
                data = b"".join(batches)
                out["Records"] = data
                if read_committed and batches and not self.faults.txn_aborted_not_listed:
                    last = records.parse_header(batches[-1])
                    upper = last.base_offset + last.last_offset_delta + 1
                    out["AbortedTransactions"] = [{"ProducerId": pid, "FirstOffset": first}
                                                  for pid, first in partition.aborted_between(offset, upper)]
                total += len(data)
            responses.append({"Topic": name if not by_id else None, "TopicId": t.get("TopicId"),
                              "Partitions": parts})
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "SessionId": 0, "Responses": responses}, total, has_error

    def list_offsets(self, req: dict, version: int) -> dict:
        topics = []
        for t in req["Topics"]:
            parts = []
            for p in t["Partitions"]:
                out = {"PartitionIndex": p["PartitionIndex"], "ErrorCode": NONE, "Timestamp": -1, "Offset": -1,
                       "LeaderEpoch": -1}
                parts.append(out)
                error = self._partition_error(t["Name"], p["PartitionIndex"])
                if error and version == 5 and self.faults.listoffsets_unknown_topic_closes_v5:
                    return {CLOSE: True}  # fault: the error path of one version crashes
                if error and self.faults.listoffsets_unknown_partition_no_error:
                    continue  # fault: offset -1 with error 0
                if error:
                    out["ErrorCode"] = error
                    continue
                partition = self.storage.partition(t["Name"], p["PartitionIndex"])
                ts = p["Timestamp"]
                read_committed = req.get("IsolationLevel", 0) == 1 and \
                    not self.faults.txn_list_offsets_ignores_isolation
                if ts == LATEST and read_committed and partition.open_transactions:
                    out.update(Offset=partition.last_stable_offset)  # read_committed: the LSO
                elif ts == LATEST:
                    offset = partition.high_watermark + (1 if self.faults.listoffsets_latest_off_by_one else 0)
                    out.update(Offset=offset)
                elif ts in (EARLIEST, EARLIEST_LOCAL):
                    out.update(Offset=partition.log_start)  # no tiered storage: local start == log start
                elif ts == LATEST_TIERED:
                    out.update(Offset=-1)  # nothing is tiered (UnifiedLog: no remote storage -> -1)
                elif ts == MAX_TIMESTAMP:
                    offset, stamp = partition.max_timestamp_offset()
                    out.update(Offset=offset, Timestamp=stamp)
                elif ts >= 0:
                    offset, stamp = partition.offset_for_timestamp(ts)
                    out.update(Offset=offset, Timestamp=stamp)
                else:
                    out["ErrorCode"] = INVALID_REQUEST  # an unknown negative sentinel
                    continue
                if out["Offset"] >= 0:
                    out["LeaderEpoch"] = 0
            topics.append({"Name": t["Name"], "Partitions": parts})
        return {"ThrottleTimeMs": 0, "Topics": topics}


def _crc_ieee(batch: bytes) -> bytes:
    """Fault fetch-crc-ieee: the batch's CRC field recomputed with CRC-32 IEEE (zlib) instead of CRC-32C."""
    if len(batch) <= records.CRC_START:
        return batch
    out = bytearray(batch)
    struct.pack_into(">I", out, 17, zlib.crc32(memoryview(out)[records.CRC_START:]) & 0xFFFFFFFF)
    return bytes(out)
