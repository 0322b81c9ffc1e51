"""The Kafka personality: framing, request headers, version checks, dispatch, response headers.

Which APIs it serves, at which versions and with which handler, is one table (api_table.py); the handlers are
the broker's (broker.py and its ``*_apis.py`` mixins) and its coordinators'; answers are framed in responses.py.

Connection rules (SocketServer/NetworkReceive/RequestContext, see the spec notes §5):
- a size prefix below 8 (the request header's fixed part) or above the frame limit (socket.request.max.bytes,
  100 MiB) closes the connection before any body byte is read (framed.serve_frames reads the frames);
- an unknown api key, an unadvertised version (except ApiVersions) or a body that does not decode closes the
  connection without a response;
- ApiVersions at a version above the advertised range gets a v0 body with error 35 and the ApiVersions range;
- requests are handled one at a time per connection, so responses leave in request order (Kafka mutes a
  channel while one of its requests is in flight);
- Produce with acks=0 gets no response; if a partition failed, the connection is closed so the client
  refreshes its metadata (KafkaApis.handleProduceRequest).
Trailing bytes after a decoded body are ignored, as Kafka's generated readers do.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import re
import struct

from wirecheck.broker.core import BrokerConfig, Connection
from wirecheck.broker.framed import BadLength, FrameShape, serve_frames
from wirecheck.broker.kafka import coordinator_state, groups
from wirecheck.broker.kafka.api_keys import ApiKey
from wirecheck.broker.kafka.api_table import APIS, SASL_APIS, TELEMETRY_KEYS, Caller, compile_messages
from wirecheck.broker.kafka.broker import Broker
from wirecheck.broker.kafka.codec_primitives import MalformedBody
from wirecheck.broker.kafka.durable import DurableLog
from wirecheck.broker.kafka.errors import INVALID_REQUEST, UNSUPPORTED_VERSION
from wirecheck.broker.kafka.faults import KafkaFaults, KafkaVariants
from wirecheck.broker.kafka.options import KafkaOptions
from wirecheck.broker.kafka.producers import Producers
from wirecheck.broker.kafka.request_header import HEADER, read_client_id, skip_tags
from wirecheck.broker.kafka.responses import ResponseFrames
from wirecheck.broker.kafka.sasl import Authenticator, read_users
from wirecheck.broker.kafka.settings import CLOSE, Settings
from wirecheck.broker.kafka.storage import Storage
from wirecheck.broker.kafka.telemetry import Telemetry
from wirecheck.broker.kafka.errors import ILLEGAL_SASL_STATE

log = logging.getLogger("wirecheck.broker.kafka")

DEFAULT_MAX_FRAME = 104_857_600  # socket.request.max.bytes
_SIZE = struct.Struct(">i")  # the size prefix of an answer

#: what a listener without SASL answers SaslHandshake and SaslAuthenticate with (variant sasl-apis-on-plaintext)
_NO_SASL = {ApiKey.SASL_HANDSHAKE: {"ErrorCode": ILLEGAL_SASL_STATE, "Mechanisms": []},
            ApiKey.SASL_AUTHENTICATE: {"ErrorCode": ILLEGAL_SASL_STATE,
                                       "ErrorMessage": "this listener does not authenticate",
                                       "AuthBytes": b"", "SessionLifetimeMs": 0}}

#: fault hostile-count-waits: an INT32 count from which the elements are awaited (an allocation that size stalls)
HOSTILE_COUNT = 1 << 20


class _Capture:
    """Collects the answers one request writes (fault pipelined-answers-reordered)."""

    def __init__(self):
        self.out: list[bytes] = []

    async def write(self, data: bytes) -> None:
        self.out.append(data)


class HostileCount(Exception):
    """Raised only under the crash-on-hostile-array fault."""


class KafkaPersonality(ResponseFrames):
    name = "kafka"

    def __init__(self, config: BrokerConfig, options: KafkaOptions):
        self.config = config
        self.faults = config.faults_as(KafkaFaults)
        self.variants = config.variants_as(KafkaVariants)
        self.max_frame = config.max_frame or DEFAULT_MAX_FRAME
        # 8: api_key, api_version and correlation_id at least.
        max_length = 2**31 - 1 if self.faults.frame_limit_ignored else self.max_frame
        self.frame_shape = FrameShape(header_size=4, length_at=0, length_format=">i", min_length=8,
                                      max_length=max_length)
        settings = Settings(
            auto_create=options.auto_create,
            node_id=options.node_id,
            topic_admin=options.topic_admin,
            default_partitions=options.default_partitions,
            # variant segment-below-max-message: message.max.bytes 2 MiB over 1 MiB segments
            # (produce_apis.SEGMENT_BYTES)
            max_message_bytes=(2_097_152 if self.variants.segment_below_max_message
                               else options.max_message_bytes),
            retention_records=config.retention_records,
            retention_ms=options.retention_ms,
            retention_check_ms=options.retention_check_ms,
            consumer_heartbeat_ms=options.consumer_heartbeat_ms,
            consumer_session_ms=options.consumer_session_ms,
            share_lock_ms=options.share_lock_ms,
            share_delivery_limit=options.share_delivery_limit,
            share_max_record_locks=options.share_max_record_locks,
        )
        coordinator = groups.Coordinator(
            min_session_ms=options.min_session_ms,
            # variant session-timeout-unbounded: group.max.session.timeout.ms set to its top (INT32_MAX)
            **({"max_session_ms": 2**31 - 1} if self.variants.session_timeout_unbounded else {}),
            faults=self.faults,
        )
        journal = None
        if config.data_dir is not None:
            journal = DurableLog(config.data_dir, fsync=config.fsync == "batch", cache_bytes=config.cache_bytes,
                                 faults=self.faults)
        storage = Storage(journal)
        for name, count in options.topics.items():  # an operator's topics (kept across restarts with --data-dir)
            if name not in storage.topics:
                storage.create(name, count)
        if settings.retention_records is not None:
            for topic in storage.topics.values():
                for partition in topic.partitions:
                    partition.trim(settings.retention_records)
        self.broker = Broker(settings, self.faults, coordinator, Producers(), storage, self.variants)
        b = self.broker
        self.journal = journal
        self._loop_started = False
        self._retention_timer: asyncio.TimerHandle | None = None
        if journal is not None:
            coordinator_state.rebuild_producers(storage, b.producers)
            saved = journal.load_coordinator()
            if saved is not None:
                coordinator_state.restore(saved, coordinator, b.transactions)
            b.transactions.on_change = self._save_coordinator
        metrics = {"all": [""], "none": []}.get(options.telemetry_metrics,
                                                 [m for m in options.telemetry_metrics.split(",") if m])
        self.telemetry = Telemetry(options.telemetry_push_ms, options.telemetry_max_bytes, metrics, self.faults,
                                   self.variants)
        self.sasl = Authenticator(read_users(options.sasl_users), self.faults) if options.sasl_users else None
        sasl_apis = self.sasl is not None or self.variants.sasl_apis_on_plaintext
        self.requests, self.responses = compile_messages(self.faults.tagged_fields_misskipped, sasl_apis,
                                                         self.faults.compact_string_length_two_bytes,
                                                         self.variants.negative_count_null,
                                                         self.variants.tagged_defaults_written)
        apis = {**APIS, **SASL_APIS} if sasl_apis else APIS
        self.ranges = {key: (api.low, api.high) for key, api in apis.items()}
        if not options.telemetry:  # --no-kafka-telemetry: the KIP-714 keys unknown, as to a broker without KIP-714
            self.ranges = {key: r for key, r in self.ranges.items() if key not in TELEMETRY_KEYS}
            self.requests = {key: m for key, m in self.requests.items() if key not in TELEMETRY_KEYS}
        if self.variants.produce_min_three:
            # variant: the real minimum advertised, v0-2 unadvertised
            self.ranges[ApiKey.PRODUCE] = (3, self.ranges[ApiKey.PRODUCE][1])
        if self.faults.advertise_unimplemented:
            self.ranges[ApiKey.FETCH] = (3, 16)  # Fetch v3 is advertised but answered in the v4 layout
            self.requests[ApiKey.FETCH].compile(3)
        self.wedged = False  # crash-on-hostile-array: the broker stops answering anyone

    def _schedule_retention(self) -> None:
        self._retention_timer = asyncio.get_running_loop().call_later(
            self.broker.settings.retention_check_ms / 1000, self._run_retention)

    def _run_retention(self) -> None:
        self.broker.maintain_logs()
        self._schedule_retention()

    async def close(self) -> None:
        if self._retention_timer is not None:
            self._retention_timer.cancel()
        self.broker.coordinator.close()
        self.broker.consumer_groups.close()
        self.broker.share_groups.close()
        self.broker.storage.close()

    # ------------------------------------------------------------------------------------------ connection

    async def serve(self, conn: Connection) -> None:
        sockname = conn.writer.get_extra_info("sockname")
        host, port = sockname[0], sockname[1]
        client_host = "/" + str(conn.peer[0]) if conn.peer else ""
        auth = self.sasl.connection() if self.sasl else None
        if not self._loop_started:  # the first connection: the event loop runs now
            self._loop_started = True
            self.broker.transactions.resume_timers()
            self._schedule_retention()

        held: list[bytes] = []  # fault pipelined-answers-reordered: answers kept back behind later ones

        async def handle(header: bytes, frame: bytes) -> bool:
            if self.wedged or getattr(conn, "stalled", False):
                return True  # fault: a wedged broker (or a stuck connection) reads and never answers
            if not self.faults.pipelined_answers_reordered:
                return await self._handle(conn, frame, host, port, client_host, auth)
            capture = _Capture()
            keep = await self._handle(capture, frame, host, port, client_host, auth)
            if keep and conn.reader._buffer:  # more requests already waiting: this answer goes after theirs
                held.append(b"".join(capture.out))
                return True
            await conn.write(b"".join(capture.out) + b"".join(reversed(held)))
            held.clear()
            return keep

        if self.faults.size_prefix_one_read:
            await self._serve_one_read_prefix(conn, handle)
            return
        await serve_frames(conn, self.frame_shape, handle, functools.partial(self._bad_size, conn))

    async def _serve_one_read_prefix(self, conn: Connection, handle) -> None:
        """Fault size-prefix-one-read: the size prefix is taken from what one read brings (recv(4) without a loop);
        a prefix split over two reads ends the connection. The body is still read in full."""
        while True:
            first = await conn.read_exactly(1)
            if len(conn.reader._buffer) < 3:
                log.debug("closing: a size prefix split over reads")
                return
            head = first + await conn.read_by(3, conn.frame_deadline())
            size = _SIZE.unpack(head)[0]
            if not self.frame_shape.accepts(size):
                if await self._bad_size(conn, size) is BadLength.CLOSE:
                    return
                continue
            body = await conn.read_by(size, conn.frame_deadline())
            conn.mark_working()
            if not await handle(head, body):
                return

    async def _bad_size(self, conn: Connection, size: int) -> BadLength:
        """A size out of range closes in silence (Kafka), unless a variant answers first."""
        if size < 0 and self.faults.negative_size_skipped:
            return BadLength.SKIP  # fault: a negative size is dropped and the next header read
        if size > 0 and self.variants.oversize_error_answer:
            # variant: read the request header (not the body) and refuse that request with INVALID_REQUEST
            key, version, correlation_id = HEADER.unpack(await conn.read_by(HEADER.size, conn.frame_deadline()))
            answer = self._error_answer(key, version, correlation_id, INVALID_REQUEST)
            if answer:
                await conn.write(answer)
        return BadLength.CLOSE

    async def _handle(self, conn: Connection, frame: bytes, host: str, port: int, client_host: str, auth) -> bool:
        if auth is not None and auth.raw_tokens:  # after SaslHandshake v0 (a token under 8 bytes closes, as any frame)
            reply = auth.raw_token(frame)
            if reply is not None:
                await conn.write(_SIZE.pack(len(reply)) + reply)
            return reply is not None
        key, version, correlation_id = HEADER.unpack_from(frame, 0)
        reply_id = correlation_id + 1 if self.faults.correlation_id_wrong else correlation_id
        if key not in self.requests:
            if self.faults.unknown_key_stays_open:
                return True  # fault: silence, and the client waits for its request timeout
            if self.variants.unknown_key_error_answer:
                # variant: there is no schema for the key, so the answer is the part every error answer shares:
                # the correlation id and an INT16 ErrorCode, 35 (UNSUPPORTED_VERSION); then the connection closes
                await conn.write(_SIZE.pack(6) + struct.pack(">ih", reply_id, UNSUPPORTED_VERSION))
            log.debug("closing: unknown api key %d", key)
            return False
        log.debug("request key=%d v%d corr=%d", key, version, correlation_id)
        if auth is not None and not auth.allows(key):
            log.debug("closing: api %d before SASL authentication", key)
            return False
        low, high = self.ranges[key]
        if key == ApiKey.API_VERSIONS and not low <= version <= high:
            await conn.write(self._unsupported_api_versions(reply_id, version))
            return True
        if not low <= version <= high:
            if self.variants.unsupported_version_error_answer:
                # variant: refuse with UNSUPPORTED_VERSION (35) in the highest advertised version's shape
                answer = self._error_answer(key, high, reply_id, UNSUPPORTED_VERSION)
                if answer:
                    await conn.write(answer)
                    return True
            log.debug("closing: api %d version %d not in [%d, %d]", key, version, low, high)
            return False
        request_msg = self.requests[key]
        flexible = request_msg.is_flexible(version)
        try:
            pos, client_id = read_client_id(frame, 8)
            if client_id is None and self.variants.null_client_id_refused:
                raise MalformedBody("null client id")  # variant: ClientId read as a non-nullable string
            if flexible and client_id and len(client_id) > 127 and self.faults.client_id_byte_length:
                raise MalformedBody("client id length")  # fault: header v2's length kept in a signed byte
            if flexible:
                pos = skip_tags(frame, pos, first_only=self.faults.header_tags_first_only)
            request, _ = request_msg.decode(frame, version, pos)
        except MalformedBody as exc:
            hostile = re.match(r"array count (\d+) exceeds", str(exc))
            if self.faults.hostile_count_waits and hostile and int(hostile[1]) >= HOSTILE_COUNT \
                    and not flexible:
                conn.stalled = True  # fault: the elements of a huge count are awaited: this connection is stuck
                return True
            if self.faults.crash_on_hostile_array and "count" in str(exc):
                self.wedged = True
                raise HostileCount(str(exc)) from None
            if self.faults.in_transaction_malformed_stalls and getattr(conn, "in_transaction", False):
                conn.stalled = True  # fault: a transaction's connection waits instead of closing
                return True
            if self.faults.malformed_body_answered or (self.faults.txn_producer_malformed_answered and getattr(
                    conn, "txn_producer", False) and "count" not in str(exc)):
                await conn.write(_SIZE.pack(6) + struct.pack(">ih", reply_id, -1))
                return True
            if self.variants.malformed_body_invalid_request:
                answer = self._error_answer(key, version, reply_id, INVALID_REQUEST)  # variant: 42, then close
                if answer:
                    await conn.write(answer)
            log.debug("closing: malformed api %d v%d body: %s", key, version, exc)
            return False

        if key in SASL_APIS:
            if auth is None:  # variant sasl-apis-on-plaintext: this listener does not authenticate
                await conn.write(self._frame(key, version, reply_id, _NO_SASL[key]))
                return True
            response = auth.handshake(request, version) if key == ApiKey.SASL_HANDSHAKE else auth.authenticate(request)
            await conn.write(self._frame(key, version, reply_id, response))
            return not auth.closing
        response = await self._dispatch(key, version, request, Caller(client_id or "", host, port, client_host))
        if response is not None and response.pop(CLOSE, False):
            log.debug("closing: api %d refused by closing (variant)", key)
            return False
        if self.faults.txn_producer_malformed_answered and key == ApiKey.INIT_PRODUCER_ID and \
                request.get("TransactionalId") and response is not None and not response.get("ErrorCode"):
            conn.txn_producer = True  # fault: what the connection holds from now on
        if self.faults.in_transaction_malformed_stalls and response is not None:
            if key == ApiKey.ADD_PARTITIONS_TO_TXN and not any(
                    p["PartitionErrorCode"] for t in response.get("ResultsByTopicV3AndBelow") or ()
                    for p in t["ResultsByPartition"]):
                conn.in_transaction = True  # fault: a transaction ongoing on this connection
            elif key == ApiKey.END_TXN and not response.get("ErrorCode"):
                conn.in_transaction = False
        if key in coordinator_state.CHANGING_APIS:
            self._save_coordinator()  # before the answer: what is acknowledged survives a restart
        if key == ApiKey.PRODUCE and request["Acks"] == 0:
            failed = any(p["ErrorCode"] for t in response["Responses"] for p in t["PartitionResponses"])
            if not self.faults.acks0_responds:
                return not failed
        await conn.write(self._frame(key, version, reply_id, response))
        return True

    async def _dispatch(self, key: int, version: int, req: dict, caller: Caller) -> dict | None:
        handler = APIS[key].handler
        assert handler is not None, "SASL is answered before dispatch"
        response = handler(self, req, version, caller)
        if inspect.isawaitable(response):  # Fetch, JoinGroup, SyncGroup and ShareFetch may wait
            response = await response
        return response

    def _save_coordinator(self) -> None:
        if self.journal is not None:
            self.journal.save_coordinator(coordinator_state.snapshot(self.broker.coordinator,
                                                                     self.broker.transactions))
