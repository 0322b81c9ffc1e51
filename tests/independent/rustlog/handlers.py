"""Request handlers: one coroutine per request type.  Each takes the decoded
request object and returns the response object (a dict with "type"), or
raises RequestError for an Error response."""

from __future__ import annotations

import asyncio

from .defects import Defects
from .protocol import (
    MAX_FRAME_SIZE,
    MAX_PARTITIONS,
    MAX_RECORD_BYTES,
    MAX_RECORDS_PER_BATCH,
    MIN_PARTITIONS,
    U64_MAX,
    Code,
    RequestError,
    UnknownType,
    decode_record,
    encode_b64,
    get_list,
    get_str,
    get_topic,
    get_u32,
    get_u64,
    short,
)
from .storage import Partition, Store, now_micros

# Room kept in a FetchResponse for everything that is not a record.
_FETCH_ENVELOPE = 128
# Per-record JSON overhead: {"offset":<=20 digits,"timestamp":<=20,"payload":""},
_RECORD_OVERHEAD = 80
# At most this many topic names are listed in a 404's details.
_MAX_LISTED_TOPICS = 100


class Handlers:
    def __init__(self, store: Store, defects: Defects):
        self.store = store
        self.defects = defects
        self.table = {
            "Produce": self.produce,
            "Fetch": self.fetch,
            "OffsetCommit": self.offset_commit,
            "OffsetFetch": self.offset_fetch,
            "CreateTopic": self.create_topic,
            "ListTopics": self.list_topics,
            "DescribeTopic": self.describe_topic,
            "DescribePartition": self.describe_partition,
            "MetricsFetch": self.metrics_fetch,
            "Ping": self.ping,
        }

    async def dispatch(self, request) -> dict:
        if not isinstance(request, dict):
            raise RequestError(Code.INVALID_REQUEST, "top-level JSON value must be an object")
        if "type" not in request:
            raise RequestError(Code.INVALID_REQUEST, "missing field 'type'")
        kind = request["type"]
        if not isinstance(kind, str):
            raise RequestError(Code.INVALID_REQUEST, "field 'type' must be a string")
        handler = self.table.get(kind)
        if handler is None:
            raise UnknownType(Code.INVALID_REQUEST, f"unknown request type {short(kind)!r}")
        return await handler(request)

    # --- lookups shared by several requests --------------------------------
    def _topic_not_found(self, topic: str) -> RequestError:
        names = sorted(self.store.topics)[:_MAX_LISTED_TOPICS]
        details = None if self.defects.on("topic-not-found-no-details") else {"available_topics": names}
        return RequestError(Code.TOPIC_NOT_FOUND, f"Topic '{topic}' not found", details)

    def _partition(self, topic: str, index: int, *, missing_topic_code=Code.TOPIC_NOT_FOUND,
                   missing_partition_code=Code.PARTITION_NOT_FOUND) -> Partition:
        t = self.store.topics.get(topic)
        if t is None:
            err = self._topic_not_found(topic)
            err.code = missing_topic_code
            raise err
        if index >= len(t.partitions):
            raise RequestError(
                missing_partition_code,
                f"Partition {index} not found in topic '{topic}'",
                {"partition_count": len(t.partitions)},
            )
        return t.partitions[index]

    # --- Core data operations ----------------------------------------------
    async def produce(self, req: dict) -> dict:
        topic = get_topic(req)
        index = get_u32(req, "partition")
        records = get_list(req, "records")
        one_by_one = self.defects.on("produce-non-atomic-batch")
        # Decode stage: every record must be a base64 string (400) before any
        # business rule is looked at (the document's "type safety" design).
        decoded = [] if one_by_one else [decode_record(i, v) for i, v in enumerate(records)]
        partition = self._partition(
            topic,
            index,
            missing_topic_code=Code.INVALID_REQUEST if self.defects.on("produce-unknown-topic-400")
            else Code.TOPIC_NOT_FOUND,
            missing_partition_code=Code.TOPIC_NOT_FOUND if self.defects.on("produce-missing-partition-404")
            else Code.PARTITION_NOT_FOUND,
        )
        if len(records) > MAX_RECORDS_PER_BATCH and not self.defects.on("produce-ignores-batch-limit"):
            raise RequestError(
                Code.INVALID_REQUEST,
                f"batch of {len(records)} records exceeds {MAX_RECORDS_PER_BATCH}",
            )
        if one_by_one:
            return await self._produce_one_by_one(partition, records)

        # Validate the whole batch before appending anything: a batch is atomic.
        size = 0
        for i, raw in enumerate(decoded):
            if len(raw) > MAX_RECORD_BYTES:
                raise RequestError(
                    Code.RECORD_TOO_LARGE,
                    f"records[{i}] is {len(raw)} bytes; the limit is {MAX_RECORD_BYTES}",
                    {"max_record_bytes": MAX_RECORD_BYTES, "index": i},
                )
            size += len(raw)
        self._reserve(size)

        base = partition.high_watermark
        stamp = now_micros()
        if self.defects.on("produce-drops-last-record") and decoded:
            stored = decoded[:-1]
        else:
            stored = decoded
        for raw in stored:  # no await inside: no other request can interleave
            partition.append(raw, encode_b64(raw), stamp)
        self.store.metrics.messages_produced_total += len(stored)
        self.store.metrics.bytes_in_total += size
        if self.defects.on("produce-base-offset-plus-one"):
            base += 1
        return {"type": "ProduceResponse", "base_offset": base, "record_count": len(decoded)}

    async def _produce_one_by_one(self, partition: Partition, records: list) -> dict:
        """The "produce-non-atomic-batch" defect: validate while appending and
        let other connections run between appends."""
        base = None
        for i, value in enumerate(records):
            raw = decode_record(i, value)  # may raise after earlier appends
            if len(raw) > MAX_RECORD_BYTES:
                raise RequestError(Code.RECORD_TOO_LARGE, f"records[{i}] too large")
            self._reserve(len(raw))
            offset = partition.append(raw, encode_b64(raw), now_micros())
            base = offset if base is None else base
            await asyncio.sleep(0)
        if base is None:
            base = partition.high_watermark
        return {"type": "ProduceResponse", "base_offset": base, "record_count": len(records)}

    def _reserve(self, size: int) -> None:
        store = self.store
        if store.stored_bytes + size > store.storage_limit:
            raise RequestError(
                Code.INSUFFICIENT_SPACE,
                "broker storage limit reached",
                {"stored_bytes": store.stored_bytes, "limit": store.storage_limit},
            )
        store.stored_bytes += size

    async def fetch(self, req: dict) -> dict:
        get_str(req, "group_id")  # required; for metrics only, never picks the offset
        topic = get_topic(req)
        index = get_u32(req, "partition")
        offset = get_u64(req, "offset")
        max_bytes = get_u64(req, "max_bytes")  # usize: 64-bit
        partition = self._partition(topic, index)

        hw = partition.high_watermark
        start = partition.log_start_offset
        if offset < start or (offset > hw and self.defects.on("fetch-beyond-hw-416")):
            raise RequestError(
                Code.OFFSET_OUT_OF_RANGE,
                f"Offset {offset} out of range",
                {"valid_range": {"start": start, "end": hw}, "high_watermark": hw},
            )
        if self.defects.on("fetch-skips-requested-offset"):
            offset += 1

        if self.defects.on("fetch-max-bytes-ignored") and max_bytes > 0:
            max_bytes = U64_MAX
        frame_cap = U64_MAX if self.defects.on("fetch-exceeds-frame-limit") else MAX_FRAME_SIZE
        chosen = []
        payload_bytes = 0
        frame_bytes = _FETCH_ENVELOPE
        if max_bytes > 0:
            for record in partition.read_from(offset):
                size = len(record.payload)
                encoded = len(record.b64) + _RECORD_OVERHEAD
                # max_bytes is soft: the first record is always returned.
                if chosen and payload_bytes + size > max_bytes:
                    break
                # The encoded response must always fit in one frame (hard).
                if frame_bytes + encoded > frame_cap:
                    break
                chosen.append(record)
                payload_bytes += size
                frame_bytes += encoded

        millis = self.defects.on("fetch-timestamp-millis")
        urlsafe = self.defects.on("fetch-payload-urlsafe")
        out = [
            {
                "offset": r.offset,
                "timestamp": r.timestamp // 1000 if millis else r.timestamp,
                "payload": r.b64.replace("+", "-").replace("/", "_") if urlsafe else r.b64,
            }
            for r in chosen
        ]
        if chosen:
            next_offset = chosen[-1].offset + 1
            if self.defects.on("fetch-next-offset-is-last"):
                next_offset -= 1
        else:
            next_offset = offset  # DECISION: nothing returned -> ask again from here
        if self.defects.on("fetch-reverse-order"):
            out.reverse()
        self.store.metrics.messages_fetched_total += len(out)
        self.store.metrics.bytes_out_total += payload_bytes
        return {"type": "FetchResponse", "records": out, "next_offset": next_offset}

    # --- Consumer group operations -----------------------------------------
    def _commit_key(self, group: str, topic: str, index: int):
        if self.defects.on("commit-groups-shared"):
            group = ""
        return (group, topic, index)

    async def offset_commit(self, req: dict) -> dict:
        group = get_str(req, "group")
        topic = get_topic(req)
        index = get_u32(req, "partition")
        offset = get_u64(req, "offset")
        exists = self.store.partition(topic, index) is not None
        if not exists and not self.defects.on("commit-unknown-topic-succeeds"):
            return {"type": "OffsetCommitResponse", "success": False}
        if not self.defects.on("commit-not-stored"):
            self.store.commits[self._commit_key(group, topic, index)] = offset
        return {"type": "OffsetCommitResponse", "success": True}

    async def offset_fetch(self, req: dict) -> dict:
        group = get_str(req, "group")
        topic = get_topic(req)
        index = get_u32(req, "partition")
        offset = self.store.commits.get(self._commit_key(group, topic, index))
        if offset is None and self.defects.on("offset-fetch-zero-not-null"):
            offset = 0
        return {"type": "OffsetFetchResponse", "offset": offset}

    # --- Admin control plane -----------------------------------------------
    async def create_topic(self, req: dict) -> dict:
        any_name = self.defects.on("create-accepts-any-name")
        topic = get_topic(req, validate=not any_name)
        if any_name and not topic:
            raise RequestError(Code.INVALID_REQUEST, "empty topic name")
        count = get_u32(req, "partition_count")
        if not MIN_PARTITIONS <= count <= MAX_PARTITIONS:
            if self.defects.on("create-accepts-bad-partition-count"):
                count = min(count, MAX_PARTITIONS + 1)
            else:
                raise RequestError(
                    Code.INVALID_REQUEST,
                    f"partition_count {count} outside {MIN_PARTITIONS}-{MAX_PARTITIONS}",
                )
        old = self.store.topics.get(topic)
        if old is not None:
            if not self.defects.on("create-duplicate-resets-topic"):
                # DECISION: an existing topic is success:false, not an Error.
                return {"type": "CreateTopicResponse", "success": False, "partitions_created": 0}
            self.store.stored_bytes -= sum(len(r.payload) for p in old.partitions for r in p.records)
        self.store.create_topic(topic, count)
        return {"type": "CreateTopicResponse", "success": True, "partitions_created": count}

    async def list_topics(self, req: dict) -> dict:
        topics = [
            {"name": t.name, "partition_count": len(t.partitions)}
            for t in sorted(self.store.topics.values(), key=lambda t: t.name)
        ]
        return {"type": "ListTopicsResponse", "topics": topics}

    def _describe(self, p: Partition) -> dict:
        hw = 0 if self.defects.on("describe-stale-high-watermark") else p.high_watermark
        return {
            "partition": p.index,
            "high_watermark": hw,
            "log_start_offset": p.log_start_offset,
            "segment_count": p.segment_count,
        }

    async def describe_topic(self, req: dict) -> dict:
        topic = get_topic(req)
        t = self.store.topics.get(topic)
        if t is None:
            raise self._topic_not_found(topic)
        return {
            "type": "DescribeTopicResponse",
            "topic": t.name,
            "partitions": [self._describe(p) for p in t.partitions],
        }

    async def describe_partition(self, req: dict) -> dict:
        topic = get_topic(req)
        index = get_u32(req, "partition")
        p = self._partition(topic, index)
        return {"type": "DescribePartitionResponse", "topic": topic, **self._describe(p)}

    async def metrics_fetch(self, req: dict) -> dict:
        return {"type": "MetricsFetchResponse", **self.store.metrics.snapshot()}

    async def ping(self, req: dict) -> dict:
        return {"type": "PingResponse" if self.defects.on("pong-wrong-type") else "Pong"}
