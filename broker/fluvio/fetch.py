"""Fetch (1), StreamFetch (1003) and UpdateOffsets (1005) on the SPU (notes §5.1, §5.2, §5.4, §5.5).

Fetch answers once per request; a StreamFetch opens a stream that a task of its own pushes whenever the client's
position is behind the end, then waits for the client's UpdateOffsets (flow control, §5.4). Its pushes may
interleave with the answers of the request loop (ConnectionState's lock keeps frames whole). D6: at most
MAX_STREAMS open streams per connection; one more closes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from wirecheck.broker.fluvio import messages
from wirecheck.broker.fluvio.api import Answer, trailing
from wirecheck.broker.fluvio.connection import ConnectionState, SpuCall
from wirecheck.broker.fluvio.faults import FluvioFaults, FluvioVariants
from wirecheck.broker.fluvio.storage import Partition, Storage
from wirecheck.broker.fluvio.wire import OK, ErrorCode

log = logging.getLogger("wirecheck.broker.fluvio")

MAX_STREAMS = 64  # D6: open StreamFetch streams per connection; one more closes the connection


class FetchApi:
    def __init__(self, storage: Storage, faults: FluvioFaults, max_frame: int):
        self.storage = storage
        self.faults = faults
        self.max_frame = max_frame

    async def fetch(self, call: SpuCall) -> Answer:
        request = messages.read_fetch(call.r, call.version, self.faults.fetch_isolation_any_nonzero)
        # The request-level max_bytes limits every partition (§5.1); i32 -> u32 as the SPU casts it, so a
        # negative value means no limit. D7: all partitions together stay under the frame limit.
        limit = 0xFFFFFFFF if self.faults.fetch_max_bytes_ignored else request.max_bytes & 0xFFFFFFFF
        budget = self.max_frame - 1024
        topics = []
        for name, partitions in request.topics:
            entries = []
            for p in partitions:
                error, hw, log_start, records = self._read(name, p.index, p.fetch_offset, min(limit, budget))
                budget = max(budget - len(records) - 64, 0)
                entries.append(messages.partition_response(p.index, error, hw, log_start, records, call.version))
            topics.append((name, entries))
        return messages.fetch_response(topics)

    def _read(self, topic: str, index: int, offset: int, max_bytes: int) -> tuple[bytes, int, int, bytes]:
        """(error, high_watermark, log_start_offset, records) for one partition read (§5.2, ST/replica.rs)."""
        faults = self.faults
        partition = self.storage.partition(topic, index)
        if partition is None:
            if faults.fetch_unknown_partition_3001:  # fault: FetchOffsets' code
                return ErrorCode.plain(ErrorCode.PARTITION_NOT_LEADER), 0, 0, b""
            return ErrorCode.plain(ErrorCode.NOT_LEADER_FOR_PARTITION), 0, 0, b""
        if offset < partition.log_start:
            return ErrorCode.offset_evicted(offset, partition.log_start), 0, 0, b""
        # faults: the end itself counted as beyond it (>=); an offset beyond it clamped to it (no error)
        beyond = offset >= partition.leo if faults.fetch_at_end_is_beyond else offset > partition.leo
        if beyond and not faults.fetch_beyond_end_clamped:
            if faults.error_payload_missing:
                return ErrorCode.plain(ErrorCode.OTHER), 0, 0, b""
            return ErrorCode.other(f"start offset: {offset} is greater than leo: {partition.leo}"), 0, 0, b""
        hw = partition.hw + 1 if faults.fetch_hw_off_by_one else partition.hw
        start = offset
        if faults.fetch_starts_one_early:
            start = max(offset - 1, partition.log_start)  # fault: fetch_offset read as the last consumed offset
        records = partition.read(start, max_bytes, partition.hw) if offset < partition.leo else b""
        return OK, hw, partition.log_start, records


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


class StreamFetchApi:
    def __init__(self, storage: Storage, faults: FluvioFaults, variants: FluvioVariants, max_frame: int,
                 idle_timeout: float):
        self.storage = storage
        self.faults = faults
        self.variants = variants
        self.max_frame = max_frame
        self.idle_timeout = idle_timeout

    async def stream_fetch(self, call: SpuCall) -> Answer:
        """Open a stream, or answer once with the reason it cannot be opened (§5.4, SPU stream_fetch.rs)."""
        request = messages.read_stream_fetch(call.r, call.version, self.faults.fetch_isolation_any_nonzero)
        if trailing(call.r, self.variants):
            return False
        state, version, reply_id = call.state, call.version, call.reply_id
        partition = self.storage.partition(request.topic, request.partition)

        async def answer_once(stream_id: int, error: bytes) -> None:
            part = messages.partition_response(request.partition, error, 0, 0, b"", version)
            await state.send(reply_id, messages.stream_fetch_response(request.topic, stream_id, part))

        if partition is None:
            refused_id = 0
            if self.faults.stream_refusal_numbered:  # fault: the refusal takes the next stream id
                state.stream_sequence += 1
                refused_id = state.stream_sequence
            await answer_once(refused_id, ErrorCode.plain(ErrorCode.NOT_LEADER_FOR_PARTITION))
            return True
        if len(state.streams) >= MAX_STREAMS:
            log.debug("closing: more than %d streams on one connection", MAX_STREAMS)
            return False
        stream_id = state.stream_sequence + (0 if self.faults.stream_id_zero else 1)
        state.stream_sequence += 1
        error = _stream_refusal(request, partition)
        if error is not None:
            await answer_once(stream_id, error)  # the stream ends with its one error response
            return True
        stream = Stream(stream_id, request, version, reply_id, partition)
        state.streams[stream_id] = stream
        partition.listeners.add(stream.wake)
        stream.task = asyncio.create_task(self._push(state, stream))
        if self.faults.stream_blocks_connection:  # fault: the request loop waits for the stream's first answer
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stream.pushed.wait(), self.idle_timeout)
        return True

    async def _push(self, state: ConnectionState, stream: Stream) -> None:
        """Send records whenever the client's position is behind the end, then wait for its UpdateOffsets."""
        faults = self.faults
        request, partition = stream.request, stream.partition
        limit = min(request.max_bytes & 0xFFFFFFFF, self.max_frame - 1024)
        sent_once = False
        empty_sent = False  # fault stream-at-end-answers-empty

        async def push(records: bytes) -> None:
            hw = partition.hw + 1 if faults.fetch_hw_off_by_one else partition.hw
            part = messages.partition_response(request.partition, OK, hw, partition.log_start, records,
                                               stream.version)
            await state.send(stream.correlation_id, messages.stream_fetch_response(request.topic, stream.id, part))
            stream.pushed.set()

        try:
            while True:
                stream.wake.clear()
                position = stream.position
                end = partition.hw  # ReadCommitted ends at the HW, ReadUncommitted at the LEO: equal here
                if position is not None and position < end and not (sent_once and faults.stream_fetch_no_updates):
                    records = partition.read(position, limit, end)
                    stream.position = None  # flow control: wait for the client's UpdateOffsets (§5.4)
                    sent_once = True
                    await push(records)
                    continue
                if position == end and not empty_sent and faults.stream_at_end_answers_empty:
                    empty_sent = True  # fault: at the log end, an empty answer at once (as a Fetch gives)
                    await push(b"")
                    continue
                await stream.wake.wait()
        except (ConnectionError, OSError) as exc:
            log.debug("stream %d ended: %s", stream.id, exc)
        finally:
            partition.listeners.discard(stream.wake)

    async def update_offsets(self, call: SpuCall) -> Answer:
        offsets = messages.read_update_offsets(call.r)
        if trailing(call.r, self.variants):
            return False
        status = []
        for offset, session_id in offsets:
            stream = call.state.streams.get(session_id)
            if stream is None:
                code = ErrorCode.NONE if self.faults.update_offsets_unknown_session_ok \
                    else ErrorCode.FETCH_SESSION_NOT_FOUND
                status.append((session_id, ErrorCode.plain(code)))
                continue
            stream.position = offset
            stream.wake.set()
            status.append((session_id, OK))
        return messages.update_offsets_response(status)


def _stream_refusal(request: messages.StreamFetchRequest, partition: Partition) -> bytes | None:
    """The error that ends a stream at once, or None (§5.4: errors send one response, then the stream ends)."""
    if request.smartmodules:
        return messages.smartmodule_error(request.smartmodules[0])
    if request.smartmodule is not None:
        return messages.smartmodule_error(request.smartmodule)
    if request.legacy_wasm:
        return ErrorCode.smartmodule_invalid("this server runs no SmartModules", None)
    if request.derivedstream is not None:
        return ErrorCode.derived_stream_not_found(request.derivedstream)
    if request.fetch_offset < partition.log_start:
        return ErrorCode.offset_evicted(request.fetch_offset, partition.log_start)
    if request.fetch_offset > partition.leo:
        return ErrorCode.other(f"start offset: {request.fetch_offset} is greater than leo: {partition.leo}")
    return None
