"""The Fluvio Streaming Controller (SC) beside the SPU: its own port (default 9003), the SPU's topic store.

A Fluvio client talks to the SC first (notes §9): ApiVersions (platform_version >= 0.9.0, Watch 1004 in 15..=19),
then three Watch streams (SPU, Partition, Topic specs) that say which SPU leads which partition; topics are
created, deleted and listed here (fluvio-sc-schema objects/*, fluvio-sc services/public_api/*).

Rules (decisions marked D are implementation-defined; the real SC takes another path or none):
- Framing and headers as on the SPU (server.py D1): a size below 10 or above the frame limit closes.
- Keys: ApiVersions 18 (any version), Create 1001, Delete 1002, List 1003, Watch 1004. Others close the
  connection without a response (Mirroring 1005 and Update 1006 are not served).
- D2: Create and Delete are advertised from version 11 (DYN_OBJ, upstream 9 and 1), List and Watch 15..19 as
  upstream; a version outside the advertised range closes the connection.
- D3: an object label longer than 64 bytes, or one the SC does not know, closes the connection on Watch and
  List (the real SC's watch handler fails with "Not Valid Watch Request"); Create and Delete with another
  object type answer Status Other("unknown admin object type") (delete.rs, sc_admin.py). The known object
  types without objects here (SmartModule, SpuGroup, TableFormat, CustomSpu) watch and list as empty.
- Watch: the first response carries ``all`` at the current epoch; every later one carries ``changes`` (UPDATE
  or DELETE messages with the whole object) at the epoch of the newest change (watch.rs). One epoch counts
  every change. D4: the change log keeps the last 1024 changes (bounded memory); a watcher that falls behind
  it gets ``all`` again. At most 16 watch streams per connection; one more closes it. D5: a connection with
  open watch streams is not closed for idleness (watches are long-lived; the client may send nothing).
- Create and Delete: sc_admin.py (D6, D7); the topic configs, epoch and change log: sc_plane.py.
- Partitions are named "<topic>-<index>" (ReplicaKey's Display); the one SPU has id 5001 and the SPU's
  public port, and leads every partition.
"""

from __future__ import annotations

import asyncio
import logging
import struct

from wirecheck.broker.core import BrokerConfig, Connection, IdleTimeout, FrameTimeout
from wirecheck.broker.framed import BadLength, serve_frames
from wirecheck.broker.fluvio import messages, sc_messages as sm
from wirecheck.broker.fluvio.api import Answer, Call, Route
from wirecheck.broker.fluvio.faults import FluvioFaults
from wirecheck.broker.fluvio.sc_admin import ScAdmin
from wirecheck.broker.fluvio.sc_plane import ControlPlane
from wirecheck.broker.fluvio.storage import Storage
from wirecheck.broker.fluvio.wire import Malformed, Reader, frame_shape

log = logging.getLogger("wirecheck.broker.fluvio.sc")

DEFAULT_PORT = 9003
PLATFORM_VERSION = "0.18.1"  # a released platform >= MINIMUM_PLATFORM_VERSION 0.9.0 (§9)
API_VERSIONS, CREATE, DELETE, LIST, WATCH = 18, 1001, 1002, 1003, 1004  # AdminPublicApiKey
ADMIN_VERSIONS = (11, 19)  # D2: from DYN_OBJ (upstream 9 and 1)
WATCH_VERSIONS = (15, 19)  # List and Watch, as upstream
MAX_WATCHES = 16

_SIZE = struct.Struct(">i")


class Session:
    """One SC connection: a write lock (watch pushes interleave with answers) and its watch tasks."""

    def __init__(self, conn: Connection):
        self.conn = conn
        self.write_lock = asyncio.Lock()
        self.watches: list[asyncio.Task] = []

    async def send(self, correlation_id: int, body: bytes) -> None:
        async with self.write_lock:
            await self.conn.write(_SIZE.pack(len(body) + 4) + _SIZE.pack(correlation_id) + body)


class ScServer:
    """The SC: ``serve`` one connection of the Fluvio personality's "sc" endpoint."""

    def __init__(self, config: BrokerConfig, storage: Storage, faults: FluvioFaults, max_frame: int,
                 request_log=None):
        self.plane = ControlPlane(storage, config.host, faults)
        self.faults = faults
        self.request_log = request_log
        self.frame_shape = frame_shape(max_frame)
        admin = ScAdmin(self.plane, faults)
        #: every key the SC serves, with the versions it accepts and its handler; ApiVersions lists the others
        routes = [
            Route(CREATE, ADMIN_VERSIONS, admin.create),
            Route(DELETE, ADMIN_VERSIONS, admin.delete),
            Route(LIST, WATCH_VERSIONS, self._list),
            Route(WATCH, WATCH_VERSIONS, self._watch, listed=not faults.sc_watch_not_advertised),
        ]
        self.advertised = [(r.key, *r.versions) for r in routes if r.listed and r.versions]
        self.routes: dict[int, Route[Session]] = {
            r.key: r for r in [Route(API_VERSIONS, None, self._api_versions, listed=False), *routes]}

    async def serve(self, conn: Connection) -> None:
        session = Session(conn)

        async def handle(header: bytes, frame: bytes) -> bool:
            return await self._handle(session, frame)

        try:
            while True:
                try:
                    await serve_frames(conn, self.frame_shape, handle, _close)
                    return
                except FrameTimeout:
                    raise
                except IdleTimeout:
                    if not any(not t.done() for t in session.watches):
                        raise  # D5: idle only counts without open watches
        finally:
            for task in session.watches:
                task.cancel()
            await asyncio.gather(*session.watches, return_exceptions=True)

    async def _handle(self, session: Session, frame: bytes) -> bool:
        r = Reader(frame)
        try:
            header = messages.read_header(r)
        except Malformed:
            return False
        key, version = header.api_key, header.api_version
        if self.request_log is not None:
            self.request_log("sc", key, version)
        route = self.routes.get(key)
        if route is None:
            log.debug("closing: unknown SC api key %d", key)
            return False
        if route.versions is not None:
            low, high = route.versions
            if not low <= version <= high:
                log.debug("closing: SC api %d version %d not in [%d, %d]", key, version, low, high)
                return False
        try:
            answer = await route.handle(Call(session, r, version, header.correlation_id))
        except Malformed as exc:
            if isinstance(exc, sm.BodyPastFrame) and self.faults.sc_body_length_waits:
                return True  # fault: waits for body bytes that are not coming, silent, the connection open
            log.debug("closing: malformed SC api %d v%d body: %s", key, version, exc)
            return False
        if isinstance(answer, bool):
            return answer
        await session.send(header.correlation_id, answer)
        return True

    async def _api_versions(self, call: Call[Session]) -> Answer:
        messages.read_api_versions(call.r, call.version)
        platform = "0.8.0" if self.faults.sc_platform_version_old else PLATFORM_VERSION
        return messages.api_versions_response(self.advertised, platform)

    # -------------------------------------------------------------------------------- Watch / List

    async def _watch(self, call: Call[Session]) -> Answer:
        session, version, correlation_id = call.state, call.version, call.reply_id
        label, body = sm.read_type_buffer(call.r)
        sm.read_watch(body, version)  # the requested epoch does not matter: the first answer is ``all`` (watch.rs)
        first = self.plane.all_of(label, version)
        if first is None and self.faults.sc_unknown_label_answers_empty:
            first = []
        if first is None:
            log.debug("closing: watch of unknown object type %r", label)
            return False
        session.watches = [t for t in session.watches if not t.done()]
        if len(session.watches) >= MAX_WATCHES:
            log.debug("closing: more than %d watch streams", MAX_WATCHES)
            return False
        waker = asyncio.Event()
        self.plane.wakers.add(waker)
        epoch = self.plane.epoch
        tracked = label in (sm.TOPIC_LABEL, sm.PARTITION_LABEL) and not self.faults.sc_watch_changes_missing
        if tracked:
            self.plane.sent[waker] = epoch
        if self.faults.sc_watch_first_not_all:
            update = sm.metadata_update(self.plane.shown_epoch, [(sm.UPDATE, o) for o in first], [])
        else:
            update = sm.metadata_update(self.plane.shown_epoch, [], first)
        await session.send(correlation_id, sm.type_buffer(label, update))
        session.watches.append(asyncio.create_task(self._push(session, label, version, correlation_id, epoch,
                                                              waker)))
        return True

    async def _push(self, session: Session, label: str, version: int, correlation_id: int, epoch: int,
                    waker: asyncio.Event) -> None:
        plane = self.plane
        try:
            while True:
                await waker.wait()
                waker.clear()
                if self.faults.sc_watch_changes_missing or label not in (sm.TOPIC_LABEL, sm.PARTITION_LABEL):
                    continue
                changes = plane.changes_since(label, epoch, version)
                if changes is None:  # D4: fell behind the change log
                    update = sm.metadata_update(plane.shown_epoch, [], plane.all_of(label, version))
                elif changes:
                    update = sm.metadata_update(plane.shown_epoch, changes, [])
                else:
                    epoch = max(epoch, plane.epoch)
                    if waker in plane.sent:
                        plane.sent[waker] = epoch
                    continue
                epoch = plane.epoch
                await session.send(correlation_id, sm.type_buffer(label, update))
                if waker in plane.sent:
                    plane.sent[waker] = epoch
        except (ConnectionError, OSError) as exc:
            log.debug("watch %s ended: %s", label, exc)
        finally:
            plane.wakers.discard(waker)
            plane.sent.pop(waker, None)

    async def _list(self, call: Call[Session]) -> Answer:
        version = call.version
        label, body = sm.read_type_buffer(call.r)
        names, _summary, system = sm.read_list(body, version)
        if self.faults.sc_list_ignores_names:
            names = []  # fault: every object, whatever the request named
        found = self.plane.all_of(label, version, names, system)
        if found is None:
            if not self.faults.sc_unknown_label_answers_empty:
                log.debug("closing: list of unknown object type %r", label)
                return False
            found = []
        return sm.type_buffer(label, _vec(found))


def _vec(items: list[bytes]) -> bytes:
    return _SIZE.pack(len(items)) + b"".join(items)


async def _close(size: int) -> BadLength:
    return BadLength.CLOSE
