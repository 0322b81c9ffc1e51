"""A blocking loopback client for the broker's own tests: exact reads, and Closed when the peer goes away.

Each protocol's test support subclasses it with its framing and messages.
"""

from __future__ import annotations

import socket


class Closed(Exception):
    """The broker closed (or reset) the connection."""


class RawClient:
    def __init__(self, port: int, timeout: float):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.settimeout(timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _exactly(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            try:
                chunk = self.sock.recv(min(n - len(data), 1 << 20))
            except ConnectionResetError:
                raise Closed("reset") from None
            if not chunk:
                raise Closed(f"closed after {len(data)} of {n} bytes")
            data += chunk
        return bytes(data)
