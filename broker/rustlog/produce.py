"""RustLog's Produce request: a batch of base64 records appended whole to one partition's log.

A handler family of the personality (server.py), registered by request kind in ``HANDLERS``.
"""

from __future__ import annotations

import asyncio
import binascii
import time

from wirecheck.broker.rustlog.durable import DurableLog
from wirecheck.broker.rustlog.log import PartitionLog
from wirecheck.broker.rustlog.lookups import Lookups
from wirecheck.broker.rustlog.wire import INVALID_REQUEST, RECORD_TOO_LARGE, RequestError

MAX_RECORDS = 1000  # seed §Produce Request: "records array <= 1000 elements per batch"
MAX_RECORD = 7_864_000  # decision D5: any stored record stays fetchable inside one MAX_FRAME response


def max_record_for(max_frame: int) -> int:
    """The largest decoded record whose Fetch response still fits in ``max_frame`` (D5)."""
    return max(0, min(MAX_RECORD, (max_frame - 424) // 4 * 3))


def now_micros() -> int:
    return time.time_ns() // 1000


class ProduceHandlers(Lookups):
    max_record: int

    async def produce(self, topic: str, partition: int, records: list[str]) -> bytes:
        """Checks run request-first, then the log: record count (400), topic name (400), each record's base64
        (400) and size (413), topic (404), partition (405). A batch is refused or appended whole."""
        limit = MAX_RECORDS + 1 if self.faults.record_limit_1001 else MAX_RECORDS
        if len(records) > limit:
            raise RequestError(INVALID_REQUEST, f"too many records: {len(records)} (max {MAX_RECORDS})",
                               {"record_count": len(records), "max_records": MAX_RECORDS})
        if not records and self.variants.empty_batch_rejected:
            raise RequestError(INVALID_REQUEST, "records must not be empty")  # D4: the other reading
        if self.variants.invalid_topic_404 and not self.name_ok(topic):
            raise self.not_found(topic)  # D4: an invalid name can never exist
        self.check_name(topic)
        payloads = []
        for index, text in enumerate(records):
            payloads.append(self._decode_record(index, text))
        del records
        if self.faults.produce_auto_creates_topic and topic not in self.store.topics:
            await self.store.create_topic(topic, 1)
        log_ = self.partition(topic, partition, missing_404=self.faults.partition_error_404)
        timestamp = now_micros() // 1000 if self.faults.timestamp_millis else now_micros()
        if self.faults.batch_not_atomic:
            base = await self._append_interleaving(log_, payloads, timestamp)
        else:
            async with log_.lock:
                base = await log_.append(payloads, timestamp)
        self.store.counters.messages_produced_total += len(payloads)
        self.store.counters.bytes_in_total += sum(map(len, payloads))
        if self.faults.produce_base_offset_off_by_one and payloads:
            base += 1
        return self.response("ProduceResponse", base_offset=base, record_count=len(payloads))

    def _decode_record(self, index: int, text: str) -> bytes:
        # D3: standard alphabet, '=' padding, nothing else. binascii's strict mode refuses whitespace, other
        # characters, missing or excess padding and data after padding (as base64.b64decode(validate=True)
        # plus a length % 4 check would, at a fraction of the cost).
        if self.faults.base64_whitespace_trimmed:
            text = text.strip()
        if not text and self.variants.empty_record_rejected:  # D3 leaves a zero-length record open
            raise RequestError(INVALID_REQUEST, f"record {index} is empty", {"record_index": index})
        try:
            if len(text) % 4:
                raise ValueError("length is not a multiple of 4")
            payload = binascii.a2b_base64(text, strict_mode=True)
        except (binascii.Error, ValueError) as exc:
            raise RequestError(INVALID_REQUEST, f"record {index} is not valid base64: {exc}",
                               {"record_index": index}) from None
        if len(payload) > self.max_record:
            raise RequestError(RECORD_TOO_LARGE, f"record {index} is {len(payload)} bytes (max {self.max_record})",
                               {"record_index": index, "size": len(payload), "max_record_size": self.max_record})
        return payload

    @staticmethod
    async def _append_interleaving(log_: PartitionLog | DurableLog, payloads: list[bytes], timestamp: int) -> int:
        """Fault batch-not-atomic: one record at a time, yielding in between, like upstream RustLog (H4)."""
        base = None
        for index, payload in enumerate(payloads):
            async with log_.lock:
                offset = await log_.append([payload], timestamp)
            base = offset if base is None else base
            # A real pause, not just a yield: a batch then spans several milliseconds, so a concurrent batch
            # whose last bytes are still on the way interleaves with it every time, not only by luck. Only a
            # yield after the first 100 records: a big batch pausing at each would outlast a client's deadline.
            await asyncio.sleep(0.0002 if index < 100 else 0)
        return log_.high_watermark if base is None else base


HANDLERS = {"Produce": ProduceHandlers.produce}
