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
  object type answer Status Other("unknown admin object type") (delete.rs). The known object types without
  objects here (SmartModule, SpuGroup, TableFormat, CustomSpu) watch and list as empty.
- Watch: the first response carries ``all`` at the current epoch; every later one carries ``changes`` (UPDATE
  or DELETE messages with the whole object) at the epoch of the newest change (watch.rs). One epoch counts
  every change. D4: the change log keeps the last 1024 changes (bounded memory); a watcher that falls behind
  it gets ``all`` again. At most 16 watch streams per connection; one more closes it. D5: a connection with
  open watch streams is not closed for idleness (watches are long-lived; the client may send nothing).
- Create (create.rs validate_topic_request): invalid name -> TopicInvalidName (2006); existing topic ->
  TopicAlreadyExists (2002); 0 or more than 1000 partitions -> TopicInvalidConfiguration (2004); replication
  above 1 (one SPU here) -> TopicError (2000); past 4096 topics -> TopicError (D6, bounded memory); dry_run
  validates only. Names: lowercase letters, digits and '-', not starting or ending with '-', at most 255 bytes
  (storage.py; upstream's newer validate_resource_name caps at 63).
- D7: a Create or Delete that changed a topic answers once every open Topic/Partition watch has pushed the
  change (up to 1 s), the way the real SC answers a create once the topic is provisioned: a client that reads
  the Status and then looks the topic up in its watched store finds it.
- Delete: an unknown topic -> TopicNotFound (2001) with message "not found" (delete.rs).
- Partitions are named "<topic>-<index>" (ReplicaKey's Display); the one SPU has id 5001 and the SPU's
  public port, and leads every partition.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import struct
from dataclasses import dataclass

from wirecheck.targets.reference.core import BrokerConfig, Connection, IdleTimeout, FrameTimeout
from wirecheck.targets.reference.framed import BadLength, FrameShape, serve_frames
from wirecheck.targets.reference.fluvio import messages, sc_messages as sm
from wirecheck.targets.reference.fluvio.storage import Storage, Topic, valid_topic_name
from wirecheck.targets.reference.fluvio.wire import ErrorCode, Malformed, Reader

log = logging.getLogger("wirecheck.broker.fluvio.sc")

DEFAULT_PORT = 9003
PLATFORM_VERSION = "0.18.1"  # a released platform >= MINIMUM_PLATFORM_VERSION 0.9.0 (§9)
SPU_ID = 5001
MIN_FRAME = 10
API_VERSIONS, CREATE, DELETE, LIST, WATCH = 18, 1001, 1002, 1003, 1004
ADVERTISED = [(CREATE, 11, 19), (DELETE, 11, 19), (LIST, 15, 19), (WATCH, 15, 19)]
EMPTY_KINDS = {"SmartModule", "SpuGroup", "TableFormat", "CustomSpu"}
CHANGE_LOG = 1024
SETTLE_LIMIT = 1.0
MAX_WATCHES = 16
MAX_PARTITIONS = 1000
MAX_TOPICS = 4096
TOPIC_ERROR, TOPIC_ALREADY_EXISTS, TOPIC_INVALID_CONFIGURATION, TOPIC_INVALID_NAME = 2000, 2002, 2004, 2006

_SIZE = struct.Struct(">i")


@dataclass
class TopicConfig:
    partitions: int
    replication: int = 1
    compression: int = sm.COMPRESSION_ANY
    system: bool = False


@dataclass
class Change:
    epoch: int
    label: str  # "Topic" or "Partition"
    name: str
    deleted: bool
    topic: str
    config: TopicConfig
    index: int = 0


class ControlPlane:
    """Topic configs beside the SPU's store, the epoch and the bounded change log that watches read."""

    def __init__(self, storage: Storage, spu_host: str, active: frozenset[str]):
        self.storage = storage
        self.spu_host = spu_host
        self.spu_port = 0
        self.active = active
        self.epoch = 1
        self.configs: dict[str, TopicConfig] = {name: TopicConfig(len(t.partitions))
                                                for name, t in storage.topics.items()}
        self.log: collections.deque[Change] = collections.deque(maxlen=CHANGE_LOG)
        self.wakers: set[asyncio.Event] = set()
        self.sent: dict[asyncio.Event, int] = {}  # each Topic/Partition watch -> the epoch it has delivered
        storage.watchers.append(self._changed)

    async def settled(self, limit: float = SETTLE_LIMIT) -> None:
        """Wait (up to ``limit`` seconds) until every Topic/Partition watch has delivered the current epoch, so
        that a client which reads a Create / Delete Status already holds the change (D7)."""
        deadline = asyncio.get_running_loop().time() + limit
        while any(epoch < self.epoch for epoch in self.sent.values()):
            if asyncio.get_running_loop().time() > deadline:
                return
            await asyncio.sleep(0.002)

    def _changed(self, name: str, topic: Topic, deleted: bool) -> None:
        config = self.configs.pop(name, None) if deleted else self.configs.setdefault(
            name, TopicConfig(len(topic.partitions)))
        config = config or TopicConfig(len(topic.partitions))
        self.epoch += 1
        self.log.append(Change(self.epoch, sm.TOPIC_LABEL, name, deleted, name, config))
        for index in range(config.partitions):
            self.log.append(Change(self.epoch, sm.PARTITION_LABEL, f"{name}-{index}", deleted, name, config,
                                   index))
        for waker in self.wakers:
            waker.set()

    @property
    def shown_epoch(self) -> int:
        """The epoch an answer carries (the fault: always the first one, though changes are still tracked)."""
        return 1 if "sc-watch-epoch-stale" in self.active else self.epoch

    # -------------------------------------------------------------------------------- object encodings

    def spu_objects(self, version: int) -> list[bytes]:
        return [sm.spu(SPU_ID, self.spu_host, self.spu_port, version)]

    def topic_object(self, name: str, config: TopicConfig, version: int) -> bytes:
        return sm.topic(name, config.partitions, config.replication, SPU_ID, config.compression, config.system,
                        version)

    def partition_object(self, topic: str, index: int, config: TopicConfig, version: int) -> bytes:
        partition = self.storage.partition(topic, index)
        hw = leo = size = start = 0
        if partition is not None:
            hw, leo, size, start = partition.hw, partition.leo, partition.size, partition.log_start
        return sm.partition(topic, index, SPU_ID, hw, leo, size, start, config.compression, config.system,
                            version)

    def all_of(self, label: str, version: int, names: list[str] | None = None,
               system: bool | None = None) -> list[bytes] | None:
        """Every object of a kind (filtered by name when names are given, and for List, by ``system``: a List
        names either system topics only or user topics only, objects/list.rs); None for an unknown label."""
        def wanted(name: str) -> bool:
            return not names or name in names

        if label == sm.SPU_LABEL:
            return [o for o in self.spu_objects(version) if wanted(str(SPU_ID))]
        if label == sm.TOPIC_LABEL:
            return [self.topic_object(n, c, version) for n, c in self.configs.items()
                    if wanted(n) and (system is None or c.system == system)]
        if label == sm.PARTITION_LABEL:
            return [self.partition_object(n, i, c, version) for n, c in self.configs.items()
                    for i in range(c.partitions) if wanted(f"{n}-{i}")]
        if label in EMPTY_KINDS:
            return []
        return None

    def changes_since(self, label: str, epoch: int, version: int) -> list[tuple[int, bytes]] | None:
        """The change messages of one kind after ``epoch``; None when the log no longer reaches back there."""
        if self.log and self.log[0].epoch > epoch + 1 and self.epoch > epoch:
            return None
        out = []
        for change in self.log:
            if change.epoch <= epoch or change.label != label:
                continue
            if label == sm.TOPIC_LABEL:
                body = self.topic_object(change.name, change.config, version)
            else:
                body = self.partition_object(change.topic, change.index, change.config, version)
            out.append((sm.DELETE if change.deleted else sm.UPDATE, body))
        return out


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

    def __init__(self, config: BrokerConfig, storage: Storage, active: frozenset[str], max_frame: int,
                 request_log=None):
        self.plane = ControlPlane(storage, config.host, active)
        self.active = active
        self.request_log = request_log
        self.frame_shape = FrameShape(header_size=4, length_at=0, length_format=">i", min_length=MIN_FRAME,
                                      max_length=max_frame)
        self.advertised = [k for k in ADVERTISED if not (k[0] == WATCH and "sc-watch-not-advertised" in active)]
        self.accepted = {key: (low, high) for key, low, high in ADVERTISED}

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
        if key != API_VERSIONS:
            if key not in self.accepted:
                log.debug("closing: unknown SC api key %d", key)
                return False
            low, high = self.accepted[key]
            if not low <= version <= high:
                log.debug("closing: SC api %d version %d not in [%d, %d]", key, version, low, high)
                return False
        try:
            if key == API_VERSIONS:
                messages.read_api_versions(r, version)
                platform = "0.8.0" if "sc-platform-version-old" in self.active else PLATFORM_VERSION
                body = messages.api_versions_response(self.advertised, platform)
            elif key == WATCH:
                return await self._watch(session, r, version, header.correlation_id)
            elif key == LIST:
                body = self._list(r, version)
                if body is None:
                    return False
            elif key == CREATE:
                body = self._create(r, version)
                await self.plane.settled()
            else:
                body = self._delete(r, version)
                await self.plane.settled()
        except Malformed as exc:
            if isinstance(exc, sm.BodyPastFrame) and "sc-body-length-waits" in self.active:
                return True  # fault: waits for body bytes that are not coming, silent, the connection open
            log.debug("closing: malformed SC api %d v%d body: %s", key, version, exc)
            return False
        await session.send(header.correlation_id, body)
        return True

    # -------------------------------------------------------------------------------- Watch / List

    async def _watch(self, session: Session, r: Reader, version: int, correlation_id: int) -> bool:
        label, body = sm.read_type_buffer(r)
        sm.read_watch(body, version)  # the requested epoch does not matter: the first answer is ``all`` (watch.rs)
        first = self.plane.all_of(label, version)
        if first is None and "sc-unknown-label-answers-empty" in self.active:
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
        tracked = label in (sm.TOPIC_LABEL, sm.PARTITION_LABEL) and "sc-watch-changes-missing" not in self.active
        if tracked:
            self.plane.sent[waker] = epoch
        if "sc-watch-first-not-all" in self.active:
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
                if "sc-watch-changes-missing" in self.active or label not in (sm.TOPIC_LABEL, sm.PARTITION_LABEL):
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

    def _list(self, r: Reader, version: int) -> bytes | None:
        label, body = sm.read_type_buffer(r)
        names, _summary, system = sm.read_list(body, version)
        if "sc-list-ignores-names" in self.active:
            names = []  # fault: every object, whatever the request named
        found = self.plane.all_of(label, version, names, system)
        if found is None:
            if "sc-unknown-label-answers-empty" not in self.active:
                log.debug("closing: list of unknown object type %r", label)
                return None
            found = []
        return sm.type_buffer(label, _vec(found))

    # -------------------------------------------------------------------------------- Create / Delete

    def _create(self, r: Reader, version: int) -> bytes:
        label, body = sm.read_type_buffer(r)
        if label != sm.TOPIC_LABEL:
            return sm.status("", ErrorCode.other("unknown admin object type"), None)
        request = sm.read_create_topic(body, version)
        name = request.name
        plane = self.plane
        if not valid_topic_name(name) and "sc-invalid-name-accepted" not in self.active:
            return sm.status(name, ErrorCode.plain(TOPIC_INVALID_NAME),
                             f"Invalid topic name: '{name}'. Contain only lowercase alphanumeric characters or '-'")
        if name in plane.storage.topics and "sc-create-existing-ok" not in self.active:
            return sm.status(name, ErrorCode.plain(TOPIC_ALREADY_EXISTS), f"Topic '{name}' already exists")
        if not 1 <= request.partitions <= MAX_PARTITIONS:
            return sm.status(name, ErrorCode.plain(TOPIC_INVALID_CONFIGURATION),
                             f"partitions must be 1..{MAX_PARTITIONS}")
        if request.replication > 1:
            return sm.status(name, ErrorCode.plain(TOPIC_ERROR), "not enough SPUs for the replication factor")
        if len(plane.storage.topics) >= MAX_TOPICS:
            return sm.status(name, ErrorCode.plain(TOPIC_ERROR), f"more than {MAX_TOPICS} topics")
        if not request.dry_run and name not in plane.storage.topics:
            plane.configs[name] = TopicConfig(request.partitions, request.replication, request.compression,
                                              request.system)
            plane.storage.create(name, request.partitions)
        return sm.status(self._status_name(name), ErrorCode.plain(ErrorCode.NONE), None)

    def _delete(self, r: Reader, version: int) -> bytes:
        label, body = sm.read_type_buffer(r)
        name, _force = sm.read_delete(body, version)
        if label != sm.TOPIC_LABEL:
            return sm.status(name, ErrorCode.other("unknown admin object type"), None)
        if self.plane.storage.delete(name) is None:
            if "sc-delete-missing-ok" in self.active:
                return sm.status(name, ErrorCode.plain(ErrorCode.NONE), None)
            return sm.status(name, ErrorCode.plain(ErrorCode.TOPIC_NOT_FOUND), "not found")
        return sm.status(self._status_name(name), ErrorCode.plain(ErrorCode.NONE), None)

    def _status_name(self, name: str) -> str:
        return name.upper() if "sc-status-name-wrong" in self.active else name


def _vec(items: list[bytes]) -> bytes:
    return _SIZE.pack(len(items)) + b"".join(items)


async def _close(size: int) -> BadLength:
    return BadLength.CLOSE
