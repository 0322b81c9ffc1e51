"""FetchOffsets (1002) and the consumer offsets (1006-1008) on the SPU (notes §5.3, §5.6).

Consumer offsets: UpdateConsumerOffset names a stream of this connection (its session_id) opened with a
consumer_id; an unknown session gets FetchSessionNotFoud (3002) as UpdateOffsets does, a stream without consumer
id gets Other. Offsets are kept by (topic, partition, consumer id), in memory or, with ``--data-dir``, in a file
rewritten after each change (storage.py); the system topic "consumer-offset" exists (one partition) so that
clients find its leader through the SC, as they do upstream, but the offsets are not written into it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from wirecheck.broker.core import IdleTimeout
from wirecheck.broker.fluvio import messages
from wirecheck.broker.fluvio.api import Answer, trailing
from wirecheck.broker.fluvio.connection import ConnectionState, SpuCall
from wirecheck.broker.fluvio.faults import FluvioFaults, FluvioVariants
from wirecheck.broker.fluvio.storage import Storage
from wirecheck.broker.fluvio.wire import OK, ErrorCode

CONSUMER_OFFSET_TOPIC = "consumer-offset"  # the SPU keeps consumer offsets in this system topic's partition 0 (§5.6)


class OffsetsApi:
    def __init__(self, storage: Storage, faults: FluvioFaults, variants: FluvioVariants):
        self.storage = storage
        self.faults = faults
        self.variants = variants

    # ------------------------------------------------------------------------------------------ FetchOffsets

    async def fetch_offsets(self, call: SpuCall) -> Answer:
        body = self._fetch_offsets(messages.read_fetch_offsets(call.r, call.version))
        if self.faults.fetch_offsets_overtaken:
            state = call.state
            task = asyncio.create_task(_answer_late(state, call.reply_id, body))
            state.late.add(task)
            task.add_done_callback(state.late.discard)
            return True
        return body

    def _fetch_offsets(self, topics: list[tuple[str, list[int]]]) -> bytes:
        out = []
        for name, indexes in topics:
            entries = []
            for index in indexes:
                partition = self.storage.partition(name, index)
                if partition is None:
                    code = ErrorCode.NOT_LEADER_FOR_PARTITION if self.faults.fetch_offsets_wrong_code \
                        else ErrorCode.PARTITION_NOT_LEADER
                    entries.append(messages.fetch_offsets_partition(index, ErrorCode.plain(code), 0, 0))
                else:
                    start = partition.hw if self.faults.fetch_offsets_start_is_hw else partition.log_start
                    entries.append(messages.fetch_offsets_partition(index, OK, start, partition.hw))
            out.append((name, entries))
        return messages.fetch_offsets_response(out)

    # ------------------------------------------------------------------------------------------ consumer offsets

    async def update_consumer_offset(self, call: SpuCall) -> Answer:
        """Store the offset of the consumer that opened stream ``session_id`` on this connection (§5.6)."""
        offset, session_id = messages.read_update_consumer_offset(call.r)
        if trailing(call.r, self.variants):
            return False
        stream = call.state.streams.get(session_id)
        if stream is None and not self.faults.consumer_offset_unknown_session_ok:
            return messages.update_consumer_offset_response(offset, ErrorCode.plain(ErrorCode.FETCH_SESSION_NOT_FOUND))
        if stream is None:
            return messages.update_consumer_offset_response(offset, OK)  # fault: accepted, stored nowhere
        consumer_id = stream.request.consumer_id
        if not consumer_id:
            return messages.update_consumer_offset_response(
                offset, ErrorCode.other(f"stream {session_id} was opened without a consumer id"))
        if not self.faults.consumer_offset_not_stored:
            key = (stream.request.topic, stream.request.partition, consumer_id)
            self.storage.set_consumer_offset(key, offset, int(time.time() * 1000))
        return messages.update_consumer_offset_response(offset, OK)

    async def delete_consumer_offset(self, call: SpuCall) -> Answer:
        topic, partition, consumer_id = messages.read_delete_consumer_offset(call.r)
        if trailing(call.r, self.variants):
            return False
        if not self.faults.consumer_offset_delete_ignored:
            self.storage.delete_consumer_offset((topic, partition, consumer_id))
        return OK  # deleting what is not there is not an error (nothing to undo)

    async def fetch_consumer_offsets(self, call: SpuCall) -> Answer:
        replica, consumer_id = messages.read_fetch_consumer_offsets(call.r, call.version)
        if self.faults.consumer_offset_filter_ignored:
            replica = consumer_id = None
        consumers = [(cid, topic, index, offset, modified)
                     for (topic, index, cid), (offset, modified) in sorted(self.storage.consumer_offsets.items())
                     if (replica is None or replica == (topic, index)) and (consumer_id is None or consumer_id == cid)]
        return messages.fetch_consumer_offsets_response(OK, consumers)


async def _answer_late(state: ConnectionState, reply_id: int, body: bytes) -> None:
    """Fault fetch-offsets-overtaken: FetchOffsets answered from a task of its own (as if it read the replica's
    offsets asynchronously), so the requests pipelined behind it are answered first."""
    await asyncio.sleep(0.02)
    with contextlib.suppress(ConnectionError, OSError, IdleTimeout):
        await state.send(reply_id, body)
