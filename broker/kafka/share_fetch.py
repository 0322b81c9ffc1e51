"""KIP-932 ShareFetch (78) and ShareAcknowledge (79): share sessions, acquisition and acknowledgement.

Share sessions (KIP-932 'Share sessions', ShareFetchRequest.json): one per (group, member). ShareSessionEpoch 0
opens a full session (the partitions named), each later request carries the next epoch (1, 2, ...) and may add
partitions or forget some (ForgottenTopicsData); -1 closes the session after its acknowledgements and releases
what the member still holds. A request at epoch > 0 or -1 without a session gets SHARE_SESSION_NOT_FOUND (122);
one at another epoch than the session's next, INVALID_SHARE_SESSION_EPOCH (123). Epoch 0 cannot carry
acknowledgements (no records are held yet in it), and a closing ShareFetch cannot fetch: both INVALID_REQUEST (42).
At most MAX_SESSIONS sessions are kept (the least recently used goes), so memory stays bounded.

Acknowledgement batches (FirstOffset, LastOffset, AcknowledgeTypes: one type for the range or one per offset) must
be sorted, not overlap, have FirstOffset <= LastOffset and known types, else the partition's acknowledgement fails
with INVALID_REQUEST (42); offsets this member does not hold fail with INVALID_RECORD_STATE (121). A partition's
acknowledgements are all applied or none. ShareFetch acknowledges first, then acquires (share_partitions).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from wirecheck.broker.kafka import records
from wirecheck.broker.kafka.share_partitions import GAP, RENEW, SharePartitions
from wirecheck.broker.kafka.errors import INVALID_RECORD_STATE
from wirecheck.broker.kafka.faults import KafkaFaults
from wirecheck.broker.kafka.errors import (INVALID_REQUEST, INVALID_SHARE_SESSION_EPOCH, NONE,
                                           SHARE_SESSION_NOT_FOUND, UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION)

OPEN, CLOSE = 0, -1
MAX_SESSIONS = 1000  # share.max.share.sessions (Kafka: 2000): the oldest session goes beyond this
#: bytes read per partition per ShareFetch, whatever MaxBytes says: at most max_locks records are acquired anyway,
#: and a hostile MaxBytes must not read a whole log into memory
MAX_READ_BYTES = 8 << 20


@dataclass
class ShareSession:
    next_epoch: int = 1
    partitions: set[tuple[bytes, int]] = field(default_factory=set)
    touched: float = 0.0


#: a partition's CurrentLeader when this broker leads it: left unset, as Apache Kafka fills it only for
#: NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH (KafkaApis.handleShareFetchRequest and
#: handleShareAcknowledgeRequest); Apache Kafka 4.4 answers LeaderId 0 there whatever its node.id
CURRENT_LEADER_UNSET = {"LeaderId": 0, "LeaderEpoch": 0}


class ShareFetcher:
    def __init__(self, storage, shares: SharePartitions, faults: KafkaFaults, max_wait_s: float):
        self.storage, self.shares, self.faults = storage, shares, faults
        self.max_wait_s = max_wait_s
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def close_member(self, group_id: str, member_id: str) -> None:
        """A member left its share group: its records go back. Its share session stays until closed (-1) or
        evicted: librdkafka leaves the group first and closes the session after (a ShareAcknowledge at -1)."""
        self.shares.release_member(group_id, member_id)

    # ------------------------------------------------------------------------------------------ sessions

    def _close(self, group_id: str, member_id: str) -> None:
        """Epoch -1: the session ends, and what the member still holds goes back (KIP-932 'Share sessions')."""
        self.sessions.pop((group_id, member_id), None)
        self.shares.release_member(group_id, member_id)

    def _session(self, req: dict, key: tuple[str, str]) -> tuple[int, ShareSession | None]:
        """(error, session) for the request's ShareSessionEpoch; the session's epoch moves on."""
        epoch = req["ShareSessionEpoch"]
        if epoch == OPEN:
            if len(self.sessions) >= MAX_SESSIONS and key not in self.sessions:
                del self.sessions[min(self.sessions, key=lambda k: self.sessions[k].touched)]
            session = self.sessions[key] = ShareSession(touched=time.monotonic())
            return NONE, session
        session = self.sessions.get(key)
        if session is None:
            if self.faults.share_session_unknown_opens and epoch > 0:
                session = self.sessions[key] = ShareSession(next_epoch=epoch)  # fault: as if it had been opened
            else:
                return SHARE_SESSION_NOT_FOUND, None
        if epoch == CLOSE:
            return NONE, session
        if epoch != session.next_epoch and not self.faults.share_session_epoch_unchecked:
            return INVALID_SHARE_SESSION_EPOCH, None
        session.next_epoch = epoch + 1 if epoch < 0x7FFFFFFF else 1
        session.touched = time.monotonic()
        return NONE, session

    def _refusal(self, code: int, message: str) -> dict:
        # a refused request acquires nothing: its AcquisitionLockTimeoutMs is the message's default 0, as Apache
        # Kafka's error answers (ShareFetchRequest/ShareAcknowledgeRequest.getErrorResponse set only the error)
        return {"ThrottleTimeMs": 0, "ErrorCode": code, "ErrorMessage": message,
                "AcquisitionLockTimeoutMs": 0, "Responses": [], "NodeEndpoints": []}

    # ------------------------------------------------------------------------------------------ acknowledgement

    def _acknowledge(self, group_id: str, member_id: str, topic_id: bytes, index: int, batches: list[dict]) -> int:
        """One partition's acknowledgement batches, applied all or none: the error code."""
        if not batches:
            return NONE
        partition = self._partition(topic_id, index)
        if partition is None:
            return UNKNOWN_TOPIC_ID if topic_id not in self.storage.by_id else UNKNOWN_TOPIC_OR_PARTITION
        if not self.faults.share_ack_batches_unchecked:
            previous = -1
            for batch in batches:
                first, last, types = batch["FirstOffset"], batch["LastOffset"], batch["AcknowledgeTypes"]
                if first > last or first <= previous or not types or any(not GAP <= t <= RENEW for t in types) \
                        or len(types) not in (1, last - first + 1):
                    return INVALID_REQUEST
                previous = last
        share = self.shares.find(group_id, topic_id, index)
        if share is None:
            return INVALID_RECORD_STATE  # nothing of this partition was ever acquired in the group
        if not all(share.check(member_id, b["FirstOffset"], b["LastOffset"]) for b in batches):
            return INVALID_RECORD_STATE
        for batch in batches:
            share.acknowledge(batch["FirstOffset"], batch["LastOffset"], list(batch["AcknowledgeTypes"]))
        return NONE

    def _partition(self, topic_id: bytes, index: int):
        topic = self.storage.by_id.get(topic_id)
        if topic is None or not 0 <= index < len(topic.partitions):
            return None
        return topic.partitions[index]

    # ------------------------------------------------------------------------------------------ ShareAcknowledge

    def share_acknowledge(self, req: dict, version: int) -> dict:
        group_id, member_id = req["GroupId"] or "", req["MemberId"] or ""
        if req["ShareSessionEpoch"] == OPEN:
            return self._refusal(INVALID_SHARE_SESSION_EPOCH, "ShareAcknowledge cannot open a share session.")
        error, _ = self._session(req, (group_id, member_id))
        if error:
            return self._refusal(error, "Share session not found." if error == SHARE_SESSION_NOT_FOUND
                                 else "Share session epoch is invalid.")
        responses = []
        for t in req["Topics"]:
            parts = []
            for p in t["Partitions"]:
                code = self._acknowledge(group_id, member_id, t["TopicId"], p["PartitionIndex"],
                                         p["AcknowledgementBatches"])
                parts.append({"PartitionIndex": p["PartitionIndex"], "ErrorCode": code, "ErrorMessage": None,
                              "CurrentLeader": dict(CURRENT_LEADER_UNSET)})
            responses.append({"TopicId": t["TopicId"], "Partitions": parts})
        if req["ShareSessionEpoch"] == CLOSE:
            self._close(group_id, member_id)
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "ErrorMessage": None,
                "AcquisitionLockTimeoutMs": self.shares.lock_ms, "Responses": responses, "NodeEndpoints": []}

    # ------------------------------------------------------------------------------------------ ShareFetch

    async def share_fetch(self, req: dict, version: int) -> dict:
        group_id, member_id = req["GroupId"] or "", req["MemberId"] or ""
        epoch = req["ShareSessionEpoch"]
        has_acks = any(p["AcknowledgementBatches"] for t in req["Topics"] for p in t["Partitions"])
        if not group_id or not member_id:
            return self._refusal(INVALID_REQUEST, "GroupId and MemberId are required.")
        if epoch == OPEN and has_acks:
            return self._refusal(INVALID_REQUEST, "Acknowledgements cannot be sent when opening a share session.")
        if epoch == CLOSE and any(t["Partitions"] for t in req["Topics"]) and not has_acks:
            return self._refusal(INVALID_REQUEST, "A closing share fetch cannot fetch records.")
        error, session = self._session(req, (group_id, member_id))
        if error:
            return self._refusal(error, "Share session not found." if error == SHARE_SESSION_NOT_FOUND
                                 else "Share session epoch is invalid.")
        ack_errors: dict[tuple[bytes, int], int] = {}
        for t in req["Topics"]:
            for p in t["Partitions"]:
                ack_errors[(t["TopicId"], p["PartitionIndex"])] = self._acknowledge(
                    group_id, member_id, t["TopicId"], p["PartitionIndex"], p["AcknowledgementBatches"])
        if epoch == CLOSE:
            self._close(group_id, member_id)
            return self._answer({key: self._empty(key, code) for key, code in ack_errors.items()})
        for f in req["ForgottenTopicsData"]:
            for index in f["Partitions"]:
                session.partitions.discard((f["TopicId"], index))
        session.partitions.update((t["TopicId"], p["PartitionIndex"]) for t in req["Topics"] for p in t["Partitions"])
        wanted = sorted(session.partitions)
        deadline = time.monotonic() + min(max(req["MaxWaitMs"], 0) / 1000, self.max_wait_s)
        budget = max(req["MaxRecords"], 1) if req["MaxRecords"] > 0 else 500
        while True:
            out = self._acquire_all(group_id, member_id, wanted, req["MaxBytes"], budget)
            got = any(o["AcquiredRecords"] or o["ErrorCode"] for o in out.values())
            remaining = deadline - time.monotonic()
            if got or remaining <= 0:
                break
            next_lock = self.shares.next_deadline()
            wait = remaining if next_lock is None else min(remaining, max(next_lock - time.monotonic(), 0.01))
            await self.storage.wait_for_append(wait)
        for key, code in ack_errors.items():
            out.setdefault(key, self._empty(key, NONE))["AcknowledgeErrorCode"] = code
        # the answer lists only the partitions with something to say: records acquired, an error, or the result of
        # acknowledgements the request carried; as Apache Kafka 4.4 answers on the wire (a ShareFetch that acquires
        # nothing answers Responses [], the session's partitions named or not: DelayedShareFetch completes with
        # the partitions it acquired from, KafkaApis merges in the acknowledged ones)
        acked = {(t["TopicId"], p["PartitionIndex"]) for t in req["Topics"] for p in t["Partitions"]
                 if p["AcknowledgementBatches"]}
        out = {k: o for k, o in out.items() if k in acked or o["AcquiredRecords"] or o["Records"] or o["ErrorCode"]}
        return self._answer(out)

    def _acquire_all(self, group_id: str, member_id: str, wanted: list, max_bytes: int, budget: int) -> dict:
        out = {}
        for topic_id, index in wanted:
            entry = out[(topic_id, index)] = self._empty((topic_id, index), NONE)
            partition = self._partition(topic_id, index)
            if partition is None:
                entry["ErrorCode"] = UNKNOWN_TOPIC_ID if topic_id not in self.storage.by_id \
                    else UNKNOWN_TOPIC_OR_PARTITION
                continue
            if budget <= 0:
                continue
            share = self.shares.get(group_id, topic_id, index, partition)
            first = share.first_acquirable(partition.high_watermark)
            if first is None:
                continue
            batches = partition.read(first, min(max(max_bytes, 1), MAX_READ_BYTES), at_least_one=True)
            if not batches:
                continue
            headers = [records.parse_header(batch) for batch in batches]
            for header in headers:
                if header.is_control:
                    share.skip_control(header.base_offset, header.base_offset + header.last_offset_delta)
            ranges = share.acquire(member_id, first, headers[-1].base_offset + headers[-1].last_offset_delta + 1,
                                   budget)
            if not ranges:
                continue
            low, high = ranges[0][0], ranges[-1][1]
            kept = [batch for batch, header in zip(batches, headers)  # only the batches holding acquired records
                    if header.base_offset + header.last_offset_delta >= low and header.base_offset <= high]
            budget -= sum(r[1] - r[0] + 1 for r in ranges)
            entry["Records"] = b"".join(kept)
            if not self.faults.share_fetch_acquired_records_omitted:
                entry["AcquiredRecords"] = [{"FirstOffset": f, "LastOffset": la, "DeliveryCount": c}
                                            for f, la, c in ranges]
        return out

    def _empty(self, key: tuple[bytes, int], ack_error: int) -> dict:
        return {"PartitionIndex": key[1], "ErrorCode": NONE, "ErrorMessage": None, "AcknowledgeErrorCode": ack_error,
                "AcknowledgeErrorMessage": None, "CurrentLeader": dict(CURRENT_LEADER_UNSET),
                "Records": b"", "AcquiredRecords": [], "_topic": key[0]}

    def _answer(self, partitions: dict) -> dict:
        topics: dict[bytes, list] = {}
        for (topic_id, _), entry in sorted(partitions.items()):
            entry.pop("_topic", None)
            topics.setdefault(topic_id, []).append(entry)
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "ErrorMessage": None,
                "AcquisitionLockTimeoutMs": self.shares.lock_ms,
                "Responses": [{"TopicId": t, "Partitions": ps} for t, ps in topics.items()], "NodeEndpoints": []}

