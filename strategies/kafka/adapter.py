"""Kafka for the bulk engine (``strategies/engine.py``): the adapter (structural mutants of read-only requests at
the advertised versions, Metadata or ApiVersions v0 as the keepalive, answers decoded at the request's version),
what keeps a mutant's valid part harmless, and the request that prepares a target for it."""

from __future__ import annotations

import copy
import random
import uuid

from wirecheck.protocols import reactions
from wirecheck.protocols.framing import leading_correlation_id
from wirecheck.protocols.kafka import HELLO_CORRELATION_ID, SPEC, errors, messages, misread
from wirecheck.protocols.kafka.clauses import CATALOGUE
from wirecheck.protocols.reactions import ANSWER, ERROR, MALFORMED as UNREADABLE, Lazy, Observation
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.kafka.mutants import BULK_OPERATORS, BulkMutator
from wirecheck.strategies.kafka.seeds import KafkaRequest
from wirecheck.strategies.kafka.values import random_value

#: ApiVersions, Metadata, ListOffsets, Fetch, OffsetFetch, FindCoordinator, DescribeGroups, ListGroups,
#: DescribeConfigs, DescribeCluster: reading APIs. Bulk mutants are drawn from these only (and Metadata without
#: auto-creation), so that the valid-but-odd ones (unknown tags, trailing bytes) cannot change a live cluster.
READ_ONLY = (18, 3, 2, 1, 9, 10, 15, 16, 32, 60)

INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN, END_TXN, CREATE_TOPICS = 22, 24, 26, 19
#: the transactional APIs of a guided run's steps (protocols/kafka/states.py), each with the highest version it
#: sends: AddPartitionsToTxn v4+ is the brokers' batched form (AddPartitionsToTxnRequest.json), EndTxn v5+ and a
#: producer without AddPartitionsToTxn are KIP-890's transactions v2
STEP_APIS = {INIT_PRODUCER_ID: ("InitProducerId", 5), ADD_PARTITIONS_TO_TXN: ("AddPartitionsToTxn", 3),
             END_TXN: ("EndTxn", 4)}
#: a guided run's steps are answered (an error answer permitted: the state then stays where it was)
STEP_REACTIONS = {
    INIT_PRODUCER_ID: reactions.any_answer("kafka.txn.epoch-bump", "a transactional InitProducerId (a guided "
                                                                   "run's step)"),
    ADD_PARTITIONS_TO_TXN: reactions.any_answer("kafka.txn.produce-unadded", "AddPartitionsToTxn of the producer "
                                                                             "id an InitProducerId answer chose"),
    END_TXN: reactions.any_answer("kafka.txn.invalid-state", "EndTxn (abort) of the transaction the steps began"),
}

#: Error codes that mean "your request was not understood": an answer carrying one rejects the request.
REJECTIONS = {errors.INVALID_REQUEST, errors.UNSUPPORTED_VERSION, errors.UNKNOWN_SERVER_ERROR}


ZERO_ID = uuid.UUID(int=0)

#: api key -> enum field -> its valid values, where Apache Kafka refuses others with INVALID_REQUEST (42)
ENUMS = {1: {"IsolationLevel": (0, 1)}, 2: {"IsolationLevel": (0, 1)}, 10: {"KeyType": (0, 1)}}


def harmless(api_key: int, body: dict) -> None:
    """Keep the valid part of a mutant valid and quick: no topic auto-creation, no Fetch long-poll, a client
    software name that passes ApiVersions v3+ validation (else 42 is the right answer), and enums Apache Kafka
    checks (IsolationLevel, the coordinator KeyType) in range: a mutant's base must itself be a valid request."""
    for enum, valid in ENUMS.get(api_key, {}).items():
        if enum in body and body[enum] not in valid:
            body[enum] = valid[0]
    if api_key == 3:
        body["AllowAutoTopicCreation"] = False
        # MetadataRequest.json: "Versions 10 and 11 should not use the topicId field or set topic name to null"
        # (Apache Kafka refuses them with INVALID_REQUEST, KafkaApis.handleTopicMetadataRequest); topics by name
        # at every version keep the base valid (a topic id lookup is no encoding question)
        for topic in body.get("Topics") or []:
            topic["TopicId"] = ZERO_ID
            if topic.get("Name") is None:
                topic["Name"] = "wirecheck-absent"
    elif api_key == 1:
        body["MaxWaitMs"], body["MinBytes"] = 0, 0
        if "SessionId" in body:  # v7+: a sessionless full fetch (KIP-227: SessionId 0, SessionEpoch -1)
            # A random session id names a session the mutant never opened: a Fetch-session question, not an
            # encoding one. Apache Kafka 4.x answers a negative one UNKNOWN_SERVER_ERROR (-1): FetchManager.newContext
            # asks FetchSessionCache.getCacheShard(sessionId), which indexes its shards with sessionId / range, out
            # of bounds below 0 (FetchSession.java, getCacheShard; KAFKA-9401 added the shards).
            body["SessionId"], body["SessionEpoch"] = 0, -1
    elif api_key == 9 and "Groups" in body and not body["Groups"]:
        # OffsetFetch v8+ names its groups in a list: one that names none is a question of OffsetFetch, not of the
        # encoding a mutant tests (Apache Kafka 3.9.2 never answers it, seen on the wire; 4.x answers no groups)
        body["Groups"] = [{"GroupId": "wirecheck-absent", "MemberId": None, "MemberEpoch": -1, "Topics": None}]
    elif api_key == 18:
        body["ClientSoftwareName"], body["ClientSoftwareVersion"] = "wirecheck", "0.1.0"
    elif api_key == 32:  # topic resources: an unknown resource type is rightly refused with 42 (a rejection)
        for resource in body.get("Resources") or []:
            resource["ResourceType"] = 2
    elif api_key == 60:
        body["EndpointType"] = 1  # brokers: a broker may refuse the controllers' endpoints (KIP-919)


def read_only_ranges(advertised: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Advertised versions of the read-only APIs that the definitions also know."""
    ranges = {}
    for key in READ_ONLY:
        if key in advertised:
            low = max(advertised[key][0], messages.versions(key)[0])
            high = min(advertised[key][1], messages.versions(key)[1])
            if low <= high:
                ranges[key] = (low, high)
    return ranges


def _short(obj, limit: int = 300) -> str:
    text = repr(obj)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class KafkaFuzz:
    """Kafka for strategies/engine.py: structural mutants of read-only requests at advertised versions,
    ApiVersions v0 as the keepalive, answers decoded at the request's version."""

    name = "kafka"
    catalogue = CATALOGUE
    pipelining_clause = "kafka.framing.pipelining"
    answers_in_order = True  # one connection's answers leave in request order (protocol guide 'Network')
    response_frame_clause = None  # an unframeable answer breaks the mutant's own clause

    KEEPALIVE_CORRELATION_ID = 0x57C1

    def __init__(self, ranges: dict[int, tuple[int, int]], operators=BULK_OPERATORS,
                 init_producer: tuple[int, int] | None = None, transactions: dict[int, tuple[int, int]] | None = None,
                 txn_topic: str | None = None):
        self.ranges = ranges
        self.operators = operators
        self.init_producer = init_producer  # InitProducerId's advertised versions: the guided run's first step
        #: AddPartitionsToTxn's and EndTxn's advertised versions, and a topic of the run's own the transactions
        #: add (partition 0): the steps beyond txn-producer
        self.transactions = {key: span for key, span in (transactions or {}).items() if key in STEP_APIS}
        self.txn_topic = txn_topic
        self._producers = 0  # InitProducerId steps made: the next one's transactional id, in turn
        self.step_prefix = self.STEP_PREFIX  # the steps' transactional ids begin so (for_worker: per worker)
        # Metadata v1+ for no topic: its answer is a fraction of ApiVersions' (the broker encodes it per batch)
        if 3 in ranges and ranges[3][1] >= 1:
            self._keepalive_version = max(1, ranges[3][0])
            self.keepalive = messages.encode_request(3, self._keepalive_version, self.KEEPALIVE_CORRELATION_ID,
                                                     "wirecheck", {"Topics": [], "AllowAutoTopicCreation": False})
        else:
            self._keepalive_version = None
            self.keepalive = SPEC.hello()

    def mutants(self, rng: random.Random) -> BulkMutator:
        """Mutants of a growing corpus of valid, harmless seeds (a new seed for one mutant in four, up to CORPUS)."""
        return BulkMutator(rng, list(self.ranges), self.ranges, self.operators, harmless)

    answer_id = staticmethod(leading_correlation_id)
    keepalive_clause = "kafka.encoding.response-shape"  # a Metadata or ApiVersions v0 answer that does not decode

    @property
    def keepalive_id(self) -> int:
        return HELLO_CORRELATION_ID if self._keepalive_version is None else self.KEEPALIVE_CORRELATION_ID

    @staticmethod
    def request_id(mutant: Mutant) -> int:
        return mutant.context.correlation_id

    def is_keepalive_answer(self, frame: bytes) -> bool:
        if self._keepalive_version is None:
            return SPEC.is_hello_answer(frame)
        try:
            decoded = messages.decode_response(3, self._keepalive_version, frame)
        except messages.DecodeError:
            return False
        return decoded["header"]["CorrelationId"] == self.KEEPALIVE_CORRELATION_ID

    def classify(self, mutant: Mutant, frame: bytes) -> Observation:
        request: KafkaRequest = mutant.context
        try:
            decoded = messages.decode_response(request.api_key, request.version, frame)
        except messages.DecodeError as exc:
            return Observation(UNREADABLE, detail=f"undecodable: {exc}", **self._misread(mutant, frame))
        if decoded["header"]["CorrelationId"] != request.correlation_id:
            return Observation(UNREADABLE, detail=f"correlation id {decoded['header']['CorrelationId']}, "
                                                  f"sent {request.correlation_id}")
        # a step's answer may carry its error as PartitionErrorCode (AddPartitionsToTxn): every one is read, for a
        # step answered with an error moves no session state
        read = errors.every_error_code if request.api_key in STEP_APIS else errors.error_codes
        codes = read(decoded["body"]) - {errors.NONE}
        if not codes:
            return Observation(ANSWER, detail=Lazy(_short, decoded["body"]))
        code = errors.INVALID_REQUEST if errors.INVALID_REQUEST in codes else min(codes)
        return Observation(ERROR, code=code, detail=Lazy(_short, decoded["body"]), rejects=code in REJECTIONS)

    @staticmethod
    def _misread(mutant: Mutant, frame: bytes) -> dict:
        """The clause an undecodable answer breaks when it is not the mutant's (misread.clause_of): a target
        whose reaction may be a close may refuse the request, so an answer that is no response at all is a
        refusal in a form the spec does not permit."""
        request: KafkaRequest = mutant.context
        clause = misread.clause_of(request.api_key, request.version, frame,
                                   refusable=reactions.CLOSE in mutant.reaction.outcomes)
        if clause == misread.REFUSAL_CLAUSE:
            return {"clause": clause, "expected": "the connection closed or an INVALID_REQUEST (42) answer"}
        return {"clause": clause}

    #: the steps' transactional ids, a few reused in turn (a nightly run's ten thousands of steps leave a user's
    #: cluster 32 transactional ids, not one each; a step fences the producer an earlier one got, and aborts the
    #: transaction an earlier one left ongoing, which read-only mutants never use). Each InitProducerId step
    #: begins a batch (``Mutant.leads``), so at most one per batch in flight (targets/fuzzing.py WINDOW, 16):
    #: with more ids than that, an id is used again only after the batch that used it before was answered, and
    #: no two connections race on one (which of them meets the other's transaction would depend on timing, and
    #: the seed must reproduce a run). The transaction timeout: 60 s, longer than any run needs one open.
    STEP_PREFIX, STEP_TXN_IDS, STEP_TIMEOUT_MS = "wirecheck-fuzz-step-", 32, 60_000
    #: the transactional id of an AddPartitionsToTxn or EndTxn step sent without an answered InitProducerId before
    #: it (a replay that begins with it): one no step initialises, so the target's error is the same every time
    STEP_UNINITIALISED = "wirecheck-fuzz-step-none"

    def for_worker(self, worker: int) -> KafkaFuzz:
        """This adapter for worker process ``worker`` of a split guided run (targets/fuzz_workers.py): its steps'
        transactional ids are its own, so that no two workers' steps meet on one (which of them met the other's
        transaction would depend on timing)."""
        mine = copy.copy(self)
        mine.step_prefix = f"{self.STEP_PREFIX}w{worker}-"
        return mine

    @property
    def step_kinds(self) -> tuple[str, ...]:
        """The steps this target takes: InitProducerId where advertised; AddPartitionsToTxn and EndTxn too where
        advertised at a version the steps send and a topic of the run's own is there to add."""
        kinds = []
        if self.init_producer is not None:
            kinds.append("InitProducerId")
            for key in (ADD_PARTITIONS_TO_TXN, END_TXN):
                if self.txn_topic and self._step_version(key) is not None:
                    kinds.append(STEP_APIS[key][0])
        return tuple(kinds)

    def _step_version(self, key: int) -> int | None:
        span = self.init_producer if key == INIT_PRODUCER_ID else self.transactions.get(key)
        if span is None or span[0] > STEP_APIS[key][1]:
            return None
        return min(span[1], STEP_APIS[key][1])

    def step(self, kind: str, rng: random.Random) -> Mutant:
        """A valid request of a step kind (``protocols/kafka/states.py``), at the highest advertised version the
        steps send: InitProducerId with the steps' next transactional id (-> ``txn-producer``); AddPartitionsToTxn
        of partition 0 of the run's topic and EndTxn (abort), made from the answer to the InitProducerId sent before
        them on their connection (``Mutant.build``: its transactional id, producer id and epoch; where none was
        answered, an id no step initialises and -1, which the target answers with an error)."""
        if kind not in self.step_kinds:
            raise ValueError(f"kafka has no step {kind!r} here (steps: {self.step_kinds})")
        key = messages.api_key_by_name(kind)
        version = self._step_version(key)
        assert version is not None  # a kind in step_kinds has one
        if key == INIT_PRODUCER_ID:
            body = random_value(rng, messages.request_codec(INIT_PRODUCER_ID, version))
            body.update({"TransactionalId": f"{self.step_prefix}{self._producers % self.STEP_TXN_IDS}",
                         "TransactionTimeoutMs": self.STEP_TIMEOUT_MS})
            self._producers += 1
            for name, value in (("ProducerId", -1), ("ProducerEpoch", -1), ("Enable2Pc", False),
                                ("KeepPreparedTxn", False)):  # a new producer (KIP-360), no two-phase commit (KIP-939)
                if name in body:
                    body[name] = value
            mutant = self._step_mutant(key, version, rng.randrange(1 << 30, 1 << 31), body)
            mutant.leads = True
            return mutant
        correlation = rng.randrange(1 << 30, 1 << 31)
        unanswered = (self.STEP_UNINITIALISED, -1, -1)

        def build(earlier: list[tuple[Mutant, bytes | None]]) -> Mutant:
            return self._step_mutant(key, version, correlation,
                                     self._txn_body(key, producer_of(earlier) or unanswered))

        mutant = build([])
        mutant.build = build
        return mutant

    def _txn_body(self, key: int, producer: tuple[str, int, int]) -> dict:
        transactional_id, producer_id, epoch = producer
        if key == END_TXN:
            return {"TransactionalId": transactional_id, "ProducerId": producer_id, "ProducerEpoch": epoch,
                    "Committed": False}
        # AddPartitionsToTxnRequest.json names the v0-3 fields V3AndBelow*
        return {"V3AndBelowTransactionalId": transactional_id, "V3AndBelowProducerId": producer_id,
                "V3AndBelowProducerEpoch": epoch, "V3AndBelowTopics": [{"Name": self.txn_topic, "Partitions": [0]}]}

    @staticmethod
    def _step_mutant(key: int, version: int, correlation: int, body: dict) -> Mutant:
        frame = messages.encode_request(key, version, correlation, "wirecheck", body)
        return Mutant(frame, "valid", "frame", STEP_REACTIONS[key], KafkaRequest(key, version, correlation, frame),
                      request=f"{STEP_APIS[key][0]} v{version}")

    def seeds(self) -> list[bytes]:
        """One valid, harmless request per read-only API at its highest advertised version (raw replay)."""
        frames = []
        for key, (_, high) in sorted(self.ranges.items()):
            body = random_value(random.Random(key), messages.request_codec(key, high))
            harmless(key, body)
            frames.append(messages.encode_request(key, high, key + 1, "wirecheck", body))
        return frames


def producer_of(earlier: list[tuple[Mutant, bytes | None]]) -> tuple[str, int, int] | None:
    """(transactional id, producer id, epoch) of the last InitProducerId among ``earlier`` (requests sent before
    on the connection, with their answers) that was answered without error; None where none was."""
    for mutant, answer in reversed(earlier):
        request: KafkaRequest = mutant.context
        if request is None or request.api_key != INIT_PRODUCER_ID or answer is None:
            continue
        try:
            body = messages.decode_response(INIT_PRODUCER_ID, request.version, answer)["body"]
            transactional_id = messages.decode_request(request.original)["body"]["TransactionalId"]
        except messages.DecodeError:
            continue
        if body.get("ErrorCode") == errors.NONE and transactional_id:
            return transactional_id, body["ProducerId"], body["ProducerEpoch"]
    return None


#: CreateTopics v4: the version every broker since Apache Kafka 2.0 takes (v0-1 were removed in 4.0, KIP-896)
CREATE_TOPICS_VERSION = 4


def txn_topic(name: str) -> str:
    """The topic a run's transactions add (the guided run's AddPartitionsToTxn step)."""
    return f"wirecheck-fuzz-txn-{name}"


def create_topic_frame(topic: str, correlation: int) -> bytes:
    return messages.encode_request(CREATE_TOPICS, CREATE_TOPICS_VERSION, correlation, "wirecheck",
                                   {"Topics": [{"Name": topic, "NumPartitions": 1, "ReplicationFactor": 1,
                                                "Assignments": [], "Configs": []}],
                                    "timeoutMs": 5000, "validateOnly": False})


def fuzz_setup(name: str) -> list[bytes]:
    """Requests that prepare :func:`fuzz_adapter`: ApiVersions v0 (what the target advertises), and CreateTopics
    of the topic the guided run's transactions add."""
    return [messages.encode_request(messages.API_VERSIONS, 0, 1, "wirecheck", {}),
            create_topic_frame(txn_topic(name), 2)]


def fuzz_adapter(name: str, answers: list[bytes]) -> KafkaFuzz:
    body = messages.decode_response(messages.API_VERSIONS, 0, answers[0])["body"]
    advertised = {entry["ApiKey"]: (entry["MinVersion"], entry["MaxVersion"]) for entry in body["ApiKeys"]}
    topic = None
    if len(answers) > 1 and answers[1] is not None:  # created, or there already (a rerun of the same name)
        created = messages.decode_response(CREATE_TOPICS, CREATE_TOPICS_VERSION, answers[1])["body"]["Topics"]
        if created and created[0]["ErrorCode"] in (errors.NONE, errors.TOPIC_ALREADY_EXISTS):
            topic = txn_topic(name)
    return KafkaFuzz(read_only_ranges(advertised), init_producer=advertised.get(INIT_PRODUCER_ID),
                     transactions=advertised, txn_topic=topic)


def offline_adapter() -> KafkaFuzz:
    """An adapter built without a target: every read-only API at every version the definitions know."""
    # READ_ONLY only: asking every key's versions would load the kio-only definitions for nothing
    return KafkaFuzz(read_only_ranges({key: messages.versions(key) for key in READ_ONLY if key in messages.api_keys()}),
                     init_producer=messages.versions(INIT_PRODUCER_ID),
                     transactions={key: messages.versions(key) for key in (ADD_PARTITIONS_TO_TXN, END_TXN)},
                     txn_topic=txn_topic("offline"))
