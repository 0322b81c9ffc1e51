"""The RustLog personality: the per-connection loop, and the request handlers by kind.

Connection model (decision D13): frames on a connection are read, handled and answered strictly one at a time,
so pipelined requests are answered in order. A framing violation (zero length, over MAX_FRAME, invalid UTF-8,
malformed JSON) is answered with an Error best effort and ends the connection; an invalid request is answered
with Error 400 and the connection stays open; an unexpected exception in a handler is answered with 500 and the
connection stays open.

The handlers live in one module per request family (produce.py, fetch.py, offsets.py, admin.py), each a mixin of
the personality that registers its request kinds in its ``HANDLERS`` table; :data:`HANDLERS` joins the tables.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
from types import MethodType

from wirecheck.broker.core import BrokerConfig, Connection, IdleTimeout
from wirecheck.broker.framed import BadLength, FrameShape, serve_frames
from wirecheck.broker.rustlog import admin, fetch, offsets, produce
from wirecheck.broker.rustlog.faults import RustLogFaults, RustLogVariants
from wirecheck.broker.rustlog.schema import UnknownType, parse_request
from wirecheck.broker.rustlog.store import Store
from wirecheck.broker.rustlog.wire import (
    INSUFFICIENT_SPACE, INTERNAL_SERVER_ERROR, INVALID_REQUEST, LENGTH, MAX_FRAME, RECORD_TOO_LARGE, STORAGE_ERROR,
    TOPIC_NOT_FOUND, Encoder, RequestError, TooDeep, decode_text, parse_json,
)

log = logging.getLogger("wirecheck.broker.rustlog")

PIPELINE_QUEUE = 16  # fault pipeline-queue-drops: frames waiting for the handler

#: request kind -> its handler (unbound; the personality binds them), from each family's table
HANDLERS = produce.HANDLERS | fetch.HANDLERS | offsets.HANDLERS | admin.HANDLERS


class RustLogPersonality(produce.ProduceHandlers, fetch.FetchHandlers, offsets.OffsetHandlers, admin.AdminHandlers):
    name = "rustlog"

    def __init__(self, config: BrokerConfig):
        self.faults = config.faults_as(RustLogFaults)
        self.variants = config.variants_as(RustLogVariants)
        self.max_frame = config.max_frame or MAX_FRAME
        self.max_record = produce.max_record_for(self.max_frame)
        # MIN_FRAME_SIZE is 1; under max-frame-rejected a frame of exactly MAX_FRAME is refused too.
        accepted = self.max_frame - 1 if self.faults.max_frame_rejected else self.max_frame
        self.frame_shape = FrameShape(header_size=LENGTH.size, length_at=0, length_format=LENGTH.format,
                                      min_length=1, max_length=accepted)
        self.encoder = Encoder(self.faults, self.variants)
        if self.variants.record_limit_10mb:
            self.max_record = 10 * 1024 * 1024  # the seed's literal limit: whatever fits in a frame is accepted
        self.store = Store(
            config.data_dir if config.data_dir is None else config.data_dir / "rustlog",
            segment_records=config.segment_records,
            retention_records=config.retention_records,
            fsync=config.fsync != "none",
            cache_bytes=config.cache_bytes,
            log_end_short=self.faults.safety_log_end_reused,
        )
        self.open_connections = 0
        self.header_lock = asyncio.Lock()  # fault header-read-global-lock
        self.handlers = {kind: MethodType(handler, self) for kind, handler in HANDLERS.items()}

    # -- connection loop --------------------------------------------------------------------------------------
    async def serve(self, conn: Connection) -> None:
        self.open_connections += 1
        try:
            if self.faults.pipeline_queue_drops:
                await self._serve_queued(conn)
            elif self.faults.split_header_misread or self.faults.header_read_global_lock:
                await self._serve_naive_header(conn)
            else:
                await serve_frames(conn, self.frame_shape, lambda header, body: self._handle(conn, body),
                                   lambda length: self._bad_length(conn, length))
        finally:
            self.open_connections -= 1

    async def _serve_naive_header(self, conn: Connection) -> None:
        """serve_frames with the length prefix read as two faults read it (one defect each; neither runs with
        the faults that skip or drain a bad length): split-header-misread takes it from one read, however few
        bytes that returned (a naive recv); header-read-global-lock reads it under one lock all connections
        share (a blocking read in a single-threaded loop), so a peer that stops inside a header stalls all."""
        while True:
            if self.faults.split_header_misread:
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
            if self.faults.zero_length_ignored:
                return BadLength.SKIP
            if self.variants.zero_length_close_silent:
                return BadLength.CLOSE  # D1: the Error before the close is optional
            await self._fatal(conn, INVALID_REQUEST, "zero-length frame (MIN_FRAME_SIZE is 1)")
            return BadLength.CLOSE
        details = {"length": length, "max_frame": self.max_frame}
        message = f"frame too large: {length} bytes (max {self.max_frame})"
        if self.faults.oversize_kept_open:
            await self._send(conn, self.encoder.error(RECORD_TOO_LARGE, message, details))
            return BadLength.DRAIN
        if self.variants.oversize_close_silent:
            return BadLength.CLOSE  # D1: closing at once, no Error, is the other permitted outcome
        # D1: the body is never read (nor allocated); the Error may be lost to a RST, as the suite allows.
        await self._fatal(conn, RECORD_TOO_LARGE, message, details)
        return BadLength.CLOSE

    async def _handle(self, conn: Connection, body: bytes) -> bool:
        """Handle and answer one frame. False when the connection must end."""
        not_request = False  # well-formed JSON of the wrong shape (variant not-object-closes)
        try:
            # The frame's bytes are a temporary: freed once decoded, so peak memory stays near 2x the frame.
            text = decode_text(body, lenient_utf8=self.faults.invalid_utf8_accepted,
                               keep_open_on_malformed=self.faults.malformed_json_kept_open)
            del body
            obj = parse_json(text, keep_open_on_malformed=self.faults.malformed_json_kept_open)
            del text
            not_request = not isinstance(obj, dict) or not isinstance(obj.get("type"), str)
            kind, fields = parse_request(obj, floats_ok=self.faults.float_accepted,
                                         via_double=self.faults.u64_via_double)
            del obj
            response = await self._dispatch(kind, fields)
        except RequestError as exc:
            if isinstance(exc, UnknownType) and self.faults.unknown_type_closes:
                return False
            if isinstance(exc, TooDeep) and self.faults.crash_on_deep_json:
                os._exit(70)
            if isinstance(exc, TooDeep) and self.faults.deep_json_silent:
                return True
            if exc.code == TOPIC_NOT_FOUND and self.faults.not_found_closes:
                exc.close = True
            if exc.close or (isinstance(exc, TooDeep) and self.variants.deep_nesting_closes) \
                    or (not_request and self.variants.not_object_closes):
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

    async def close(self) -> None:
        """Nothing buffered: every acknowledged batch was written (and by policy fsynced) before its answer; this
        only closes the partition files."""
        self.store.close()
