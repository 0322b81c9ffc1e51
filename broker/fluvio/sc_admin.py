"""The SC's Create (1001) and Delete (1002) of topics (fluvio-sc services/public_api/topic/*).

Rules (decisions marked D are implementation-defined; the real SC takes another path or none):
- Create (create.rs validate_topic_request): invalid name -> TopicInvalidName (2006); existing topic ->
  TopicAlreadyExists (2002); 0 or more than 1000 partitions -> TopicInvalidConfiguration (2004); replication
  above 1 (one SPU here) -> TopicError (2000); past 4096 topics -> TopicError (D6, bounded memory); dry_run
  validates only. Names: lowercase letters, digits and '-', not starting or ending with '-', at most 255 bytes
  (storage.py; upstream's newer validate_resource_name caps at 63).
- D7: a Create or Delete that changed a topic answers once every open Topic/Partition watch has pushed the
  change (up to 1 s), the way the real SC answers a create once the topic is provisioned: a client that reads
  the Status and then looks the topic up in its watched store finds it.
- Delete: an unknown topic -> TopicNotFound (2001) with message "not found" (delete.rs).
- D3: Create and Delete with an object type other than Topic answer Status Other("unknown admin object type")
  (delete.rs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirecheck.broker.fluvio import sc_messages as sm
from wirecheck.broker.fluvio.api import Answer, Call
from wirecheck.broker.fluvio.faults import FluvioFaults
from wirecheck.broker.fluvio.sc_plane import ControlPlane, TopicConfig
from wirecheck.broker.fluvio.storage import valid_topic_name
from wirecheck.broker.fluvio.wire import ErrorCode, Reader

if TYPE_CHECKING:
    from wirecheck.broker.fluvio.sc import Session

MAX_PARTITIONS = 1000
MAX_TOPICS = 4096
TOPIC_ERROR, TOPIC_ALREADY_EXISTS, TOPIC_INVALID_CONFIGURATION, TOPIC_INVALID_NAME = 2000, 2002, 2004, 2006


class ScAdmin:
    def __init__(self, plane: ControlPlane, faults: FluvioFaults):
        self.plane = plane
        self.faults = faults

    async def create(self, call: Call[Session]) -> Answer:
        body = self._create(call.r, call.version)
        await self.plane.settled()
        return body

    async def delete(self, call: Call[Session]) -> Answer:
        body = self._delete(call.r, call.version)
        await self.plane.settled()
        return body

    def _create(self, r: Reader, version: int) -> bytes:
        label, body = sm.read_type_buffer(r)
        if label != sm.TOPIC_LABEL:
            return sm.status("", ErrorCode.other("unknown admin object type"), None)
        request = sm.read_create_topic(body, version)
        name = request.name
        plane = self.plane
        if not valid_topic_name(name) and not self.faults.sc_invalid_name_accepted:
            return sm.status(name, ErrorCode.plain(TOPIC_INVALID_NAME),
                             f"Invalid topic name: '{name}'. Contain only lowercase alphanumeric characters or '-'")
        if name in plane.storage.topics and not self.faults.sc_create_existing_ok:
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
            if self.faults.sc_delete_missing_ok:
                return sm.status(name, ErrorCode.plain(ErrorCode.NONE), None)
            return sm.status(name, ErrorCode.plain(ErrorCode.TOPIC_NOT_FOUND), "not found")
        return sm.status(self._status_name(name), ErrorCode.plain(ErrorCode.NONE), None)

    def _status_name(self, name: str) -> str:
        return name.upper() if self.faults.sc_status_name_wrong else name
