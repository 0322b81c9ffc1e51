"""Listener, connection bookkeeping and limits shared by every personality.

A personality implements :class:`Personality`; the core accepts connections (in TLS when configured), enforces
the connection limit, gives each connection a :class:`Connection` whose reads are bounded in size and time, and
cancels every connection task on shutdown so that no task outlives its socket. Frames are read by
``framed.serve_frames``.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Protocol, TypeVar

from wirecheck.broker.batchlog import DEFAULT_CACHE_BYTES
from wirecheck.broker.switches import Switches

log = logging.getLogger("wirecheck.broker")

WRITE_CHUNK = 1 << 20
S = TypeVar("S", bound=Switches)


@dataclass
class BrokerConfig:
    """What every personality shares. A personality's own settings are its options dataclass (personality.py)."""

    host: str = "127.0.0.1"
    data_dir: Path | None = None  # None: in memory
    faults: frozenset[str] = frozenset()  # namespaced: "<personality>.<fault>"
    #: namespaced "<personality>.<variant>": another reading the spec permits (the dual of a fault: the whole suite
    #: must pass against it)
    variants: frozenset[str] = frozenset()
    max_connections: int = 256  # per listener
    #: per listener: admitted connections that have not yet completed a frame nor been answered. Past it, or when
    #: the listener is full, the oldest of them is shed, so peers that never finish a frame cannot lock clients out
    max_pending: int = 128
    idle_timeout: float = 30.0  # seconds a connection may sit between frames
    frame_timeout: float = 10.0  # seconds a started frame may take to arrive whole (slowloris bound)
    max_frame: int | None = None  # None: each personality's own spec limit
    # Storage, for the personalities that keep a log (each says which it honours).
    segment_records: int = 1000
    retention_records: int | None = None  # None: keep everything
    fsync: str = "batch"  # with data_dir: "batch" (fsync before each acknowledgement) or "none"
    #: with data_dir: bytes of stored batches a personality keeps cached in memory, over all its partitions
    #: (batchlog.BatchCache): its memory is bounded by this, not by the data
    cache_bytes: int = DEFAULT_CACHE_BYTES
    tls: ssl.SSLContext | None = None  # every listener speaks TLS when set

    def faults_of(self, personality: str, known: dict[str, str]) -> frozenset[str]:
        """This personality's active faults, without their namespace ("kafka.crc-ieee" -> "crc-ieee").

        ``known`` is the personality's catalogue (namespaced names); a name in its namespace that the catalogue
        lacks is an error here too, so a mistyped fault cannot silently test nothing.
        """
        return _active(self.faults, personality, known, "fault")

    def variants_of(self, personality: str, known: dict[str, str]) -> frozenset[str]:
        """This personality's active variants, without their namespace (as :meth:`faults_of`)."""
        return _active(self.variants, personality, known, "variant")

    def faults_as(self, switches: type[S]) -> S:
        """This personality's active faults as its typed object (switches.py)."""
        return switches(self.faults_of(switches.personality, switches.catalogue()))

    def variants_as(self, switches: type[S]) -> S:
        """This personality's active variants as its typed object (switches.py)."""
        return switches(self.variants_of(switches.personality, switches.catalogue()))


def _active(names: frozenset[str], personality: str, known: dict[str, str], kind: str) -> frozenset[str]:
    prefix = personality + "."
    mine = {name for name in names if name.startswith(prefix)}
    unknown = mine - set(known)
    if unknown:
        raise ValueError(f"unknown {personality} {kind}(s) {sorted(unknown)}; known: {sorted(known)}")
    return frozenset(name[len(prefix):] for name in mine)


class IdleTimeout(Exception):
    """The peer sent nothing (or read nothing) for longer than the idle timeout."""


class FrameTimeout(IdleTimeout):
    """A frame the peer started did not arrive whole within the frame timeout."""


class Connection:
    """One accepted socket; reads honour the idle and frame timeouts, writes the peer's backpressure."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, idle_timeout: float,
                 frame_timeout: float | None = None):
        self.reader = reader
        self.writer = writer
        self.idle_timeout = idle_timeout
        # A started frame never gets longer than a silent connection would: the smaller of the two bounds.
        self.frame_timeout = min(idle_timeout, frame_timeout or idle_timeout)
        self.peer = writer.get_extra_info("peername")
        self.working = False  # completed a frame or was answered: no longer sheddable (Listener)
        self.shed = False  # closed by the listener to make room (its slot was given away at once)
        self.on_working: Callable[[Connection], None] | None = None

    def mark_working(self) -> None:
        """The peer completed a frame (or got an answer): it is a client at work, not a peer holding a slot."""
        if not self.working:
            self.working = True
            if self.on_working is not None:
                self.on_working(self)

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
        except TimeoutError:
            raise IdleTimeout(f"no bytes for {self.idle_timeout}s") from None

    def frame_deadline(self) -> float:
        """The loop time by which a frame whose first byte just arrived must be complete."""
        return asyncio.get_running_loop().time() + self.frame_timeout

    async def read_by(self, n: int, deadline: float) -> bytes:
        """Read n more bytes of a started frame; FrameTimeout once the frame's deadline has passed."""
        try:
            async with asyncio.timeout_at(deadline):
                return await self.reader.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            raise EOFError(f"peer closed after {len(exc.partial)} of {n} bytes") from None
        except TimeoutError:
            raise FrameTimeout(f"frame not complete within {self.frame_timeout}s") from None

    async def write(self, data: bytes) -> None:
        """Write and wait for the peer to take it; a peer that reads nothing for the idle timeout is aborted
        (a graceful close would wait to flush the unread answer), so it cannot pin a task and its buffers.

        Large answers go in WRITE_CHUNK slices, each drained before the next: the transport copies whatever the
        kernel does not take at once, so writing 10 MiB in one call could hold a second 10 MiB copy.
        """
        self.mark_working()
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
        except (OSError, asyncio.TimeoutError, ssl.SSLError):
            pass


class Personality(Protocol):
    """What a protocol brings to the broker at run time (what it declares is in personality.py)."""

    name: str

    async def serve(self, conn: Connection) -> None:
        """Handle one connection until it ends; exceptions are logged, never fatal to the broker."""
        ...

    async def close(self) -> None:
        """Flush and release storage on shutdown (and stop any side listeners)."""
        ...

    # Optional: ``async def start_side_listeners(self, main_port: int, ephemeral: bool) -> dict[str, int]`` starts
    # listeners beyond the main one once it is bound at main_port (ephemeral: the main port was asked as 0), and
    # returns their {name: port} for the ready file; close() stops them.
    # A personality with extra endpoints (PersonalityInfo.endpoints) also has
    # ``async def serve_endpoint(self, endpoint: str, conn: Connection) -> None``; one that announces its ports
    # (a discovery API) has ``listening(endpoint: str | None, port: int) -> None``, called once each listener is bound.


class Listener:
    """One TCP listener for one personality, with a connection limit and task tracking.

    A connection is *pending* until it completes a frame or is answered. Pending connections are capped apart
    from working ones (``max_pending``): when a new connection would pass that cap, or the listener is full,
    the oldest pending connection is shed (closed at once) and the newcomer admitted, so a flood of peers that
    send a byte and stall cannot lock a well-behaved client out. When every slot is held by working connections,
    a new connection waits, unread, for a slot, up to the frame timeout; at most ``max_connections`` wait, one
    more, or one whose wait runs out, is closed.
    """

    def __init__(self, personality: Personality, config: BrokerConfig, port: int, endpoint: str | None = None):
        self.personality = personality
        self.endpoint = endpoint  # None: the personality's primary endpoint (serve); else serve_endpoint(endpoint)
        self.config = config
        self.port = port
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._active = 0  # admitted and not yet ended, the shed ones included until their task ends
        self._shedding = 0  # shed, their task not yet ended: their slots are already given away
        self._waiting = 0
        self._pending: dict[Connection, None] = {}  # admitted, not yet working; oldest first
        self._freed = asyncio.Condition()

    async def start(self) -> int:
        self._server = await asyncio.start_server(
            self._accept, self.config.host, self.port, limit=2**16, ssl=self.config.tls,
            # A handshake that stalls holds a socket (not a slot): bounded like a started frame.
            ssl_handshake_timeout=self.config.frame_timeout if self.config.tls else None)
        self.port = self._server.sockets[0].getsockname()[1]
        listening = getattr(self.personality, "listening", None)  # optional: a personality that announces its ports
        if listening is not None:
            listening(self.endpoint, self.port)
        return self.port

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        admitted = False
        conn = Connection(reader, writer, self.config.idle_timeout, self.config.frame_timeout)
        try:
            admitted = await self._admit(conn)
            if not admitted:
                log.warning("%s: connection limit %d reached, refusing %s", self.personality.name,
                            self.config.max_connections, conn.peer)
                return
            if self.endpoint is None:
                await self.personality.serve(conn)
            else:
                await self.personality.serve_endpoint(self.endpoint, conn)
        except (EOFError, IdleTimeout, ConnectionError, ssl.SSLError) as exc:
            log.debug("%s %s: %s", self.personality.name, conn.peer, exc)
        except asyncio.CancelledError:
            pass
        except Exception:  # a bug in a personality must cost one connection, never the broker
            log.exception("%s %s: connection handler failed", self.personality.name, conn.peer)
        finally:
            if admitted:
                await self._release(conn)
            self._tasks.discard(task)
            await conn.close()

    def _occupied(self) -> int:
        return self._active - self._shedding

    async def _admit(self, conn: Connection) -> bool:
        if len(self._pending) >= self.config.max_pending or self._occupied() >= self.config.max_connections:
            self._shed_oldest_pending()
        if self._occupied() < self.config.max_connections:
            self._take(conn)
            return True
        if self._waiting >= self.config.max_connections:
            return False
        self._waiting += 1
        try:
            async with asyncio.timeout(self.config.frame_timeout), self._freed:
                await self._freed.wait_for(lambda: self._occupied() < self.config.max_connections)
                self._take(conn)
            return True
        except TimeoutError:
            return False
        finally:
            self._waiting -= 1

    def _take(self, conn: Connection) -> None:
        self._active += 1
        if not conn.working:
            self._pending[conn] = None
            conn.on_working = self._pending_done

    def _pending_done(self, conn: Connection) -> None:
        self._pending.pop(conn, None)

    def _shed_oldest_pending(self) -> None:
        if not self._pending:
            return
        victim = next(iter(self._pending))
        del self._pending[victim]
        self._shedding += 1
        victim.shed = True
        log.debug("%s: shedding %s, which has not completed a frame, for a new connection", self.personality.name,
                 victim.peer)
        victim.abort()

    async def _release(self, conn: Connection) -> None:
        self._pending.pop(conn, None)
        self._active -= 1
        if conn.shed:
            self._shedding -= 1
        else:
            async with self._freed:
                self._freed.notify()

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
        if self.endpoint is None:  # the primary listener owns the personality's storage
            await self.personality.close()
