"""RustLog's Fetch request: records from an offset, within max_bytes and one frame.

A handler family of the personality (server.py), registered by request kind in ``HANDLERS``.
"""

from __future__ import annotations

from wirecheck.broker.rustlog.fetch_answer import FetchAnswer, empty_answer
from wirecheck.broker.rustlog.lookups import Lookups
from wirecheck.broker.rustlog.wire import OFFSET_OUT_OF_RANGE, PARTITION_NOT_FOUND, RequestError


class FetchHandlers(Lookups):
    max_frame: int

    async def fetch(self, group_id: str, topic: str, partition: int, offset: int, max_bytes: int) -> bytes:
        found = self.store.topics.get(topic)
        if self.faults.fetch_unknown_topic_405 and found is None and self.name_ok(topic):  # one lookup for both
            raise RequestError(PARTITION_NOT_FOUND, f"Partition {partition} of '{topic}' not found")
        if self.faults.fetch_missing_partition_empty and found and partition >= len(found.partitions):
            return empty_answer(offset)  # a missing log read as an empty one
        log_ = self.partition(topic, partition)
        if self.faults.fetch_uses_group_offset:
            offset = self.store.commits.get(self.commit_key(group_id, topic, partition), offset)
        high_watermark, log_start = log_.high_watermark, log_.log_start_offset
        beyond_is_error = self.faults.beyond_hw_416 and offset > high_watermark
        if self.faults.below_log_start_served:
            offset = max(offset, log_start)
        if offset < log_start or beyond_is_error:
            raise RequestError(OFFSET_OUT_OF_RANGE, f"Offset {offset} out of range",
                               {"valid_range": {"start": log_start, "end": high_watermark},
                                "high_watermark": high_watermark})
        last, payload_bytes, budget = None, 0, 0
        answer = FetchAnswer(None if self.faults.fetch_exceeds_frame else self.max_frame,
                             urlsafe=self.faults.payload_base64url)
        # D6 variants: the budget counts 12 + payload bytes (upstream's on-disk header); max_bytes 0 is one record
        header_cost = 12 if self.variants.max_bytes_with_header else 0
        if (max_bytes > 0 or self.variants.max_bytes_zero_one_record) and offset < high_watermark:
            for record_offset, timestamp, payload in log_.read(offset):
                if answer.count and budget + header_cost + len(payload) > max_bytes:
                    break
                if not answer.add(record_offset, timestamp, payload):
                    break  # D6: never send a frame over MAX_FRAME
                payload_bytes += len(payload)
                budget += header_cost + len(payload)
                last = record_offset
        if last is None:
            next_offset = offset  # empty: at or beyond the high watermark, or nothing fits
            if self.faults.at_hw_next_offset_zero and offset == high_watermark:
                next_offset = 0
            if self.variants.beyond_hw_next_offset_hw and offset > high_watermark:
                next_offset = high_watermark  # D7: the old doc's log end, also permitted
        else:
            next_offset = last if self.faults.next_offset_off_by_one else last + 1
        self.store.counters.messages_fetched_total += answer.count
        self.store.counters.bytes_out_total += payload_bytes
        return answer.finish(next_offset)


HANDLERS = {"Fetch": FetchHandlers.fetch}
