"""HTTP/1.1 through h11 (sans-IO): we own the socket, so every byte is recorded and every read has a deadline.

One request at a time on a keep-alive connection. A response's body may be Content-Length, chunked or
read-until-close; it is collected until its end or the deadline, so a long poll (the server holds the request)
is answered as soon as the server answers, within the deadline the caller gives.
"""

from __future__ import annotations

import ssl
import time

import h11

from wirecheck.protocols.spec import Endpoint, ProtocolSpec
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.transport.outcome import Outcome
from wirecheck.targets.transport.http import (Headers, HttpReply, RequestHeaders, as_bytes, record_reply,
                                              record_request)
from wirecheck.targets.transport.stream import CLOSED, PeerGone, StreamSession


class Http1Session(StreamSession):
    def __init__(self, address: tuple[str, int], endpoint: ProtocolSpec | Endpoint, transcript: Transcript,
                 deadline: float = 2.0, connect_timeout: float = 3.0, tls: ssl.SSLContext | None = None,
                 server_hostname: str | None = None):
        super().__init__(address, endpoint, transcript, deadline, connect_timeout, tls, server_hostname)
        self.host = server_hostname or f"{address[0]}:{address[1]}"
        self.h11 = h11.Connection(h11.CLIENT)
        self._ended: HttpReply | None = None  # set once the connection can carry no more requests

    def request(self, method: str, path: str, headers: RequestHeaders = (), body: bytes = b"",
                deadline: float | None = None) -> HttpReply:
        """Send one request and wait up to ``deadline`` seconds (the session's default when None) for its
        whole response."""
        if not self.send_request(method, path, headers, body):
            assert self._ended is not None  # send_request fails only on a connection that is over
            return self._ended
        return self.read_response(deadline)

    def send_request(self, method: str, path: str, headers: RequestHeaders = (), body: bytes = b"") -> bool:
        """Send a request (Host and Content-Length added unless given); False if the connection is over."""
        if self._ended is not None:
            return False
        sent: Headers = [(as_bytes(k), as_bytes(v)) for k, v in headers]
        names = {k.lower() for k, _ in sent}
        if b"host" not in names:
            sent.insert(0, (b"host", self.host.encode()))
        if body and b"content-length" not in names and b"transfer-encoding" not in names:
            sent.append((b"content-length", str(len(body)).encode()))
        data = self.h11.send(h11.Request(method=method, target=path, headers=sent))
        if body:
            data += self.h11.send(h11.Data(data=body))
        data += self.h11.send(h11.EndOfMessage())
        record_request(self.transcript, self.conn, method, path, "HTTP/1.1", sent, body)
        self.transcript.add(self.conn, "send", data, decode=False)
        try:
            self.stream.sendall(data)
            return True
        except OSError as exc:
            self._end(HttpReply(Outcome.RESET, detail=f"send failed: {exc}"))
            return False

    def read_response(self, deadline: float | None = None) -> HttpReply:
        """The response to the request sent last, or what happened instead within ``deadline`` seconds."""
        waited = self.deadline if deadline is None else deadline
        end = time.monotonic() + waited
        status, headers, body, eof = None, [], bytearray(), False
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                # after EOF h11 reports an unfinished response as a protocol error: it is a close, not garbage
                outcome = Outcome.CLOSED if eof else Outcome.MALFORMED
                return self._end(HttpReply(outcome, status, headers, bytes(body), detail=str(exc)))
            if event is h11.NEED_DATA:
                remaining = end - time.monotonic()
                if remaining <= 0:
                    reply = HttpReply(Outcome.SILENT, status, headers, bytes(body), detail=f"no whole response "
                                      f"within {waited:g}s")
                    record_reply(self.transcript, self.conn, reply)
                    return reply
                try:
                    chunk = self.stream.read(remaining)
                except PeerGone as gone:
                    if gone.kind != CLOSED:
                        return self._end(HttpReply(Outcome.RESET, status, headers, bytes(body), detail=gone.detail))
                    eof, chunk = True, b""
                    self.h11.receive_data(b"")  # h11 decides: the end of a read-until-close body, or too early
                if chunk:
                    self.transcript.add(self.conn, "recv", chunk, decode=False)
                    self.h11.receive_data(chunk)
            elif isinstance(event, h11.Response):
                status, headers = event.status_code, list(event.headers)
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > self.endpoint.max_body:
                    return self._end(HttpReply(Outcome.MALFORMED, status, headers, bytes(body), detail=(
                        f"body above the limit {self.endpoint.max_body}")))
            elif isinstance(event, h11.EndOfMessage):
                reply = HttpReply(Outcome.RESPONSE, status, headers + list(event.headers), bytes(body))
                record_reply(self.transcript, self.conn, reply)
                self._next_cycle()
                return reply
            elif isinstance(event, h11.ConnectionClosed):
                return self._end(HttpReply(Outcome.CLOSED, status, headers, bytes(body), detail="EOF from the peer"))
            # InformationalResponse (100 Continue and friends): keep reading for the final response

    def _next_cycle(self) -> None:
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
        else:  # Connection: close, HTTP/1.0, or a body read until EOF: no further request on this connection
            self._ended = HttpReply(Outcome.CLOSED, detail="the server ended the connection after its last response")

    def _end(self, reply: HttpReply) -> HttpReply:
        self._ended = HttpReply(reply.outcome, detail=reply.detail)
        record_reply(self.transcript, self.conn, reply)
        return reply
