"""The asyncio TCP server: framing, the per-connection loop and the
connection-level error policy (which errors close, which are answered)."""

from __future__ import annotations

import asyncio
import logging

from .defects import Defects
from .handlers import Handlers
from .protocol import (
    LENGTH,
    MAX_FRAME_SIZE,
    Code,
    ProtocolViolation,
    RequestError,
    UnknownType,
    decode_payload,
    encode_frame,
    error_body,
)
from .storage import Store

log = logging.getLogger("rustlog-independent")

# DECISION: once the first byte of a frame has arrived, the whole frame must
# arrive within this many seconds, or the connection is closed.
DEFAULT_FRAME_TIMEOUT = 10.0
# DECISION: a connection with no frame in progress is closed after this long.
DEFAULT_IDLE_TIMEOUT = 300.0
# DECISION: connections beyond this many are closed at once.
DEFAULT_MAX_CONNECTIONS = 256
# Writing one response (to a client that does not read) may take this long.
WRITE_TIMEOUT = 30.0
# After a fatal framing error: how long / how much to drain before closing,
# so the client can read the Error frame instead of getting a RST.
LINGER_SECONDS = 0.5
LINGER_BYTES = 16 * 1024 * 1024
# Payloads larger than this are JSON-decoded in a worker thread.
BIG_PAYLOAD = 256 * 1024
# The "ignore-frame-limit" defect still refuses frames above this.
DEFECT_FRAME_CAP = 64 * 1024 * 1024


class _Close(Exception):
    """Internal: stop serving this connection (already answered if needed)."""


class Server:
    def __init__(
        self,
        defects: Defects | None = None,
        *,
        frame_timeout: float = DEFAULT_FRAME_TIMEOUT,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ):
        self.defects = defects or Defects()
        self.store = Store()
        self.handlers = Handlers(self.store, self.defects)
        self.frame_timeout = frame_timeout
        self.idle_timeout = idle_timeout
        self.max_connections = max_connections
        self._server: asyncio.base_events.Server | None = None
        self._connections = 0
        self._tasks: set[asyncio.Task] = set()

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        self._server = await asyncio.start_server(self._client, host, port, limit=64 * 1024)
        return self._server.sockets[0].getsockname()[1]

    async def serve_forever(self) -> None:
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    # --- one connection ---------------------------------------------------
    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._connections >= self.max_connections:
            writer.close()
            return
        self._connections += 1
        self.store.metrics.active_connections = self._connections
        try:
            while True:
                payload = await self._read_frame(reader, writer)
                if payload is None:
                    break
                if self.defects.on("pipelined-out-of-order"):
                    self._spawn_unordered(payload, writer)
                    continue
                body = await self._answer(payload, writer)
                await self._send(writer, body)
        except _Close:
            pass
        except (ConnectionError, OSError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except Exception:  # never let one connection take the server down
            log.exception("unexpected error on a connection")
        finally:
            self._connections -= 1
            self.store.metrics.active_connections = self._connections
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass  # the peer is gone already; nothing left to do

    async def _read_frame(self, reader, writer) -> bytes | None:
        """One frame's payload, or None on a clean EOF / idle timeout."""
        try:
            first = await asyncio.wait_for(reader.readexactly(1), self.idle_timeout)
        except (asyncio.IncompleteReadError, TimeoutError):
            return None
        try:
            async with asyncio.timeout(self.frame_timeout):
                header = first + await reader.readexactly(LENGTH.size - 1)
                (length,) = LENGTH.unpack(header)
                limit = DEFECT_FRAME_CAP if self.defects.on("ignore-frame-limit") else MAX_FRAME_SIZE
                if length == 0:
                    if self.defects.on("zero-length-frame-keeps-open"):
                        return b""  # answered with a 400 by _answer
                    await self._fatal(reader, writer, Code.INVALID_REQUEST, "zero-length frame")
                if length > limit:
                    await self._fatal(
                        reader, writer, Code.RECORD_TOO_LARGE,
                        f"frame too large: {length} bytes (max: {MAX_FRAME_SIZE})",
                    )
                return await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return None  # EOF inside a frame: close quietly
        except TimeoutError:
            await self._fatal(
                reader, writer, Code.INVALID_REQUEST,
                f"frame not completed within {self.frame_timeout:g} s", linger=False,
            )

    def _spawn_unordered(self, payload: bytes, writer) -> None:
        """The "pipelined-out-of-order" defect: every frame is answered by its
        own task; Ping at once, everything else 20 ms later."""

        async def answer():
            try:
                if not payload.startswith(b'{"type":"Ping"') and b'"Ping"' not in payload[:64]:
                    await asyncio.sleep(0.02)
                await self._send(writer, await self._answer(payload, writer))
            except (_Close, ConnectionError, OSError, TimeoutError):
                writer.close()

        task = asyncio.ensure_future(answer())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, payload: bytes, writer) -> dict:
        self.store.metrics.requests_total += 1
        if not payload and self.defects.on("zero-length-frame-keeps-open"):
            return self._error(Code.INVALID_REQUEST, "zero-length frame", None)
        try:
            lenient = self.defects.on("invalid-utf8-accepted")
            if len(payload) > BIG_PAYLOAD:
                # Parsing megabytes of JSON takes a while; do it off the event
                # loop so other connections are not held up.
                request = await asyncio.to_thread(decode_payload, payload, lenient_utf8=lenient)
            else:
                request = decode_payload(payload, lenient_utf8=lenient)
            return await self.handlers.dispatch(request)
        except UnknownType as err:
            if self.defects.on("unknown-type-closes"):
                raise _Close()
            return self._error(err.code, err.message, err.details)
        except RequestError as err:
            return self._error(err.code, err.message, err.details)
        except ProtocolViolation as err:
            if err.kind == "json" and self.defects.on("malformed-json-keeps-open"):
                return self._error(err.code, err.message, None)
            await self._fatal(None, writer, err.code, err.message, linger=False)
        except Exception:
            log.exception("handler failed")
            return self._error(Code.INTERNAL_SERVER_ERROR, "internal server error", None)

    def _error(self, code, message, details) -> dict:
        self.store.metrics.errors_total += 1
        return error_body(code, message, details, with_details=not self.defects.on("error-without-details"))

    async def _send(self, writer, body: dict) -> None:
        frame = encode_frame(body)
        if len(frame) - LENGTH.size > MAX_FRAME_SIZE and not self.defects.on("fetch-exceeds-frame-limit"):
            # must never happen; stay within the limit
            frame = encode_frame(self._error(Code.INTERNAL_SERVER_ERROR, "response too large", None))
        writer.write(frame)
        await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT)

    async def _fatal(self, reader, writer, code, message, *, linger: bool = True):
        """Best-effort Error frame, then close the connection."""
        try:
            await self._send(writer, self._error(code, message, None))
            if linger and reader is not None:
                # Half-close and swallow what the client is still sending, so
                # the Error frame is not lost to a RST.
                if writer.can_write_eof():
                    writer.write_eof()
                loop = asyncio.get_running_loop()
                deadline = loop.time() + LINGER_SECONDS
                drained = 0
                while drained < LINGER_BYTES:
                    left = deadline - loop.time()
                    if left <= 0:
                        break
                    chunk = await asyncio.wait_for(reader.read(65536), left)
                    if not chunk:
                        break
                    drained += len(chunk)
        except (ConnectionError, OSError, TimeoutError):
            pass
        raise _Close()
