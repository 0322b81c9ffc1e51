"""The Barco personality: discovery (primary), HTTP producer, consumer API (HTTP/1.1 and h2c) and the binary
producer, one dev-mode broker (n=1). Decisions D1-D8 are the suite's (protocols/barco/clauses.py), implemented
here from the notes; each branch says which.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time

from wirecheck.targets.reference.barco import codec
from wirecheck.targets.reference.barco.consumers import Consumer, Consumers
from wirecheck.targets.reference.barco.http import Request, Response, serve
from wirecheck.targets.reference.barco.store import ChunkStore, StoreFull
from wirecheck.targets.reference.core import BrokerConfig, Connection, FrameTimeout
from wirecheck.targets.reference.framed import discard

log = logging.getLogger("wirecheck.broker.barco")
TOKEN = -(1 << 63)  # dev mode: one broker owns the whole ring (D7)
VERSION = 1
POLL_MIME = "application/vnd.polar.consumermessage"
READ_THRESHOLD = 2 << 20  # ConsumerReadThreshold
HTTP_MAX_BODY = 1 << 20


def now_us() -> int:
    return time.time_ns() // 1000


class BarcoPersonality:
    name = "barco"

    def __init__(self, config: BrokerConfig, options, faults: frozenset[str], variants: frozenset[str] = frozenset()):
        self.config = config
        self.options = options
        self.faults = faults
        self.variants = variants
        self.ports: dict[str | None, int] = {}
        self.store = ChunkStore(config.data_dir, config.fsync == "batch", config.retention_records,
                                options.max_store_bytes, config.cache_bytes)
        self.offsets_path = config.data_dir / "barco" / "offsets.json" if config.data_dir else None
        self.consumers = Consumers(options.consumer_ranges, self._load_offsets())
        self._round_robin = itertools.count(1)
        self._crc_over = 8 if "response-crc-wrong" in faults else 9
        self.wedged = False  # only under crash-on-oversize: no endpoint answers any more

    # -- lifecycle

    def listening(self, endpoint: str | None, port: int) -> None:
        self.ports[endpoint] = port

    async def close(self) -> None:
        self._save_offsets()
        self.store.close()

    def _load_offsets(self) -> dict:
        if self.offsets_path is None or not self.offsets_path.exists():
            return {}
        saved = json.loads(self.offsets_path.read_text())
        return {(g, (bytes.fromhex(t), tok, r, v)): o for g, t, tok, r, v, o in saved}

    def _save_offsets(self) -> None:
        if self.offsets_path is None:
            return
        self.offsets_path.parent.mkdir(parents=True, exist_ok=True)
        rows = [[g, k[0].hex(), k[1], k[2], k[3], o] for (g, k), o in self.consumers.saved.items()]
        tmp = self.offsets_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(rows))
        tmp.replace(self.offsets_path)

    async def serve(self, conn: Connection) -> None:
        if self.wedged:
            return await self._wedge(conn)
        await serve(conn, self._discovery, 4096, faults=self.faults)

    async def serve_endpoint(self, endpoint: str, conn: Connection) -> None:
        if self.wedged:
            await self._wedge(conn)
        elif endpoint == "producer":
            await self._binary(conn)
        elif endpoint == "producer-http":
            await serve(conn, self._producer_http, HTTP_MAX_BODY, allow_h2=False, faults=self.faults)
        else:
            await serve(conn, self._consumer, HTTP_MAX_BODY, faults=self.faults)

    async def _wedge(self, conn: Connection) -> None:
        """crash-on-oversize: the broker hangs (as upstream's buffer pool can, notes §2.7): reads, never answers."""
        while True:
            await conn.read_exactly(1)

    # -- storing

    def _reader_key(self, topic: bytes, key: bytes) -> tuple:
        ranges = self.options.consumer_ranges
        if key and "partition-key-ignored" not in self.faults:
            index = min(ranges - 1, ((codec.token_of(key) - TOKEN) * ranges) >> 64)
            if "keyed-range-zero" in self.variants:  # upstream's dev mode: GetPrimaryTokenIndex overflows (notes §7)
                index = 0
        else:
            index = next(self._round_robin) % ranges
        return (topic, TOKEN, index, VERSION)

    def _store(self, topic: bytes, key: bytes, records: list[tuple[int, bytes]]) -> None:
        if "empty-message-dropped" in self.faults:
            records = [(ts, body) for ts, body in records if body]
            if not records:
                return
        if "record-cut-64k" in self.faults:
            records = [(ts, body[:0xFFFF]) for ts, body in records]
        payload = codec.compress(codec.encode_records(records), checksum="zstd-no-checksum" not in self.faults)
        self.store.append(self._reader_key(topic, key), len(records), payload)

    # -- binary producer (:9254) -------------------------------------------------------------------------------

    async def _binary(self, conn: Connection) -> None:
        started = False
        while True:
            first = await conn.read_exactly(1)
            if self.wedged:
                return await self._wedge(conn)
            deadline = conn.frame_deadline()
            head = first + await conn.read_by(codec.HEAD_SIZE - 1, deadline)
            version, flags, stream, op, length, crc_ok = codec.decode_head(head)
            if not crc_ok and "crc-unchecked" not in self.faults:
                if "crc-error-then-close" in self.variants:  # D1 permits an ERROR before the close
                    await conn.write(self._error(stream, "Invalid head crc"))
                return  # D1: not processed; close without reading the body
            if length > codec.MAX_FRAME_BODY and "oversize-buffered" not in self.faults:
                if "crash-on-oversize" in self.faults:
                    self.wedged = True
                    return
                await conn.write(self._error(stream, "Body length above the limit"))
                if "oversize-error-discard" not in self.variants:
                    return  # D4: never buffered
                await discard(conn, length, deadline)  # the other reading: skipped unbuffered, the stream in sync
                continue
            if version != 1 and "version-ignored" not in self.variants:  # the variant: as upstream (notes §11)
                await conn.write(self._error(stream, f"Unsupported version {version}"))
                return  # D2
            if "short-read-body" in self.faults and length:
                body = await self._body_or_partial(conn, length, deadline)
            else:
                body = await conn.read_by(length, deadline) if length else b""  # D6: every body is consumed
            if "stream-id-wrong" in self.faults:
                stream = (stream + 1) & 0xFFFF
            if not started:
                if op == codec.OP_STARTUP:
                    if "startup-signed-stream-id" in self.faults and stream > 0x7FFF:
                        await conn.write(self._error(stream, f"Invalid stream id {stream - 0x10000}"))
                        continue
                    started = True
                    await conn.write(codec.encode_frame(codec.OP_READY, stream, crc_over=self._crc_over))
                    continue
                if not (op == codec.OP_PRODUCE and "startup-not-required" in self.faults):
                    await conn.write(self._error(stream, "Invalid first message"))
                    return
            if "pipelined-answer-dropped" in self.faults and conn.reader._buffer:  # asyncio's read buffer holds
                continue  # (part of) the next frame: this one is dropped unanswered
            if body and op != codec.OP_PRODUCE and "control-body-closes" in self.variants:
                # notes §10.9's other reading: such a body is a protocol error (the body was read: no desync)
                await conn.write(self._error(stream, "Only PRODUCE frames carry a body"))
                return
            if op == codec.OP_PRODUCE:
                try:
                    answer = self._produce_frame(stream, flags, body)
                except codec.BadLengths as exc:  # bad-lengths-close: refused, then the connection ends
                    await conn.write(self._error(stream, str(exc)))
                    return
                await conn.write(answer)
                if "truncated-body-closes" in self.faults and answer[14:17] == b"EOF":
                    return  # ERROR(0, "EOF ..."): the body ended inside its timestamp, key or topic
            elif op == codec.OP_HEARTBEAT:
                answer = codec.OP_PRODUCE_RESPONSE if "heartbeat-wrong-op" in self.faults else codec.OP_READY
                await conn.write(codec.encode_frame(answer, stream, crc_over=self._crc_over))
            elif op == codec.OP_STARTUP and "second-startup-ready" in self.variants:
                await conn.write(codec.encode_frame(codec.OP_READY, stream, crc_over=self._crc_over))
            elif "unknown-op-silent" in self.faults and op not in (codec.OP_STARTUP,):
                continue
            else:
                await conn.write(self._error(stream, "Only producer operations are supported"))

    @staticmethod
    async def _body_or_partial(conn: Connection, length: int, deadline: float) -> bytes:
        """short-read-body: a body the peer ends early (EOF) is processed as far as it came, where it should be
        dropped with the connection (an io.ReadFull whose ErrUnexpectedEOF is ignored)."""
        try:
            async with asyncio.timeout_at(deadline):
                return await conn.reader.readexactly(length)
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except TimeoutError:
            raise FrameTimeout("frame not complete in time") from None

    def _error(self, stream: int, message: str) -> bytes:
        frame = codec.error_frame(stream, message, code=9 if "error-code-unknown" in self.faults else 0,
                                  crc_over=self._crc_over, capped="error-quotes-input" not in self.variants,
                                  prefixed="error-length-prefixed" in self.faults)
        if "error-frame-cut" in self.faults:
            return frame[:-1]  # the header still announces the whole body
        return frame

    def _produce_frame(self, stream: int, flags: int, body: bytes) -> bytes:
        try:
            timestamp, key, topic, messages = codec.decode_produce(
                body, flags, check_lengths="message-lengths-unchecked" not in self.faults)
        except codec.BadLengths as exc:
            if "bad-lengths-close" in self.variants:
                raise
            return self._error(stream, str(exc))
        except codec.Malformed as exc:
            return self._error(stream, str(exc))
        problem = codec.topic_problem(topic, notes_rule_only="topic-any-bytes" in self.variants)
        if problem and "topic-unvalidated" not in self.faults:
            if "error-quotes-input" in self.variants:  # the protocol sets no length on ERROR messages
                problem += f": topic {topic.hex()}"
            return self._error(stream, problem)
        if not messages:
            if "empty-produce-acked" in self.variants:  # nothing to store: acknowledged as a no-op
                return codec.encode_frame(codec.OP_PRODUCE_RESPONSE, stream, crc_over=self._crc_over)
            return self._error(stream, "No messages")  # D3
        ts = now_us() if timestamp is None or "timestamp-ignored" in self.faults else timestamp
        try:
            self._store(topic, key, [(ts, m) for m in messages])
        except StoreFull as exc:
            return self._error(stream, str(exc))
        ack_body = b"\x00" if "produce-ack-body" in self.faults else b""
        return codec.encode_frame(codec.OP_PRODUCE_RESPONSE, stream, ack_body, crc_over=self._crc_over)

    # -- discovery (:9250) -------------------------------------------------------------------------------------

    async def _discovery(self, request: Request) -> Response:
        if request.path == "/status":
            if "discovery-status-404" in self.faults:
                return Response(404, b"Not found")
            return Response(200, b"OK") if request.method == "GET" else Response(405, b"Method not allowed")
        if request.path == "/v1/brokers":
            if request.method != "GET":
                return Response(405, b"Method not allowed")
            doc = {"names": ["barco-0"], "length": 1, "producerPort": self.ports.get("producer-http"),
                   "producerBinaryPort": self.ports.get("producer"), "consumerPort": self.ports.get("consumer")}
            if "discovery-binary-port-missing" in self.faults:
                del doc["producerBinaryPort"]
            return Response(200, json.dumps(doc).encode(), content_type="application/json")
        return Response(404, b"Not found")

    # -- HTTP producer (:9251) ---------------------------------------------------------------------------------

    async def _producer_http(self, request: Request) -> Response:
        if request.path == "/status" and "producer-http-status-404" not in self.faults:
            port = self.ports.get("producer-http")
            return Response(200, f"Producer server listening on {port}".encode())
        parts = request.path.split("/")
        if len(parts) < 5 or parts[:3] != ["", "v1", "topic"] or parts[-1] != "messages":
            return Response(404, b"Not found")
        if len(parts) > 5 and "router-decodes-path" in self.variants:
            return Response(404, b"Not found")  # /v1/topic/a/b/messages: no route (the topic was a%2Fb)
        topic = "/".join(parts[3:-1]).encode()
        if request.method == "GET":
            if "http-get-allowed" in self.faults:
                return Response(200, b"OK")
            return Response(405, b"Producer server doesn't allow getting topic messages")
        if request.method != "POST":
            return Response(405, b"Method not allowed")
        if codec.topic_problem(topic, notes_rule_only="topic-any-bytes" in self.variants):
            return Response(400, b"Invalid topic")
        empty_taken = not request.body and "http-empty-body-stored" in self.faults
        chunked_refused = request.chunked and "http-chunked-accepted" not in self.variants  # D8 permits both
        if chunked_refused or not (empty_taken or 0 < len(request.body) <= codec.MAX_MESSAGE):
            return Response(400, b"Content length must be defined (HTTP/1.1 chunked not supported), greater than 0 "
                                 b"and less than 1048576 bytes")
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "application/x-ndjson" and "ndjson-one-record" not in self.faults:
            messages = [line.rstrip(b"\r") for line in request.body.split(b"\n") if line.rstrip(b"\r")]
        elif kind == "application/vnd.polar.producer.frames":
            try:
                messages = codec.split_framed(memoryview(request.body))
            except codec.Malformed as exc:  # the variant: 422, the content understood but not processable
                status = 422 if "frames-invalid-422" in self.variants else 400
                return Response(status, f"Invalid frames: {exc}".encode())
        else:
            messages = [request.body]
        if not messages:
            return Response(400, b"No messages")
        if "http-produce-not-stored" in self.faults:
            return Response(200, b"OK", content_type="text/html; charset=utf-8")
        ts = now_us()
        try:
            self._store(topic, (request.param("partitionKey") or "").encode(), [(ts, m) for m in messages])
        except StoreFull:
            return Response(500, b"Internal server error")
        return Response(200, b"OK", content_type="text/html; charset=utf-8")

    # -- consumer (:9252) --------------------------------------------------------------------------------------

    async def _consumer(self, request: Request) -> Response:
        if request.path == "/status" and "consumer-status-404" not in self.faults:
            return Response(200, f"Consumer server listening on {self.ports.get('consumer')}".encode())
        register_methods = ("PUT",) if "register-post-refused" in self.faults else ("PUT", "POST")
        routes = {"/v1/consumer/register": (register_methods, self._register),
                  "/v1/consumer/poll": (("POST",), self._poll),
                  "/v1/consumer/commit": (("POST",), self._commit),
                  "/v1/consumer/goodbye": (("POST",), self._goodbye)}
        route = routes.get(request.path)
        if route is None:
            return Response(400 if "not-found-400" in self.faults else 404, b"Not found")
        methods, handler = route
        if request.method not in methods:  # a router may answer a known path with another method 404
            return Response(404 if "consumer-method-404" in self.variants else 405, b"Method not allowed")
        if "missing-consumer-id-204" in self.faults and handler != self._register and \
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
            earliest, connection = policy == 1, None if "connection-bind-ignored" in self.faults else request.conn
        else:
            group = request.param("group") or "default"
            topics = [t for t in request.query.get("topic", []) if t]
            policy = request.param("onNewGroup") or "startFromLatest"
            if policy not in ("startFromLatest", "startFromEarliest") and "unknown-policy-accepted" not in self.faults:
                return Response(400, b"Invalid offset reset policy value")
            earliest, connection = policy == "startFromEarliest", None
        if not consumer_id or not topics:
            return Response(400, b"Consumer id and topics can not be empty")
        if "register-any-topic" not in self.variants and any(codec.topic_problem(t.encode()) for t in topics):
            return Response(400, b"Invalid topic")
        consumer = Consumer(consumer_id, group, frozenset(t.encode() for t in topics), connection)
        outcome = self.consumers.register(consumer, earliest, self._ends(),
                                          accept_different="reregister-different-accepted" in self.faults)
        if outcome == "conflict" or (outcome == "same" and "reregister-same-refused" in self.faults):
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
        if "retry-after-missing" not in self.faults:
            headers.append(("retry-after", retry))
        if "empty-200" in self.faults:
            return Response(200, b"", headers, content_type=POLL_MIME)
        return Response(204, b"", headers)

    def _poll(self, request: Request) -> Response:
        consumer = self._consumer_of(request)
        if consumer is None:
            return self._no_content("1") if "unregistered-204" in self.faults else self._not_registered()
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
                elif "no-rewind" in self.faults:  # continue after what the other consumer was served
                    position.committed = position.served_end
                position.served_to = position.served_end = None  # else: rewind to the committed offset
            chunk = self.store.chunk_at(reader, position.committed)
            if chunk is None:
                continue
            payload = self.store.payload(reader, chunk)
            offset = chunk.start + (1 if "poll-offset-gap" in self.faults and chunk.start > 0 else 0)
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
        kind = "application/octet-stream" if "poll-content-type-wrong" in self.faults else POLL_MIME
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
            if "json-start-offset-missing" in self.faults:
                del item["startOffset"]
            out.append(item)
        return json.dumps(out).encode()

    def _commit(self, request: Request) -> Response:
        consumer = self._consumer_of(request)
        if consumer is None:
            return self._not_registered()
        if "commit-ignored" in self.faults:
            return Response(204, b"", [("retry-after", "1")])
        if not self.consumers.commit_served(consumer):
            return Response(409, b"Manual commit ignored: another origin reading")
        self._save_offsets()
        return Response(204, b"", [("retry-after", "1")])

    def _goodbye(self, request: Request) -> Response:
        consumer = self._consumer_of(request)
        if consumer is None:
            return self._not_registered()
        if request.param("commit") != "false" and "commit-ignored" not in self.faults:
            self.consumers.commit_served(consumer)
            self._save_offsets()
        if "goodbye-keeps-consumer" not in self.faults:
            self.consumers.leave(consumer)
        return Response(200, b"OK")
