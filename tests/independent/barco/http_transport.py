"""A small HTTP server core: HTTP/1.1 (h11) and, optionally, h2c (h2) on the same port.

h2c is reached by prior knowledge (the client starts with the HTTP/2 preface) or by the
HTTP/1.1 ``Upgrade: h2c`` dance. Every request is handed, fully read, to an ``App``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from http import HTTPStatus
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import parse_qsl, unquote_to_bytes, urlsplit

import h11
import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

log = logging.getLogger("barco.http")

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
READ_SIZE = 64 * 1024
MAX_HEADER_BYTES = 16 * 1024
IDLE_TIMEOUT = 120.0  # keep-alive connections with no traffic are closed after this
MID_REQUEST_TIMEOUT = 30.0
_KNOWN = {s.value for s in HTTPStatus}


@dataclass
class Connection:
    """Per-TCP-connection state visible to the app (used by connection-bound consumers)."""

    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    protocol: str = "HTTP/1.1"
    attrs: dict = field(default_factory=dict)
    on_close: list[Callable[["Connection"], None]] = field(default_factory=list)


@dataclass
class Request:
    method: str
    target: str
    path_bytes: bytes  # percent-decoded path
    query: list[tuple[str, str]]
    headers: dict[str, str]  # lower-cased names; repeated headers joined with ", "
    body: bytes
    conn: Connection

    @property
    def path(self) -> str:
        return self.path_bytes.decode("utf-8", "replace")

    def arg(self, name: str) -> str | None:
        for k, v in self.query:
            if k == name:
                return v
        return None

    def args(self, name: str) -> list[str]:
        return [v for k, v in self.query if k == name]


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str | None = "text/plain; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)


def text(status: int, message: str, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(status, message.encode("utf-8"), "text/plain; charset=utf-8", headers or [])


class App:
    """What a port serves. ``precheck`` sees a request before its body is read (body=b"")."""

    max_body = 64 * 1024
    allow_h2 = True

    def precheck(self, req: Request) -> Response | None:
        return None

    async def handle(self, req: Request) -> Response:  # pragma: no cover - abstract
        raise NotImplementedError


def _make_request(method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], conn: Connection) -> Request:
    joined: dict[str, str] = {}
    for name, value in headers:
        key = name.decode("latin-1").lower()
        val = value.decode("latin-1")
        joined[key] = f"{joined[key]}, {val}" if key in joined else val
    raw_target = target.decode("latin-1")
    parts = urlsplit(raw_target)
    return Request(
        method=method.decode("latin-1"),
        target=raw_target,
        path_bytes=unquote_to_bytes(parts.path),
        query=parse_qsl(parts.query, keep_blank_values=True),
        headers=joined,
        body=b"",
        conn=conn,
    )


async def _call_app(app: App, req: Request) -> Response:
    try:
        return await app.handle(req)
    except Exception:
        log.exception("handler failed for %s %s", req.method, req.target)
        return text(500, "Internal server error")


class HttpServer:
    def __init__(self, app: App, name: str) -> None:
        self.app = app
        self.name = name

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Connection()
        try:
            first = await asyncio.wait_for(reader.read(READ_SIZE), IDLE_TIMEOUT)
            # wait for enough bytes to tell the HTTP/2 preface apart
            while first and len(first) < len(H2_PREFACE) and H2_PREFACE.startswith(first):
                more = await asyncio.wait_for(reader.read(READ_SIZE), MID_REQUEST_TIMEOUT)
                if not more:
                    break
                first += more
            if not first:
                return
            if first.startswith(H2_PREFACE):
                if self.app.allow_h2:
                    await H2Handler(self.app, conn, reader, writer).run(first, upgrade=None)
                else:
                    writer.write(_plain_close(505, "HTTP Version Not Supported", b"HTTP/2 is not supported on this port"))
                    await writer.drain()
                return
            await self._serve_h11(conn, reader, writer, first)
        except (ConnectionError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            pass
        except Exception:
            log.exception("%s connection failed", self.name)
        finally:
            for callback in conn.on_close:
                try:
                    callback(conn)
                except Exception:
                    log.exception("on_close callback failed")
            writer.close()
            try:
                await writer.wait_closed()
            except Exception:
                pass

    async def _serve_h11(self, conn: Connection, reader, writer, data: bytes) -> None:
        h = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADER_BYTES)
        h.receive_data(data)

        async def next_event(timeout: float):
            while True:
                event = h.next_event()
                if event is not h11.NEED_DATA:
                    return event
                chunk = await asyncio.wait_for(reader.read(READ_SIZE), timeout)
                h.receive_data(chunk)  # b"" signals EOF

        async def send(*events) -> None:
            for ev in events:
                writer.write(h.send(ev))
            await writer.drain()

        async def respond(resp: Response, keep_open: bool = True) -> None:
            headers = [(k, v) for k, v in resp.headers]
            if resp.content_type is not None:
                headers.append(("Content-Type", resp.content_type))
            headers.append(("Content-Length", str(len(resp.body))))
            if not keep_open:
                headers.append(("Connection", "close"))
            reason = HTTPStatus(resp.status).phrase.encode() if resp.status in _KNOWN else b""
            await send(h11.Response(status_code=resp.status, headers=headers, reason=reason), h11.Data(data=resp.body), h11.EndOfMessage())

        while True:
            try:
                event = await next_event(IDLE_TIMEOUT if h.their_state is h11.IDLE else MID_REQUEST_TIMEOUT)
            except h11.RemoteProtocolError as exc:
                if h.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                    status = exc.error_status_hint
                    await respond(text(status, f"Bad request: {exc}"), keep_open=False)
                return
            if isinstance(event, (h11.ConnectionClosed,)) or event is h11.PAUSED:
                return
            if not isinstance(event, h11.Request):
                return
            req = _make_request(event.method, event.target, list(event.headers), conn)
            early = self.app.precheck(req)
            if early is None and req.headers.get("content-length", "0").strip().isdigit():
                if int(req.headers.get("content-length", "0")) > self.app.max_body:
                    early = text(413, "Request body too large")
            if early is not None:
                await respond(early, keep_open=False)
                return
            if h.client_is_waiting_for_100_continue:
                await send(h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue"))
            body = bytearray()
            too_large = False
            while True:
                try:
                    ev = await next_event(MID_REQUEST_TIMEOUT)
                except h11.RemoteProtocolError as exc:
                    await respond(text(exc.error_status_hint, f"Bad request: {exc}"), keep_open=False)
                    return
                if isinstance(ev, h11.Data):
                    if len(body) + len(ev.data) > self.app.max_body:
                        too_large = True
                    else:
                        body += ev.data
                elif isinstance(ev, h11.EndOfMessage):
                    break
                else:
                    return  # ConnectionClosed mid-body
            if too_large:
                await respond(text(413, "Request body too large"), keep_open=False)
                return
            req.body = bytes(body)

            upgrade = req.headers.get("upgrade", "").lower()
            if self.app.allow_h2 and upgrade == "h2c" and "http2-settings" in req.headers:
                if h.their_state is h11.MIGHT_SWITCH_PROTOCOL:
                    await send(h11.InformationalResponse(status_code=101, headers=[("Connection", "Upgrade"), ("Upgrade", "h2c")], reason=b"Switching Protocols"))
                    leftover, _closed = h.trailing_data
                    conn.protocol = "HTTP/2"
                    await H2Handler(self.app, conn, reader, writer).run(leftover, upgrade=(req.headers["http2-settings"], req))
                    return

            resp = await _call_app(self.app, req)
            await respond(resp)
            if h.our_state is h11.MUST_CLOSE or h.their_state is h11.MUST_CLOSE:
                return
            try:
                h.start_next_cycle()
            except h11.LocalProtocolError:
                return


def _plain_close(status: int, reason: str, body: bytes) -> bytes:
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("latin-1") + body


class H2Handler:
    MAX_STREAMS = 100

    def __init__(self, app: App, conn: Connection, reader, writer) -> None:
        self.app = app
        self.conn = conn
        conn.protocol = "HTTP/2"
        self.reader = reader
        self.writer = writer
        self.h2 = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=False, header_encoding=None)
        )
        self.streams: dict[int, dict] = {}
        self.window_open = asyncio.Event()
        self.tasks: set[asyncio.Task] = set()
        self.closed = False

    async def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def run(self, initial: bytes, upgrade) -> None:
        settings = {
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.MAX_STREAMS,
            h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: MAX_HEADER_BYTES * 4,
        }
        if upgrade is not None:
            settings_header, first_req = upgrade
            try:
                self.h2.initiate_upgrade_connection(settings_header.encode("latin-1"))
            except Exception:
                return
            self.h2.update_settings(settings)
            first_req.conn = self.conn
            self._spawn(1, first_req)
        else:
            self.h2.initiate_connection()
            self.h2.update_settings(settings)
        await self.flush()
        data = initial
        try:
            while True:
                if data:
                    try:
                        events = self.h2.receive_data(data)
                    except h2.exceptions.ProtocolError:
                        await self.flush()  # GOAWAY queued by h2
                        return
                    for event in events:
                        if not self._on_event(event):
                            await self.flush()
                            return
                    await self.flush()
                data = await asyncio.wait_for(self.reader.read(READ_SIZE), IDLE_TIMEOUT)
                if not data:
                    return
        finally:
            self.closed = True
            self.window_open.set()
            for task in list(self.tasks):
                task.cancel()

    def _on_event(self, event) -> bool:
        if isinstance(event, h2.events.RequestReceived):
            headers = dict()
            plain = []
            for name, value in event.headers:
                if name.startswith(b":"):
                    headers[name] = value
                else:
                    plain.append((name, value))
            req = _make_request(headers.get(b":method", b"GET"), headers.get(b":path", b"/"), plain, self.conn)
            state = {"req": req, "body": bytearray(), "too_large": False}
            self.streams[event.stream_id] = state
            early = self.app.precheck(req)
            if early is not None:
                state["early"] = early
            if event.stream_ended is not None:
                self._finish(event.stream_id)
        elif isinstance(event, h2.events.DataReceived):
            state = self.streams.get(event.stream_id)
            if event.flow_controlled_length:
                try:
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                except Exception:
                    pass
            if state is not None:
                if len(state["body"]) + len(event.data) > self.app.max_body:
                    state["too_large"] = True
                    state["body"] = bytearray()
                elif not state["too_large"]:
                    state["body"] += event.data
            if event.stream_ended is not None:
                self._finish(event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self._finish(event.stream_id)
        elif isinstance(event, h2.events.StreamReset):
            self.streams.pop(event.stream_id, None)
            self.window_open.set()
        elif isinstance(event, (h2.events.WindowUpdated, h2.events.RemoteSettingsChanged)):
            self.window_open.set()
        elif isinstance(event, h2.events.ConnectionTerminated):
            return False
        return True

    def _finish(self, stream_id: int) -> None:
        state = self.streams.get(stream_id)
        if state is None or state.get("done"):
            return
        state["done"] = True
        req: Request = state["req"]
        req.body = bytes(state["body"])
        if state["too_large"]:
            state["early"] = text(413, "Request body too large")
        self._spawn(stream_id, req, state.get("early"))

    def _spawn(self, stream_id: int, req: Request, early: Response | None = None) -> None:
        task = asyncio.ensure_future(self._respond(stream_id, req, early))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _respond(self, stream_id: int, req: Request, early: Response | None) -> None:
        resp = early if early is not None else await _call_app(self.app, req)
        headers = [(":status", str(resp.status))]
        headers += [(k.lower(), v) for k, v in resp.headers]
        if resp.content_type is not None:
            headers.append(("content-type", resp.content_type))
        headers.append(("content-length", str(len(resp.body))))
        try:
            if not resp.body:
                self.h2.send_headers(stream_id, headers, end_stream=True)
                await self.flush()
                return
            self.h2.send_headers(stream_id, headers)
            await self.flush()
            body = memoryview(resp.body)
            while body:
                while True:
                    if self.closed:
                        return
                    window = min(self.h2.local_flow_control_window(stream_id), self.h2.max_outbound_frame_size)
                    if window > 0:
                        break
                    self.window_open.clear()
                    await self.window_open.wait()
                piece, body = body[:window], body[window:]
                self.h2.send_data(stream_id, bytes(piece), end_stream=not body)
                await self.flush()
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError, KeyError):
            return
        except ConnectionError:
            return
        finally:
            self.streams.pop(stream_id, None)
