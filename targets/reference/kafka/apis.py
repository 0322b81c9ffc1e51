"""Per-API request handlers: a decoded request dict in, a response dict out (or None: no response).

Error behaviour follows Kafka's KafkaApis/ReplicaManager/GroupCoordinator as summarised in the spec notes
(kafka.md §5); each decision that goes beyond them is commented where it is made.
"""

from __future__ import annotations

import struct
import time
import zlib
from dataclasses import dataclass

from wirecheck.targets.reference.kafka import (admin, compaction, configs, consumer_groups, groups, records,
                                               transactions_v2)
from wirecheck.targets.reference.kafka.share_fetch import ShareFetcher
from wirecheck.targets.reference.kafka.share_groups import ShareGroups
from wirecheck.targets.reference.kafka.share_partitions import SharePartitions
from wirecheck.targets.reference.kafka.storage import Storage, valid_topic_name
from wirecheck.targets.reference.kafka.transactions import Transactions

NONE = 0
OFFSET_OUT_OF_RANGE = 1
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
INVALID_TOPIC_EXCEPTION = 17
TOPIC_AUTHORIZATION_FAILED = 29
INVALID_REQUIRED_ACKS = 21
INVALID_CONFIG = 40
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_REQUEST = 42
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
INVALID_RECORD = 87
INVALID_TXN_STATE = 48
UNSUPPORTED_COMPRESSION_TYPE = 76
FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71
UNKNOWN_TOPIC_ID = 100
KAFKA_STORAGE_ERROR = 56

# Decision: Kafka has no per-topic partition cap, but a count from the wire must not size an allocation
# unchecked; more than this is refused with INVALID_PARTITIONS (37).
MAX_PARTITIONS = 10_000

NODE_ID = 0
CLUSTER_ID = "wirecheck-reference"
AUTHORIZED_OPERATIONS_OMITTED = -2147483648

# ListOffsets special timestamps (ListOffsetsRequest.java)
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5


@dataclass
class Appended:
    """The outcome of one partition's produce."""

    error: int
    base_offset: int = -1
    append_time_ms: int = -1  # -1 unless the topic uses LogAppendTime
    message: str | None = None
    close: bool = False  # the broker closes the connection instead of answering


#: a response carrying this key true is not sent: the server closes the connection instead
CLOSE = "_close"
CORRUPT_MESSAGE, RECORD_LIST_TOO_LARGE = 2, 18
SEGMENT_BYTES = 1_048_576  # log.segment.bytes under the segment-below-max-message variant


@dataclass
class Settings:
    auto_create: bool = True
    topic_admin: bool = True  # False: topic administration is denied (TOPIC_AUTHORIZATION_FAILED), as by ACLs
    default_partitions: int = 1
    max_message_bytes: int = 1048588  # max.message.bytes default
    max_fetch_wait_s: float = 30.0  # cap on a fetch's long poll, whatever max_wait_ms claims
    retention_records: int | None = None  # per partition; None keeps everything
    retention_ms: int = 604800000  # log.retention.ms: the default of the topic retention.ms
    retention_check_ms: int = 300000  # log.retention.check.interval.ms
    consumer_heartbeat_ms: int = 1000  # group.consumer.heartbeat.interval.ms (KIP-848 members)
    consumer_session_ms: int = 45000  # group.consumer.session.timeout.ms
    share_lock_ms: int = 30000  # group.share.record.lock.duration.ms (KIP-932 share groups)
    share_delivery_limit: int = 5  # group.share.delivery.count.limit
    share_max_record_locks: int = 2000  # group.share.partition.max.record.locks


class Broker:
    """The state shared by every connection, and one method per API."""

    def __init__(self, settings: Settings, faults: frozenset[str], coordinator: groups.Coordinator, producers,
                 storage: Storage, variants: frozenset[str] = frozenset()):
        self.settings = settings
        self.faults = faults
        self.variants = variants
        self.storage = storage
        self.coordinator = coordinator
        self.consumer_groups = consumer_groups.ConsumerGroups(
            coordinator, storage, faults, settings.consumer_heartbeat_ms, settings.consumer_session_ms,
            default_assignor="range" if "consumer-group-range-default" in variants else "uniform")
        # KIP-932 share groups: membership (share_groups), in-flight records (share_partitions), ShareFetch and
        # ShareAcknowledge with their sessions (share_fetch); a member that leaves closes its session
        self.share_partitions = SharePartitions(storage, faults, variants, settings.share_lock_ms,
                                                settings.share_delivery_limit, settings.share_max_record_locks)
        self.share_fetcher = ShareFetcher(storage, self.share_partitions, faults, settings.max_fetch_wait_s)
        self.share_groups = ShareGroups(storage, self.consumer_groups, faults, variants,
                                        settings.consumer_heartbeat_ms, settings.consumer_session_ms,
                                        on_leave=self.share_fetcher.close_member)
        self.producers = producers
        self.transactions = Transactions(producers, storage, coordinator, faults, variants)
        self.configs = configs.Configs(storage, settings, faults, variants)
        self.admin = admin.Admin(storage, coordinator, producers, faults, MAX_PARTITIONS, CLUSTER_ID, NODE_ID,
                                 topic_admin=settings.topic_admin)

    # ------------------------------------------------------------------------------------------ helpers

    def _partition_error(self, topic: str, index: int) -> int:
        """3 for a missing topic, and for a missing partition of an existing topic."""
        t = self.storage.topics.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            return UNKNOWN_TOPIC_OR_PARTITION
        return NONE

    # ------------------------------------------------------------------------------------------ metadata

    def metadata(self, req: dict, version: int, host: str, port: int) -> dict:
        requested = req["Topics"]
        if requested is None or (version == 0 and requested == []):
            names = sorted(self.storage.topics)  # null (v1+) or empty (v0): all topics
        elif "metadata-empty-means-all" in self.faults and requested == []:
            names = sorted(self.storage.topics)
        else:
            names = []
            for t in requested:
                name = t.get("Name")
                if name is None and t.get("TopicId"):
                    topic = self.storage.by_id.get(t["TopicId"])
                    name = topic.name if topic else None
                    if name is None:
                        names.append((UNKNOWN_TOPIC_ID, None, t["TopicId"]))
                        continue
                if name not in names:  # Kafka collects the requested names into a set
                    names.append(name)
        allow_create = req.get("AllowAutoTopicCreation", True) if version >= 4 else True
        allow_create = allow_create or "metadata-ignores-allow-create" in self.faults  # fault: v4+ flag ignored
        topics = []
        for entry in names:
            if isinstance(entry, tuple):
                topics.append({"ErrorCode": entry[0], "Name": None, "TopicId": entry[2], "Partitions": []})
                continue
            topics.append(self._topic_metadata(entry, allow_create))
        return {
            "ThrottleTimeMs": 0,
            "Brokers": [{"NodeId": NODE_ID, "Host": host, "Port": port, "Rack": None}],
            "ClusterId": CLUSTER_ID,
            "ControllerId": NODE_ID,
            "Topics": topics,
            "ClusterAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED,
            "ErrorCode": NONE,
        }

    def _topic_metadata(self, name: str, allow_create: bool) -> dict:
        topic = self.storage.topics.get(name)
        if topic is None:
            if not valid_topic_name(name):
                # variant invalid-topic-unknown: a name this broker cannot hold is simply not there (3)
                unknown = "invalid-topic-unknown" in self.variants
                code = UNKNOWN_TOPIC_OR_PARTITION if unknown else INVALID_TOPIC_EXCEPTION
                return {"ErrorCode": code, "Name": name, "Partitions": [],
                        "TopicAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED}
            may_create = allow_create and self.settings.auto_create
            if not (may_create and self.storage.has_room(self.settings.default_partitions)):
                return {"ErrorCode": UNKNOWN_TOPIC_OR_PARTITION, "Name": name, "Partitions": [],
                        "TopicAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED}
            # Kafka answers LEADER_NOT_AVAILABLE for a topic it has just auto-created (AutoTopicCreationManager);
            # clients retry, and the next Metadata lists the partitions.
            topic = self.storage.create(name, self.settings.default_partitions)
            return {"ErrorCode": LEADER_NOT_AVAILABLE, "Name": name, "TopicId": topic.topic_id, "Partitions": [],
                    "TopicAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED}
        leader = NODE_ID + 1 if "metadata-leader-not-a-broker" in self.faults else NODE_ID  # fault: no such node
        return {
            "ErrorCode": NONE, "Name": name, "TopicId": topic.topic_id, "IsInternal": False,
            "Partitions": [{"ErrorCode": NONE, "PartitionIndex": p.index, "LeaderId": leader, "LeaderEpoch": 0,
                            "ReplicaNodes": [NODE_ID], "IsrNodes": [NODE_ID], "OfflineReplicas": []}
                           for p in topic.partitions],
            "TopicAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED,
        }

    # ------------------------------------------------------------------------------------------ produce

    def produce(self, req: dict, version: int) -> dict:
        acks = req["Acks"]
        responses, close = [], False
        for t in req["TopicData"]:
            parts = []
            for p in t["PartitionData"]:
                if acks not in (-1, 0, 1):
                    # fault invalid-acks-wrong-error: the generic INVALID_REQUEST (42) instead of 21
                    result = Appended(INVALID_REQUEST if "invalid-acks-wrong-error" in self.faults
                                      else INVALID_REQUIRED_ACKS)
                else:
                    result = self._append(t["Name"], p["Index"], p["Records"], version)
                    close = close or result.close
                partition = self.storage.partition(t["Name"], p["Index"])
                if "base-offset-echoed" in self.faults and not result.error and len(p["Records"] or b"") >= 8:
                    result.base_offset = struct.unpack_from(">q", p["Records"])[0]  # fault: the producer's own field
                parts.append({"Index": p["Index"], "ErrorCode": result.error, "BaseOffset": result.base_offset,
                              "LogAppendTimeMs": result.append_time_ms,
                              "LogStartOffset": partition.log_start if partition and not result.error
                              and "log-start-offset-unset" not in self.faults else -1,
                              "RecordErrors": [], "ErrorMessage": result.message})
            responses.append({"Name": t["Name"], "PartitionResponses": parts})
        return {"Responses": responses, "ThrottleTimeMs": 0, **({CLOSE: True} if close else {})}

    def _append(self, topic_name: str, index: int, data: bytes | None, version: int) -> "Appended":
        if "produce-autocreates" in self.faults and topic_name not in self.storage.topics \
                and valid_topic_name(topic_name):
            self.storage.create(topic_name, max(self.settings.default_partitions, index + 1))
        error = self._partition_error(topic_name, index)
        if error == UNKNOWN_TOPIC_OR_PARTITION and topic_name in self.storage.topics and \
                "wrong-error-unknown-partition" in self.faults:
            error = NOT_LEADER_OR_FOLLOWER  # fault: the produce path answers a missing partition as a moved leader
        if error:
            return Appended(error)
        partition = self.storage.partition(topic_name, index)
        topic = self.storage.topics[topic_name]
        # fault message-too-large-unchecked: no broker-wide default limit (a topic override still applies)
        max_bytes = 1 << 62 if "message-too-large-unchecked" in self.faults else self.settings.max_message_bytes
        if "max-message-bytes-override-ignored" not in self.faults:
            max_bytes = int(topic.configs.get("max.message.bytes", max_bytes))
        if "batch-length-ignored" in self.faults and data and len(data) >= records.LOG_OVERHEAD:
            data = data[:8] + struct.pack(">i", len(data) - records.LOG_OVERHEAD) + data[12:]  # fault: trust the bytes
        error, batch, message, checked = records.validate(data or b"", max_bytes, crc_ieee="crc-ieee" in self.faults,
                                                            one_batch="multi-batch-first-kept" not in self.faults)
        if error:
            return self._refused(error, message, data or b"")
        data = checked
        if len(data) > SEGMENT_BYTES and "segment-below-max-message" in self.variants:
            # variant: log.segment.bytes below the default max.message.bytes; Kafka refuses a batch a segment
            # cannot hold after the size check (UnifiedLog.append: RecordBatchTooLargeException)
            return Appended(RECORD_LIST_TOO_LARGE, message=f"batch of {len(data)} bytes exceeds segment.bytes")
        if "compact" in topic.configs.get("cleanup.policy", "") and records.has_null_key(data):
            return Appended(INVALID_RECORD, message="Compacted topic cannot accept message without key")
        if batch.attributes & 0x07 == 4 and version < 7 and "zstd-any-produce-version" not in self.variants:
            return Appended(UNSUPPORTED_COMPRESSION_TYPE, message="zstd needs Produce v7+ (KIP-110)")
        if batch.is_transactional:
            error = self.transactions.check_produce(topic_name, index, batch.producer_id, batch.producer_epoch,
                                                    version)  # v12+: the batch adds its partition (KIP-890)
            if error:
                return Appended(error, message="the partition is not in the producer's ongoing transaction"
                                if error == INVALID_TXN_STATE else None)
        idempotent = batch.producer_id >= 0
        if idempotent:
            check = "sequence-not-checked" not in self.faults
            error, duplicate_base = self.producers.check(
                topic_name, index, batch.producer_id, batch.producer_epoch, batch.base_sequence,
                batch.last_sequence, check_sequences=check)
            if error:
                return Appended(error)
            if duplicate_base is not None:
                if "retry-out-of-order" in self.faults:  # fault: only the next sequence is accepted, no retry
                    return Appended(OUT_OF_ORDER_SEQUENCE_NUMBER)
                return Appended(NONE, duplicate_base)
        append_time = int(time.time() * 1000) if topic.log_append_time else None
        try:
            base = self.storage.append(topic, partition, data, batch, append_time)
        except OSError as exc:  # durable: the write failed (e.g. a full disk); the log is as it was
            return Appended(KAFKA_STORAGE_ERROR, message=f"log write failed: {exc.strerror or exc}")
        if self.settings.retention_records is not None:
            partition.trim(self.settings.retention_records)
        retention_ms = int(topic.configs.get("retention.ms", -1))  # only an explicit topic override expires data
        if retention_ms >= 0:
            partition.expire(int(time.time() * 1000) - retention_ms)
        if idempotent:
            self.producers.record(topic_name, index, batch.producer_id, batch.producer_epoch,
                                  batch.base_sequence, batch.last_sequence, base)
        self.storage.notify_append()
        return Appended(NONE, base, -1 if append_time is None else append_time)

    def _refused(self, error: int, message: str, data: bytes) -> "Appended":
        """A batch records.validate refused, answered as the active variants read it."""
        if "bad-batch-length-closes" in self.variants and len(data) >= records.LOG_OVERHEAD and \
                struct.unpack_from(">i", data, 8)[0] + records.LOG_OVERHEAD != len(data):
            return Appended(error, message=message, close=True)  # variant: a lying batchLength costs the connection
        if error == INVALID_RECORD and "invalid-record-as-corrupt" in self.variants and \
                message.startswith(("no complete", "magic", "more than one")):
            error = CORRUPT_MESSAGE  # variant: ProduceRequest.validateRecords' refusals as older brokers answer them
        return Appended(error, message=message)

    def maintain_logs(self) -> None:
        """The periodic log maintenance: under cleanup.policy delete each partition drops its closed segments past
        the topic's retention.ms (its override, else the broker default); under compact the cleaner runs."""
        now = int(time.time() * 1000)
        for topic in self.storage.topics.values():
            policy = topic.configs.get("cleanup.policy", "delete").split(",")
            retention_ms = int(topic.configs.get("retention.ms", self.settings.retention_ms))
            for partition in topic.partitions:
                if "delete" in policy and retention_ms >= 0:
                    partition.expire_segments(now - retention_ms)
                if "compact" in policy:
                    compaction.compact(partition)

    # ------------------------------------------------------------------------------------------ fetch

    async def fetch(self, req: dict, version: int) -> dict:
        session_id, epoch = req.get("SessionId", 0), req.get("SessionEpoch", -1)
        # This broker never creates fetch sessions (it answers SessionId 0, which KIP-227 allows): a request
        # naming a session, or an incremental epoch without one, is refused as FetchSessionHandler would.
        if session_id != 0:
            return {"ThrottleTimeMs": 0, "ErrorCode": FETCH_SESSION_ID_NOT_FOUND, "SessionId": 0, "Responses": []}
        if epoch not in (-1, 0):
            return {"ThrottleTimeMs": 0, "ErrorCode": INVALID_FETCH_SESSION_EPOCH, "SessionId": 0, "Responses": []}
        wait_s = min(max(req["MaxWaitMs"], 0) / 1000, self.settings.max_fetch_wait_s)
        if "fetch-no-long-poll" in self.faults:
            wait_s = 0
        deadline = time.monotonic() + wait_s
        if req["MaxWaitMs"] <= 0 and "fetch-immediate-empty" in self.variants:
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
            enough = size >= req["MinBytes"] or (size > 0 and "fetch-early-partial" in self.variants)
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
                if name is None:
                    out["ErrorCode"] = UNKNOWN_TOPIC_ID if by_id else UNKNOWN_TOPIC_OR_PARTITION
                    has_error = True
                    continue
                error = self._partition_error(name, p["Partition"])
                if error and "fetch-unknown-partition-no-error" in self.faults:
                    continue  # fault: an empty partition with error 0
                if error:
                    out["ErrorCode"] = error
                    has_error = True
                    continue
                partition = self.storage.partition(name, p["Partition"])
                hw = partition.high_watermark + (1 if "hw-off-by-one" in self.faults else 0)
                lso = partition.last_stable_offset if partition.open_transactions else hw
                out.update(HighWatermark=hw, LastStableOffset=lso, LogStartOffset=partition.log_start)
                if "log-start-offset-unset" in self.faults:
                    out.update(LogStartOffset=-1)  # fault: the field left at its default
                offset = p["FetchOffset"]
                if offset < partition.log_start and "fetch-below-log-start-clamped" in self.faults:
                    offset = partition.log_start  # fault: reads from the log start instead of refusing
                if offset < partition.log_start or offset > partition.high_watermark:
                    if "fetch-beyond-hw-empty" not in self.faults or offset < partition.log_start:
                        out["ErrorCode"] = OFFSET_OUT_OF_RANGE
                        has_error = True
                    continue
                if "fetch-ignores-offset" in self.faults:
                    offset = partition.log_start  # fault: an offset in range, read from the log start
                limit = min(p["PartitionMaxBytes"], budget - total)
                stops_at_lso = read_committed and "txn-read-committed-past-lso" not in self.faults
                end = partition.last_stable_offset if stops_at_lso else None
                batches = partition.read(offset, max(limit, 0), at_least_one=(total == 0), end=end)
                if "fetch-crc-ieee" in self.faults:  # fault: served batches re-checksummed with CRC-32 IEEE
                    batches = [_crc_ieee(b) for b in batches]
                data = b"".join(batches)
                out["Records"] = data
                if read_committed and batches and "txn-aborted-not-listed" not in self.faults:
                    last = records.parse_header(batches[-1])
                    upper = last.base_offset + last.last_offset_delta + 1
                    out["AbortedTransactions"] = [{"ProducerId": pid, "FirstOffset": first}
                                                  for pid, first in partition.aborted_between(offset, upper)]
                total += len(data)
            responses.append({"Topic": name if not by_id else None, "TopicId": t.get("TopicId"),
                              "Partitions": parts})
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "SessionId": 0, "Responses": responses}, total, has_error

    # ------------------------------------------------------------------------------------------ list offsets

    def list_offsets(self, req: dict, version: int) -> dict:
        topics = []
        for t in req["Topics"]:
            parts = []
            for p in t["Partitions"]:
                out = {"PartitionIndex": p["PartitionIndex"], "ErrorCode": NONE, "Timestamp": -1, "Offset": -1,
                       "LeaderEpoch": -1}
                parts.append(out)
                error = self._partition_error(t["Name"], p["PartitionIndex"])
                if error and "listoffsets-unknown-partition-no-error" in self.faults:
                    continue  # fault: offset -1 with error 0
                if error:
                    out["ErrorCode"] = error
                    continue
                partition = self.storage.partition(t["Name"], p["PartitionIndex"])
                ts = p["Timestamp"]
                read_committed = req.get("IsolationLevel", 0) == 1 and "txn-list-offsets-ignores-isolation" not in \
                    self.faults
                if ts == LATEST and read_committed and partition.open_transactions:
                    out.update(Offset=partition.last_stable_offset)  # read_committed: the LSO
                elif ts == LATEST:
                    offset = partition.high_watermark + (1 if "listoffsets-latest-off-by-one" in self.faults else 0)
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

    # ------------------------------------------------------------------------------------------ topics

    def create_topics(self, req: dict, version: int) -> dict:
        results = []
        for t in req["Topics"]:
            name = t["Name"]
            error, message, count, rf = self._check_creatable(t)
            if not self.settings.topic_admin:  # Kafka authorizes before it validates
                error, message = TOPIC_AUTHORIZATION_FAILED, "Authorization failed."
            # Honoured configs (configs.TOPIC_CONFIGS) are validated and kept; others are accepted and ignored.
            honoured = {c["Name"]: c["Value"] for c in t["Configs"] if c["Name"] in configs.TOPIC_CONFIGS}
            for config_name, value in honoured.items():
                reason = configs.validate(config_name, value)
                if not error and reason:
                    error, message = INVALID_CONFIG, reason
            timestamp_type = honoured.get("message.timestamp.type") or "CreateTime"
            result = {"Name": name, "ErrorCode": error, "ErrorMessage": message, "TopicConfigErrorCode": 0,
                      "NumPartitions": -1, "ReplicationFactor": -1, "Configs": []}
            if error == NONE:
                topic = self.storage.topics.get(name)  # present only under create-duplicate-no-error
                if not req["validateOnly"] and topic is None:
                    # Other topic configs are accepted and ignored (documented in the package docstring).
                    made = 1 if "create-topic-count-ignored" in self.faults else count  # fault: always 1 partition
                    topic = self.storage.create(name, made, log_append_time=timestamp_type == "LogAppendTime",
                                                configs={k: v for k, v in honoured.items() if v is not None})
                result.update(NumPartitions=count, ReplicationFactor=rf,
                              TopicId=topic.topic_id if topic else bytes(16))
            results.append(result)
        return {"ThrottleTimeMs": 0, "Topics": results}

    def _check_creatable(self, t: dict) -> tuple[int, str | None, int, int]:
        """(error, message, partitions, replication factor) for one CreatableTopic, in Kafka's checking order."""
        name, count, rf = t["Name"], t["NumPartitions"], t["ReplicationFactor"]
        if t["Assignments"]:
            if count != -1 or rf != -1:
                return INVALID_REQUEST, "Both numPartitions or replicationFactor and replicasAssignments were set.", \
                    count, rf
            count, rf = len(t["Assignments"]), len(t["Assignments"][0]["BrokerIds"])
        count = self.settings.default_partitions if count == -1 else count  # -1: the broker default (v4+)
        rf = 1 if rf == -1 else rf
        if not valid_topic_name(name):
            return INVALID_TOPIC_EXCEPTION, f"invalid topic name {name!r}", count, rf
        if name in self.storage.topics and "create-duplicate-no-error" not in self.faults:
            code = -TOPIC_ALREADY_EXISTS if "error-code-negated" in self.faults else TOPIC_ALREADY_EXISTS
            return code, f"Topic '{name}' already exists.", count, rf  # fault error-code-negated: -36
        if count < (0 if "create-zero-partitions-accepted" in self.faults else 1):  # fault: 0 partitions pass
            return INVALID_PARTITIONS, "Number of partitions must be larger than 0.", count, rf
        if count > MAX_PARTITIONS:
            return INVALID_PARTITIONS, f"This broker keeps at most {MAX_PARTITIONS} partitions a topic.", count, rf
        if name not in self.storage.topics and not self.storage.has_room(count):
            return INVALID_PARTITIONS, "This broker's partition budget is exhausted.", count, rf
        if rf != 1 and not (rf > 1 and "replication-factor-unchecked" in self.faults):
            return INVALID_REPLICATION_FACTOR, f"Replication factor {rf}: this broker is the only one.", count, rf
        return NONE, None, count, rf

    def delete_topics(self, req: dict, version: int) -> dict:
        if version >= 6:
            wanted = [(t["Name"], t["TopicId"]) for t in req["Topics"]]
        else:
            wanted = [(name, None) for name in req["TopicNames"]]
        results = []
        for name, topic_id in wanted:
            if name is None and topic_id:
                topic = self.storage.by_id.get(topic_id)
                if topic is None:
                    results.append({"Name": None, "TopicId": topic_id, "ErrorCode": UNKNOWN_TOPIC_ID})
                    continue
                name = topic.name
            topic = self.storage.topics.get(name)
            if not self.settings.topic_admin:
                results.append({"Name": name, "TopicId": bytes(16), "ErrorCode": TOPIC_AUTHORIZATION_FAILED})
                continue
            if topic is None:
                results.append({"Name": name, "TopicId": bytes(16), "ErrorCode": UNKNOWN_TOPIC_OR_PARTITION})
                continue
            self.storage.delete(name)
            self.coordinator.forget_topic(name)
            self.producers.forget_topic(name)
            results.append({"Name": name, "TopicId": topic.topic_id, "ErrorCode": NONE})
        return {"ThrottleTimeMs": 0, "Responses": results}

    # ------------------------------------------------------------------------------------------ producers

    def init_producer_id(self, req: dict, version: int) -> dict:
        if req["TransactionalId"] is None and "init-producer-id-needs-transactional-id" in self.faults:
            return {"ThrottleTimeMs": 0, "ErrorCode": INVALID_REQUEST, "ProducerId": -1, "ProducerEpoch": -1}
        error, pid, epoch = self.transactions.init_producer_id(
            req["TransactionalId"], req["TransactionTimeoutMs"], req.get("ProducerId", -1),
            req.get("ProducerEpoch", -1))
        return {"ThrottleTimeMs": 0, "ErrorCode": error, "ProducerId": pid, "ProducerEpoch": epoch}

    # ------------------------------------------------------------------------------------------ transactions

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
        if version >= transactions_v2.END_TXN_V2 or "txn-v2-bump-any-version" in self.faults:
            error, pid, epoch = transactions_v2.end(self.transactions, req["TransactionalId"], req["ProducerId"],
                                                    req["ProducerEpoch"], version, req["Committed"])
            return {"ThrottleTimeMs": 0, "ErrorCode": error,
                    **({"ProducerId": pid, "ProducerEpoch": epoch} if version >= transactions_v2.END_TXN_V2 else {})}
        error = self.transactions.end(req["TransactionalId"], req["ProducerId"], req["ProducerEpoch"], version,
                                      req["Committed"])
        return {"ThrottleTimeMs": 0, "ErrorCode": error}

    def txn_offset_commit(self, req: dict, version: int) -> dict:
        offsets = {(t["Name"], p["PartitionIndex"]): groups.CommittedOffset(
                       p["CommittedOffset"], p.get("CommittedLeaderEpoch", -1), p["CommittedMetadata"])
                   for t in req["Topics"] for p in t["Partitions"]}
        results = self.transactions.commit_offsets(req["TransactionalId"], req["ProducerId"], req["ProducerEpoch"],
                                                   version, req["GroupId"], offsets)
        by_topic: dict[str, list] = {}
        for (name, index), error in results.items():
            by_topic.setdefault(name, []).append({"PartitionIndex": index, "ErrorCode": error})
        return {"ThrottleTimeMs": 0, "Topics": [{"Name": name, "Partitions": parts}
                                                for name, parts in by_topic.items()]}

    # ------------------------------------------------------------------------------------------ groups

    def find_coordinator(self, req: dict, version: int, host: str, port: int) -> dict:
        if "coordinator-port-hardcoded" in self.faults:
            port = 9092 if port != 9092 else 9093
        if version < 4:
            return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "ErrorMessage": None, "NodeId": NODE_ID,
                    "Host": host, "Port": port}
        return {"ThrottleTimeMs": 0, "Coordinators": [
            {"Key": key, "NodeId": NODE_ID, "Host": host, "Port": port, "ErrorCode": NONE, "ErrorMessage": None}
            for key in req["CoordinatorKeys"]]}

    async def join_group(self, req: dict, version: int, client_id: str, client_host: str) -> dict:
        refused = self.consumer_groups.classic_join_error(req["GroupId"])
        if refused:  # KIP-848: a consumer group with members takes no classic members (no online conversion)
            return {"ThrottleTimeMs": 0, "ErrorCode": refused, "GenerationId": -1, "ProtocolType": None,
                    "ProtocolName": "" if version < 7 else None, "Leader": "", "SkipAssignment": False,
                    "MemberId": req["MemberId"], "Members": []}
        rebalance_ms = req["RebalanceTimeoutMs"] if version >= 1 else req["SessionTimeoutMs"]
        result = await self.coordinator.join(
            req["GroupId"], req["MemberId"], req.get("GroupInstanceId"), client_id, client_host,
            req["SessionTimeoutMs"], rebalance_ms, req["ProtocolType"],
            [(p["Name"], p["Metadata"]) for p in req["Protocols"]],
            # fault join-member-id-not-required: v4+ joins at once, as v0-v3 do (KIP-394 skipped)
            require_known_member_id=version >= 4 and "join-member-id-not-required" not in self.faults)
        return {"ThrottleTimeMs": 0, "ErrorCode": result.error, "GenerationId": result.generation,
                "ProtocolType": result.protocol_type,
                "ProtocolName": result.protocol_name or ("" if version < 7 else None),  # nullable from v7
                "Leader": result.leader, "SkipAssignment": False, "MemberId": result.member_id,
                "Members": [{"MemberId": m, "GroupInstanceId": g, "Metadata": meta} for m, g, meta in result.members]}

    async def sync_group(self, req: dict, version: int) -> dict:
        fenced = self.coordinator.check_instance(req["GroupId"], req["MemberId"], req.get("GroupInstanceId"))
        if fenced:
            return {"ThrottleTimeMs": 0, "ErrorCode": fenced, "Assignment": b""}
        error, ptype, pname, assignment = await self.coordinator.sync(
            req["GroupId"], req["MemberId"], req["GenerationId"], req.get("ProtocolType"), req.get("ProtocolName"),
            [(a["MemberId"], a["Assignment"]) for a in req["Assignments"]])
        return {"ThrottleTimeMs": 0, "ErrorCode": error, "ProtocolType": ptype, "ProtocolName": pname,
                "Assignment": assignment}

    def heartbeat(self, req: dict, version: int) -> dict:
        error = self.coordinator.check_instance(req["GroupId"], req["MemberId"], req.get("GroupInstanceId")) \
            or self.coordinator.heartbeat(req["GroupId"], req["MemberId"], req["GenerationId"])
        return {"ThrottleTimeMs": 0, "ErrorCode": error}

    def leave_group(self, req: dict, version: int) -> dict:
        if version < 3:
            return {"ThrottleTimeMs": 0, "ErrorCode": self.coordinator.leave(req["GroupId"], req["MemberId"])}
        members = [{"MemberId": m["MemberId"], "GroupInstanceId": m.get("GroupInstanceId"),
                    "ErrorCode": self.coordinator.leave_member(req["GroupId"], m["MemberId"], m.get("GroupInstanceId"))}
                   for m in req["Members"]]
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "Members": members}

    def offset_commit(self, req: dict, version: int) -> dict:
        allowed = self.consumer_groups.commit_error(req["GroupId"], req["MemberId"], req["GenerationIdOrMemberEpoch"],
                                                    version)  # None: not a KIP-848 group
        if allowed is None:
            allowed = self.coordinator.check_instance(req["GroupId"], req["MemberId"], req.get("GroupInstanceId")) \
                or self.coordinator.commit_check(req["GroupId"], req["MemberId"], req["GenerationIdOrMemberEpoch"])
        topics = []
        for t in req["Topics"]:
            parts = []
            for p in t["Partitions"]:
                error = allowed or self._partition_error(t["Name"], p["PartitionIndex"])
                if not error and "commit-not-stored" not in self.faults:
                    self.coordinator.commit(req["GroupId"], t["Name"], p["PartitionIndex"], groups.CommittedOffset(
                        p["CommittedOffset"], p.get("CommittedLeaderEpoch", -1), p["CommittedMetadata"]))
                parts.append({"PartitionIndex": p["PartitionIndex"], "ErrorCode": error})
            topics.append({"Name": t["Name"], "Partitions": parts})
        return {"ThrottleTimeMs": 0, "Topics": topics}

    def offset_fetch(self, req: dict, version: int) -> dict:
        if version < 8:
            group = self._offsets_for(req["GroupId"], req["Topics"])
            return {"ThrottleTimeMs": 0, "Topics": group["Topics"], "ErrorCode": group["ErrorCode"]}
        answers = []
        for g in req["Groups"]:
            answer = self._offsets_for(g["GroupId"], g["Topics"])
            if version >= 9:  # KIP-848: a member fetching names itself and its epoch
                error = self.consumer_groups.fetch_error(g["GroupId"], g.get("MemberId"), g.get("MemberEpoch", -1))
                if error:
                    answer = {"GroupId": g["GroupId"], "Topics": [], "ErrorCode": error}
            answers.append(answer)
        return {"ThrottleTimeMs": 0, "Groups": answers}

    def _offsets_for(self, group_id: str, topics: list | None) -> dict:
        committed = self.coordinator.committed(group_id)
        if topics is None:  # null: every committed offset of the group
            wanted: dict[str, list[int]] = {}
            for (topic, partition) in sorted(committed):
                wanted.setdefault(topic, []).append(partition)
        else:
            wanted = {t["Name"]: t["PartitionIndexes"] for t in topics}
        out = []
        for name, indexes in wanted.items():
            parts = []
            for index in indexes:
                c = committed.get((name, index))
                none = 0 if "uncommitted-reads-zero" in self.faults else -1  # fault: "no offset" read as 0
                parts.append({"PartitionIndex": index, "ErrorCode": NONE,
                              "CommittedOffset": c.offset if c else none,
                              "CommittedLeaderEpoch": c.leader_epoch if c else -1,
                              "Metadata": c.metadata if c else ""})
            out.append({"Name": name, "Partitions": parts})
        return {"GroupId": group_id, "Topics": out, "ErrorCode": NONE}

    def describe_groups(self, req: dict, version: int) -> dict:
        described = []
        for group_id in req["Groups"]:
            group = self.coordinator.groups.get(group_id)
            if group is None:
                # Dead with no error before v6; v6 answers GROUP_ID_NOT_FOUND (KIP-1043, DescribeGroupsResponse.json)
                described.append({"ErrorCode": groups.GROUP_ID_NOT_FOUND if version >= 6 else NONE,
                                  "ErrorMessage": None, "GroupId": group_id, "GroupState": groups.DEAD,
                                  "ProtocolType": "", "ProtocolData": "", "Members": [],
                                  "AuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED})
                continue
            stable = group.state == groups.STABLE
            described.append({
                "ErrorCode": NONE, "GroupId": group_id, "GroupState": group.state,
                "ProtocolType": group.protocol_type or "", "ProtocolData": group.protocol_name or "",
                "Members": [{"MemberId": m.member_id, "GroupInstanceId": m.group_instance_id,
                             "ClientId": m.client_id, "ClientHost": m.client_host,
                             "MemberMetadata": m.metadata_for(group.protocol_name) if group.protocol_name else b"",
                             "MemberAssignment": m.assignment if stable else b""}
                            for m in group.members.values()],
                "AuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED})
        return {"ThrottleTimeMs": 0, "Groups": described}

    def list_groups(self, req: dict, version: int) -> dict:
        states = {s.lower() for s in req.get("StatesFilter") or []}
        types = {t.lower() for t in req.get("TypesFilter") or []}
        listed = []
        for group in self.consumer_groups.groups.values():
            if (not states or group.state().lower() in states) and (not types or "consumer" in types):
                listed.append({"GroupId": group.group_id, "ProtocolType": "consumer", "GroupState": group.state(),
                               "GroupType": "consumer"})
        for group in self.share_groups.groups.values():  # KIP-932: share groups are listed as type "share"
            if (not states or group.state().lower() in states) and (not types or "share" in types):
                listed.append({"GroupId": group.group_id, "ProtocolType": "share", "GroupState": group.state(),
                               "GroupType": "share"})
        for group in self.coordinator.groups.values():
            if states and group.state.lower() not in states:
                continue
            if (types and "classic" not in types) or group.group_id in self.consumer_groups.groups:
                continue
            listed.append({"GroupId": group.group_id, "ProtocolType": group.protocol_type or "",
                           "GroupState": group.state, "GroupType": "classic"})
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "Groups": listed}


def _crc_ieee(batch: bytes) -> bytes:
    """Fault fetch-crc-ieee: the batch's CRC field recomputed with CRC-32 IEEE (zlib) instead of CRC-32C."""
    if len(batch) <= records.CRC_START:
        return batch
    out = bytearray(batch)
    struct.pack_into(">I", out, 17, zlib.crc32(memoryview(out)[records.CRC_START:]) & 0xFFFFFFFF)
    return bytes(out)
