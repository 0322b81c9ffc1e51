"""The Kafka personality: framing, request headers, version checks, dispatch, response headers.

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
import logging
import re
import struct

from wirecheck.targets.reference.core import BrokerConfig, Connection
from wirecheck.targets.reference.framed import BadLength, FrameShape, serve_frames
from wirecheck.targets.reference.kafka import coordinator_state, groups
from wirecheck.targets.reference.kafka.apis import CLOSE, Broker, Settings
from wirecheck.targets.reference.kafka.codec import MalformedBody, Message, Options, read_uvarint
from wirecheck.targets.reference.kafka.durable import DurableLog
from wirecheck.targets.reference.kafka.faults import FAULTS, VARIANTS
from wirecheck.targets.reference.kafka.options import KafkaOptions
from wirecheck.targets.reference.kafka.producers import Producers
from wirecheck.targets.reference.kafka.sasl import Authenticator, read_users
from wirecheck.targets.reference.kafka.storage import Storage
from wirecheck.targets.reference.kafka.telemetry import Telemetry

log = logging.getLogger("wirecheck.broker.kafka")

DEFAULT_MAX_FRAME = 104_857_600  # socket.request.max.bytes
UNSUPPORTED_VERSION = 35
API_VERSIONS = 18

#: key -> (request/response message name, min version, max version) advertised and implemented.
#: Produce min 0: Kafka 4 keeps advertising it for librdkafka (KAFKA-18659); v0-2 are decoded and answered in
#: their own layout, and a batch that is not magic 2 gets INVALID_RECORD (87), as message formats 0/1 are gone.
APIS: dict[int, tuple[str, int, int]] = {
    0: ("Produce", 0, 12),
    1: ("Fetch", 4, 16),
    2: ("ListOffsets", 1, 9),
    3: ("Metadata", 0, 13),
    8: ("OffsetCommit", 2, 9),
    9: ("OffsetFetch", 1, 9),
    10: ("FindCoordinator", 0, 6),
    11: ("JoinGroup", 0, 9),
    12: ("Heartbeat", 0, 4),
    13: ("LeaveGroup", 0, 5),
    14: ("SyncGroup", 0, 5),
    15: ("DescribeGroups", 0, 6),
    16: ("ListGroups", 0, 5),
    18: ("ApiVersions", 0, 4),
    19: ("CreateTopics", 2, 7),
    20: ("DeleteTopics", 1, 6),
    22: ("InitProducerId", 0, 5),
    24: ("AddPartitionsToTxn", 0, 3),  # v4+: the broker-to-broker batched form (KIP-890), not implemented
    25: ("AddOffsetsToTxn", 0, 4),  # v4 (EndTxn, TxnOffsetCommit too): TRANSACTION_ABORTABLE allowed, never sent
    26: ("EndTxn", 0, 5),  # v5: transaction protocol version 2 (KIP-890 part 2, transactions_v2.py)
    28: ("TxnOffsetCommit", 0, 5),  # v5: adds its group to the transaction itself (TV2)
    21: ("DeleteRecords", 0, 2),
    23: ("OffsetForLeaderEpoch", 2, 4),  # v0-1 are gone from the definitions (Kafka 4)
    32: ("DescribeConfigs", 1, 4),  # v0 likewise
    33: ("AlterConfigs", 0, 2),
    37: ("CreatePartitions", 0, 3),
    42: ("DeleteGroups", 0, 2),
    44: ("IncrementalAlterConfigs", 0, 1),
    47: ("OffsetDelete", 0, 0),
    60: ("DescribeCluster", 0, 2),
    61: ("DescribeProducers", 0, 0),
    68: ("ConsumerGroupHeartbeat", 0, 1),  # KIP-848 (consumer_groups.py)
    69: ("ConsumerGroupDescribe", 0, 1),
    76: ("ShareGroupHeartbeat", 1, 1),  # KIP-932 share groups (share_groups.py, share_fetch.py): Kafka 4.1's
    77: ("ShareGroupDescribe", 1, 1),  # versions (v0 was the early-access format, removed)
    78: ("ShareFetch", 1, 2),
    79: ("ShareAcknowledge", 1, 2),
    71: ("GetTelemetrySubscriptions", 0, 0),  # KIP-714 (telemetry.py); not advertised under --no-kafka-telemetry
    72: ("PushTelemetry", 0, 0),
}

TELEMETRY_KEYS = (71, 72)

#: Advertised only when SASL is enabled (``--kafka-sasl-users``). SaslHandshake v0 (raw tokens after the handshake,
#: before KIP-152) is not offered.
SASL_APIS: dict[int, tuple[str, int, int]] = {
    17: ("SaslHandshake", 0, 1),
    36: ("SaslAuthenticate", 0, 2),
}

INVALID_REQUEST = 42
ILLEGAL_SASL_STATE = 34
#: what a listener without SASL answers SaslHandshake and SaslAuthenticate with (variant sasl-apis-on-plaintext)
_NO_SASL = {17: {"ErrorCode": ILLEGAL_SASL_STATE, "Mechanisms": []},
            36: {"ErrorCode": ILLEGAL_SASL_STATE, "ErrorMessage": "this listener does not authenticate",
                 "AuthBytes": b"", "SessionLifetimeMs": 0}}
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")  # ApiVersionsRequest.isValid (KIP-511)
_HEADER = struct.Struct(">hhi")  # api_key, api_version, correlation_id
_SIZE = struct.Struct(">i")  # the size prefix of an answer


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


class KafkaPersonality:
    name = "kafka"

    def __init__(self, config: BrokerConfig, options: KafkaOptions):
        self.config = config
        self.active = config.faults_of(self.name, FAULTS)
        self.variants = config.variants_of(self.name, VARIANTS)
        self.max_frame = config.max_frame or DEFAULT_MAX_FRAME
        # 8: api_key, api_version and correlation_id at least.
        max_length = 2**31 - 1 if "frame-limit-ignored" in self.active else self.max_frame
        self.frame_shape = FrameShape(header_size=4, length_at=0, length_format=">i", min_length=8,
                                      max_length=max_length)
        settings = Settings(
            auto_create=options.auto_create,
            topic_admin=options.topic_admin,
            default_partitions=options.default_partitions,
            # variant segment-below-max-message: message.max.bytes 2 MiB over 1 MiB segments (apis.SEGMENT_BYTES)
            max_message_bytes=(2_097_152 if "segment-below-max-message" in self.variants
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
            **({"max_session_ms": 2**31 - 1} if "session-timeout-unbounded" in self.variants else {}),
            bump_generation="generation-not-bumped" not in self.active,
            leader_gets_metadata="leader-gets-no-metadata" not in self.active,
            heartbeat_reports_rebalance="heartbeat-ignores-rebalance" not in self.active,
            heartbeat_faults=frozenset(self.active),
        )
        journal = None
        if config.data_dir is not None:
            journal = DurableLog(config.data_dir, fsync=config.fsync == "batch", cache_bytes=config.cache_bytes)
        storage = Storage(journal)
        for name, count in options.topics.items():  # an operator's topics (kept across restarts with --data-dir)
            if name not in storage.topics:
                storage.create(name, count)
        if settings.retention_records is not None:
            for topic in storage.topics.values():
                for partition in topic.partitions:
                    partition.trim(settings.retention_records)
        self.broker = Broker(settings, self.active, coordinator, Producers(), storage, self.variants)
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
        self.telemetry = Telemetry(options.telemetry_push_ms, options.telemetry_max_bytes, metrics, self.active,
                                   self.variants)
        self._plain_handlers = {
            0: b.produce, 2: b.list_offsets, 8: b.offset_commit, 9: b.offset_fetch, 12: b.heartbeat,
            13: b.leave_group, 15: b.describe_groups, 16: b.list_groups, 19: b.create_topics, 20: b.delete_topics,
            22: b.init_producer_id, 24: b.add_partitions_to_txn, 25: b.add_offsets_to_txn, 26: b.end_txn,
            28: b.txn_offset_commit, 32: b.configs.describe, 33: b.configs.alter, 44: b.configs.incremental_alter,
            21: b.admin.delete_records, 23: b.admin.offset_for_leader_epoch, 37: b.admin.create_partitions,
            42: b.admin.delete_groups, 47: b.admin.offset_delete, 61: b.admin.describe_producers,
            69: b.consumer_groups.describe, 77: b.share_groups.describe, 79: b.share_fetcher.share_acknowledge,
            71: self.telemetry.subscriptions, 72: self.telemetry.push,
        }
        self.sasl = Authenticator(read_users(options.sasl_users), self.active) if options.sasl_users else None
        sasl_apis = self.sasl is not None or "sasl-apis-on-plaintext" in self.variants
        self.requests, self.responses = _messages("tagged-fields-misskipped" in self.active, sasl_apis,
                                                  "compact-string-length-two-bytes" in self.active)
        apis = {**APIS, **SASL_APIS} if sasl_apis else APIS
        self.ranges = {key: (low, high) for key, (_, low, high) in apis.items()}
        if not options.telemetry:  # --no-kafka-telemetry: keys 71 and 72 unknown, as to a broker without KIP-714
            self.ranges = {key: r for key, r in self.ranges.items() if key not in TELEMETRY_KEYS}
            self.requests = {key: m for key, m in self.requests.items() if key not in TELEMETRY_KEYS}
        if "produce-min-three" in self.variants:
            self.ranges[0] = (3, self.ranges[0][1])  # variant: the real minimum advertised, v0-2 unadvertised
        if "advertise-unimplemented" in self.active:
            self.ranges[1] = (3, 16)  # Fetch v3 is advertised but answered in the v4 layout
            self.requests[1].compile(3)
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
            if "pipelined-answers-reordered" not in self.active:
                return await self._handle(conn, frame, host, port, client_host, auth)
            capture = _Capture()
            keep = await self._handle(capture, frame, host, port, client_host, auth)
            if keep and conn.reader._buffer:  # more requests already waiting: this answer goes after theirs
                held.append(b"".join(capture.out))
                return True
            await conn.write(b"".join(capture.out) + b"".join(reversed(held)))
            held.clear()
            return keep

        if "size-prefix-one-read" in self.active:
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
        if size < 0 and "negative-size-skipped" in self.active:
            return BadLength.SKIP  # fault: a negative size is dropped and the next header read
        if size > 0 and "oversize-error-answer" in self.variants:
            # variant: read the request header (not the body) and refuse that request with INVALID_REQUEST
            key, version, correlation_id = _HEADER.unpack(await conn.read_by(_HEADER.size, conn.frame_deadline()))
            answer = self._error_answer(key, version, correlation_id, INVALID_REQUEST)
            if answer:
                await conn.write(answer)
        return BadLength.CLOSE

    def _error_answer(self, key: int, version: int, correlation_id: int, code: int) -> bytes | None:
        """An answer with a top-level ErrorCode ``code`` at ``version``, every other field at its default; None
        when the API has no such field at that version (a variant then closes, as Kafka does)."""
        if key not in self.responses or key not in self.ranges:
            return None
        low, high = self.ranges[key]
        msg = self.responses[key]
        if not low <= version <= high or msg.encode({}, version) == msg.encode({"ErrorCode": code}, version):
            return None  # an unadvertised version (not compiled), or no top-level ErrorCode to carry the code
        return self._frame(key, version, correlation_id, {"ErrorCode": code})

    async def _handle(self, conn: Connection, frame: bytes, host: str, port: int, client_host: str, auth) -> bool:
        if auth is not None and auth.raw_tokens:  # after SaslHandshake v0 (a token under 8 bytes closes, as any frame)
            reply = auth.raw_token(frame)
            if reply is not None:
                await conn.write(_SIZE.pack(len(reply)) + reply)
            return reply is not None
        key, version, correlation_id = _HEADER.unpack_from(frame, 0)
        reply_id = correlation_id + 1 if "correlation-id-wrong" in self.active else correlation_id
        if key not in self.requests:
            if "unknown-key-stays-open" in self.active:
                return True  # fault: silence, and the client waits for its request timeout
            if "unknown-key-error-answer" in self.variants:
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
        if key == API_VERSIONS and not low <= version <= high:
            await conn.write(self._unsupported_api_versions(reply_id, version))
            return True
        if not low <= version <= high:
            if "unsupported-version-error-answer" in self.variants:
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
            pos, client_id = _read_client_id(frame, 8)
            if client_id is None and "null-client-id-refused" in self.variants:
                raise MalformedBody("null client id")  # variant: ClientId read as a non-nullable string
            if flexible and client_id and len(client_id) > 127 and "client-id-byte-length" in self.active:
                raise MalformedBody("client id length")  # fault: header v2's length kept in a signed byte
            if flexible:
                pos = _skip_tags(frame, pos, first_only="header-tags-first-only" in self.active)
            request, _ = request_msg.decode(frame, version, pos)
        except MalformedBody as exc:
            hostile = re.match(r"array count (\d+) exceeds", str(exc))
            if "hostile-count-waits" in self.active and hostile and int(hostile[1]) >= HOSTILE_COUNT \
                    and not flexible:
                conn.stalled = True  # fault: the elements of a huge count are awaited: this connection is stuck
                return True
            if "crash-on-hostile-array" in self.active and "count" in str(exc):
                self.wedged = True
                raise HostileCount(str(exc)) from None
            if "malformed-body-answered" in self.active:
                await conn.write(_SIZE.pack(6) + struct.pack(">ih", reply_id, -1))
                return True
            if "malformed-body-invalid-request" in self.variants:
                answer = self._error_answer(key, version, reply_id, INVALID_REQUEST)  # variant: 42, then close
                if answer:
                    await conn.write(answer)
            log.debug("closing: malformed api %d v%d body: %s", key, version, exc)
            return False

        if key in SASL_APIS:
            if auth is None:  # variant sasl-apis-on-plaintext: this listener does not authenticate
                await conn.write(self._frame(key, version, reply_id, _NO_SASL[key]))
                return True
            response = auth.handshake(request, version) if key == 17 else auth.authenticate(request)
            await conn.write(self._frame(key, version, reply_id, response))
            return not auth.closing
        response = await self._dispatch(key, version, request, client_id or "", host, port, client_host)
        if response is not None and response.pop(CLOSE, False):
            log.debug("closing: api %d refused by closing (variant)", key)
            return False
        if key in coordinator_state.CHANGING_APIS:
            self._save_coordinator()  # before the answer: what is acknowledged survives a restart
        if key == 0 and request["Acks"] == 0:
            failed = any(p["ErrorCode"] for t in response["Responses"] for p in t["PartitionResponses"])
            if "acks0-responds" not in self.active:
                return not failed
        await conn.write(self._frame(key, version, reply_id, response))
        return True

    async def _dispatch(self, key: int, version: int, req: dict, client_id: str, host: str, port: int,
                        client_host: str) -> dict | None:
        handler = self._plain_handlers.get(key)  # most APIs need only the request and its version
        if handler is not None:
            return handler(req, version)
        b = self.broker
        if key == 1:
            return await b.fetch(req, max(version, 4))  # v3 only reaches here under advertise-unimplemented
        if key in (3, 10, 60):  # Metadata, FindCoordinator and DescribeCluster name this listener's own address
            handler = {3: b.metadata, 10: b.find_coordinator, 60: b.admin.describe_cluster}[key]
            return handler(req, version, host, port)
        if key == 11:
            return await b.join_group(req, version, client_id, client_host)
        if key == 14:
            return await b.sync_group(req, version)
        if key == 68:
            return b.consumer_groups.heartbeat(req, version, client_id, client_host)
        if key == 76:
            return b.share_groups.heartbeat(req, version, client_id, client_host)
        if key == 78:
            return await b.share_fetcher.share_fetch(req, version)
        if key == 18:
            return self._api_versions(req, version)
        raise AssertionError(f"no handler for advertised key {key}")

    def _save_coordinator(self) -> None:
        if self.journal is not None:
            self.journal.save_coordinator(coordinator_state.snapshot(self.broker.coordinator,
                                                                     self.broker.transactions))

    # ------------------------------------------------------------------------------------------ encoding

    def _frame(self, key: int, version: int, correlation_id: int, response: dict) -> bytes:
        body_version = version
        if key == 1 and version < 4:
            body_version = 4  # advertise-unimplemented: Fetch v3 answered in the v4 layout
        if key == 3 and version == 13 and "metadata-v13-as-v12" in self.active:
            body_version = 12  # fault: no top-level ErrorCode
        msg = self.responses[key]
        out = bytearray(4)
        out += struct.pack(">i", correlation_id)
        # Response header v1 (tagged fields) for flexible versions, except ApiVersions: always v0 (KIP-511).
        if msg.is_flexible(version) and "flexible-header-v1" not in self.active and (
                key != API_VERSIONS or "apiversions-header-v1" in self.active):  # fault: ApiVersions v3+ too
            out.append(0)
        body_start = len(out)
        msg.encode(response, body_version, out)
        if key == 3 and version == 5 and "throttle-missing-metadata-v5" in self.active:
            del out[body_start:body_start + 4]  # ThrottleTimeMs is Metadata v3+'s first field
        struct.pack_into(">i", out, 0, len(out) - 4)
        return bytes(out)

    def _api_versions(self, req: dict, version: int) -> dict:
        if version >= 3 and "software-name-unchecked" not in self.active and not (_SOFTWARE.fullmatch(req["ClientSoftwareName"])
                                 and _SOFTWARE.fullmatch(req["ClientSoftwareVersion"])):
            return {"ErrorCode": INVALID_REQUEST, "ThrottleTimeMs": 0, "ApiKeys": []}  # ApiVersionsRequest.isValid
        own_low = self._own_range()[0]
        return {"ErrorCode": 0, "ThrottleTimeMs": 0,
                "ApiKeys": [{"ApiKey": k, "MinVersion": own_low if k == API_VERSIONS else low, "MaxVersion": high}
                            for k, (low, high) in sorted(self.ranges.items())]}

    def _own_range(self) -> tuple[int, int]:
        low, high = self.ranges[API_VERSIONS]
        return (1 if "apiversions-listed-from-one" in self.active else low), high  # fault: v0 served, listed from 1

    def _unsupported_api_versions(self, correlation_id: int, version: int) -> bytes:
        """KIP-511: error 35 in a v0 body, listing ApiVersions' own range, so the client can pick a version."""
        low, high = self._own_range()
        body = {"ErrorCode": UNSUPPORTED_VERSION, "ApiKeys": [{"ApiKey": API_VERSIONS, "MinVersion": low,
                                                               "MaxVersion": high}]}
        encode_version = 0
        if "apiversions-unsupported-not-v0" in self.active:
            encode_version = high  # fault: encoded at our highest (flexible) version instead of v0
        out = bytearray(4) + struct.pack(">i", correlation_id)
        self.responses[API_VERSIONS].encode(body, encode_version, out)
        if "apiversions-unsupported-trailing-tags" in self.active:
            out.append(0)  # fault: an empty tagged-field section after a v0 (non-flexible) body
        struct.pack_into(">i", out, 0, len(out) - 4)
        return bytes(out)


@functools.lru_cache(maxsize=None)
def _messages(misskip_tags: bool, sasl: bool = False,
              short_string_varints: bool = False) -> tuple[dict[int, Message], dict[int, Message]]:
    """Request and response codecs of every API, each advertised version compiled once per process."""
    opts = Options(misskip_tags=misskip_tags, short_string_varint=short_string_varints)
    apis = {**APIS, **SASL_APIS} if sasl else APIS
    requests = {key: Message(name + "Request", opts) for key, (name, _, _) in apis.items()}
    responses = {key: Message(name + "Response", opts) for key, (name, _, _) in apis.items()}
    for key, (_, low, high) in apis.items():
        for version in range(low, high + 1):
            requests[key].compile(version)
            responses[key].compile(version)
    return requests, responses


def _read_client_id(frame: bytes, pos: int) -> tuple[int, str | None]:
    """ClientId: INT16-length nullable string in every header version (RequestHeader.json, flexible 'none')."""
    if pos + 2 > len(frame):
        raise MalformedBody("truncated client id")
    (n,) = struct.unpack_from(">h", frame, pos)
    pos += 2
    if n == -1:
        return pos, None
    if n < 0 or pos + n > len(frame):
        raise MalformedBody(f"client id length {n}")
    return pos + n, frame[pos:pos + n].decode("utf-8", "replace")


def _skip_tags(frame: bytes, pos: int, first_only: bool = False) -> int:
    count, pos = read_uvarint(frame, pos)
    if count > len(frame) - pos:
        raise MalformedBody(f"header tagged field count {count}")
    for _ in range(min(count, 1) if first_only else count):  # fault header-tags-first-only: one field skipped
        _, pos = read_uvarint(frame, pos)
        size, pos = read_uvarint(frame, pos)
        pos += size
        if pos > len(frame):
            raise MalformedBody("header tagged field beyond the frame")
    return pos


