"""A loopback TCP proxy between the workload's clients and the target, which misbehaves when told.

Modes (:meth:`FaultProxy.set_mode`), each until the next call:

- ``pass``: bytes flow both ways unchanged;
- ``delay``: each chunk is held ``delay`` seconds before it is forwarded (order kept);
- ``drop``: every open connection is closed with a FIN, and new ones are closed as soon as accepted;
- ``reset``: every open connection is reset (RST, SO_LINGER 0) once; new ones flow;
- ``blackhole``: connections stay open but nothing is forwarded either way; at the window's end the black-holed
  connections are reset, since the stream they carried lost bytes in the middle.

It listens on 127.0.0.1 only and connects only to the one target it was given. ``rewriter`` (optional) makes a
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

    def start(self) -> int:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", 0), self._loop).result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

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

    async def _handle(self, client_reader: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
        if self.mode == "drop":
            client.close()
            return
        try:
            upstream_reader, upstream = await asyncio.open_connection(*self.target)
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
