"""Produce: each partition's batch validated (records.py), checked against its producer and transaction, appended.

Handlers of the Broker (broker.py), one mixin per API family: a decoded request dict in, a response dict out.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass

from wirecheck.broker.kafka import records
from wirecheck.broker.kafka.errors import (CORRUPT_MESSAGE, INVALID_RECORD, INVALID_REQUEST,
                                                      INVALID_REQUIRED_ACKS, INVALID_TXN_STATE, KAFKA_STORAGE_ERROR,
                                                      NONE, NOT_LEADER_OR_FOLLOWER, OUT_OF_ORDER_SEQUENCE_NUMBER,
                                                      RECORD_LIST_TOO_LARGE, UNKNOWN_TOPIC_OR_PARTITION,
                                                      UNSUPPORTED_COMPRESSION_TYPE)
from wirecheck.broker.kafka.broker_parts import BrokerParts
from wirecheck.broker.kafka.settings import CLOSE
from wirecheck.broker.kafka.storage import valid_topic_name

SEGMENT_BYTES = 1_048_576  # log.segment.bytes under the segment-below-max-message variant


@dataclass
class Appended:
    """The outcome of one partition's produce."""

    error: int
    base_offset: int = -1
    append_time_ms: int = -1  # -1 unless the topic uses LogAppendTime
    message: str | None = None
    close: bool = False  # the broker closes the connection instead of answering
    #: the log refused or deduplicated the batch, so the answer carries the partition's log start offset: Apache
    #: Kafka's ReplicaManager.appendToLocalLog answers a failed append with processFailedRecord's
    #: onlinePartition(...).logStartOffset and UnifiedLog.append a duplicate with setLogStartOffset(logStartOffset)
    #: (core/src/main/scala/kafka/server/ReplicaManager.scala; storage/.../log/UnifiedLog.java); a request refused
    #: before the log (unknown partition, invalid acks, ProduceRequest.validateRecords) keeps -1
    at_the_log: bool = False


class ProduceApis(BrokerParts):
    """A mixin of :class:`Broker` (broker.py)."""

    def produce(self, req: dict, version: int) -> dict:
        acks = req["Acks"]
        responses, close = [], False
        for t in req["TopicData"]:
            parts = []
            for p in t["PartitionData"]:
                if acks not in (-1, 0, 1):
                    # fault invalid-acks-wrong-error: the generic INVALID_REQUEST (42) instead of 21
                    result = Appended(INVALID_REQUEST if self.faults.invalid_acks_wrong_error
                                      else INVALID_REQUIRED_ACKS)
                else:
                    result = self._append(t["Name"], p["Index"], p["Records"], version)
                    close = close or result.close
                partition = self.storage.partition(t["Name"], p["Index"])
                if self.faults.base_offset_echoed and not result.error and len(p["Records"] or b"") >= 8:
                    result.base_offset = struct.unpack_from(">q", p["Records"])[0]  # fault: the producer's own field
                parts.append({"Index": p["Index"], "ErrorCode": result.error, "BaseOffset": result.base_offset,
                              "LogAppendTimeMs": result.append_time_ms,
                              "LogStartOffset": partition.log_start if partition and (
                                  not result.error or result.at_the_log) and not self.faults.log_start_offset_unset
                              else -1,
                              "RecordErrors": [], "ErrorMessage": result.message})
            responses.append({"Name": t["Name"], "PartitionResponses": parts})
        return {"Responses": responses, "ThrottleTimeMs": 0, **({CLOSE: True} if close else {})}

    def _append(self, topic_name: str, index: int, data: bytes | None, version: int) -> "Appended":
        if self.faults.produce_autocreates and topic_name not in self.storage.topics \
                and valid_topic_name(topic_name):
            self.storage.create(topic_name, max(self.settings.default_partitions, index + 1))
        error = self._partition_error(topic_name, index)
        if error == UNKNOWN_TOPIC_OR_PARTITION and topic_name in self.storage.topics and \
                self.faults.wrong_error_unknown_partition:
            error = NOT_LEADER_OR_FOLLOWER  # fault: the produce path answers a missing partition as a moved leader
        if error:
            return Appended(error)
        partition = self.storage.partition(topic_name, index)
        topic = self.storage.topics[topic_name]
        # fault message-too-large-unchecked: no broker-wide default limit (a topic override still applies)
        max_bytes = 1 << 62 if self.faults.message_too_large_unchecked else self.settings.max_message_bytes
        if not self.faults.max_message_bytes_override_ignored:
            max_bytes = int(topic.configs.get("max.message.bytes", max_bytes))
        if self.faults.batch_length_ignored and data and len(data) >= records.LOG_OVERHEAD:
            data = data[:8] + struct.pack(">i", len(data) - records.LOG_OVERHEAD) + data[12:]  # fault: trust the bytes
        error, batch, message, checked = records.validate(data or b"", max_bytes, crc_ieee=self.faults.crc_ieee,
                                                            one_batch=not self.faults.multi_batch_first_kept)
        if error:
            return self._refused(error, message, data or b"")
        data = checked
        if len(data) > SEGMENT_BYTES and self.variants.segment_below_max_message:
            # variant: log.segment.bytes below the default max.message.bytes; Kafka refuses a batch a segment
            # cannot hold after the size check (UnifiedLog.append: RecordBatchTooLargeException)
            return Appended(RECORD_LIST_TOO_LARGE, message=f"batch of {len(data)} bytes exceeds segment.bytes")
        if "compact" in topic.configs.get("cleanup.policy", "") and records.has_null_key(data):
            return Appended(INVALID_RECORD, message="Compacted topic cannot accept message without key")
        if batch.attributes & 0x07 == 4 and version < 7 and not self.variants.zstd_any_produce_version:
            return Appended(UNSUPPORTED_COMPRESSION_TYPE, message="zstd needs Produce v7+ (KIP-110)")
        if batch.is_transactional:
            error = self.transactions.check_produce(topic_name, index, batch.producer_id, batch.producer_epoch,
                                                    version)  # v12+: the batch adds its partition (KIP-890)
            if error:
                # refused by the transaction check before the log (Kafka's ReplicaManager verifies a transactional
                # batch before appendToLocalLog): LogStartOffset stays -1, as Apache Kafka 4.4 answers
                return Appended(error, message="the partition is not in the producer's ongoing transaction"
                                if error == INVALID_TXN_STATE else None)
        idempotent = batch.producer_id >= 0
        if idempotent:
            check = not self.faults.sequence_not_checked
            error, duplicate = self.producers.check(
                topic_name, index, batch.producer_id, batch.producer_epoch, batch.base_sequence,
                batch.last_sequence, check_sequences=check)
            if error:
                return Appended(error, at_the_log=True)
            if duplicate is not None and not self.faults.safety_duplicate_on_retry:  # fault: appended again
                if self.faults.retry_out_of_order:  # fault: only the next sequence is accepted, no retry
                    return Appended(OUT_OF_ORDER_SEQUENCE_NUMBER, at_the_log=True)
                # Kafka's UnifiedLog.append answers a duplicate with its BatchMetadata: the first offset, and as
                # LogAppendTime the batch's timestamp (appendInfo.setLogAppendTime(duplicate.timestamp)), even
                # under CreateTime
                return Appended(NONE, duplicate[0], duplicate[1], at_the_log=True)
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
                                  batch.base_sequence, batch.last_sequence, base,
                                  batch.max_timestamp if append_time is None else append_time)
        self.storage.notify_append()
        return Appended(NONE, base, -1 if append_time is None else append_time)

    def _refused(self, error: int, message: str, data: bytes) -> "Appended":
        """A batch records.validate refused, answered as the active variants read it."""
        if self.variants.bad_batch_length_closes and len(data) >= records.LOG_OVERHEAD and \
                struct.unpack_from(">i", data, 8)[0] + records.LOG_OVERHEAD != len(data):
            return Appended(error, message=message, close=True)  # variant: a lying batchLength costs the connection
        if error == INVALID_RECORD and self.variants.invalid_record_as_corrupt and \
                message.startswith(("no complete", "magic", "more than one")):
            error = CORRUPT_MESSAGE  # variant: ProduceRequest.validateRecords' refusals as older brokers answer them
        return Appended(error, message=message)
