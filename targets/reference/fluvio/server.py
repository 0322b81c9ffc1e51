"""The Fluvio SPU personality: framing, request headers, dispatch, and the handlers of the public APIs.

Connection rules (notes §2, §7; decisions marked D are implementation-defined, the SPU takes another path):
- Every frame is ``i32 size`` + ``size`` bytes (read by framed.serve_frames). D1: a size below 10 (the
  smallest header: api_key, api_version, correlation_id, empty client_id) or above the frame limit (64 MiB,
  §12; ``--max-frame``) closes the connection before any body byte is read. The SPU has no limit, panics on
  sizes -4..-1 and waits for ever on smaller ones (§7).
- Unknown api keys (including 2000, which this broker does not implement, and the server-to-client key 1001)
  close the connection without a response, as the SPU does for unknown keys (A16).
- D2: a version outside the accepted range closes the connection without a response; the SPU decodes any
  version (A16). ApiVersions is not advertised (as on the SPU, §3.2) and is accepted at every version; the
  consumer-offset keys 1006-1008 are accepted at 23..25 and not advertised, as on the SPU.
- Consumer offsets (1006-1008, §5.6): UpdateConsumerOffset names a stream of this connection (its session_id)
  opened with a consumer_id; an unknown session gets FetchSessionNotFoud (3002) as UpdateOffsets does, a stream
  without consumer id gets Other. Offsets are kept by (topic, partition, consumer id), in memory or, with
  ``--data-dir``, in a file rewritten after each change (storage.py); the system
  topic "consumer-offset" exists (one partition) so that clients find its leader through the SC, as they do
  upstream, but the offsets are not written into it.
- A body that does not decode closes the connection without a response (§7).
- Requests are handled one at a time, so responses leave in request order (§2.4); StreamFetch responses are
  pushed by a task per stream and may interleave with them (one lock keeps frames whole).
- D8: a connection that sends nothing for the idle timeout (``--idle-timeout``, 30 s) is closed, even with
  open streams; the SPU has no read timeout (§7). A consumer keeps its streams by sending UpdateOffsets.
Produce per partition entry, in this order (notes §4.4):
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
import contextlib
import logging
import struct
import time

from wirecheck.targets.reference.core import BrokerConfig, Connection, IdleTimeout
from wirecheck.targets.reference.framed import BadLength, FrameShape, serve_frames
from wirecheck.targets.reference.fluvio import messages
from wirecheck.targets.reference.fluvio.sc import ScServer
from wirecheck.targets.reference.fluvio.faults import FAULTS, VARIANTS
from wirecheck.targets.reference.fluvio.options import FluvioOptions
from wirecheck.targets.reference.fluvio.records import Batch, GZIP, MAX_COMPRESSION
from wirecheck.targets.reference.fluvio.storage import Partition, Storage
from wirecheck.targets.reference.fluvio.wire import OK, ErrorCode, LossyReader, Malformed, Reader

log = logging.getLogger("wirecheck.broker.fluvio")

DEFAULT_MAX_FRAME = 64 << 20  # §12: "cap the frame size (e.g. 64 MiB)"
MIN_FRAME = 10  # api_key u16 + api_version i16 + correlation_id i32 + client_id length i16
MAX_STREAMS = 64  # D6: open StreamFetch streams per connection; one more closes the connection
PLATFORM_VERSION = "0.0.0"  # the SPU never sets it (§3.2, A18)

PRODUCE, FETCH, API_VERSIONS = 0, 1, 18
FETCH_OFFSETS, STREAM_FETCH, UPDATE_OFFSETS = 1002, 1003, 1005
UPDATE_CONSUMER_OFFSET, DELETE_CONSUMER_OFFSET, FETCH_CONSUMER_OFFSETS = 1006, 1007, 1008
CONSUMER_OFFSET_VERSIONS = (23, 25)  # MIN = 23 (OFFSET_MANAGEMENT_API), DEFAULT = 25 (§3.1)
CONSUMER_OFFSET_TOPIC = "consumer-offset"  # the SPU keeps consumer offsets in this system topic's partition 0 (§5.6)
STREAM_FETCH_LEGACY_MAX = 15  # advertised to clients that send no client_version (<= 0.9.12), §3.1

#: (api key, min, max) advertised, in the SPU's order (§3.2, SPU/services/public/api_versions.rs). FetchOffsets:
#: the SPU lists (25, 25) but decodes any version, and released clients (the fluvio 0.21 Python binding) send
#: v24; v23-v24 share v25's layout (consumer_id is v23-only), so this broker lists what it accepts, 23..25.
ADVERTISED = [(PRODUCE, 0, 25), (FETCH, 0, 25), (FETCH_OFFSETS, 23, 25), (STREAM_FETCH, 0, 25),
              (UPDATE_OFFSETS, 0, 0)]
#: accepted but not listed, as on the SPU (§3.1: the consumer-offset keys are "not listed")
UNLISTED = {UPDATE_CONSUMER_OFFSET: CONSUMER_OFFSET_VERSIONS, DELETE_CONSUMER_OFFSET: CONSUMER_OFFSET_VERSIONS,
            FETCH_CONSUMER_OFFSETS: CONSUMER_OFFSET_VERSIONS}

_SIZE = struct.Struct(">i")


class Wedged(Exception):
    """Raised only under the crash-on-huge-record-count fault."""


class Stream:
    """One StreamFetch session: where the client wants records from next, and whether it has acknowledged."""

    def __init__(self, stream_id: int, request: messages.StreamFetchRequest, version: int, correlation_id: int,
                 partition: Partition):
        self.id = stream_id
        self.request = request
        self.version = version
        self.correlation_id = correlation_id
        self.partition = partition
        self.position: int | None = request.fetch_offset  # None: waiting for the client's UpdateOffsets
        self.wake = asyncio.Event()
        self.pushed = asyncio.Event()  # set once the stream has sent an answer
        self.task: asyncio.Task | None = None


class ConnectionState:
    def __init__(self, conn: Connection, u16_sizes: bool = False):
        self.conn = conn
        self.u16_sizes = u16_sizes  # fault response-size-u16
        self.write_lock = asyncio.Lock()
        self.streams: dict[int, Stream] = {}
        self.stream_sequence = 0
        self.late: set[asyncio.Task] = set()  # fault fetch-offsets-overtaken: answers still to be sent

    async def send(self, correlation_id: int, body: bytes) -> None:
        size = len(body) + 4
        if self.u16_sizes:
            size &= 0xFFFF  # fault: the size written through a 16-bit field
        async with self.write_lock:
            await self.conn.write(_SIZE.pack(size) + _SIZE.pack(correlation_id) + body)


class FaultyReads:
    """A connection whose frame reads two faults break. partial-size-prefix: the size prefix's last three bytes
    are whatever one read returns (an unlooped recv()). reads-serialised: one broker-wide lock is held while a
    started frame arrives, so a peer stalled mid-frame stalls the frames of every other connection."""

    def __init__(self, conn: Connection, active: frozenset[str], lock: asyncio.Lock):
        self._conn, self._active, self._lock = conn, active, lock

    def __getattr__(self, name: str):
        return getattr(self._conn, name)

    async def read_by(self, n: int, deadline: float) -> bytes:
        if n == 3 and "partial-size-prefix" in self._active:  # serve_frames reads 1 size byte, then these 3
            return await self._conn.reader.read(n)
        if "reads-serialised" in self._active:
            async with self._lock:
                return await self._conn.read_by(n, deadline)
        return await self._conn.read_by(n, deadline)


class FluvioPersonality:
    name = "fluvio"

    def __init__(self, config: BrokerConfig, options: FluvioOptions):
        self.active = config.faults_of(self.name, FAULTS)
        self.variants = config.variants_of(self.name, VARIANTS)  # other permitted readings (faults.py)
        self.max_frame = config.max_frame or DEFAULT_MAX_FRAME
        self.frame_shape = FrameShape(header_size=4, length_at=0, length_format=">i", min_length=MIN_FRAME,
                                      max_length=self.max_frame)
        self.max_request_size = options.max_request_size
        retention = config.retention_records
        self.storage = Storage(default_partitions=options.default_partitions,
                               # variant no-auto-create: the SPU's own way, unknown topics get 6 (§4.4 step 1)
                               auto_create=options.auto_create and "no-auto-create" not in self.variants,
                               topics=options.topics,
                               retention_records=None if retention is None else max(retention, 1),
                               max_bytes=options.max_store_bytes, data_dir=config.data_dir,
                               fsync=config.fsync != "none", cache_bytes=config.cache_bytes)
        # variants batch-len-short-answers / recordset-trailing-answers: these RecordSet shapes get an error
        # answer for their partition instead of a close (records.read_record_set)
        self.answered_shapes = frozenset(shape for shape, variant in (("short", "batch-len-short-answers"),
                                                                       ("trailing", "recordset-trailing-answers"))
                                         if variant in self.variants)
        self.advertised = list(ADVERTISED)
        if "apiversions-overadvertise" in self.active:
            self.advertised[0] = (PRODUCE, 0, 26)
        # what is really implemented
        self.accepted = {**{key: (low, high) for key, low, high in ADVERTISED}, **UNLISTED}
        if CONSUMER_OFFSET_TOPIC not in self.storage.topics:
            self.storage.create(CONSUMER_OFFSET_TOPIC, 1)
        self.wedged = False
        self.config = config
        self.options = options
        self.request_log = _request_logger(options.request_log) if options.request_log else None
        # the Streaming Controller (sc.py): the personality's "sc" endpoint, over this SPU's topic store
        self.sc = ScServer(config, self.storage, self.active, self.max_frame, self.request_log)
        self.sc.plane.configs[CONSUMER_OFFSET_TOPIC].system = True
        self.read_lock = asyncio.Lock()  # fault reads-serialised

    def listening(self, endpoint: str | None, port: int) -> None:
        if endpoint is None:  # the SC's metadata names the SPU's port
            self.sc.plane.spu_port = port

    async def serve_endpoint(self, endpoint: str, conn: Connection) -> None:
        await self.sc.serve(conn)

    async def close(self) -> None:
        self.storage.close()

    # ------------------------------------------------------------------------------------------ connection

    async def serve(self, conn: Connection) -> None:
        state = ConnectionState(conn, u16_sizes="response-size-u16" in self.active)
        if self.active & {"partial-size-prefix", "reads-serialised"}:
            conn = FaultyReads(conn, self.active, self.read_lock)

        async def handle(header: bytes, frame: bytes) -> bool:
            if self.wedged:
                return True  # fault: a wedged broker reads and never answers
            return await self._handle(state, frame)

        try:
            await serve_frames(conn, self.frame_shape, handle, lambda size: self._bad_size(size, conn))
        finally:
            tasks = [s.task for s in state.streams.values() if s.task is not None]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for stream in state.streams.values():
                stream.partition.listeners.discard(stream.wake)

    async def _bad_size(self, size: int, conn: Connection) -> BadLength:
        if size < 0 and "negative-size-stays-open" in self.active:
            return BadLength.SKIP  # fault: the size is skipped as if nothing had happened
        if size < 0 and "negative-size-waits" in self.variants:
            # variant: the SPU's path for sizes below -4 (§7): the codec waits for bytes for ever, answering
            # nothing; here until the peer closes or the idle timeout (both raise out of this loop)
            while True:
                await conn.read_exactly(1)
        if size > self.max_frame and "oversize-drains" in self.variants:
            return BadLength.DRAIN  # variant: the SPU buffers the claimed body (§2.1, §7); here it is dropped
        if size == 0 and "zero-size-skipped" in self.active:
            return BadLength.SKIP  # fault: an empty frame taken for a heartbeat
        log.debug("closing: frame size %d outside [%d, %d]", size, MIN_FRAME, self.max_frame)
        return BadLength.CLOSE

    async def _handle(self, state: ConnectionState, frame: bytes) -> bool:
        """Decode, handle and answer one request. False when the connection must end."""
        r = (LossyReader if "utf8-lossy" in self.active else Reader)(frame)
        try:
            header = messages.read_header(r)
        except Malformed as exc:
            log.debug("closing: malformed header: %s", exc)
            return False
        key, version = header.api_key, header.api_version
        if self.request_log is not None:
            self.request_log("spu", key, version)
        reply_id = header.correlation_id + 1 if "correlation-id-wrong" in self.active else header.correlation_id
        if key != API_VERSIONS and key not in self.accepted:
            if "unknown-key-stays-open" in self.active:
                return True
            log.debug("closing: unknown api key %d", key)
            return False
        if key != API_VERSIONS:
            low, high = self.accepted[key]
            if not low <= version <= high:
                if version > high and "version-above-max-silent" in self.active:
                    return True  # fault: read and never answered, the connection left open
                log.debug("closing: api %d version %d not in [%d, %d]", key, version, low, high)
                return False
        try:
            if key == API_VERSIONS:
                body = self._api_versions(messages.read_api_versions(r, version))
            elif key == PRODUCE:
                # the fault isolation-strict and the variant isolation-other-closes reject the same values
                strict = "isolation-strict" in self.active or "isolation-other-closes" in self.variants
                request = messages.read_produce(r, version, strict_isolation=strict,
                                                unsigned_timeout="negative-timeout-accepted" in self.active,
                                                clamp_record_sets="recordset-overrun-clamped" in self.active,
                                                trailer_required="smartmodules-trailer-required" in self.variants,
                                                answer_shapes=self.answered_shapes)
                if self._leftover(r):
                    return False  # before any write: a request the variant refuses changes nothing
                if "padded-varint-hangs" in self.active and any(
                        b.padded_length_varint for _, parts in request.topics for p in parts for b in p.batches):
                    return True  # fault: the records check waits for varint bytes that never come
                body = self._produce(request, version)
                if request.isolation == -1 and "read-committed-waits-timeout" in self.active:
                    await asyncio.sleep(request.timeout_ms / 1000)  # fault: waits for acks no follower sends
            elif key == FETCH:
                request = messages.read_fetch(r, version, "fetch-isolation-any-nonzero" in self.active)
                body = self._fetch(request, version)
            elif key == FETCH_OFFSETS:
                body = self._fetch_offsets(messages.read_fetch_offsets(r, version))
                if "fetch-offsets-overtaken" in self.active:
                    task = asyncio.create_task(self._answer_late(state, reply_id, body))
                    state.late.add(task)
                    task.add_done_callback(state.late.discard)
                    return True
            elif key == STREAM_FETCH:
                request = messages.read_stream_fetch(r, version, "fetch-isolation-any-nonzero" in self.active)
                if self._leftover(r):
                    return False
                return await self._stream_fetch(state, request, version, reply_id)
            elif key == UPDATE_OFFSETS:
                offsets = messages.read_update_offsets(r)
                if self._leftover(r):
                    return False
                body = self._update_offsets(state, offsets)
            elif key == UPDATE_CONSUMER_OFFSET:
                update = messages.read_update_consumer_offset(r)
                if self._leftover(r):
                    return False
                body = self._update_consumer_offset(state, *update)
            elif key == DELETE_CONSUMER_OFFSET:
                deletion = messages.read_delete_consumer_offset(r)
                if self._leftover(r):
                    return False
                body = self._delete_consumer_offset(*deletion)
            else:
                body = self._fetch_consumer_offsets(*messages.read_fetch_consumer_offsets(r, version))
        except Malformed as exc:
            log.debug("closing: malformed api %d v%d body: %s", key, version, exc)
            return False
        if self._leftover(r):
            return False
        await state.send(reply_id, body)
        return True

    def _leftover(self, r: Reader) -> bool:
        """Variant trailing-bytes-close: bytes after a complete request end the connection (the SPU ignores
        them, A15; §7's decode-error reaction is the other permitted one)."""
        if r.remaining and "trailing-bytes-close" in self.variants:
            log.debug("closing: %d bytes after the request", r.remaining)
            return True
        return False

    @staticmethod
    async def _answer_late(state: ConnectionState, reply_id: int, body: bytes) -> None:
        """Fault fetch-offsets-overtaken: FetchOffsets answered from a task of its own (as if it read the replica's
        offsets asynchronously), so the requests pipelined behind it are answered first."""
        await asyncio.sleep(0.02)
        with contextlib.suppress(ConnectionError, OSError, IdleTimeout):
            await state.send(reply_id, body)

    # ------------------------------------------------------------------------------------------ ApiVersions

    def _api_versions(self, request: messages.ApiVersionsRequest) -> bytes:
        keys = list(self.advertised)
        if not request.client_version:  # clients <= 0.9.12 send none: StreamFetch up to 15 only (§3.1)
            keys = [(k, lo, STREAM_FETCH_LEGACY_MAX if k == STREAM_FETCH else hi) for k, lo, hi in keys]
            if "apiversions-legacy-drops-stream-fetch" in self.active:
                keys = [key for key in keys if key[0] != STREAM_FETCH]  # fault: dropped instead of capped
        platform = "" if "platform-version-empty" in self.active else PLATFORM_VERSION  # fault: left unset
        return messages.api_versions_response(keys, platform)

    # ------------------------------------------------------------------------------------------ Produce

    def _produce(self, request: messages.ProduceRequest, version: int) -> bytes:
        topics = []
        for name, partitions in request.topics:
            entries: list[tuple[int, bytes, int]] = []
            for data in partitions:
                error, base = self._produce_partition(name, data, request.smartmodules)
                if "produce-responses-merged" in self.active and entries and entries[-1][0] == data.index:
                    continue  # fault: a repeated partition gets no entry of its own
                entries.append((data.index, error, base))
            topics.append((name, [messages.produce_partition(i, e, b, version) for i, e, b in entries]))
        # ReadCommitted needs no wait: one replica, HW = LEO at write time (§4.4 step 9).
        return messages.produce_response(topics, version, with_throttle="throttle-missing" not in self.active)

    def _produce_partition(self, topic: str, data: messages.PartitionData,
                           smartmodules: list[messages.Invocation]) -> tuple[bytes, int]:
        partition = self.storage.partition_for_produce(topic, data.index)
        if partition is None:
            if "unknown-topic-not-found" in self.active and topic not in self.storage.topics:
                return ErrorCode.plain(ErrorCode.TOPIC_NOT_FOUND), 0  # fault: the SC's code for a missing topic
            if "error-code-unknown-partition-wrong" in self.active and topic in self.storage.topics:
                return ErrorCode.plain(ErrorCode.TOPIC_NOT_FOUND), 0  # fault: the produce path's own lookup
            return self._unknown_partition_error(), 0
        if data.malformed is not None:  # variants batch-len-short-answers / recordset-trailing-answers (A15)
            return ErrorCode.other(f"invalid RecordSet: {data.malformed}"), 0
        if smartmodules:
            return _smartmodule_error(smartmodules[0]), 0
        batches = data.batches
        if "crash-on-huge-record-count" in self.active:
            for batch in batches:
                count = batch.record_count_field
                if count is not None and count > len(batch.data):
                    self.wedged = True
                    raise Wedged(f"record count {count}")
        if sum(b.record_total for b in batches) == 0:
            # §4.4 step 4: success, nothing written; the fault answers the log end as base_offset
            return OK, partition.leo if "empty-produce-base-is-leo" in self.active else 0
        for batch in batches:
            if batch.compression > MAX_COMPRESSION:
                if "compression-error-wrong" in self.active:
                    return ErrorCode.plain(ErrorCode.STORAGE_ERROR), 0
                return ErrorCode.plain(ErrorCode.COMPRESSION_ERROR), 0
        # variant: the SPU's path (A7), stored with the CRC recomputed; the fault crc-unchecked overrides it
        if "crc-recomputed" in self.variants and "crc-unchecked" not in self.active:
            batches = [b if b.computed_crc() == b.crc else b.crc_recomputed() for b in batches]
        if "crc-unchecked" not in self.active:
            for batch in batches:
                actual = batch.computed_crc()
                if actual != batch.crc:
                    return ErrorCode.other(f"batch CRC {batch.crc:#010x} does not match its bytes "
                                           f"(CRC-32C {actual:#010x})"), 0
        for batch in batches:
            size = batch.write_size
            if "too-large-records-only" in self.active:
                size -= batch.records_start  # fault: the records' bytes only, not 12 + 45 + records
            if size > self.max_request_size:
                return ErrorCode.plain(ErrorCode.MESSAGE_TOO_LARGE), 0
        if partition.short_circuited:
            return ErrorCode.plain(ErrorCode.PARTITION_SHORT_CIRCUITED), 0
        if any(b.last_offset_delta < 0 for b in batches):
            if "negative-delta-short-circuits" in self.active:
                partition.short_circuited = True  # fault: the SPU's own path (A14), 73 until restart
            if "negative-delta-other-code" in self.variants:  # variant: D8 permits another error code
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
        if "produce-base-offset-wrong" in self.active:
            base = partition.leo
        return OK, base

    def _rewritten(self, batch: Batch) -> Batch:
        """The batch as three faults re-encode it before storage (unchanged without them)."""
        if "compression-recompressed" in self.active and batch.compression == GZIP:
            batch = batch.recompressed()
        if "record-count-rewritten" in self.active:
            batch = batch.count_rewritten()
        if "schema-id-dropped" in self.active:
            batch = batch.schema_dropped()
        return batch

    def _records_of(self, batch: Batch) -> int:
        if "offsets-follow-record-count" in self.active:
            count = batch.record_count_field
            if count is not None and count > 0:
                return count
        return batch.record_total

    @staticmethod
    def _unknown_partition_error() -> bytes:
        return ErrorCode.plain(ErrorCode.NOT_LEADER_FOR_PARTITION)

    # ------------------------------------------------------------------------------------------ Fetch

    def _fetch(self, request: messages.FetchRequest, version: int) -> bytes:
        # The request-level max_bytes limits every partition (§5.1); i32 -> u32 as the SPU casts it, so a
        # negative value means no limit. D7: all partitions together stay under the frame limit.
        limit = 0xFFFFFFFF if "fetch-max-bytes-ignored" in self.active else request.max_bytes & 0xFFFFFFFF
        budget = self.max_frame - 1024
        topics = []
        for name, partitions in request.topics:
            entries = []
            for p in partitions:
                error, hw, log_start, records = self._read(name, p.index, p.fetch_offset, min(limit, budget))
                budget = max(budget - len(records) - 64, 0)
                entries.append(messages.partition_response(p.index, error, hw, log_start, records, version))
            topics.append((name, entries))
        return messages.fetch_response(topics)

    def _read(self, topic: str, index: int, offset: int, max_bytes: int) -> tuple[bytes, int, int, bytes]:
        """(error, high_watermark, log_start_offset, records) for one partition read (§5.2, ST/replica.rs)."""
        partition = self.storage.partition(topic, index)
        if partition is None:
            if "fetch-unknown-partition-3001" in self.active:  # fault: FetchOffsets' code
                return ErrorCode.plain(ErrorCode.PARTITION_NOT_LEADER), 0, 0, b""
            return self._unknown_partition_error(), 0, 0, b""
        if offset < partition.log_start:
            return ErrorCode.offset_evicted(offset, partition.log_start), 0, 0, b""
        # faults: the end itself counted as beyond it (>=); an offset beyond it clamped to it (no error)
        beyond = offset >= partition.leo if "fetch-at-end-is-beyond" in self.active else offset > partition.leo
        if beyond and "fetch-beyond-end-clamped" not in self.active:
            if "error-payload-missing" in self.active:
                return ErrorCode.plain(ErrorCode.OTHER), 0, 0, b""
            return ErrorCode.other(f"start offset: {offset} is greater than leo: {partition.leo}"), 0, 0, b""
        hw = partition.hw + 1 if "fetch-hw-off-by-one" in self.active else partition.hw
        start = offset
        if "fetch-starts-one-early" in self.active:
            start = max(offset - 1, partition.log_start)  # fault: fetch_offset read as the last consumed offset
        records = partition.read(start, max_bytes, partition.hw) if offset < partition.leo else b""
        return OK, hw, partition.log_start, records

    # ------------------------------------------------------------------------------------------ FetchOffsets

    def _fetch_offsets(self, topics: list[tuple[str, list[int]]]) -> bytes:
        out = []
        for name, indexes in topics:
            entries = []
            for index in indexes:
                partition = self.storage.partition(name, index)
                if partition is None:
                    code = ErrorCode.NOT_LEADER_FOR_PARTITION if "fetch-offsets-wrong-code" in self.active \
                        else ErrorCode.PARTITION_NOT_LEADER
                    entries.append(messages.fetch_offsets_partition(index, ErrorCode.plain(code), 0, 0))
                else:
                    start = partition.hw if "fetch-offsets-start-is-hw" in self.active else partition.log_start
                    entries.append(messages.fetch_offsets_partition(index, OK, start, partition.hw))
            out.append((name, entries))
        return messages.fetch_offsets_response(out)

    # ------------------------------------------------------------------------------------------ StreamFetch

    async def _stream_fetch(self, state: ConnectionState, request: messages.StreamFetchRequest, version: int,
                            reply_id: int) -> bool:
        """Open a stream, or answer once with the reason it cannot be opened (§5.4, SPU stream_fetch.rs)."""
        partition = self.storage.partition(request.topic, request.partition)

        async def answer_once(stream_id: int, error: bytes) -> None:
            part = messages.partition_response(request.partition, error, 0, 0, b"", version)
            await state.send(reply_id, messages.stream_fetch_response(request.topic, stream_id, part))

        if partition is None:
            refused_id = 0
            if "stream-refusal-numbered" in self.active:  # fault: the refusal takes the next stream id
                state.stream_sequence += 1
                refused_id = state.stream_sequence
            await answer_once(refused_id, self._unknown_partition_error())
            return True
        if len(state.streams) >= MAX_STREAMS:
            log.debug("closing: more than %d streams on one connection", MAX_STREAMS)
            return False
        stream_id = state.stream_sequence + (0 if "stream-id-zero" in self.active else 1)
        state.stream_sequence += 1
        error = _stream_refusal(request, partition)
        if error is not None:
            await answer_once(stream_id, error)  # the stream ends with its one error response
            return True
        stream = Stream(stream_id, request, version, reply_id, partition)
        state.streams[stream_id] = stream
        partition.listeners.add(stream.wake)
        stream.task = asyncio.create_task(self._push(state, stream))
        if "stream-blocks-connection" in self.active:  # fault: the request loop waits for the stream's first answer
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stream.pushed.wait(), self.config.idle_timeout)
        return True

    async def _push(self, state: ConnectionState, stream: Stream) -> None:
        """Send records whenever the client's position is behind the end, then wait for its UpdateOffsets."""
        request, partition = stream.request, stream.partition
        limit = min(request.max_bytes & 0xFFFFFFFF, self.max_frame - 1024)
        sent_once = False
        empty_sent = False  # fault stream-at-end-answers-empty

        async def push(records: bytes) -> None:
            hw = partition.hw + 1 if "fetch-hw-off-by-one" in self.active else partition.hw
            part = messages.partition_response(request.partition, OK, hw, partition.log_start, records,
                                               stream.version)
            await state.send(stream.correlation_id, messages.stream_fetch_response(request.topic, stream.id, part))
            stream.pushed.set()

        try:
            while True:
                stream.wake.clear()
                position = stream.position
                end = partition.hw  # ReadCommitted ends at the HW, ReadUncommitted at the LEO: equal here
                if position is not None and position < end and not (
                        sent_once and "stream-fetch-no-updates" in self.active):
                    records = partition.read(position, limit, end)
                    stream.position = None  # flow control: wait for the client's UpdateOffsets (§5.4)
                    sent_once = True
                    await push(records)
                    continue
                if position == end and not empty_sent and "stream-at-end-answers-empty" in self.active:
                    empty_sent = True  # fault: at the log end, an empty answer at once (as a Fetch gives)
                    await push(b"")
                    continue
                await stream.wake.wait()
        except (ConnectionError, OSError) as exc:
            log.debug("stream %d ended: %s", stream.id, exc)
        finally:
            partition.listeners.discard(stream.wake)

    def _update_offsets(self, state: ConnectionState, offsets: list[tuple[int, int]]) -> bytes:
        status = []
        for offset, session_id in offsets:
            stream = state.streams.get(session_id)
            if stream is None:
                code = ErrorCode.NONE if "update-offsets-unknown-session-ok" in self.active \
                    else ErrorCode.FETCH_SESSION_NOT_FOUND
                status.append((session_id, ErrorCode.plain(code)))
                continue
            stream.position = offset
            stream.wake.set()
            status.append((session_id, OK))
        return messages.update_offsets_response(status)

    # ------------------------------------------------------------------------------------------ consumer offsets

    def _update_consumer_offset(self, state: ConnectionState, offset: int, session_id: int) -> bytes:
        """Store the offset of the consumer that opened stream ``session_id`` on this connection (§5.6)."""
        stream = state.streams.get(session_id)
        if stream is None and "consumer-offset-unknown-session-ok" not in self.active:
            return messages.update_consumer_offset_response(offset, ErrorCode.plain(ErrorCode.FETCH_SESSION_NOT_FOUND))
        if stream is None:
            return messages.update_consumer_offset_response(offset, OK)  # fault: accepted, stored nowhere
        consumer_id = stream.request.consumer_id
        if not consumer_id:
            return messages.update_consumer_offset_response(
                offset, ErrorCode.other(f"stream {session_id} was opened without a consumer id"))
        if "consumer-offset-not-stored" not in self.active:
            key = (stream.request.topic, stream.request.partition, consumer_id)
            self.storage.set_consumer_offset(key, offset, int(time.time() * 1000))
        return messages.update_consumer_offset_response(offset, OK)

    def _delete_consumer_offset(self, topic: str, partition: int, consumer_id: str) -> bytes:
        if "consumer-offset-delete-ignored" not in self.active:
            self.storage.delete_consumer_offset((topic, partition, consumer_id))
        return OK  # deleting what is not there is not an error (nothing to undo)

    def _fetch_consumer_offsets(self, replica: tuple[str, int] | None, consumer_id: str | None) -> bytes:
        if "consumer-offset-filter-ignored" in self.active:
            replica = consumer_id = None
        consumers = [(cid, topic, index, offset, modified)
                     for (topic, index, cid), (offset, modified) in sorted(self.storage.consumer_offsets.items())
                     if (replica is None or replica == (topic, index)) and (consumer_id is None or consumer_id == cid)]
        return messages.fetch_consumer_offsets_response(OK, consumers)


def _request_logger(path: str):
    """A function appending one 'listener key version' line per request to ``path`` (option request_log)."""
    def write(listener: str, key: int, version: int) -> None:
        with open(path, "a", encoding="ascii") as out:
            out.write(f"{listener} {key} {version}\n")
    return write


def _smartmodule_error(invocation: messages.Invocation) -> bytes:
    """D3: no wasm runs here. A Predefined module is never found (6001); ad-hoc wasm is invalid (6002)."""
    if invocation.predefined is not None:
        return ErrorCode.smartmodule_not_found(invocation.predefined)
    return ErrorCode.smartmodule_invalid("this server runs no SmartModules", invocation.name)


def _stream_refusal(request: messages.StreamFetchRequest, partition: Partition) -> bytes | None:
    """The error that ends a stream at once, or None (§5.4: errors send one response, then the stream ends)."""
    if request.smartmodules:
        return _smartmodule_error(request.smartmodules[0])
    if request.smartmodule is not None:
        return _smartmodule_error(request.smartmodule)
    if request.legacy_wasm:
        return ErrorCode.smartmodule_invalid("this server runs no SmartModules", None)
    if request.derivedstream is not None:
        return ErrorCode.derived_stream_not_found(request.derivedstream)
    if request.fetch_offset < partition.log_start:
        return ErrorCode.offset_evicted(request.fetch_offset, partition.log_start)
    if request.fetch_offset > partition.leo:
        return ErrorCode.other(f"start offset: {request.fetch_offset} is greater than leo: {partition.leo}")
    return None
