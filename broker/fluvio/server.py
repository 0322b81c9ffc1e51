"""The Fluvio SPU personality: framing, request headers, and the dispatch table of the public APIs.

The handlers live by API family (api.py lists them); this module reads frames and headers and routes each request
by its API key to the handler the dispatch table registers with the versions it accepts.

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
- A body that does not decode closes the connection without a response (§7).
- Requests are handled one at a time, so responses leave in request order (§2.4); StreamFetch responses are
  pushed by a task per stream and may interleave with them (one lock keeps frames whole).
- D8: a connection that sends nothing for the idle timeout (``--idle-timeout``, 30 s) is closed, even with
  open streams; the SPU has no read timeout (§7). A consumer keeps its streams by sending UpdateOffsets.
"""

from __future__ import annotations

import asyncio
import logging

from wirecheck.broker.core import BrokerConfig, Connection
from wirecheck.broker.framed import BadLength, serve_frames
from wirecheck.broker.fluvio import messages
from wirecheck.broker.fluvio.api import (
    API_VERSIONS, DELETE_CONSUMER_OFFSET, FETCH, FETCH_CONSUMER_OFFSETS, FETCH_OFFSETS, PRODUCE, STREAM_FETCH,
    UPDATE_CONSUMER_OFFSET, UPDATE_OFFSETS, Call, Route, trailing)
from wirecheck.broker.fluvio.connection import ConnectionState, FaultyReads
from wirecheck.broker.fluvio.faults import FluvioFaults, FluvioVariants
from wirecheck.broker.fluvio.fetch import FetchApi, StreamFetchApi
from wirecheck.broker.fluvio.offsets import CONSUMER_OFFSET_TOPIC, OffsetsApi
from wirecheck.broker.fluvio.options import FluvioOptions
from wirecheck.broker.fluvio.produce import ProduceApi
from wirecheck.broker.fluvio.sc import ScServer
from wirecheck.broker.fluvio.storage import Storage
from wirecheck.broker.fluvio.versions import VersionsApi
from wirecheck.broker.fluvio.wire import MIN_FRAME, LossyReader, Malformed, Reader, frame_shape

log = logging.getLogger("wirecheck.broker.fluvio")

DEFAULT_MAX_FRAME = 64 << 20  # §12: "cap the frame size (e.g. 64 MiB)"
CURRENT_VERSIONS = (0, 25)  # Produce, Fetch and StreamFetch (§3.1, §3.2)
#: FetchOffsets: the SPU lists (25, 25) but decodes any version, and released clients (the fluvio 0.21 Python
#: binding) send v24; v23-v24 share v25's layout (consumer_id is v23-only), so this broker lists what it accepts.
FETCH_OFFSETS_VERSIONS = (23, 25)
UPDATE_OFFSETS_VERSIONS = (0, 0)
CONSUMER_OFFSET_VERSIONS = (23, 25)  # MIN = 23 (OFFSET_MANAGEMENT_API), DEFAULT = 25 (§3.1)


class FluvioPersonality:
    name = "fluvio"

    def __init__(self, config: BrokerConfig, options: FluvioOptions):
        self.faults = config.faults_as(FluvioFaults)
        self.variants = config.variants_as(FluvioVariants)  # other permitted readings (faults.py)
        self.max_frame = config.max_frame or DEFAULT_MAX_FRAME
        self.frame_shape = frame_shape(self.max_frame)
        retention = config.retention_records
        self.storage = Storage(default_partitions=options.default_partitions,
                               # variant no-auto-create: the SPU's own way, unknown topics get 6 (§4.4 step 1)
                               auto_create=options.auto_create and not self.variants.no_auto_create,
                               topics=options.topics,
                               retention_records=None if retention is None else max(retention, 1),
                               max_bytes=options.max_store_bytes, data_dir=config.data_dir,
                               fsync=config.fsync != "none", cache_bytes=config.cache_bytes,
                               faults=self.faults)
        if CONSUMER_OFFSET_TOPIC not in self.storage.topics:
            self.storage.create(CONSUMER_OFFSET_TOPIC, 1)
        self.config = config
        self.options = options
        self.request_log = _request_logger(options.request_log) if options.request_log else None
        # the Streaming Controller (sc.py): the personality's "sc" endpoint, over this SPU's topic store
        self.sc = ScServer(config, self.storage, self.faults, self.max_frame, self.request_log)
        self.sc.plane.configs[CONSUMER_OFFSET_TOPIC].system = True
        self.read_lock = asyncio.Lock()  # fault reads-serialised
        self.produce = ProduceApi(self.storage, self.faults, self.variants, options.max_request_size)
        self.routes = self._dispatch_table()

    def _dispatch_table(self) -> dict[int, Route[ConnectionState]]:
        """Every API key this SPU serves, with the versions it accepts and its handler. The listed ones are what
        ApiVersions advertises, in the SPU's order (§3.2, SPU/services/public/api_versions.rs); the consumer-offset
        keys are accepted but not listed, as on the SPU (§3.1)."""
        storage, faults, variants = self.storage, self.faults, self.variants
        fetch = FetchApi(storage, faults, self.max_frame)
        streams = StreamFetchApi(storage, faults, variants, self.max_frame, self.config.idle_timeout)
        offsets = OffsetsApi(storage, faults, variants)
        routes = [
            Route(PRODUCE, CURRENT_VERSIONS, self.produce.produce),
            Route(FETCH, CURRENT_VERSIONS, fetch.fetch),
            Route(FETCH_OFFSETS, FETCH_OFFSETS_VERSIONS, offsets.fetch_offsets),
            Route(STREAM_FETCH, CURRENT_VERSIONS, streams.stream_fetch),
            Route(UPDATE_OFFSETS, UPDATE_OFFSETS_VERSIONS, streams.update_offsets),
            Route(UPDATE_CONSUMER_OFFSET, CONSUMER_OFFSET_VERSIONS, offsets.update_consumer_offset, listed=False),
            Route(DELETE_CONSUMER_OFFSET, CONSUMER_OFFSET_VERSIONS, offsets.delete_consumer_offset, listed=False),
            Route(FETCH_CONSUMER_OFFSETS, CONSUMER_OFFSET_VERSIONS, offsets.fetch_consumer_offsets, listed=False),
        ]
        versions = VersionsApi(faults, [(r.key, *r.versions) for r in routes if r.listed and r.versions])
        return {r.key: r for r in [Route(API_VERSIONS, None, versions.api_versions, listed=False), *routes]}

    def listening(self, endpoint: str | None, port: int) -> None:
        if endpoint is None:  # the SC's metadata names the SPU's port
            self.sc.plane.spu_port = port

    async def serve_endpoint(self, endpoint: str, conn: Connection) -> None:
        await self.sc.serve(conn)

    async def close(self) -> None:
        self.storage.close()

    # ------------------------------------------------------------------------------------------ connection

    async def serve(self, conn: Connection) -> None:
        state = ConnectionState(conn, self.faults)
        if FaultyReads.needed(self.faults):
            conn = FaultyReads(conn, self.faults, self.read_lock)

        async def handle(header: bytes, frame: bytes) -> bool:
            if self.produce.wedged:
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
        if size < 0 and self.faults.negative_size_stays_open:
            return BadLength.SKIP  # fault: the size is skipped as if nothing had happened
        if size < 0 and self.variants.negative_size_waits:
            # variant: the SPU's path for sizes below -4 (§7): the codec waits for bytes for ever, answering
            # nothing; here until the peer closes or the idle timeout (both raise out of this loop)
            while True:
                await conn.read_exactly(1)
        if size > self.max_frame and self.variants.oversize_drains:
            return BadLength.DRAIN  # variant: the SPU buffers the claimed body (§2.1, §7); here it is dropped
        if size == 0 and self.faults.zero_size_skipped:
            return BadLength.SKIP  # fault: an empty frame taken for a heartbeat
        log.debug("closing: frame size %d outside [%d, %d]", size, MIN_FRAME, self.max_frame)
        return BadLength.CLOSE

    async def _handle(self, state: ConnectionState, frame: bytes) -> bool:
        """Decode, route, handle and answer one request. False when the connection must end."""
        faults = self.faults
        r = (LossyReader if faults.utf8_lossy else Reader)(frame)
        try:
            header = messages.read_header(r)
        except Malformed as exc:
            log.debug("closing: malformed header: %s", exc)
            return False
        key, version = header.api_key, header.api_version
        if self.request_log is not None:
            self.request_log("spu", key, version)
        reply_id = header.correlation_id + 1 if faults.correlation_id_wrong else header.correlation_id
        route = self.routes.get(key)
        if route is None:
            if faults.unknown_key_stays_open:
                return True
            log.debug("closing: unknown api key %d", key)
            return False
        if route.versions is not None:
            low, high = route.versions
            if not low <= version <= high:
                if version > high and faults.version_above_max_silent:
                    return True  # fault: read and never answered, the connection left open
                log.debug("closing: api %d version %d not in [%d, %d]", key, version, low, high)
                return False
        try:
            answer = await route.handle(Call(state, r, version, reply_id))
        except Malformed as exc:
            log.debug("closing: malformed api %d v%d body: %s", key, version, exc)
            return False
        if isinstance(answer, bool):
            return answer
        if trailing(r, self.variants):
            return False
        await state.send(reply_id, answer)
        return True


def _request_logger(path: str):
    """A function appending one 'listener key version' line per request to ``path`` (option request_log)."""
    def write(listener: str, key: int, version: int) -> None:
        with open(path, "a", encoding="ascii") as out:
            out.write(f"{listener} {key} {version}\n")
    return write
