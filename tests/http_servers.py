"""Real HTTP servers on 127.0.0.1 for the transport tests: Python's http.server (HTTP/1.1) and a small h2 server.

Both serve the same routes, shaped like Barco's consumer API: a plain answer, a binary poll answered in chunks
without Content-Length, a long poll the server holds before answering, and ways to break the exchange.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions

#: the body of a binary poll (Barco §5.2 shape: u16 item count, then items): sent in pieces
POLL_CHUNKS = [b"\x00\x01", bytes(range(256)) * 4, b"\xff" * 300]
POLL_BODY = b"".join(POLL_CHUNKS)


def hold_seconds(path: str) -> float:
    return int(parse_qs(urlsplit(path).query).get("ms", ["0"])[0]) / 1000


class Http1Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test output quiet
        pass

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _answer(self, status: int, body: bytes, **headers):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        route = urlsplit(self.path).path
        if route == "/status":
            self._answer(200, b"Consumer server listening", Content_Type="text/plain")
        elif route == "/truncated":  # promises 100 bytes, sends 10, closes
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.close_connection = True
        elif route == "/garbage":
            self.wfile.write(b"NOT HTTP AT ALL\r\n\r\n")
            self.close_connection = True
        elif route == "/until-close":  # no Content-Length, no chunking: the body ends at EOF
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"body until EOF")
            self.close_connection = True
        else:
            self._answer(404, b"no route")

    def do_POST(self):
        body = self._body()
        route = urlsplit(self.path).path
        if route == "/v1/consumer/poll":
            time.sleep(hold_seconds(self.path))  # a long poll: the server holds the request
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.polar.consumermessage")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in POLL_CHUNKS:
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
                time.sleep(0.01)
            self.wfile.write(b"0\r\n\r\n")
        elif route == "/echo":
            self._answer(200, body, Content_Type="application/octet-stream")
        else:
            self._answer(404, b"no route")


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # clients that leave early (a silent long poll, a prober's wrong hello) are part of the tests


class Http1Server:
    def __init__(self, tls: ssl.SSLContext | None = None):
        self.server = _QuietServer(("127.0.0.1", 0), Http1Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.address = self.server.server_address[:2]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class H2Server:
    """HTTP/2 with prior knowledge, one thread per connection; streams are answered as they come due, so a held
    stream does not hold the others back."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = self.sock.getsockname()[:2]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self.sock.close()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket):
        h2conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        h2conn.initiate_connection()
        conn.sendall(h2conn.data_to_send())
        requests: dict[int, dict] = {}
        due: list[tuple[float, int]] = []  # (when, stream id) of answers to send
        try:
            while True:
                now = time.monotonic()
                for when, stream_id in sorted(due):
                    if when <= now:
                        due.remove((when, stream_id))
                        if self._answer(h2conn, stream_id, requests.pop(stream_id)):
                            conn.sendall(h2conn.data_to_send())
                            return
                conn.sendall(h2conn.data_to_send())
                conn.settimeout(max(0.005, min((w for w, _ in due), default=now + 0.2) - time.monotonic()))
                try:
                    data = conn.recv(65536)
                except socket.timeout:
                    continue
                if not data:
                    return
                for event in h2conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        requests[event.stream_id] = {"headers": dict(event.headers), "body": b""}
                    elif isinstance(event, h2.events.DataReceived):
                        requests[event.stream_id]["body"] += event.data
                        h2conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        path = requests[event.stream_id]["headers"][":path"]
                        due.append((time.monotonic() + hold_seconds(path), event.stream_id))
        except (OSError, h2.exceptions.ProtocolError):  # a client that does not speak HTTP/2 (the prober's others)
            return
        finally:
            conn.close()

    @staticmethod
    def _answer(h2conn, stream_id: int, request: dict) -> bool:
        """Queue the answer to one stream; True when the connection must end after it."""
        route = urlsplit(request["headers"][":path"]).path
        if route == "/v1/consumer/poll":  # a binary body in several DATA frames, no content-length
            h2conn.send_headers(stream_id, [(":status", "200"),
                                            ("content-type", "application/vnd.polar.consumermessage")])
            for chunk in POLL_CHUNKS:
                h2conn.send_data(stream_id, chunk)
            h2conn.end_stream(stream_id)
        elif route == "/echo":
            h2conn.send_headers(stream_id, [(":status", "200"), ("content-length", str(len(request["body"])))])
            h2conn.send_data(stream_id, request["body"], end_stream=True)
        elif route == "/status":
            h2conn.send_headers(stream_id, [(":status", "200")])
            h2conn.send_data(stream_id, b"Consumer server listening", end_stream=True)
        elif route == "/refuse":
            h2conn.reset_stream(stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
        elif route == "/goaway":
            h2conn.close_connection(h2.errors.ErrorCodes.ENHANCE_YOUR_CALM, last_stream_id=0)
            return True
        else:
            h2conn.send_headers(stream_id, [(":status", "404")], end_stream=True)
        return False
