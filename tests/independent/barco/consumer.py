"""Consumer API (section 5): register, poll (binary and JSON), commit, goodbye, status."""

from __future__ import annotations

import json
import struct
import time
from dataclasses import dataclass, field

from . import defects
from .http_transport import App, Connection, Request, Response, text
from .storage import (
    CONSUMER_RANGES,
    DEV_GEN_VERSION,
    DEV_TOKEN,
    MAX_GROUP_SIZE,
    Chunk,
    ReaderKey,
    Store,
    valid_topic,
)

CONSUMER_MIME = "application/vnd.polar.consumermessage"
READ_TIMEOUT = 120.0  # ConsumerReadTimeout: consumers silent for this long are unregistered
LATEST, EARLIEST = "startFromLatest", "startFromEarliest"


@dataclass
class Consumer:
    id: str
    group: str
    topics: tuple[str, ...]
    policy: str
    connection_id: str | None  # set for connection-bound consumers
    last_seen: float = field(default_factory=time.monotonic)


@dataclass
class Pending:
    consumer_id: str
    end_offset: int


@dataclass
class Group:
    name: str
    committed: dict[ReaderKey, int] = field(default_factory=dict)
    pending: dict[ReaderKey, Pending] = field(default_factory=dict)
    known_topics: set[str] = field(default_factory=set)


class ConsumerState:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.consumers: dict[str, Consumer] = {}
        self.groups: dict[str, Group] = {}

    # -- membership -------------------------------------------------------------------------

    def expire(self) -> None:
        limit = time.monotonic() - READ_TIMEOUT
        for cid in [c.id for c in self.consumers.values() if c.last_seen < limit]:
            self.consumers.pop(cid, None)

    def register(self, consumer: Consumer) -> None:
        self.consumers[consumer.id] = consumer
        group = self.groups.get(consumer.group)
        if group is None:
            group = self.groups[consumer.group] = Group(consumer.group)
        for topic in consumer.topics:
            if topic in group.known_topics:
                continue
            group.known_topics.add(topic)
            # the offset reset policy applies the first time this group sees a topic
            for rkey in self.store.readers_of(topic):
                log = self.store.logs[rkey]
                group.committed[rkey] = log.next_offset if consumer.policy == LATEST else 0

    def members(self, group: str) -> list[Consumer]:
        found = [c for c in self.consumers.values() if c.group == group]
        return sorted(found, key=lambda c: f"{c.group}-{c.id}")

    def assigned_ranges(self, consumer: Consumer) -> list[int]:
        """(token, range) pairs are dealt round-robin over the group's sorted members."""
        members = self.members(consumer.group)
        index = next(i for i, c in enumerate(members) if c.id == consumer.id)
        return [r for r in range(CONSUMER_RANGES) if r % len(members) == index]

    def group_topics(self, group: str) -> list[str]:
        topics: set[str] = set()
        for c in self.members(group):
            topics.update(c.topics)
        return sorted(topics)

    def readers_for(self, consumer: Consumer) -> list[ReaderKey]:
        ranges = self.assigned_ranges(consumer)
        return [
            ReaderKey(topic, DEV_TOKEN, r, DEV_GEN_VERSION)
            for topic in self.group_topics(consumer.group)
            for r in ranges
        ]

    # -- reading and committing --------------------------------------------------------------

    def _commit_own(self, group: Group, consumer: Consumer) -> int:
        """Commit every position served to ``consumer`` (whatever its current assignment)."""
        owned = [k for k, p in group.pending.items() if p.consumer_id == consumer.id]
        for rkey in owned:
            group.committed[rkey] = group.pending.pop(rkey).end_offset
        return len(owned)

    def poll(self, consumer: Consumer) -> list[tuple[ReaderKey, Chunk]]:
        group = self.groups[consumer.group]
        self._commit_own(group, consumer)  # a poll implicitly commits what this consumer was served
        items: list[tuple[ReaderKey, Chunk]] = []
        total = 0
        for rkey in self.readers_for(consumer):
            # a pending read of another consumer is dropped: we rewind to the committed offset
            group.pending.pop(rkey, None)
            if total >= MAX_GROUP_SIZE:
                continue
            log = self.store.logs.get(rkey)
            if log is None:
                continue
            chunk = log.first_chunk_ending_after(group.committed.get(rkey, 0))
            if chunk is None:
                continue
            items.append((rkey, chunk))
            total += len(chunk.payload)
            group.pending[rkey] = Pending(consumer.id, chunk.end_offset)
        return items

    def commit(self, consumer: Consumer) -> str:
        """Return "ok", "no-ranges" or "other-origin"."""
        group = self.groups[consumer.group]
        if self._commit_own(group, consumer):
            return "ok"
        readers = self.readers_for(consumer)
        if not readers:
            return "no-ranges"
        if any(rkey in group.pending for rkey in readers):
            return "other-origin"  # another consumer is reading our ranges; nothing of ours to commit
        return "ok"

    def unregister(self, consumer: Consumer) -> None:
        self.consumers.pop(consumer.id, None)
        group = self.groups.get(consumer.group)
        if group is not None:  # what it was served and did not commit will be read again
            for rkey in [k for k, p in group.pending.items() if p.consumer_id == consumer.id]:
                del group.pending[rkey]


# -- wire encoding of poll responses ------------------------------------------------------------


def encode_binary(items: list[tuple[ReaderKey, Chunk]]) -> bytes:
    out = bytearray()
    for rkey, chunk in items:
        topic = rkey.topic.encode("utf-8")
        offset = chunk.start_offset + (1 if defects.on("poll-offset-off-by-one") else 0)
        out += struct.pack(">qBIB", rkey.token, rkey.range_index, rkey.gen_version, len(topic))
        out += topic
        out += struct.pack(">qi", offset, len(chunk.payload))
        out += chunk.payload
    count = len(out) + 2 if defects.on("poll-count-is-byte-length") else len(items)
    return struct.pack(">H", count & 0xFFFF) + bytes(out)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _json_value(body: bytes) -> str:
    """Bodies that are valid JSON are inlined verbatim; anything else becomes a JSON string."""
    try:
        text_body = body.decode("utf-8")
        json.loads(text_body, parse_constant=_reject_constant)
        return text_body
    except (UnicodeDecodeError, ValueError, RecursionError):
        return json.dumps(body.decode("utf-8", "replace"))


def encode_json(items: list[tuple[ReaderKey, Chunk]]) -> bytes:
    parts = []
    for rkey, chunk in items:
        as_num = defects.on("json-offset-as-number")
        head = {
            "topic": rkey.topic,
            "token": rkey.token if as_num else str(rkey.token),
            "rangeIndex": rkey.range_index,
            "version": rkey.gen_version,
            "startOffset": chunk.start_offset if as_num else str(chunk.start_offset),
        }
        if defects.on("json-item-per-record"):
            for _ts, body in chunk.records:
                parts.append(json.dumps(head)[:-1] + ', "values": [' + _json_value(body) + "]}")
            continue
        values = ",".join(_json_value(body) for _ts, body in chunk.records)
        parts.append(json.dumps(head)[:-1] + ', "values": [' + values + "]}")
    return ("[" + ",".join(parts) + "]").encode("utf-8")


def wants_json(req: Request) -> bool:
    accept = req.headers.get("accept", "")
    types = [piece.split(";", 1)[0].strip().lower() for piece in accept.split(",")]
    return "application/json" in types


NOT_REGISTERED = "Consumer not registered"


class ConsumerApp(App):
    max_body = 64 * 1024

    def __init__(self, store: Store, ports) -> None:
        self.state = ConsumerState(store)
        self.ports = ports
        self.departed: dict[str, str] = {}  # consumer id -> the connection its goodbye came on

    @property
    def allow_h2(self) -> bool:  # type: ignore[override]
        return not defects.on("consumer-no-h2c")

    async def handle(self, req: Request) -> Response:
        self.state.expire()
        path = req.path
        if path == "/status":
            return text(200, f"Consumer server listening on {self.ports.consumer}")
        routes = {
            "/v1/consumer/register": (("PUT", "POST"), self.register),
            "/v1/consumer/poll": (("POST",), self.poll),
            "/v1/consumer/commit": (("POST",), self.commit),
            "/v1/consumer/goodbye": (("POST",), self.goodbye),
        }
        if path not in routes:
            return text(404, "Not found")
        methods, handler = routes[path]
        if req.method not in methods:
            return text(405, "Method not allowed")
        return handler(req)

    # -- register -------------------------------------------------------------------------------

    def register(self, req: Request) -> Response:
        cid = req.arg("consumerId") or req.arg("consumer_id")
        if cid is not None:  # stateless mode
            group = req.arg("group") or "default"
            topics = [t for t in req.args("topic") if t]
            policy = req.arg("onNewGroup") or LATEST
            if policy not in (LATEST, EARLIEST):
                return text(400, "Invalid offset reset policy value")
            connection_id = None
        else:  # connection-bound mode: JSON body
            try:
                info = json.loads(req.body.decode("utf-8"))
                if not isinstance(info, dict):
                    raise ValueError
                cid = info.get("id", "")
                group = info.get("group") or "default"
                topics = info.get("topics") or []
                policy_num = info.get("onNewGroup", 0)
                if not isinstance(cid, str) or not isinstance(group, str) or not isinstance(topics, list):
                    raise ValueError
                if not all(isinstance(t, str) for t in topics) or policy_num not in (0, 1) or isinstance(policy_num, bool):
                    raise ValueError
            except (ValueError, UnicodeDecodeError):
                return text(400, "Invalid ConsumerInfo payload")
            topics = [t for t in topics if t]
            policy = LATEST if policy_num == 0 else EARLIEST
            connection_id = req.conn.id
        if not cid or not topics:
            return text(400, "Consumer id and topics can not be empty")
        if not all(valid_topic(t.encode("utf-8")) for t in topics):
            return text(400, "Invalid topic")
        topic_set = tuple(sorted(set(topics)))
        existing = self.state.consumers.get(cid)
        if existing is not None:
            if existing.group == group and existing.topics == topic_set:
                existing.last_seen = time.monotonic()
                if connection_id is not None:
                    self._bind(req.conn, existing)
                return text(200, "Already registered")
            return text(400, "Consumer already registered with different parameters")
        consumer = Consumer(cid, group, topic_set, policy, connection_id)
        self.state.register(consumer)
        if connection_id is not None:
            self._bind(req.conn, consumer)
        return text(200, "OK")

    def _bind(self, conn: Connection, consumer: Consumer) -> None:
        consumer.connection_id = conn.id
        if "consumer_id" not in conn.attrs:
            conn.on_close.append(self._connection_closed)
        conn.attrs["consumer_id"] = consumer.id

    def _connection_closed(self, conn: Connection) -> None:
        consumer = self.state.consumers.get(conn.attrs.get("consumer_id", ""))
        if consumer is not None and consumer.connection_id == conn.id:
            self.state.unregister(consumer)

    # -- lookup ---------------------------------------------------------------------------------

    def _consumer(self, req: Request) -> Consumer | Response:
        cid = req.arg("consumerId") or req.arg("consumer_id")
        bound = req.conn.attrs.get("consumer_id")
        if cid is None:
            if bound is None:
                return text(409, "Stateless consumer connection can not be used without id parameter")
            cid = bound
        elif bound is not None and bound != cid:
            return text(409, f"Stateless consumer does not match id {cid} != {bound}")
        consumer = self.state.consumers.get(cid)
        if consumer is None:
            return text(409, NOT_REGISTERED)
        consumer.last_seen = time.monotonic()
        return consumer

    # -- poll / commit / goodbye ---------------------------------------------------------------

    def poll(self, req: Request) -> Response:
        consumer = self._consumer(req)
        if isinstance(consumer, Response):
            if defects.on("poll-unregistered-not-409") and consumer.status == 409:
                return Response(204, b"", None, [("Retry-After", "1"), ("Cache-Control", "no-store")])
            left_on = self.departed.get(req.arg("consumerId") or "")
            if defects.on("unregistered-poll-other-connection-204") and left_on not in (None, req.conn.id):
                return Response(204, b"", None, [("Retry-After", "5"), ("Cache-Control", "no-store")])
            return consumer
        no_store = [("Cache-Control", "no-store")]
        if not self.state.assigned_ranges(consumer):
            return Response(204, b"", None, [("Retry-After", "5")] + no_store)
        items = self.state.poll(consumer)
        if not items:
            if defects.on("poll-204-without-retry-after"):
                return Response(204, b"", None, [])
            return Response(204, b"", None, [("Retry-After", "1")] + no_store)
        if wants_json(req):
            return Response(200, encode_json(items), "application/json")
        return Response(200, encode_binary(items), CONSUMER_MIME)

    def commit(self, req: Request) -> Response:
        consumer = self._consumer(req)
        if isinstance(consumer, Response):
            return consumer
        outcome = self.state.commit(consumer)
        if outcome == "no-ranges":
            return Response(200, b"", None)
        if outcome == "other-origin":
            return text(409, "Manual commit ignored: another origin reading")
        return Response(204, b"", None, [("Retry-After", "1")])

    def goodbye(self, req: Request) -> Response:
        consumer = self._consumer(req)
        if isinstance(consumer, Response):
            return consumer
        if (req.arg("commit") or "").lower() != "false":
            self.state.commit(consumer)
        self.state.unregister(consumer)
        if defects.on("unregistered-poll-other-connection-204"):
            self.departed[consumer.id] = req.conn.id
        return text(200, "OK")
