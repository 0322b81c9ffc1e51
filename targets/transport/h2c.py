"""HTTP/2 with prior knowledge through h2 (sans-IO): several concurrent streams on one connection, every byte
recorded, every wait bounded by a deadline.

Cleartext by default (h2c); with a TLS context it is HTTP/2 over TLS, and the context should offer ALPN "h2"
(``client_context(..., alpn=["h2"])``). A stream's reply is classified like an HTTP/1.1 reply; a reset stream
is RESET for that stream only, while GOAWAY, EOF, a TCP reset or bytes h2 refuses end every open stream.
"""

from __future__ import annotations

import ssl
import time
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.events
import h2.exceptions

from wirecheck.protocols.spec import Endpoint, ProtocolSpec
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.transport.outcome import Outcome
from wirecheck.targets.transport.http import (Headers, HttpReply, RequestHeaders, as_bytes, record_reply,
                                              record_request)
from wirecheck.targets.transport.stream import PeerGone, StreamSession


@dataclass
class _Pending:
    status: int | None = None
    headers: Headers = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)
    reply: HttpReply | None = None  # set when the stream is over


class H2Session(StreamSession):
    def __init__(self, address: tuple[str, int], endpoint: ProtocolSpec | Endpoint, transcript: Transcript,
                 deadline: float = 2.0, connect_timeout: float = 3.0, tls: ssl.SSLContext | None = None,
                 server_hostname: str | None = None):
        super().__init__(address, endpoint, transcript, deadline, connect_timeout, tls, server_hostname)
        self.authority = server_hostname or f"{address[0]}:{address[1]}"
        self.scheme = "https" if self.stream.tls else "http"
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
        self._streams: dict[int, _Pending] = {}
        self._ended: tuple[Outcome, str] | None = None  # the connection is over: how, and why
        self._preface: bytearray | None = bytearray()  # the server's first bytes, until they show a SETTINGS frame header
        self.h2.initiate_connection()  # the preface and our SETTINGS
        self._flush()

    # -- requests ---------------------------------------------------------------------------------------

    def request(self, method: str, path: str, headers: RequestHeaders = (), body: bytes = b"",
                deadline: float | None = None) -> HttpReply:
        """One request on a new stream, and its reply within ``deadline`` seconds (the default when None)."""
        return self.response(self.start(method, path, headers, body), deadline)

    def requests(self, requests: list[tuple], deadline: float | None = None) -> list[HttpReply]:
        """Several requests ``(method, path[, headers[, body]])`` on concurrent streams; their replies in the
        same order, all within one ``deadline``."""
        end = time.monotonic() + (self.deadline if deadline is None else deadline)
        stream_ids = [self.start(*request) for request in requests]
        return [self.response(stream_id, max(0.0, end - time.monotonic())) for stream_id in stream_ids]

    def start(self, method: str, path: str, headers: RequestHeaders = (), body: bytes = b"") -> int:
        """Open a stream and send the request on it without waiting for the reply; its stream id."""
        stream_id = self.h2.get_next_available_stream_id()
        while stream_id in self._streams:  # on a connection already over nothing is sent, so h2's count stands still
            stream_id += 2
        pending = self._streams[stream_id] = _Pending()
        extra = [(as_bytes(k).lower(), as_bytes(v)) for k, v in headers]
        if body and b"content-length" not in {k for k, _ in extra}:
            extra.append((b"content-length", str(len(body)).encode()))
        head = [(b":method", method.encode()), (b":scheme", self.scheme.encode()),
                (b":authority", self.authority.encode()), (b":path", path.encode())] + extra
        record_request(self.transcript, self.conn, method, path, "HTTP/2", extra, body, stream_id)
        if self._ended is not None:
            pending.reply = self._over(stream_id, pending, *self._ended)
            return stream_id
        self.h2.send_headers(stream_id, head, end_stream=not body)
        self._flush()
        if body:
            self._send_body(stream_id, body)
        return stream_id

    def response(self, stream_id: int, deadline: float | None = None) -> HttpReply:
        """The reply on ``stream_id``, or what happened instead within ``deadline`` seconds."""
        waited = self.deadline if deadline is None else deadline
        end = time.monotonic() + waited
        pending = self._streams[stream_id]
        while pending.reply is None:
            remaining = end - time.monotonic()
            if remaining <= 0:
                reply = HttpReply(Outcome.SILENT, pending.status, list(pending.headers), bytes(pending.body),
                                  f"no whole response within {waited:g}s", stream_id)
                record_reply(self.transcript, self.conn, reply)
                return reply
            self._pump(remaining)
        del self._streams[stream_id]
        return pending.reply

    # -- the connection ---------------------------------------------------------------------------------

    def _send_body(self, stream_id: int, body: bytes) -> None:
        """Send within the peer's flow-control windows, waiting (up to the deadline) for them to open."""
        pos, end = 0, time.monotonic() + self.deadline
        while pos < len(body) and self._ended is None and self._streams[stream_id].reply is None:
            size = min(self.h2.local_flow_control_window(stream_id), self.h2.max_outbound_frame_size, len(body) - pos)
            if size <= 0:
                if time.monotonic() >= end:
                    return  # the reply will be SILENT: the peer never opened its window
                self._pump(end - time.monotonic())
                continue
            self.h2.send_data(stream_id, body[pos : pos + size], end_stream=pos + size == len(body))
            pos += size
            self._flush()

    def _pump(self, timeout: float) -> None:
        """Read once (up to ``timeout``) and apply what arrived to the streams."""
        try:
            chunk = self.stream.read(timeout)
        except PeerGone as gone:
            return self._end_all(Outcome(gone.kind), gone.detail)
        if not chunk:
            return
        self.transcript.add(self.conn, "recv", chunk, decode=False)
        if self._preface is not None and not self._preface_ok(chunk):
            return self._end_all(Outcome.MALFORMED, "the server's first frame is not SETTINGS (RFC 9113 §3.4): "
                                 "not an HTTP/2 server?")
        try:
            events = self.h2.receive_data(chunk)
        except h2.exceptions.ProtocolError as exc:
            self._flush()  # h2 queued a GOAWAY naming the error
            return self._end_all(Outcome.MALFORMED, f"{type(exc).__name__}: {exc}")
        for event in events:
            self._apply(event)
        self._flush()

    def _preface_ok(self, chunk: bytes) -> bool:
        """h2 waits for a whole frame before judging it, and an HTTP/1.1 answer reads as a 4 MB frame header:
        judge the server preface's first frame header here instead (type 4, SETTINGS)."""
        preface = self._preface
        if preface is None:  # judged already
            return True
        preface += chunk
        if len(preface) < 9:
            return True
        ok = preface[3] == 0x4
        self._preface = None
        return ok

    def _apply(self, event) -> None:
        stream_id: int | None = getattr(event, "stream_id", None)  # connection-level events have none
        pending = self._streams.get(stream_id) if stream_id is not None else None
        if isinstance(event, h2.events.ConnectionTerminated):
            code = getattr(event.error_code, "name", event.error_code)
            self._end_all(Outcome.CLOSED, f"GOAWAY {code} (last stream {event.last_stream_id})")
        elif pending is None or pending.reply is not None:
            return  # connection-level events (settings, pings, windows) are h2's business
        elif isinstance(event, h2.events.ResponseReceived):
            pending.headers = [(k, v) for k, v in event.headers if not k.startswith(b":")]
            pending.status = int(dict(event.headers).get(b":status", b"0"))
        elif isinstance(event, h2.events.TrailersReceived):
            pending.headers += list(event.headers)
        elif isinstance(event, h2.events.DataReceived):
            pending.body += event.data
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if len(pending.body) > self.endpoint.max_body:
                self.h2.reset_stream(event.stream_id)
                pending.reply = self._over(event.stream_id, pending, Outcome.MALFORMED,
                                           f"body above the limit {self.endpoint.max_body}")
        elif isinstance(event, h2.events.StreamEnded):
            pending.reply = HttpReply(Outcome.RESPONSE, pending.status, pending.headers, bytes(pending.body),
                                      stream_id=event.stream_id)
            record_reply(self.transcript, self.conn, pending.reply)
        elif isinstance(event, h2.events.StreamReset):
            code = getattr(event.error_code, "name", event.error_code)
            pending.reply = self._over(event.stream_id, pending, Outcome.RESET, f"RST_STREAM {code}")

    def _over(self, stream_id: int, pending: _Pending, outcome: Outcome, detail: str) -> HttpReply:
        reply = HttpReply(outcome, pending.status, list(pending.headers), bytes(pending.body), detail, stream_id)
        record_reply(self.transcript, self.conn, reply)
        return reply

    def _end_all(self, outcome: Outcome, detail: str) -> None:
        self._ended = (outcome, detail)
        for stream_id, pending in self._streams.items():
            if pending.reply is None:
                pending.reply = self._over(stream_id, pending, outcome, detail)

    def _flush(self) -> None:
        data = self.h2.data_to_send()
        if not data:
            return
        self.transcript.add(self.conn, "send", data, decode=False)
        try:
            self.stream.sendall(data)
        except OSError as exc:
            self._end_all(Outcome.RESET, f"send failed: {exc}")

    def _before_close(self) -> None:
        if self._ended is None:
            self.h2.close_connection()
            self._flush()
