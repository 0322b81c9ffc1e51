"""HTTP/1.1 (h11) and HTTP/2 with prior knowledge (h2) for the Barco endpoints: sans-IO codecs driven over one
broker connection. No HTTP parsing here: h11 and h2 parse, this module moves bytes and calls the handler.

The handler gets a whole :class:`Request` and returns a :class:`Response`; its ``conn`` (one per TCP connection,
the same for every request and stream on it) is how connection-bound consumers are recognised. A request body
over ``max_body`` is answered 400 and the connection closed, so memory stays bounded whatever a peer sends.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

import h11
import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions

from wirecheck.broker.barco.faults import BarcoFaults
from wirecheck.broker.core import Connection, IdleTimeout

log = logging.getLogger("wirecheck.broker.barco")
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
READ = 65536


@dataclass
class Request:
    method: str
    path: str  # percent-decoded
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    chunked: bool
    conn: object
    http2: bool = False

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_type: str = "text/plain; charset=utf-8"


Handler = Callable[[Request], Awaitable[Response]]


class ConnectionContext:
    """One TCP connection's identity for the handler; ``on_close`` callbacks run when it ends."""

    def __init__(self):
        self.on_close: list[Callable[[], None]] = []


async def _read(conn: Connection) -> bytes:
    try:
        async with asyncio.timeout(conn.idle_timeout):
            return await conn.reader.read(READ)
    except TimeoutError:
        raise IdleTimeout("idle") from None


def _request(method: bytes, target: bytes, headers, body: bytes, chunked: bool, ctx, http2: bool) -> Request:
    parts = urlsplit(target.decode("latin-1"))
    return Request(method.decode("latin-1"), unquote(parts.path), parse_qs(parts.query, keep_blank_values=True),
                   {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}, body, chunked, ctx, http2)


async def serve(conn: Connection, handle: Handler, max_body: int, *, faults: BarcoFaults,
                allow_h2: bool = True) -> None:
    """Serve one connection; ``faults`` are the personality's (the HTTP ones apply here)."""
    ctx = ConnectionContext()
    try:
        first = await _read(conn)
        if not first:
            return
        if allow_h2 and PREFACE.startswith(first[: len(PREFACE)]):
            while len(first) < len(PREFACE) and PREFACE.startswith(first):
                more = await _read(conn)
                if not more:
                    return
                first += more
            if first.startswith(PREFACE):
                return await _serve_h2(conn, handle, max_body, first, ctx, faults)
        await _serve_h11(conn, handle, max_body, first, ctx, faults)
    finally:
        for callback in ctx.on_close:
            callback()


def _head(response: Response) -> list[tuple[str, str]]:
    headers = list(response.headers)
    if response.status != 204 and response.body is not None:
        headers.append(("content-type", response.content_type))
    return headers


async def _serve_h11(conn: Connection, handle: Handler, max_body: int, data: bytes, ctx,
                     faults: BarcoFaults) -> None:
    http = h11.Connection(h11.SERVER, max_incomplete_event_size=16384)
    http.receive_data(data)
    while True:
        try:
            request, body = None, bytearray()
            while True:
                event = http.next_event()
                if event is h11.NEED_DATA:
                    chunk = await _read(conn)
                    http.receive_data(chunk)
                    if not chunk and http.their_state in (h11.IDLE, h11.DONE) and request is None:
                        return
                    continue
                if isinstance(event, h11.ConnectionClosed):
                    return
                if isinstance(event, h11.Request):
                    request = event
                elif isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > max_body:
                        await _send11(conn, http, Response(400, b"Request body too large"), close=True)
                        return
                elif isinstance(event, h11.EndOfMessage):
                    break
        except h11.RemoteProtocolError as exc:
            if http.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                status = 200 if faults.http_bad_request_200 else exc.error_status_hint
                await _send11(conn, http, Response(status, f"Bad request: {exc}".encode()), close=True)
            return
        chunked = any(k.lower() == b"transfer-encoding" for k, _ in request.headers)
        response = await handle(_request(request.method, request.target, request.headers, bytes(body), chunked, ctx,
                                         False))
        await _send11(conn, http, response)
        if http.our_state is h11.MUST_CLOSE or http.their_state is h11.MUST_CLOSE:
            return
        if faults.http_pipelining_dropped:  # a fresh parser: requests already received are lost
            http = h11.Connection(h11.SERVER, max_incomplete_event_size=16384)
            continue
        http.start_next_cycle()


async def _send11(conn: Connection, http: h11.Connection, response: Response, close: bool = False) -> None:
    headers = _head(response) + ([("connection", "close")] if close else [])
    if response.status != 204:
        headers.append(("content-length", str(len(response.body))))
    out = http.send(h11.Response(status_code=response.status, headers=headers))
    if response.body and response.status != 204:
        out += http.send(h11.Data(data=response.body))
    out += http.send(h11.EndOfMessage())
    await conn.write(out)


async def _serve_h2(conn: Connection, handle: Handler, max_body: int, data: bytes, ctx,
                    faults: BarcoFaults) -> None:
    h2c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
    h2c.initiate_connection()
    streams: dict[int, list] = {}  # stream id -> [headers, body]
    outgoing: dict[int, memoryview] = {}  # response bodies waiting for flow-control window
    answered = 0  # streams answered on this connection
    while True:
        try:
            events = h2c.receive_data(data)
        except h2.exceptions.StreamClosedError:  # a frame for a stream we already ended (e.g. a late RST_STREAM)
            events = []
        except h2.exceptions.ProtocolError:
            await conn.write(h2c.data_to_send())
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                streams[event.stream_id] = [event.headers, bytearray()]
            elif isinstance(event, h2.events.DataReceived):
                h2c.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                entry = streams.get(event.stream_id)
                if entry is not None:
                    entry[1] += event.data
                    if len(entry[1]) > max_body:
                        streams.pop(event.stream_id)
                        _respond_h2(h2c, event.stream_id, Response(400, b"Request body too large"), outgoing)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id in streams:
                headers, body = streams.pop(event.stream_id)
                if faults.h2c_one_stream and answered:
                    h2c.reset_stream(event.stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
                    continue
                answered += 1
                pseudo = dict(headers)
                request = _request(pseudo.get(b":method", b"GET"), pseudo.get(b":path", b"/"),
                                   [(k, v) for k, v in headers if not k.startswith(b":")], bytes(body), False, ctx,
                                   True)
                _respond_h2(h2c, event.stream_id, await handle(request), outgoing)
            elif isinstance(event, h2.events.StreamReset):
                if faults.h2_reset_ends_connection:
                    h2c.close_connection()
                    await conn.write(h2c.data_to_send())
                    return
                streams.pop(event.stream_id, None)
                outgoing.pop(event.stream_id, None)
            elif isinstance(event, h2.events.ConnectionTerminated):
                await conn.write(h2c.data_to_send())
                return
        _pump_h2(h2c, outgoing)
        await conn.write(h2c.data_to_send())
        data = await _read(conn)
        if not data:
            return


def _respond_h2(h2c, stream_id: int, response: Response, outgoing: dict) -> None:
    headers = [(":status", str(response.status))] + _head(response)
    if response.status != 204:
        headers.append(("content-length", str(len(response.body))))
    try:
        h2c.send_headers(stream_id, headers, end_stream=not response.body or response.status == 204)
    except h2.exceptions.StreamClosedError:
        return
    if response.body and response.status != 204:
        outgoing[stream_id] = memoryview(response.body)


def _pump_h2(h2c, outgoing: dict) -> None:
    """Send what the flow-control windows allow; the rest waits for WINDOW_UPDATE (the next pass)."""
    for stream_id in list(outgoing):
        view = outgoing[stream_id]
        try:
            while view:
                size = min(h2c.local_flow_control_window(stream_id), h2c.max_outbound_frame_size, len(view))
                if size <= 0:
                    break
                h2c.send_data(stream_id, view[:size].tobytes(), end_stream=size == len(view))
                view = view[size:]
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            view = memoryview(b"")
        if view:
            outgoing[stream_id] = view
        else:
            outgoing.pop(stream_id)
