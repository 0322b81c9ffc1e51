"""asyncio TCP front end: framing, request headers, version checks, dispatch."""
from __future__ import annotations

import asyncio
import logging
import struct

from . import codec
from . import errors as E
from .defects import defect
from .handlers import SUPPORTED, Broker, CloseConnection, Context

log = logging.getLogger("indep-kafka")

MAX_FRAME_BYTES = 104_857_600  # socket.request.max.bytes default
MAX_CONNECTIONS = 512
API_VERSIONS = 18


class Server:
    def __init__(self, host: str, port: int, node_id: int = 0, auto_create: bool = True,
                 initial_rebalance_delay_ms: int = 0) -> None:
        self.host = host
        self.requested_port = port
        self.node_id = node_id
        self.auto_create = auto_create
        self.initial_rebalance_delay_ms = initial_rebalance_delay_ms
        self.broker: Broker | None = None
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, self.host, self.requested_port, limit=1 << 16)
        port = self._server.sockets[0].getsockname()[1]
        self.broker = Broker(self.host, port, self.node_id, self.auto_create, self.initial_rebalance_delay_ms)
        return port

    async def serve_forever(self) -> None:
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    # ------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if len(self._connections) >= MAX_CONNECTIONS:
            writer.close()
            return
        self._connections.add(task)
        peer = writer.get_extra_info("peername")
        host = peer[0] if peer else "unknown"
        try:
            while True:
                try:
                    head = await reader.readexactly(4)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                (size,) = struct.unpack(">i", head)
                if size < 8 or size > MAX_FRAME_BYTES:
                    log.info("closing %s: frame size %d out of bounds", host, size)
                    return
                try:
                    frame = await reader.readexactly(size)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                try:
                    response = await self._handle(frame, host)
                except CloseConnection as exc:
                    log.info("closing %s: %s", host, exc)
                    return
                except Exception:  # never let one bad request take the broker down
                    log.exception("closing %s: unexpected error", host)
                    return
                if response is not None:
                    writer.write(struct.pack(">i", len(response)) + response)
                    await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            try:
                writer.close()
            except Exception:
                pass

    async def _handle(self, frame: bytes, client_host: str) -> bytes | None:
        assert self.broker is not None
        try:
            api_key, version, correlation_id = codec.parse_header_prefix(frame)
        except codec.DecodeError as exc:
            raise CloseConnection(str(exc)) from exc
        reply_cid = correlation_id + 1 if defect("wrong-correlation-id") else correlation_id

        if api_key not in SUPPORTED:
            if defect("unknown-api-answered"):
                return codec.response_header(reply_cid, False) + struct.pack(">h", E.UNSUPPORTED_VERSION)
            raise CloseConnection(f"unknown api key {api_key}")
        lo, hi = SUPPORTED[api_key]
        if not lo <= version <= hi:
            if api_key != API_VERSIONS:
                raise CloseConnection(f"api key {api_key} version {version} is not supported")
            if defect("apiversions-no-fallback"):
                raise CloseConnection("ApiVersions version not supported (defect)")
            # KIP-511: answer in the v0 format, error 35, listing the ApiVersions range we do support
            body = struct.pack(">hihhh", E.UNSUPPORTED_VERSION, 1, API_VERSIONS, lo, hi)
            return codec.response_header(reply_cid, False) + body

        flexible = codec.is_flexible(api_key, version)
        try:
            header = codec.parse_header(frame, flexible)
            request = codec.decode_body(api_key, version, frame, header.body_offset)
        except codec.DecodeError as exc:
            raise CloseConnection(f"malformed request (key {api_key} v{version}): {exc}") from exc

        ctx = Context(client_id=header.client_id or "", client_host="/" + client_host)
        body = await self.broker.handler(api_key)(ctx, version, request)
        if body is None:
            return None
        encoded = codec.encode_body(api_key, version, body)

        if api_key == API_VERSIONS:
            flexible_header = defect("apiversions-header-v1") and flexible  # KIP-511: always header v0
        else:
            flexible_header = flexible and not defect("flexible-response-header-v0")
        return codec.response_header(reply_cid, flexible_header) + encoded
