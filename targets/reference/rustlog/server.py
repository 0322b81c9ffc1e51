"""The RustLog personality: the per-connection loop and one handler per request type.

Connection model (decision D13): frames on a connection are read, handled and answered strictly one at a time,
so pipelined requests are answered in order. A framing violation (zero length, over MAX_FRAME, invalid UTF-8,
malformed JSON) is answered with an Error best effort and ends the connection; an invalid request is answered
with Error 400 and the connection stays open; an unexpected exception in a handler is answered with 500 and the
connection stays open.
"""

from __future__ import annotations

import asyncio
import binascii
import errno
import logging
import os
import time

from wirecheck.targets.reference.core import BrokerConfig, Connection, IdleTimeout
from wirecheck.targets.reference.framed import BadLength, FrameShape, serve_frames
from wirecheck.targets.reference.rustlog.durable import DurableLog
from wirecheck.targets.reference.rustlog.faults import FAULTS, VARIANTS
from wirecheck.targets.reference.rustlog.fetch_answer import FetchAnswer, empty_answer
from wirecheck.targets.reference.rustlog.log import PartitionLog
from wirecheck.targets.reference.rustlog.schema import TOPIC_NAME, UnknownType, parse_request
from wirecheck.targets.reference.rustlog.store import Store, Topic
from wirecheck.targets.reference.rustlog.wire import (
    INSUFFICIENT_SPACE, INTERNAL_SERVER_ERROR, INVALID_REQUEST, LENGTH, MAX_FRAME, OFFSET_OUT_OF_RANGE,
    PARTITION_NOT_FOUND, RECORD_TOO_LARGE, STORAGE_ERROR, TOPIC_NOT_FOUND, Encoder, RequestError, TooDeep,
    decode_text, parse_json,
)

log = logging.getLogger("wirecheck.broker.rustlog")

MAX_RECORDS = 1000  # seed §Produce Request: "records array <= 1000 elements per batch"
MAX_PARTITIONS = 1000  # seed §Create Topic Request: "1-1000 partitions"
MAX_RECORD = 7_864_000  # decision D5: any stored record stays fetchable inside one MAX_FRAME response
AVAILABLE_TOPICS_SHOWN = 100  # 404 details list at most this many names (bounded response)
PIPELINE_QUEUE = 16  # fault pipeline-queue-drops: frames waiting for the handler


def max_record_for(max_frame: int) -> int:
    """The largest decoded record whose Fetch response still fits in ``max_frame`` (D5)."""
    return max(0, min(MAX_RECORD, (max_frame - 424) // 4 * 3))


def now_micros() -> int:
    return time.time_ns() // 1000


class RustLogPersonality:
    name = "rustlog"

    def __init__(self, config: BrokerConfig):
        self.fault = config.faults_of(self.name, FAULTS)
        self.variants = config.variants_of(self.name, VARIANTS)
        self.max_frame = config.max_frame or MAX_FRAME
        self.max_record = max_record_for(self.max_frame)
        # MIN_FRAME_SIZE is 1; under max-frame-rejected a frame of exactly MAX_FRAME is refused too.
        accepted = self.max_frame - 1 if "max-frame-rejected" in self.fault else self.max_frame
        self.frame_shape = FrameShape(header_size=LENGTH.size, length_at=0, length_format=LENGTH.format,
                                      min_length=1, max_length=accepted)
        self.encoder = Encoder(self.fault, empty_details="details-empty-object" in self.variants)
        if "record-limit-10mb" in self.variants:
            self.max_record = 10 * 1024 * 1024  # the seed's literal limit: whatever fits in a frame is accepted
        self.store = Store(
            config.data_dir if config.data_dir is None else config.data_dir / "rustlog",
            segment_records=config.segment_records,
            retention_records=config.retention_records,
            fsync=config.fsync != "none",
            cache_bytes=config.cache_bytes,
        )
        self.active_connections = 0
        self.header_lock = asyncio.Lock()  # fault header-read-global-lock
        self.handlers = {
            "Produce": self.produce, "Fetch": self.fetch, "OffsetCommit": self.offset_commit,
            "OffsetFetch": self.offset_fetch, "CreateTopic": self.create_topic, "ListTopics": self.list_topics,
            "DescribeTopic": self.describe_topic, "DescribePartition": self.describe_partition,
            "MetricsFetch": self.metrics_fetch, "Ping": self.ping,
        }

    # -- connection loop --------------------------------------------------------------------------------------
    async def serve(self, conn: Connection) -> None:
        self.active_connections += 1
        try:
            if "pipeline-queue-drops" in self.fault:
                await self._serve_queued(conn)
            elif self.fault & {"split-header-misread", "header-read-global-lock"}:
                await self._serve_naive_header(conn)
            else:
                await serve_frames(conn, self.frame_shape, lambda header, body: self._handle(conn, body),
                                   lambda length: self._bad_length(conn, length))
        finally:
            self.active_connections -= 1

    async def _serve_naive_header(self, conn: Connection) -> None:
        """serve_frames with the length prefix read as two faults read it (one defect each; neither runs with
        the faults that skip or drain a bad length): split-header-misread takes it from one read, however few
        bytes that returned (a naive recv); header-read-global-lock reads it under one lock all connections
        share (a blocking read in a single-threaded loop), so a peer that stops inside a header stalls all."""
        while True:
            if "split-header-misread" in self.fault:
                async with asyncio.timeout(conn.idle_timeout):
                    header = await conn.reader.read(LENGTH.size)
                if not header:
                    return
                deadline = conn.frame_deadline()
            else:
                first = await conn.read_exactly(1)
                deadline = conn.frame_deadline()
                async with self.header_lock:
                    header = first + await conn.read_by(LENGTH.size - 1, deadline)
            length = int.from_bytes(header, "big")
            if not self.frame_shape.accepts(length):
                await self._bad_length(conn, length)
                return
            if not await self._handle(conn, await conn.read_by(length, deadline)):
                return

    async def _serve_queued(self, conn: Connection) -> None:
        """Fault pipeline-queue-drops: a handler task takes frames from a queue of PIPELINE_QUEUE, and a frame
        read while the queue is full is dropped (try_send on a bounded channel), so a long pipeline loses some."""
        queue: asyncio.Queue[bytes] = asyncio.Queue(PIPELINE_QUEUE)

        async def enqueue(header: bytes, body: bytes) -> bool:
            if not queue.full():
                queue.put_nowait(body)
            return True

        async def answer_all() -> None:
            try:
                while await self._handle(conn, await queue.get()):
                    pass
            except (ConnectionError, OSError, IdleTimeout):
                pass  # a failed write ends the connection, as in serve_frames
            finally:
                conn.writer.close()  # the handler ended the connection: the reader then meets its end

        worker = asyncio.create_task(answer_all())
        try:
            await serve_frames(conn, self.frame_shape, enqueue, lambda length: self._bad_length(conn, length))
        finally:
            worker.cancel()

    async def _bad_length(self, conn: Connection, length: int) -> BadLength:
        if length == 0:
            if "zero-length-ignored" in self.fault:
                return BadLength.SKIP
            if "zero-length-close-silent" in self.variants:
                return BadLength.CLOSE  # D1: the Error before the close is optional
            await self._fatal(conn, INVALID_REQUEST, "zero-length frame (MIN_FRAME_SIZE is 1)")
            return BadLength.CLOSE
        details = {"length": length, "max_frame": self.max_frame}
        message = f"frame too large: {length} bytes (max {self.max_frame})"
        if "oversize-kept-open" in self.fault:
            await self._send(conn, self.encoder.error(RECORD_TOO_LARGE, message, details))
            return BadLength.DRAIN
        if "oversize-close-silent" in self.variants:
            return BadLength.CLOSE  # D1: closing at once, no Error, is the other permitted outcome
        # D1: the body is never read (nor allocated); the Error may be lost to a RST, as the suite allows.
        await self._fatal(conn, RECORD_TOO_LARGE, message, details)
        return BadLength.CLOSE

    async def _handle(self, conn: Connection, body: bytes) -> bool:
        """Handle and answer one frame. False when the connection must end."""
        not_request = False  # well-formed JSON of the wrong shape (variant not-object-closes)
        try:
            # The frame's bytes are a temporary: freed once decoded, so peak memory stays near 2x the frame.
            text = decode_text(body, lenient_utf8="invalid-utf8-accepted" in self.fault,
                               keep_open_on_malformed="malformed-json-kept-open" in self.fault)
            del body
            obj = parse_json(text, keep_open_on_malformed="malformed-json-kept-open" in self.fault)
            del text
            not_request = not isinstance(obj, dict) or not isinstance(obj.get("type"), str)
            kind, fields = parse_request(obj, floats_ok="float-accepted" in self.fault,
                                         via_double="u64-via-double" in self.fault)
            del obj
            response = await self._dispatch(kind, fields)
        except RequestError as exc:
            if isinstance(exc, UnknownType) and "unknown-type-closes" in self.fault:
                return False
            if isinstance(exc, TooDeep) and "crash-on-deep-json" in self.fault:
                os._exit(70)
            if isinstance(exc, TooDeep) and "deep-json-silent" in self.fault:
                return True
            if exc.code == TOPIC_NOT_FOUND and "not-found-closes" in self.fault:
                exc.close = True
            if exc.close or (isinstance(exc, TooDeep) and "deep-nesting-closes" in self.variants) \
                    or (not_request and "not-object-closes" in self.variants):
                return await self._fatal(conn, exc.code, exc.message, exc.details)
            response = self.encoder.error(exc.code, exc.message, exc.details)
        await self._send(conn, response)
        return True

    async def _send(self, conn: Connection, payload: bytes) -> None:
        header = self.encoder.header(payload)
        if len(payload) < 1 << 16:
            data = header + payload  # one segment for the common small answer
        else:
            conn.writer.write(header)
            data = payload
        await conn.write(data)  # bounded by the idle timeout (core.Connection.write)

    async def _fatal(self, conn: Connection, code: int, message: str, details: dict | None = None) -> bool:
        try:
            await self._send(conn, self.encoder.error(code, message, details))
        except (ConnectionError, OSError):
            pass
        return False

    async def _dispatch(self, kind: str, fields: dict) -> bytes:
        try:
            return await self.handlers[kind](**fields)
        except RequestError:
            raise
        except OSError as exc:
            log.warning("storage error on %s: %s", kind, exc)
            if exc.errno == errno.ENOSPC:
                raise RequestError(INSUFFICIENT_SPACE, f"insufficient space: {exc.strerror}") from None
            raise RequestError(STORAGE_ERROR, f"storage error: {exc.strerror or exc}") from None
        except Exception as exc:  # a bug must cost one request, not the connection (decision: 500, stay open)
            log.exception("%s handler failed", kind)
            raise RequestError(INTERNAL_SERVER_ERROR, f"internal error: {type(exc).__name__}") from None

    def response(self, kind: str, **fields) -> bytes:
        return self.encoder.response({"type": kind, **fields})

    # -- lookups ----------------------------------------------------------------------------------------------
    @staticmethod
    def name_ok(name: str) -> bool:
        return TOPIC_NAME.fullmatch(name) is not None

    def check_name(self, name: str) -> None:
        if not self.name_ok(name):
            raise RequestError(INVALID_REQUEST, f"invalid topic name {name[:300]!r}: 1-255 characters of "
                               "[A-Za-z0-9_-]", {"topic": name[:300]})

    def topic(self, name: str) -> Topic:
        self.check_name(name)
        topic = self.store.topics.get(name)
        if topic is None:
            raise self.not_found(name)
        return topic

    def not_found(self, name: str) -> RequestError:
        available = sorted(self.store.topics)[:AVAILABLE_TOPICS_SHOWN]
        # available_topics is only the seed's example (SHOULD): the variant leaves details null
        details = None if "not-found-details-null" in self.variants else {"available_topics": available}
        return RequestError(TOPIC_NOT_FOUND, f"Topic '{name[:300]}' not found", details)  # an invalid name: any size

    def partition(self, name: str, partition: int, *, missing_404: bool = False) -> PartitionLog | DurableLog:
        topic = self.topic(name)
        if partition >= len(topic.partitions):
            code = TOPIC_NOT_FOUND if missing_404 else PARTITION_NOT_FOUND
            raise RequestError(code, f"Partition {partition} not found in topic '{name}'",
                               {"partition_count": len(topic.partitions)})
        return topic.partitions[partition]

    # -- data plane -------------------------------------------------------------------------------------------
    async def produce(self, topic: str, partition: int, records: list[str]) -> bytes:
        """Checks run request-first, then the log: record count (400), topic name (400), each record's base64
        (400) and size (413), topic (404), partition (405). A batch is refused or appended whole."""
        limit = MAX_RECORDS + 1 if "record-limit-1001" in self.fault else MAX_RECORDS
        if len(records) > limit:
            raise RequestError(INVALID_REQUEST, f"too many records: {len(records)} (max {MAX_RECORDS})",
                               {"record_count": len(records), "max_records": MAX_RECORDS})
        if not records and "empty-batch-rejected" in self.variants:
            raise RequestError(INVALID_REQUEST, "records must not be empty")  # D4: the other reading
        if "invalid-topic-404" in self.variants and not self.name_ok(topic):
            raise self.not_found(topic)  # D4: an invalid name can never exist
        self.check_name(topic)
        payloads = []
        for index, text in enumerate(records):
            payloads.append(self._decode_record(index, text))
        del records
        if "produce-auto-creates-topic" in self.fault and topic not in self.store.topics:
            await self.store.create_topic(topic, 1)
        log_ = self.partition(topic, partition, missing_404="partition-error-404" in self.fault)
        timestamp = now_micros() // 1000 if "timestamp-millis" in self.fault else now_micros()
        if "batch-not-atomic" in self.fault:
            base = await self._append_interleaving(log_, payloads, timestamp)
        else:
            async with log_.lock:
                base = await log_.append(payloads, timestamp)
        self.store.counters.messages_produced_total += len(payloads)
        self.store.counters.bytes_in_total += sum(map(len, payloads))
        if "produce-base-offset-off-by-one" in self.fault and payloads:
            base += 1
        return self.response("ProduceResponse", base_offset=base, record_count=len(payloads))

    def _decode_record(self, index: int, text: str) -> bytes:
        # D3: standard alphabet, '=' padding, nothing else. binascii's strict mode refuses whitespace, other
        # characters, missing or excess padding and data after padding (as base64.b64decode(validate=True)
        # plus a length % 4 check would, at a fraction of the cost).
        if "base64-whitespace-trimmed" in self.fault:
            text = text.strip()
        if not text and "empty-record-rejected" in self.variants:  # D3 leaves a zero-length record open
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

    async def fetch(self, group_id: str, topic: str, partition: int, offset: int, max_bytes: int) -> bytes:
        found = self.store.topics.get(topic)
        if "fetch-unknown-topic-405" in self.fault and found is None and self.name_ok(topic):  # one lookup for both
            raise RequestError(PARTITION_NOT_FOUND, f"Partition {partition} of '{topic}' not found")
        if "fetch-missing-partition-empty" in self.fault and found and partition >= len(found.partitions):
            return empty_answer(offset)  # a missing log read as an empty one
        log_ = self.partition(topic, partition)
        if "fetch-uses-group-offset" in self.fault:
            offset = self.store.commits.get(self.commit_key(group_id, topic, partition), offset)
        high_watermark, log_start = log_.high_watermark, log_.log_start_offset
        beyond_is_error = "beyond-hw-416" in self.fault and offset > high_watermark
        if "below-log-start-served" in self.fault:
            offset = max(offset, log_start)
        if offset < log_start or beyond_is_error:
            raise RequestError(OFFSET_OUT_OF_RANGE, f"Offset {offset} out of range",
                               {"valid_range": {"start": log_start, "end": high_watermark},
                                "high_watermark": high_watermark})
        last, payload_bytes, budget = None, 0, 0
        answer = FetchAnswer(None if "fetch-exceeds-frame" in self.fault else self.max_frame,
                             urlsafe="payload-base64url" in self.fault)
        # D6 variants: the budget counts 12 + payload bytes (upstream's on-disk header); max_bytes 0 is one record
        header_cost = 12 if "max-bytes-with-header" in self.variants else 0
        if (max_bytes > 0 or "max-bytes-zero-one-record" in self.variants) and offset < high_watermark:
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
            if "at-hw-next-offset-zero" in self.fault and offset == high_watermark:
                next_offset = 0
            if "beyond-hw-next-offset-hw" in self.variants and offset > high_watermark:
                next_offset = high_watermark  # D7: the old doc's log end, also permitted
        else:
            next_offset = last if "next-offset-off-by-one" in self.fault else last + 1
        self.store.counters.messages_fetched_total += answer.count
        self.store.counters.bytes_out_total += payload_bytes
        return answer.finish(next_offset)

    # -- consumer offsets -------------------------------------------------------------------------------------
    def commit_key(self, group: str, topic: str, partition: int) -> tuple:
        if "commit-groups-shared" in self.fault:
            return topic, partition
        if "commit-ignores-partition" in self.fault:
            return group, topic
        return group, topic, partition

    def partition_exists(self, topic: str, partition: int) -> bool:
        found = self.store.topics.get(topic) if self.name_ok(topic) else None
        return found is not None and partition < len(found.partitions)

    async def offset_commit(self, group: str, topic: str, partition: int, offset: int) -> bytes:
        # D9: an unknown (or invalid) topic or partition answers success false, not an Error. Commits beyond
        # the high watermark are accepted, as Kafka does.
        exists = self.partition_exists(topic, partition)
        if exists:
            self.store.commits[self.commit_key(group, topic, partition)] = offset
        success = exists or "commit-unknown-topic-succeeds" in self.fault
        return self.response("OffsetCommitResponse", success=success)

    async def offset_fetch(self, group: str, topic: str, partition: int) -> bytes:
        offset = self.store.commits.get(self.commit_key(group, topic, partition))
        if offset is None and "offset-fetch-zero" in self.fault:
            offset = 0
        return self.response("OffsetFetchResponse", offset=offset)

    # -- admin ------------------------------------------------------------------------------------------------
    async def create_topic(self, topic: str, partition_count: int) -> bytes:
        if "topic-name-unchecked" not in self.fault:
            self.check_name(topic)
        elif not 0 < len(topic) <= 65535:  # the fault checks only that a name is there (and bounded)
            raise RequestError(INVALID_REQUEST, "topic name empty or too long")
        # The fault still keeps a bound, so that it cannot exhaust memory (it only has to accept 1001).
        limit = 10_000 if "partition-count-unbounded" in self.fault else MAX_PARTITIONS
        if not 1 <= partition_count <= limit:
            raise RequestError(INVALID_REQUEST, f"partition_count {partition_count} not in 1..{MAX_PARTITIONS}",
                               {"partition_count": partition_count})
        created = await self.store.create_topic(topic, partition_count)
        if created is None and "create-existing-succeeds" in self.fault:
            return self.response("CreateTopicResponse", success=True, partitions_created=partition_count)
        if created is None and "create-existing-false" in self.variants:
            return self.response("CreateTopicResponse", success=False, partitions_created=0)
        if created is None:
            # The seed has no code for an existing topic; we answer 400 naming it (the suite accepts an Error
            # or success:false).
            existing = len(self.store.topics[topic].partitions)
            raise RequestError(INVALID_REQUEST, f"Topic '{topic}' already exists",
                               {"topic": topic, "partition_count": existing})
        created = 1 if "partitions-created-counts-topics" in self.fault else partition_count
        return self.response("CreateTopicResponse", success=True, partitions_created=created)

    async def list_topics(self) -> bytes:
        topics = [{"name": name, "partition_count": len(self.store.topics[name].partitions)}
                  for name in (self.store.topics if "list-creation-order" in self.variants
                               else sorted(self.store.topics))
                  if "list-skips-empty-topics" not in self.fault
                  or any(log_.high_watermark for log_ in self.store.topics[name].partitions)]
        return self.response("ListTopicsResponse", topics=topics)

    def describe(self, index: int, log_: PartitionLog | DurableLog) -> dict:
        segments = log_.segment_count
        if "segment-count-zero-when-empty" in self.fault and log_.high_watermark == log_.log_start_offset:
            segments = 0
        return {"partition": index, "high_watermark": log_.high_watermark,
                "log_start_offset": log_.log_start_offset, "segment_count": segments}

    async def describe_topic(self, topic: str) -> bytes:
        if "describe-unknown-400" in self.fault and topic not in self.store.topics:
            raise RequestError(INVALID_REQUEST, f"Topic '{topic}' not found")
        found = self.topic(topic)
        partitions = [self.describe(i, log_) for i, log_ in enumerate(found.partitions)]
        return self.response("DescribeTopicResponse", topic=topic, partitions=partitions)

    async def describe_partition(self, topic: str, partition: int) -> bytes:
        log_ = self.partition(topic, partition)
        if "describe-partition-minimal" in self.variants:  # D10: the upstream code's fields only (notes §1.2)
            return self.response("DescribePartitionResponse", topic=topic, partition=partition,
                                 high_watermark=log_.high_watermark)
        return self.response("DescribePartitionResponse", topic=topic, **self.describe(partition, log_))

    async def metrics_fetch(self) -> bytes:
        counters = self.store.counters
        metrics = {
            "messages_produced_total": counters.messages_produced_total,
            "messages_fetched_total": counters.messages_fetched_total,
            "bytes_in_total": counters.bytes_in_total,
            "bytes_out_total": counters.bytes_out_total,
            "active_connections": self.active_connections,
            "topics": len(self.store.topics),
            "partitions": self.store.partition_total,
        }
        if "metrics-other-counters" in self.variants:  # D10 names its counters only "for example"
            metrics = {"records_produced": counters.messages_produced_total,
                       "records_fetched": counters.messages_fetched_total, "bytes_in": counters.bytes_in_total,
                       "bytes_out": counters.bytes_out_total, "connections": self.active_connections,
                       "topic_count": len(self.store.topics), "partition_count": self.store.partition_total}
        return self.response("MetricsFetchResponse", metrics=metrics)

    async def ping(self) -> bytes:
        return self.response("PingResponse" if "pong-wrong-type" in self.fault else "Pong")

    async def close(self) -> None:
        """Nothing buffered: every acknowledged batch was written (and by policy fsynced) before its answer; this
        only closes the partition files."""
        self.store.close()
