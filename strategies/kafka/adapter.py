"""Kafka for the bulk engine (``strategies/engine.py``): the adapter (structural mutants of read-only requests at
the advertised versions, Metadata or ApiVersions v0 as the keepalive, answers decoded at the request's version),
what keeps a mutant's valid part harmless, and the request that prepares a target for it."""

from __future__ import annotations

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

INIT_PRODUCER_ID = 22
#: a guided run's step: a transactional InitProducerId is answered (an error answer permitted: the state then
#: stays where it was)
STEP_REACTION = reactions.any_answer("kafka.txn.epoch-bump", "a transactional InitProducerId (a guided run's step)")

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
                 init_producer: tuple[int, int] | None = None):
        self.ranges = ranges
        self.operators = operators
        self.init_producer = init_producer  # InitProducerId's advertised versions: the guided run's step
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
        codes = errors.error_codes(decoded["body"]) - {errors.NONE}
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

    #: the steps' transactional ids, a few reused (a nightly run's ten thousands of steps leave a user's cluster
    #: eight transactional ids, not one each; a step fences the producer an earlier one got, which read-only
    #: mutants never use), and the transaction timeout (60 s: no transaction is ever begun under them)
    STEP_PREFIX, STEP_TXN_IDS, STEP_TIMEOUT_MS = "wirecheck-fuzz-step-", 8, 60_000

    def step(self, kind: str, rng: random.Random) -> Mutant:
        """A valid request of a step kind (``protocols/kafka/states.py``): InitProducerId with one of the steps'
        transactional ids, at the highest advertised version, which moves the connection to ``txn-producer``."""
        if kind != "InitProducerId" or self.init_producer is None:
            raise ValueError(f"kafka has no step {kind!r} here (InitProducerId advertised: {self.init_producer})")
        version = self.init_producer[1]
        body = random_value(rng, messages.request_codec(INIT_PRODUCER_ID, version))
        body.update({"TransactionalId": f"{self.STEP_PREFIX}{rng.randrange(self.STEP_TXN_IDS)}",
                     "TransactionTimeoutMs": self.STEP_TIMEOUT_MS})
        for name, value in (("ProducerId", -1), ("ProducerEpoch", -1), ("Enable2Pc", False),
                            ("KeepPreparedTxn", False)):  # a new producer (KIP-360), no two-phase commit (KIP-939)
            if name in body:
                body[name] = value
        correlation = rng.randrange(1 << 30, 1 << 31)
        frame = messages.encode_request(INIT_PRODUCER_ID, version, correlation, "wirecheck", body)
        return Mutant(frame, "valid", "frame", STEP_REACTION, KafkaRequest(INIT_PRODUCER_ID, version, correlation, frame),
                      request=f"InitProducerId v{version}")

    def seeds(self) -> list[bytes]:
        """One valid, harmless request per read-only API at its highest advertised version (raw replay)."""
        frames = []
        for key, (_, high) in sorted(self.ranges.items()):
            body = random_value(random.Random(key), messages.request_codec(key, high))
            harmless(key, body)
            frames.append(messages.encode_request(key, high, key + 1, "wirecheck", body))
        return frames


def fuzz_setup(name: str) -> list[bytes]:
    """Requests that prepare :func:`fuzz_adapter`: ApiVersions v0 (what the target advertises)."""
    return [messages.encode_request(messages.API_VERSIONS, 0, 1, "wirecheck", {})]


def fuzz_adapter(name: str, answers: list[bytes]) -> KafkaFuzz:
    body = messages.decode_response(messages.API_VERSIONS, 0, answers[0])["body"]
    advertised = {entry["ApiKey"]: (entry["MinVersion"], entry["MaxVersion"]) for entry in body["ApiKeys"]}
    return KafkaFuzz(read_only_ranges(advertised), init_producer=advertised.get(INIT_PRODUCER_ID))


def offline_adapter() -> KafkaFuzz:
    """An adapter built without a target: every read-only API at every version the definitions know."""
    # READ_ONLY only: asking every key's versions would load the kio-only definitions for nothing
    return KafkaFuzz(read_only_ranges({key: messages.versions(key) for key in READ_ONLY if key in messages.api_keys()}),
                     init_producer=messages.versions(INIT_PRODUCER_ID))
