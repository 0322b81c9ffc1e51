"""Produce (0) on the SPU (notes §4).

Per partition entry, in this order (notes §4.4; decisions marked D are implementation-defined):
  no leader (unknown topic or partition after auto-creation) -> 6; SmartModules present -> 6001/6002 (D3:
  this broker runs no wasm); total records 0 -> 0 with base_offset 0 and nothing written; compression bits
  5-7 -> 9000; D4: a bad CRC -> Other("...") and nothing written (the SPU never checks, A7); a batch over
  max_request_size -> 10; D5: a batch with last_offset_delta < 0 among real ones -> StorageError (56), nothing
  written and no permanent short-circuit (the SPU writes the batches before it and then answers 73 for ever,
  A14); over the broker's memory budget (in memory only) -> PartitionFull (72, storage.py); otherwise every
  batch is appended (with ``--data-dir``, written and synced before the answer; a failed write -> 56).
"""

from __future__ import annotations

import asyncio
import logging

from wirecheck.broker.fluvio import messages
from wirecheck.broker.fluvio.api import Answer, trailing
from wirecheck.broker.fluvio.connection import SpuCall
from wirecheck.broker.fluvio.faults import FluvioFaults, FluvioVariants
from wirecheck.broker.fluvio.records import Batch, GZIP, MAX_COMPRESSION
from wirecheck.broker.fluvio.storage import Storage
from wirecheck.broker.fluvio.wire import OK, ErrorCode

log = logging.getLogger("wirecheck.broker.fluvio")


class Wedged(Exception):
    """Raised only under the crash-on-huge-record-count fault."""


class ProduceApi:
    def __init__(self, storage: Storage, faults: FluvioFaults, variants: FluvioVariants, max_request_size: int):
        self.storage = storage
        self.faults = faults
        self.variants = variants
        self.max_request_size = max_request_size
        # variants batch-len-short-answers / recordset-trailing-answers: these RecordSet shapes get an error
        # answer for their partition instead of a close (records.read_record_set)
        self.answered_shapes = frozenset(shape for shape, on in (("short", variants.batch_len_short_answers),
                                                                 ("trailing", variants.recordset_trailing_answers))
                                         if on)
        self.wedged = False  # fault crash-on-huge-record-count: the whole broker reads and never answers
        self._in_stream = False  # fault stream-open-compression-wrong: the request being answered came with a stream

    async def produce(self, call: SpuCall) -> Answer:
        faults, variants, r = self.faults, self.variants, call.r
        # the fault isolation-strict and the variant isolation-other-closes reject the same values
        request = messages.read_produce(r, call.version,
                                        strict_isolation=faults.isolation_strict or variants.isolation_other_closes,
                                        unsigned_timeout=faults.negative_timeout_accepted,
                                        clamp_record_sets=faults.recordset_overrun_clamped,
                                        trailer_required=variants.smartmodules_trailer_required,
                                        answer_shapes=self.answered_shapes)
        if trailing(r, variants):
            return False  # before any write: a request the variant refuses changes nothing
        if faults.padded_varint_hangs and any(
                b.padded_length_varint for _, parts in request.topics for p in parts for b in p.batches):
            return True  # fault: the records check waits for varint bytes that never come
        # fault stream-open-compression-wrong: what this connection holds (a stream opened on it)
        self._in_stream = bool(call.state.streams) and faults.stream_open_compression_wrong
        body = self._produce(request, call.version)
        if request.isolation == -1 and faults.read_committed_waits_timeout:
            await asyncio.sleep(request.timeout_ms / 1000)  # fault: waits for acks no follower sends
        return body

    def _produce(self, request: messages.ProduceRequest, version: int) -> bytes:
        topics = []
        for name, partitions in request.topics:
            entries: list[tuple[int, bytes, int]] = []
            for data in partitions:
                error, base = self._produce_partition(name, data, request.smartmodules)
                if self.faults.produce_responses_merged and entries and entries[-1][0] == data.index:
                    continue  # fault: a repeated partition gets no entry of its own
                entries.append((data.index, error, base))
            topics.append((name, [messages.produce_partition(i, e, b, version) for i, e, b in entries]))
        # ReadCommitted needs no wait: one replica, HW = LEO at write time (§4.4 step 9).
        return messages.produce_response(topics, version, with_throttle=not self.faults.throttle_missing)

    def _produce_partition(self, topic: str, data: messages.PartitionData,
                           smartmodules: list[messages.Invocation]) -> tuple[bytes, int]:
        faults = self.faults
        partition = self.storage.partition_for_produce(topic, data.index)
        if partition is None:
            if faults.unknown_topic_not_found and topic not in self.storage.topics:
                return ErrorCode.plain(ErrorCode.TOPIC_NOT_FOUND), 0  # fault: the SC's code for a missing topic
            if faults.error_code_unknown_partition_wrong and topic in self.storage.topics:
                return ErrorCode.plain(ErrorCode.TOPIC_NOT_FOUND), 0  # fault: the produce path's own lookup
            return ErrorCode.plain(ErrorCode.NOT_LEADER_FOR_PARTITION), 0
        if data.malformed is not None:  # variants batch-len-short-answers / recordset-trailing-answers (A15)
            return ErrorCode.other(f"invalid RecordSet: {data.malformed}"), 0
        if smartmodules:
            return messages.smartmodule_error(smartmodules[0]), 0
        batches = data.batches
        if faults.crash_on_huge_record_count:
            for batch in batches:
                count = batch.record_count_field
                if count is not None and count > len(batch.data):
                    self.wedged = True
                    raise Wedged(f"record count {count}")
        if sum(b.record_total for b in batches) == 0:
            # §4.4 step 4: success, nothing written; the fault answers the log end as base_offset
            return OK, partition.leo if faults.empty_produce_base_is_leo else 0
        for batch in batches:
            if batch.compression > MAX_COMPRESSION:
                if faults.compression_error_wrong or self._in_stream:
                    return ErrorCode.plain(ErrorCode.STORAGE_ERROR), 0
                return ErrorCode.plain(ErrorCode.COMPRESSION_ERROR), 0
        # variant: the SPU's path (A7), stored with the CRC recomputed; the fault crc-unchecked overrides it
        if self.variants.crc_recomputed and not faults.crc_unchecked:
            batches = [b if b.computed_crc() == b.crc else b.crc_recomputed() for b in batches]
        if not faults.crc_unchecked:
            for batch in batches:
                actual = batch.computed_crc()
                if actual != batch.crc:
                    return ErrorCode.other(f"batch CRC {batch.crc:#010x} does not match its bytes "
                                           f"(CRC-32C {actual:#010x})"), 0
        for batch in batches:
            size = batch.write_size
            if faults.too_large_records_only:
                size -= batch.records_start  # fault: the records' bytes only, not 12 + 45 + records
            if size > self.max_request_size:
                return ErrorCode.plain(ErrorCode.MESSAGE_TOO_LARGE), 0
        if partition.short_circuited:
            return ErrorCode.plain(ErrorCode.PARTITION_SHORT_CIRCUITED), 0
        if any(b.last_offset_delta < 0 for b in batches):
            if faults.negative_delta_short_circuits:
                partition.short_circuited = True  # fault: the SPU's own path (A14), 73 until restart
            if self.variants.negative_delta_other_code:  # variant: D8 permits another error code
                return ErrorCode.other("EmptyBatch: a batch with last_offset_delta < 0 among real batches"), 0
            return ErrorCode.plain(ErrorCode.STORAGE_ERROR), 0  # D5: EmptyBatch, without the short-circuit
        if not self.storage.has_room(sum(b.write_size for b in batches)):
            return ErrorCode.partition_full(topic, data.index), 0  # storage.py: the broker-wide memory budget
        base = partition.leo
        try:
            for batch in batches:
                self.storage.append(partition, self._rewritten(batch).stored(partition.leo), self._records_of(batch))
        except OSError as exc:  # durable mode: the disk refused the write (nothing acknowledged)
            log.error("fluvio %s-%d: cannot write: %s", topic, data.index, exc)
            return ErrorCode.plain(ErrorCode.STORAGE_ERROR), 0
        if faults.produce_base_offset_wrong:
            base = partition.leo
        return OK, base

    def _rewritten(self, batch: Batch) -> Batch:
        """The batch as three faults re-encode it before storage (unchanged without them)."""
        if self.faults.compression_recompressed and batch.compression == GZIP:
            batch = batch.recompressed()
        if self.faults.record_count_rewritten:
            batch = batch.count_rewritten()
        if self.faults.schema_id_dropped:
            batch = batch.schema_dropped()
        return batch

    def _records_of(self, batch: Batch) -> int:
        if self.faults.offsets_follow_record_count:
            count = batch.record_count_field
            if count is not None and count > 0:
                return count
        return batch.record_total
