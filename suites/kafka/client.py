"""A strict Kafka client for the conformance cases.

Every answer is decoded with the definition-driven codec at the request's version (strict: no trailing
bytes, no lying lengths) and its correlation id checked. Whatever the target does instead becomes a
:class:`Divergence` of the clause the case names, with the conversation already in the case's transcript.
"""

from __future__ import annotations

import itertools
import time

from wirecheck.protocols.kafka import errors, messages, misread, records
from wirecheck.protocols.kafka.clauses import CATALOGUE
from wirecheck.protocols.verdicts import Blocked, Divergence
from wirecheck.targets.client import AdvertisedVersions, StrictClient, short

C = CATALOGUE
#: CreateTime of the records the cases write (ms): the run's hour, not a fixed date or 0. A broker's time retention
#: deletes a segment whose newest timestamp is older than retention.ms (Kafka: 7 days by default;
#: UnifiedLog.deleteRetentionMsBreachedSegments, "log retention time ... breach based on the largest record
#: timestamp", first checked 30 s after start, then every log.retention.check.interval.ms), so records stamped in
#: 2023 vanish under a case that is still reading them back.
RECORD_TIME_MS = int(time.time()) // 3600 * 3_600_000
CLIENT_ID = "wirecheck"  # default when no case is known; cases stamp "wirecheck/<case id>" (see Kafka.client_id)
_DEFAULT = object()

# -- "not yet": the retriable answers of a server still getting ready ------------------------------------------
# Line numbers: apache/kafka trunk at 1eb7644 (October 2024); Apache Kafka 4.4.0 answers the same on the wire.
#: A coordinator not ready yet. Kafka creates __consumer_offsets or __transaction_state on the first FindCoordinator
#: that needs it and answers COORDINATOR_NOT_AVAILABLE (15) until its partition has a leader (KafkaApis.scala
#: getCoordinator, 1660-1681); the coordinator then loads the partition: COORDINATOR_LOAD_IN_PROGRESS (14) meanwhile
#: and NOT_COORDINATOR (16) before it has taken the partition on (TransactionStateManager.scala 378-391,
#: CoordinatorRuntime.java 381-402). Each is a RetriableException (Errors.java), and Kafka's clients ask again after
#: a backoff: AbstractCoordinator.java (lookupCoordinator 299-302; JoinGroupResponseHandler 678-697),
#: ConsumerCoordinator.java (OffsetCommit 1345), TransactionManager.java (InitProducerIdHandler 1338-1342,
#: AddPartitionsToTxnHandler 1394-1403, FindCoordinatorHandler 1527, EndTxnHandler 1573-1577: reenqueue()).
COORDINATOR_NOT_READY = frozenset({errors.COORDINATOR_LOAD_IN_PROGRESS, errors.COORDINATOR_NOT_AVAILABLE,
                                   errors.NOT_COORDINATOR})
#: How long a helper asks again before the last answer is judged as it stands. Kafka's clients wait longer
#: (default.api.timeout.ms, 60 s); loading a fresh __consumer_offsets (50 partitions) on a busy two-core machine
#: took up to about 3 s (measured against Apache Kafka 4.4.0), so 15 s bounds it with room.
READY_WAIT_S = 15.0
#: retry.backoff.ms and retry.backoff.max.ms (CommonClientConfigs.java 98, 105): the backoff doubles between them
#: (KIP-580)
RETRY_BACKOFF_S, RETRY_BACKOFF_MAX_S = 0.1, 1.0


def until_applied(ask, applied, wait_s: float = READY_WAIT_S):
    """``ask()`` again until ``applied(answer)`` holds or ``wait_s`` has passed; the last answer, for the caller to
    judge. Only for what a broker documents as visible a moment after it answered: with KRaft (KIP-631) a change is
    answered once the controller committed it to the metadata log, and each broker applies the log after, so its
    own answers (Metadata, DescribeConfigs, ...) may show the old state for a while (Admin.java 193-194, 253-254 at
    apache/kafka 1eb7644: "It may take several seconds ... for all the brokers to become aware")."""
    deadline = time.monotonic() + wait_s
    backoff = RETRY_BACKOFF_S
    while True:
        answer = ask()
        if applied(answer) or time.monotonic() + backoff > deadline:
            return answer
        time.sleep(backoff)
        backoff = min(backoff * 2, RETRY_BACKOFF_MAX_S)


def expect(clause_id: str, code: int, *allowed: int) -> None:
    """An ErrorCode that must be one of ``allowed``; any other breaks ``clause_id``."""
    if code not in allowed:
        wanted = " or ".join(f"{c} ({errors.name(c)})" for c in allowed)
        raise Divergence(C[clause_id], f"ErrorCode {wanted}", f"ErrorCode {code} ({errors.name(code)})")


def expect_produced(partition: dict, clause_id: str, *codes: int) -> dict:
    """A partition's Produce answer to a batch the suite built well-formed (magic 2, its CRC-32C right): ErrorCode
    one of ``codes`` (default 0) under ``clause_id``. CORRUPT_MESSAGE instead says the target misreads the CRC,
    which kafka.produce.crc-mismatch owns, whatever case produced."""
    codes = codes or (errors.NONE,)
    if partition["ErrorCode"] == errors.CORRUPT_MESSAGE and errors.CORRUPT_MESSAGE not in codes:
        clause_id = "kafka.produce.crc-mismatch"
    expect(clause_id, partition["ErrorCode"], *codes)
    return partition


class Kafka(AdvertisedVersions, StrictClient):
    """One connection to the target, speaking strict Kafka."""

    def __init__(self, target, session=None):
        super().__init__(target, session)
        # The case ID goes into every request's client_id, so the target's logs line up with the report.
        case_id = getattr(target, "case_id", None)
        self.client_id = f"{CLIENT_ID}/{case_id}" if case_id else CLIENT_ID
        self._correlation = itertools.count(1)
        self._last_request: tuple[int, int] | None = None  # (api key, version) of the last request sent
        #: an authorization error (the client lacks a permission) makes the case BLOCKED, unless the case judges
        #: only an answer's shape, which the error does not change (the versions matrix)
        self.denial_blocks = True

    def next_correlation_id(self) -> int:
        return next(self._correlation)

    # -- raw exchange ---------------------------------------------------------------------------------------

    def send(self, api_key: int, version: int, body: dict, client_id=_DEFAULT,
             correlation_id: int | None = None) -> int:
        client_id = self.client_id if client_id is _DEFAULT else client_id
        correlation_id = self.next_correlation_id() if correlation_id is None else correlation_id
        self.send_frame(messages.encode_request(api_key, version, correlation_id, client_id, body))
        self._last_request = (api_key, version)
        return correlation_id

    def receive(self, api_key: int, version: int, correlation_id: int, clause_id: str,
                deadline: float | None = None) -> dict:
        """The next answer decoded at (api_key, version); anything else violates ``clause_id``."""
        frame = self.frame(clause_id, f"a {messages.api_name(api_key)} v{version} response", deadline)
        return self.answer_of(frame, api_key, version, correlation_id, clause_id)

    def answer_of(self, frame: bytes, api_key: int, version: int, correlation_id: int, clause_id: str) -> dict:
        """An answer frame decoded strictly at (api_key, version): exactly that version's fields, nothing missing,
        nothing after them (no tagged fields in a non-flexible version); anything else violates ``clause_id``."""
        try:
            decoded = messages.decode_response(api_key, version, frame)
        except messages.DecodeError as exc:
            # the answer's shape is a clause of its own: a case about something else meets it on the way (BLOCKED);
            # a wrong response header is the header clause's, even in a case that judges shapes
            shape_clause = misread.clause_of(api_key, version, frame)
            if shape_clause not in misread.HEADER_CLAUSES:
                shape_clause = clause_id if clause_id in SHAPE_JUDGES else misread.SHAPE_CLAUSE
            raise Divergence(C[shape_clause], f"a {messages.api_name(api_key)} v{version} response (response header v"
                             f"{messages.response_header_version(api_key, version)})",
                             f"undecodable: {exc}") from None
        got = decoded["header"]["CorrelationId"]
        if got != correlation_id:
            raise Divergence(C["kafka.header.correlation-id"], f"correlation id {correlation_id}",
                             f"correlation id {got}")
        codes = errors.error_codes(decoded["body"])
        misread_header = misread.header_misread(api_key, version, frame) if codes - {errors.NONE} else None
        if misread_header:  # an error that reads as a success under the other header version: the header's clause
            raise Divergence(C[misread_header], f"a {messages.api_name(api_key)} v{version} response (response header "
                             f"v{messages.response_header_version(api_key, version)})",
                             f"an answer that reads right only under response header "
                             f"v{1 - messages.response_header_version(api_key, version)}")
        # the capture check, live: a code outside Errors.java means nothing to a client, whatever the case expects.
        # Codes above the newest one in our table may be a newer Kafka's (Errors.java only grows): not judged here.
        undefined = sorted(c for c in errors.error_codes(decoded["body"])
                           if c not in errors.BY_CODE and c < max(errors.BY_CODE))
        if undefined:
            raise Divergence(C["kafka.capture.error-code-known"], "error codes Errors.java defines",
                             f"ErrorCode {undefined[0]} in a {messages.api_name(api_key)} v{version} response")
        denied = errors.error_codes(decoded["body"]) & errors.AUTHORIZATION_FAILURES
        if denied and self.denial_blocks:  # ACLs keep this API from the suite's client (e.g. topic administration)
            code = min(denied)
            raise Blocked(f"{messages.api_name(api_key)} authorized for this client",
                          Divergence(C[clause_id], "an answer to an authorized client",
                                     f"error {code} {errors.name(code)}"), carries=False)
        return decoded["body"]

    def call(self, api_key: int, version: int, body: dict, clause_id: str, **send_options) -> dict:
        correlation_id = self.send(api_key, version, body, **send_options)
        return self.receive(api_key, version, correlation_id, clause_id)

    def oracle_answer(self, api_key: int, version: int) -> dict | None:
        """--differential: the oracle's answer to the last request, decoded (its body); None otherwise, or when it
        gave none that decodes. Never judged (the oracle is not under test): a case that waits for something a
        server makes visible in its own time (an assignment) waits until both have it, so the two conversations
        go on from the same state."""
        reply = getattr(self.session, "oracle_reply", None)
        if reply is None or not reply.is_frame:
            return None
        try:
            return messages.decode_response(api_key, version, reply.frame)["body"]
        except Exception:  # noqa: BLE001 - an oracle answer that does not decode says nothing to wait for
            return None

    def call_until_ready(self, api_key: int, version: int, body: dict, clause_id: str,
                         retriable: frozenset[int] = COORDINATOR_NOT_READY, codes_of=errors.error_codes,
                         wait_s: float = READY_WAIT_S) -> dict:
        """:meth:`call`, asked again while the answer carries one of ``retriable`` (``codes_of`` reads an answer's
        codes): errors by which the server says "not yet", which Kafka's clients retry with a backoff. Only the
        protocol's own retriable codes are asked again, and only for ``wait_s``: then the last answer is returned
        as it is, for the caller to judge (a coordinator that never becomes available fails its check)."""
        deadline = time.monotonic() + wait_s
        backoff = RETRY_BACKOFF_S
        while True:
            answer = self.call(api_key, version, body, clause_id)
            waiting = sorted(codes_of(answer) & retriable)
            if not waiting or time.monotonic() + backoff > deadline:
                return answer
            self.session.transcript.note(f"retriable {', '.join(f'{c} ({errors.name(c)})' for c in waiting)}: "
                                         f"{messages.api_name(api_key)} asked again in {backoff:g} s")
            time.sleep(backoff)
            backoff = min(backoff * 2, RETRY_BACKOFF_MAX_S)

    def judge_refusal(self, frame: bytes, clause_id: str, context: tuple[int, int]) -> None:
        """An answer to a request whose body does not decode must be an INVALID_REQUEST (42) error answer
        (``clause_id``); one that does not decode breaks the clause misread.clause_of names (a refusal in a form
        the spec does not permit is kafka.encoding.malformed-body's)."""
        expected = "the connection closed (an INVALID_REQUEST (42) answer first allowed)"
        codes = self.error_codes_of(frame, context)
        if codes is None:
            raise Divergence(C[misread.clause_of(*context, frame, refusable=True)], expected,
                             f"an answer that does not decode as a {self.api_name(context[0])} v{context[1]} "
                             f"response: {self.show(frame)}")
        if errors.INVALID_REQUEST not in codes:
            raise Divergence(C[clause_id], expected, f"an answer: {self.show(frame)}")

    def error_codes_of(self, frame: bytes, context=None) -> set[int] | None:
        """Every ErrorCode in a response, decoded at ``context`` = (api key, version), else the last request's."""
        api_key, version = context or self._last_request or (None, None)
        if api_key is None:
            return None
        try:
            return errors.error_codes(messages.decode_response(api_key, version, frame)["body"])
        except messages.DecodeError:
            return None

    # -- what the target advertises -----------------------------------------------------------------------------

    def fetch_advertised(self) -> dict[int, tuple[int, int]]:
        """api key -> (min, max) from ApiVersions v0, which every broker answers in the v0 format."""
        body = self.call(messages.API_VERSIONS, 0, {}, "kafka.api-versions.advertised")
        if body["ErrorCode"] != errors.NONE:
            raise Divergence(C["kafka.api-versions.advertised"], "ApiVersions v0 with error 0",
                             f"error {errors.name(body['ErrorCode'])}")
        return self._ranges(body)

    def advertised_in(self, frame: bytes) -> dict[int, tuple[int, int]]:
        return self._ranges(messages.decode_response(messages.API_VERSIONS, 0, frame)["body"])

    @staticmethod
    def _ranges(body: dict) -> dict[int, tuple[int, int]]:
        return {entry["ApiKey"]: (entry["MinVersion"], entry["MaxVersion"]) for entry in body["ApiKeys"]}

    @staticmethod
    def api_name(api_key: int) -> str:
        return messages.api_name(api_key)

    @staticmethod
    def our_versions(api_key: int) -> tuple[int, int]:
        return messages.versions(api_key)

# -- data-path helpers -----------------------------------------------------------------------------------------
# Produce v13 and Fetch v13+ name topics by id; the cases use the highest version that still names them, which
# every broker of the Kafka 3/4 era supports.
NAMED_PRODUCE_MAX = 12
NAMED_FETCH_MAX = 12
#: clauses whose cases judge a response's shape themselves (every other case takes it as a precondition)
SHAPE_JUDGES = {"kafka.encoding.response-shape", "kafka.api-versions.advertised-implemented",
                "kafka.api-versions.unsupported-version", "kafka.header.response-v1-flexible",
                "kafka.header.api-versions-v0"}
#: what kafka-python (fetch_max_wait_ms), librdkafka (fetch.wait.max.ms) and the Java consumer (fetch.max.wait.ms)
#: send, with MinBytes 1: the helper steps fetch like the clients vendors test with
CLIENT_FETCH_WAIT_MS = 500


class DataPath(Kafka):
    """Topics, produce, fetch and list-offsets on one connection, each answer checked against a clause."""

    def version(self, api_key: int, cap: int | None = None, low: int = 0) -> int:
        return self.common_version(api_key, cap, low)

    def topic(self, stem: str = "t", partitions: int = 1, shared: bool = False,
              fewer_than: int | None = None) -> str:
        """A topic for this case with at least ``partitions`` partitions (fewer than ``fewer_than`` when a case needs
        a partition the topic does not have).

        ``shared``: the case's checks hold on a topic that already holds records and that other cases write to at
        the same time (every offset it checks is relative to its own writes), so a topic the user named
        (``--target-option kafka.topics=NAME:PARTITIONS,...``) is used when one fits. Otherwise a fresh topic with a
        unique name, created: a target that refuses makes the case BLOCKED."""
        if shared:
            for name, count in self.target.named_topics().items():
                if count >= partitions and (fewer_than is None or count < fewer_than):
                    return name
        name = self.target.unique(stem)
        self.create_topic(name, partitions)
        return name

    def create_topic(self, name: str, partitions: int = 1) -> None:
        """A new topic, through CreateTopics when advertised, else through Metadata auto-creation: a precondition
        of the cases that call it (BLOCKED when it fails), except of the topic-creation case itself."""
        with self.target.precondition(f"topic {name} created with {partitions} partition(s)"):
            self._create_topic(name, partitions)

    def _create_topic(self, name: str, partitions: int) -> None:
        if 19 in self.advertised():
            version = self.version(19)
            body = self.call(19, version, {"Topics": [{"Name": name, "NumPartitions": partitions,
                                                       "ReplicationFactor": 1}], "timeoutMs": 10000},
                             "kafka.topics.create")
            code = body["Topics"][0]["ErrorCode"]
            if code != errors.NONE:
                raise Divergence(C["kafka.topics.create"], f"topic {name} created (error 0)",
                                 f"error {code} {errors.name(code)}")
        self.wait_until_usable(name, partitions)

    def wait_until_usable(self, name: str, partitions: int = 1, wait_s: float = READY_WAIT_S) -> None:
        """Wait until a topic just created serves its partitions: Metadata lists ``partitions`` partitions, each
        with a leader, and ListOffsets (LATEST, which changes nothing) answers NONE for every one.

        CreateTopics answers once the topic is in KRaft's metadata log; the broker applies it after, first to its
        metadata cache (KRaftMetadataCachePublisher.scala) and only then to its replica manager
        (BrokerMetadataPublisher.scala 137, replicaManager.applyDelta). In between Metadata already names the
        leader while Produce or ListOffsets get NOT_LEADER_OR_FOLLOWER (6): ReplicaManager.scala 741-746,
        getPartitionOrError for a partition the metadata knows and the replica manager does not host yet. Errors
        that say "not yet" are retriable (Errors.java: UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE,
        NOT_LEADER_OR_FOLLOWER extend InvalidMetadataException), and clients refresh their metadata and ask again
        (Sender.java, canRetry); so does this, for ``wait_s``. A non-retriable error, or a topic still not usable
        then, breaks kafka.topics.create."""
        deadline = time.monotonic() + wait_s
        backoff = RETRY_BACKOFF_S
        while True:
            waiting = self._not_usable(name, partitions)
            if waiting is None:
                return
            if time.monotonic() + backoff > deadline:
                raise Divergence(C["kafka.topics.create"], f"topic {name}: {partitions} partition(s), each with a "
                                 f"leader that answers ListOffsets (within {wait_s:g} s)", waiting)
            time.sleep(backoff)
            backoff = min(backoff * 2, RETRY_BACKOFF_MAX_S)

    def _not_usable(self, name: str, partitions: int) -> str | None:
        """Why the topic does not serve its partitions yet (a retriable reason), None when it does; a non-retriable
        error breaks kafka.topics.create at once."""
        clause = "kafka.topics.create"
        body = self.call(3, self.version(3, low=4), {"Topics": [{"Name": name}], "AllowAutoTopicCreation": True},
                         "kafka.metadata.brokers")
        topics = [t for t in body["Topics"] if t["Name"] == name]
        if not topics:
            return "not listed by Metadata"
        self._retriable_or_diverge(clause, topics[0]["ErrorCode"], f"Metadata for {name}")
        if topics[0]["ErrorCode"] != errors.NONE:
            return f"Metadata: ErrorCode {topics[0]['ErrorCode']} ({errors.name(topics[0]['ErrorCode'])})"
        led = sorted(p["PartitionIndex"] for p in topics[0]["Partitions"] if p["LeaderId"] >= 0)
        if led != list(range(partitions)):
            return f"Metadata: partitions with a leader {led}"
        answer = self.call(2, self.version(2, low=1), {"ReplicaId": -1, "IsolationLevel": 0, "Topics": [
            {"Name": name, "Partitions": [{"PartitionIndex": index, "Timestamp": -1} for index in led]}]}, clause)
        codes = {p["PartitionIndex"]: p["ErrorCode"] for t in answer["Topics"] for p in t["Partitions"]}
        for index in led:
            code = codes.get(index)
            if code is None:
                raise Divergence(C[clause], f"a ListOffsets result for {name}-{index}", short(answer))
            # an error no broker getting ready answers is ListOffsets' own failure, not the creation's
            self._retriable_or_diverge("kafka.list-offsets.earliest-latest", code, f"ListOffsets for {name}-{index}")
            if code != errors.NONE:
                return f"ListOffsets {name}-{index}: ErrorCode {code} ({errors.name(code)})"
        return None

    @staticmethod
    def _retriable_or_diverge(clause_id: str, code: int, what: str) -> None:
        if code != errors.NONE and not errors.is_retriable(code):
            raise Divergence(C[clause_id], f"{what}: ErrorCode 0 (NONE) or a retriable error until it is",
                             f"ErrorCode {code} ({errors.name(code)})")

    def produce(self, topic: str, batch: bytes, partition: int = 0, acks: int = -1,
                clause_id: str = "kafka.produce.base-offset", version: int | None = None) -> dict:
        """The partition's produce response."""
        version = version if version is not None else self.version(0, NAMED_PRODUCE_MAX, low=3)
        body = {"TransactionalId": None, "Acks": acks, "TimeoutMs": 5000,
                "TopicData": [{"Name": topic, "PartitionData": [{"Index": partition, "Records": batch}]}]}
        answer = self.call(0, version, body, clause_id)
        try:
            return answer["Responses"][0]["PartitionResponses"][0]
        except (IndexError, KeyError):
            raise Divergence(C[clause_id], f"a response for {topic}-{partition}", short(answer)) from None

    def append(self, topic: str, batch: bytes, partition: int = 0) -> int:
        """Produce a well-formed batch the case needs stored: its base offset. A refusal or no base offset breaks
        the produce clause (CORRUPT_MESSAGE: kafka.produce.crc-mismatch), which BLOCKS a case about something else."""
        answer = expect_produced(self.produce(topic, batch, partition), "kafka.produce.base-offset")
        if answer["BaseOffset"] < 0:
            raise Divergence(C["kafka.produce.base-offset"], f"the base offset of the batch stored in "
                             f"{topic}-{partition}", f"BaseOffset {answer['BaseOffset']}")
        return answer["BaseOffset"]

    def fetch(self, topic: str, offset: int, partition: int = 0, clause_id: str = "kafka.fetch.records",
              max_bytes: int = 1 << 20, wait_ms: int = CLIENT_FETCH_WAIT_MS, isolation: int = 0) -> dict:
        """The partition's fetch response, asked as the common clients ask: wait up to ``wait_ms`` for a byte
        (MaxWaitMs 0 is an edge value with a clause of its own, kafka.fetch.immediate)."""
        version = self.version(1, NAMED_FETCH_MAX, low=4)
        body = {"ReplicaId": -1, "MaxWaitMs": wait_ms, "MinBytes": 1 if wait_ms else 0, "MaxBytes": max_bytes,
                "IsolationLevel": isolation, "SessionId": 0, "SessionEpoch": -1,
                "Topics": [{"Topic": topic, "Partitions": [{"Partition": partition, "FetchOffset": offset,
                                                            "PartitionMaxBytes": max_bytes}]}]}
        correlation_id = self.send(1, version, body)
        answer = self.receive(1, version, correlation_id, clause_id, deadline=self.session.deadline + wait_ms / 1000)
        try:
            return answer["Responses"][0]["Partitions"][0]
        except (IndexError, KeyError):
            raise Divergence(C[clause_id], f"a response for {topic}-{partition}", short(answer)) from None

    def records_from(self, topic: str, offset: int, clause_id: str = "kafka.fetch.records",
                     partition: int = 0) -> tuple[dict, list[tuple[int, bytes | None, bytes | None]]]:
        """One Fetch from ``offset``: the partition's answer and its records (offset, key, value) from that offset
        on, each batch's CRC-32C checked."""
        answer = self.fetch(topic, offset, partition, clause_id=clause_id)
        return answer, self.records_in(answer, offset, clause_id)

    def records_in(self, answer: dict, offset: int, clause_id: str) -> list[tuple[int, bytes | None, bytes | None]]:
        """The records (offset, key, value) of a partition's Fetch answer from ``offset`` on, each batch's CRC-32C
        checked."""
        if answer["ErrorCode"] != errors.NONE:
            code = answer["ErrorCode"]
            raise Divergence(C[clause_id], "ErrorCode 0 (NONE)", f"ErrorCode {code} ({errors.name(code)})")
        try:
            batches = records.decode_batches(answer["Records"] or b"", allow_partial_tail=True)
        except records.CorruptBatch as exc:
            raise Divergence(C["kafka.fetch.batch-crc"], "batches with a valid CRC-32C", str(exc)) from None
        except records.DecodeError as exc:
            raise Divergence(C["kafka.fetch.batch-crc"], "well-formed magic-2 batches", str(exc)) from None
        if batches and batches[0].base_offset + batches[0].last_offset_delta < offset:
            # a batch wholly before the fetch offset: the broker did not start at the batch holding the offset
            raise Divergence(C[clause_id], f"batches from the one holding offset {offset}",
                             f"a first batch covering {batches[0].base_offset}.."
                             f"{batches[0].base_offset + batches[0].last_offset_delta}")
        found = [(b.base_offset + r.offset_delta, r.key, r.value) for b in batches for r in b.records]
        return [item for item in found if item[0] >= offset]  # earlier records of that batch may come

    def list_offset(self, topic: str, timestamp: int, partition: int = 0,
                    clause_id: str = "kafka.list-offsets.earliest-latest") -> dict:
        version = self.version(2, low=1)
        body = {"ReplicaId": -1, "IsolationLevel": 0,
                "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": partition, "Timestamp": timestamp}]}]}
        answer = self.call(2, version, body, clause_id)
        try:
            return answer["Topics"][0]["Partitions"][0]
        except (IndexError, KeyError):
            raise Divergence(C[clause_id], f"a response for {topic}-{partition}",
                             short(answer)) from None
