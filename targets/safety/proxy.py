"""A loopback TCP proxy between the workload's clients and the target, which misbehaves when told.

Modes (:meth:`FaultProxy.set_mode`), each until the next call:

- ``pass``: bytes flow both ways unchanged;
- ``delay``: each chunk is held ``delay`` seconds before it is forwarded (order kept);
- ``drop``: every open connection is closed with a FIN, and new ones are closed as soon as accepted;
- ``reset``: every open connection is reset (RST, SO_LINGER 0) once; new ones flow;
- ``blackhole``: connections stay open but nothing is forwarded either way; at the window's end the black-holed
  connections are reset, since the stream they carried lost bytes in the middle.

It listens on 127.0.0.1 only and connects only to the target it was given, and to the further addresses of that
target a rewriter asks it to forward (:meth:`FaultProxy.forward`: a target whose discovery hands out other ports,
as Barco's does; each gets a listener of its own under the same faults). ``rewriter`` (optional) makes a
per-connection object with ``request(chunk)`` (sees client bytes) and ``response(chunk) -> bytes`` (may rewrite
the target's answers, e.g. the advertised address: kafka_address.py).
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Callable

MODES = ("pass", "delay", "drop", "reset", "blackhole")
CHUNK = 65536


class ProxyAddress(tuple):
    """The proxy's (host, port), as a rewriter is given it: a plain pair that can also ask the proxy for a listener
    in front of another address of the same target (``forward(address) -> ProxyAddress``)."""

    forward: Callable[[tuple[str, int]], ProxyAddress]

    def __new__(cls, host: str, port: int, forward: Callable[[tuple[str, int]], ProxyAddress]):
        address = super().__new__(cls, (host, port))
        address.forward = forward
        return address


class FaultProxy:
    def __init__(self, target: tuple[str, int], rewriter: Callable[[], object] | None = None):
        self.target = target
        self.rewriter = rewriter
        self.mode, self.delay = "pass", 0.0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="safety-proxy", daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter | None]] = set()
        self._holed: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter | None]] = set()
        self._forwarded: dict[tuple[str, int], tuple[int, asyncio.base_events.Server | None]] = {}
        self._forward_lock = threading.Lock()

    def start(self) -> int:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handler(self.target), "127.0.0.1", 0), self._loop).result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    def address(self) -> ProxyAddress:
        return ProxyAddress("127.0.0.1", self.port, self.forward)

    def forward(self, address: tuple[str, int]) -> ProxyAddress:
        """The proxy's address in front of ``address`` (another port of the target), listening from now on.

        Callable from the proxy's own loop (a rewriter's hook) and from other threads: the socket is bound and
        listening before this returns, so a client told the port can connect at once (the backlog holds it until
        the server takes it)."""
        address = (address[0], int(address[1]))
        if address == tuple(self.target):
            return self.address()
        with self._forward_lock:
            known = self._forwarded.get(address)
            if known is None:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", 0))
                sock.listen(128)
                known = self._forwarded[address] = (sock.getsockname()[1], None)
                self._loop.call_soon_threadsafe(self._serve_forwarded, address, sock)
        return ProxyAddress("127.0.0.1", known[0], self.forward)

    def _serve_forwarded(self, address: tuple[str, int], sock: socket.socket) -> None:
        async def serve() -> None:
            server = await asyncio.start_server(self._handler(address), sock=sock)
            self._forwarded[address] = (self._forwarded[address][0], server)

        self._loop.create_task(serve())

    def set_mode(self, mode: str, delay: float = 0.0) -> None:
        if mode not in MODES:
            raise ValueError(f"proxy mode {mode!r} is not one of {', '.join(MODES)}")
        asyncio.run_coroutine_threadsafe(self._switch(mode, delay), self._loop).result(10)

    def stop(self) -> None:
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _close(self) -> None:
        assert self._server is not None
        self._server.close()
        for _port, server in self._forwarded.values():
            if server is not None:
                server.close()
        for pair in list(self._connections):
            _reset(pair)

    async def _switch(self, mode: str, delay: float) -> None:
        previous, self.mode, self.delay = self.mode, mode, delay
        if previous == "blackhole" and mode != "blackhole":
            for pair in list(self._holed):
                _reset(pair)
            self._holed.clear()
        if mode == "reset":
            for pair in list(self._connections):
                _reset(pair)
            self.mode = "pass"  # once: the connections clients open next flow
        elif mode == "drop":
            for client, upstream in list(self._connections):
                for writer in (client, upstream):
                    if writer is not None:
                        writer.close()
        elif mode == "blackhole":
            self._holed.update(self._connections)

    def _handler(self, target: tuple[str, int]):
        async def handle(client_reader: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
            await self._handle(client_reader, client, target)

        return handle

    async def _handle(self, client_reader: asyncio.StreamReader, client: asyncio.StreamWriter,
                      target: tuple[str, int]) -> None:
        if self.mode == "drop":
            client.close()
            return
        try:
            upstream_reader, upstream = await asyncio.open_connection(*target)
        except OSError:
            _reset((client, None))
            return
        pair = (client, upstream)
        self._connections.add(pair)
        if self.mode == "blackhole":
            self._holed.add(pair)
        rewriter = self.rewriter() if self.rewriter else None
        tasks = [asyncio.create_task(self._pump(client_reader, upstream, pair,
                                                getattr(rewriter, "request", None), False)),
                 asyncio.create_task(self._pump(upstream_reader, client, pair,
                                                getattr(rewriter, "response", None), True))]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        for writer in pair:
            writer.close()
        self._connections.discard(pair)
        self._holed.discard(pair)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, pair, hook,
                    rewrites: bool) -> None:
        try:
            while True:
                chunk = await reader.read(CHUNK)
                if not chunk:
                    break
                if pair in self._holed:
                    continue  # black-holed: dropped on the floor
                if self.mode == "delay" and self.delay > 0:
                    await asyncio.sleep(self.delay)
                if hook is not None:
                    out = hook(chunk)
                    chunk = out if rewrites else chunk
                if chunk:
                    writer.write(chunk)
                    await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass


def _reset(pair) -> None:
    """Close with an RST (SO_LINGER 0): the peer sees a reset, not an orderly end."""
    for writer in pair:
        if writer is None:
            continue
        sock = writer.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        writer.transport.abort()
