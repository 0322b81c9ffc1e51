"""The toy protocol's server: one thread, 127.0.0.1, an ephemeral port; PING -> PONG, anything else closes."""

from __future__ import annotations

import socketserver
import threading

from tests.toy.spec import PING, PONG


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        buffer = b""
        while True:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            buffer += chunk
            while len(buffer) >= len(PING):
                frame, buffer = buffer[: len(PING)], buffer[len(PING):]
                if frame != PING:
                    return
                self.request.sendall(PONG)


class ToyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()
