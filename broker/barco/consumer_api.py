"""Barco's consumer API (``--barco-consumer-port``, 9252; HTTP/1.1 and h2c on one port): register, poll, commit
and goodbye (notes §5), over the registrations and read positions of consumers.py.

A mixin of :class:`~wirecheck.broker.barco.server.BarcoPersonality`, which provides the state named
below and ``_save_offsets``.
"""

from __future__ import annotations

import json

from wirecheck.broker.barco import codec
from wirecheck.broker.barco.consumers import Consumer, Consumers
from wirecheck.broker.barco.faults import BarcoFaults, BarcoVariants
from wirecheck.broker.barco.http import Request, Response
from wirecheck.broker.barco.store import ChunkStore

POLL_MIME = "application/vnd.polar.consumermessage"
READ_THRESHOLD = 2 << 20  # ConsumerReadThreshold


class ConsumerApi:
    faults: BarcoFaults
    variants: BarcoVariants
    ports: dict[str | None, int]
    store: ChunkStore
    consumers: Consumers

    async def _consumer(self, request: Request) -> Response:
        if request.path == "/status" and not self.faults.consumer_status_404:
            return Response(200, f"Consumer server listening on {self.ports.get('consumer')}".encode())
        register_methods = ("PUT",) if self.faults.register_post_refused else ("PUT", "POST")
        routes = {"/v1/consumer/register": (register_methods, self._register),
                  "/v1/consumer/poll": (("POST",), self._poll),
                  "/v1/consumer/commit": (("POST",), self._commit),
                  "/v1/consumer/goodbye": (("POST",), self._goodbye)}
        route = routes.get(request.path)
        if route is None:
            return Response(400 if self.faults.not_found_400 else 404, b"Not found")
        methods, handler = route
        if request.method not in methods:  # a router may answer a known path with another method 404
            return Response(404 if self.variants.consumer_method_404 else 405, b"Method not allowed")
        if self.faults.missing_consumer_id_204 and handler != self._register and \
                request.param("consumerId") is None and self._consumer_of(request) is None:
            return Response(204, b"")
        return handler(request)

    def _ends(self) -> dict[tuple, int]:
        return {key: reader.end for key, reader in self.store.readers.items()}

    def _register(self, request: Request) -> Response:
        consumer_id = request.param("consumerId") or request.param("consumer_id")
        if consumer_id is None and request.body:  # connection-bound: a ConsumerInfo JSON body
            try:
                info = json.loads(request.body)
                consumer_id, group, topics, policy = info["id"], info.get("group") or "default", info["topics"], \
                    info.get("onNewGroup", 0)
                if not (isinstance(consumer_id, str) and isinstance(group, str) and isinstance(topics, list)
                        and all(isinstance(t, str) for t in topics) and policy in (0, 1)):
                    raise TypeError
            except (ValueError, KeyError, TypeError):
                return Response(400, b"Invalid ConsumerInfo payload")
            earliest, connection = policy == 1, None if self.faults.connection_bind_ignored else request.conn
        else:
            group = request.param("group") or "default"
            topics = [t for t in request.query.get("topic", []) if t]
            policy = request.param("onNewGroup") or "startFromLatest"
            if policy not in ("startFromLatest", "startFromEarliest") and not self.faults.unknown_policy_accepted:
                return Response(400, b"Invalid offset reset policy value")
            earliest, connection = policy == "startFromEarliest", None
        if not consumer_id or not topics:
            return Response(400, b"Consumer id and topics can not be empty")
        if not self.variants.register_any_topic and any(codec.topic_problem(t.encode()) for t in topics):
            return Response(400, b"Invalid topic")
        consumer = Consumer(consumer_id, group, frozenset(t.encode() for t in topics), connection)
        outcome = self.consumers.register(consumer, earliest, self._ends(),
                                          accept_different=self.faults.reregister_different_accepted)
        if outcome == "conflict" or (outcome == "same" and self.faults.reregister_same_refused):
            return Response(400, b"Consumer already registered with different parameters")
        if connection is not None and outcome == "new":
            request.conn.on_close.append(lambda: self.consumers.leave(consumer))
        return Response(200, b"Already registered" if outcome == "same" else b"OK")

    def _consumer_of(self, request: Request) -> Consumer | None:
        consumer_id = request.param("consumerId") or request.param("consumer_id")
        if consumer_id is not None:
            return self.consumers.consumers.get(consumer_id)
        for consumer in self.consumers.consumers.values():
            if consumer.connection is request.conn:
                return consumer
        return None

    def _not_registered(self) -> Response:
        return Response(409, b"Consumer not registered")

    def _no_content(self, retry: str) -> Response:
        headers = [("cache-control", "no-store")]
        if not self.faults.retry_after_missing:
            headers.append(("retry-after", retry))
        if self.faults.empty_200:
            return Response(200, b"", headers, content_type=POLL_MIME)
        return Response(204, b"", headers)

    def _poll(self, request: Request) -> Response:
        consumer = self._consumer_of(request)
        if consumer is None:
            return self._no_content("1") if self.faults.unregistered_204 else self._not_registered()
        group = self.consumers.groups[consumer.group]
        keys = self.consumers.assigned(consumer, sorted(self.store.readers, key=repr))
        if not keys:
            return self._no_content("5")
        items, total = [], 0
        for key in keys:
            reader = self.store.readers[key]
            position = self.consumers.position(group, key)
            if position.served_to is not None:
                if position.served_to == consumer.id:  # implicit commit of what this consumer was served
                    position.committed = position.served_end
                    self.consumers.saved[(group.name, key)] = position.committed
                elif self.faults.no_rewind:  # continue after what the other consumer was served
                    position.committed = position.served_end
                position.served_to = position.served_end = None  # else: rewind to the committed offset
            chunk = self.store.chunk_at(reader, position.committed)
            if chunk is None:
                continue
            payload = self.store.payload(reader, chunk)
            offset = chunk.start + (1 if self.faults.poll_offset_gap and chunk.start > 0 else 0)
            items.append((key, offset, payload, chunk))
            position.served_end, position.served_to = chunk.end, consumer.id
            total += len(payload)
            if total >= READ_THRESHOLD:
                break
        if not items:
            return self._no_content("1")
        if request.headers.get("accept") == "application/json":
            return Response(200, self._poll_json(items), content_type="application/json")
        body = codec.poll_body([(k[1], k[2], k[3], k[0], offset, payload) for k, offset, payload, _ in items])
        kind = "application/octet-stream" if self.faults.poll_content_type_wrong else POLL_MIME
        return Response(200, body, content_type=kind)

    def _poll_json(self, items) -> bytes:
        out = []
        for key, offset, payload, _ in items:
            values = []
            for _, body in codec.decompress_records(payload):
                try:
                    values.append(json.loads(body))
                except (ValueError, UnicodeDecodeError):
                    values.append(body.decode("latin-1"))  # decision: non-JSON bodies become strings
            item = {"topic": key[0].decode(), "token": str(key[1]), "rangeIndex": key[2], "version": key[3],
                    "startOffset": str(offset), "values": values}
            if self.faults.json_start_offset_missing:
                del item["startOffset"]
            out.append(item)
        return json.dumps(out).encode()

    def _commit(self, request: Request) -> Response:
        consumer = self._consumer_of(request)
        if consumer is None:
            return self._not_registered()
        if self.faults.commit_ignored:
            return Response(204, b"", [("retry-after", "1")])
        if not self.consumers.commit_served(consumer):
            return Response(409, b"Manual commit ignored: another origin reading")
        self._save_offsets()
        return Response(204, b"", [("retry-after", "1")])

    def _goodbye(self, request: Request) -> Response:
        consumer = self._consumer_of(request)
        if consumer is None:
            return self._not_registered()
        if request.param("commit") != "false" and not self.faults.commit_ignored:
            self.consumers.commit_served(consumer)
            self._save_offsets()
        if not self.faults.goodbye_keeps_consumer:
            self.consumers.leave(consumer)
        return Response(200, b"OK")
