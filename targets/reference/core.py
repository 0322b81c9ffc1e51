"""Listener, connection bookkeeping and limits shared by every personality.

A personality implements :class:`Personality`; the core accepts connections, enforces the connection limit,
gives each connection a :class:`Connection` whose reads are bounded in size and time, and cancels every
connection task on shutdown so that no task outlives its socket.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

log = logging.getLogger("wirecheck.broker")

WRITE_CHUNK = 1 << 20


@dataclass
class BrokerConfig:
    host: str = "127.0.0.1"
    data_dir: Path | None = None  # None: in memory
    faults: frozenset[str] = frozenset()
    max_connections: int = 256
    idle_timeout: float = 30.0  # seconds a connection may sit between frames or inside one
    max_frame: int | None = None  # None: each personality's own spec limit
    extra: dict = field(default_factory=dict)


class IdleTimeout(Exception):
    """The peer sent nothing for longer than the idle timeout."""


class Connection:
    """One accepted socket; reads honour the idle timeout, writes the peer's backpressure."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, idle_timeout: float):
        self.reader = reader
        self.writer = writer
        self.idle_timeout = idle_timeout
        self.peer = writer.get_extra_info("peername")

    async def read_exactly(self, n: int) -> bytes:
        """Read n bytes. Raises EOFError on a clean close (even mid-frame), IdleTimeout when the peer stalls.

        The caller has already bounded n, so memory stays bounded whatever a length field claims.
        """
        try:
            # asyncio.timeout, not wait_for: wait_for wraps every read in a new Task (measured: a third of the
            # broker's per-request cost).
            async with asyncio.timeout(self.idle_timeout):
                return await self.reader.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            raise EOFError(f"peer closed after {len(exc.partial)} of {n} bytes") from None
        except asyncio.TimeoutError:
            raise IdleTimeout(f"no bytes for {self.idle_timeout}s") from None

    async def write(self, data: bytes) -> None:
        """Write and wait for the peer to take it; a peer that reads nothing for the idle timeout is aborted
        (a graceful close would wait to flush the unread answer), so it cannot pin a task and its buffers.

        Large answers go in WRITE_CHUNK slices, each drained before the next: the transport copies whatever the
        kernel does not take at once, so writing 10 MiB in one call could hold a second 10 MiB copy.
        """
        view = memoryview(data)
        try:
            async with asyncio.timeout(self.idle_timeout):
                for start in range(0, len(view), WRITE_CHUNK):
                    self.writer.write(view[start : start + WRITE_CHUNK])
                    await self.writer.drain()
        except TimeoutError:
            self.abort()
            raise IdleTimeout(f"peer read nothing for {self.idle_timeout}s") from None

    def abort(self) -> None:
        """Close without a FIN handshake: used only by faults that simulate a crashing peer."""
        transport = self.writer.transport
        if transport is not None:
            transport.abort()

    async def close(self) -> None:
        if not self.writer.is_closing():
            self.writer.close()
        try:
            await asyncio.wait_for(self.writer.wait_closed(), 1.0)
        except (OSError, asyncio.TimeoutError):
            pass


class Personality(Protocol):
    """What a protocol brings to the broker."""

    name: str
    default_port: int
    faults: dict[str, str]  # fault name -> the clause it breaks, in one line

    async def serve(self, conn: Connection) -> None:
        """Handle one connection until it ends; exceptions are logged, never fatal to the broker."""
        ...

    async def close(self) -> None:
        """Flush and release storage on shutdown."""
        ...


class Listener:
    """One TCP listener for one personality, with a connection limit and task tracking."""

    def __init__(self, personality: Personality, config: BrokerConfig, port: int):
        self.personality = personality
        self.config = config
        self.port = port
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._active = 0

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accept, self.config.host, self.port, limit=2**16)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._active >= self.config.max_connections:
            log.warning("%s: connection limit %d reached, refusing", self.personality.name, self.config.max_connections)
            writer.close()
            return
        self._active += 1
        task = asyncio.current_task()
        self._tasks.add(task)
        conn = Connection(reader, writer, self.config.idle_timeout)
        try:
            await self.personality.serve(conn)
        except (EOFError, IdleTimeout, ConnectionError) as exc:
            log.debug("%s %s: %s", self.personality.name, conn.peer, exc)
        except asyncio.CancelledError:
            pass
        except Exception:  # a bug in a personality must cost one connection, never the broker
            log.exception("%s %s: connection handler failed", self.personality.name, conn.peer)
        finally:
            self._active -= 1
            self._tasks.discard(task)
            await conn.close()

    @property
    def active_connections(self) -> int:
        return self._active

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
        await self.personality.close()
