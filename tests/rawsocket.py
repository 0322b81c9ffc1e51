"""Shared pieces of the broker's own tests: a blocking loopback client (exact reads, Closed when the peer goes
away) and a personality served from a background thread. Each protocol's test support subclasses them.
"""

from __future__ import annotations

import asyncio
import socket
import threading


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


class InThreadBroker:
    """One broker personality on an ephemeral port, served by an event loop in a background thread.

    Fast to start, and a test can reach into ``personality``. Subclasses set ``client_class`` and implement
    ``create_personality`` (called inside the loop, so asyncio objects it makes belong to that loop).
    """

    client_class = RawClient
    timeout = 5.0

    def __init__(self, config):
        from wirecheck.broker.core import Listener

        self.config = config
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.personality = self.call(self._create)
        self.listener = Listener(self.personality, self.config, 0)
        self.port = self.call(self.listener.start)

    async def _create(self):
        return self.create_personality(self.config)

    def create_personality(self, config):
        raise NotImplementedError

    def call(self, coroutine_function, *args):
        return asyncio.run_coroutine_threadsafe(coroutine_function(*args), self.loop).result(self.timeout * 2)

    def client(self, timeout: float | None = None):
        return self.client_class(self.port, timeout or self.timeout)

    def stop(self):
        try:
            self.call(self.listener.stop)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(self.timeout)
            self.loop.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
