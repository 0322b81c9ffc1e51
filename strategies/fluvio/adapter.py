"""Fluvio SPU for the bulk engine (``strategies/engine.py``): the adapter (Produce mutants on one topic,
ApiVersions as the keepalive), and the request that prepares a target for it."""

from __future__ import annotations

import random

from wirecheck.protocols import reactions
from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import HELLO_CORRELATION_ID, SPEC, hello, messages
from wirecheck.protocols.fluvio.clauses import CATALOGUE, undecodable_response_clause
from wirecheck.protocols.framing import leading_correlation_id
from wirecheck.protocols.reactions import ANSWER, ERROR, MALFORMED, Observation
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.fluvio.mutants import BulkMutator, Request
from wirecheck.strategies.fluvio.values import produce_frame


class FluvioFuzz:
    """Fluvio SPU for strategies/engine.py: Produce mutants on ``topic``, ApiVersions as the keepalive."""

    name = "fluvio"
    catalogue = CATALOGUE
    pipelining_clause = "fluvio.framing.correlation-id"
    response_frame_clause = "fluvio.framing.response-frame"

    def __init__(self, topic: str, operators=BulkMutator.OPERATORS, streams: str | None = None):
        self.topic = topic
        self.operators = operators
        self.keepalive = hello()
        #: the empty topic a guided run's steps stream from (nothing produces to it: a stream there waits); None:
        #: no step (a guided run then has no session state to drive the connection into)
        self.stream_topic = streams
        self._steps = 0

    def mutants(self, rng: random.Random) -> BulkMutator:
        return BulkMutator(rng, self.topic, self.operators)

    answer_id = staticmethod(leading_correlation_id)
    keepalive_id = HELLO_CORRELATION_ID
    keepalive_clause = "fluvio.versions.advertised"

    @staticmethod
    def request_id(mutant: Mutant) -> int:
        return mutant.context.correlation_id

    def is_keepalive_answer(self, frame: bytes) -> bool:
        return SPEC.is_hello_answer(frame)

    def classify(self, mutant: Mutant, frame: bytes) -> Observation:
        request: Request = mutant.context
        try:
            decoded = messages.decode_response(request.api_key, request.version, frame)
        except DecodeError as exc:
            return Observation(MALFORMED, detail=str(exc), clause=undecodable_response_clause(request.api_key, exc),
                               expected="a response that decodes exactly")
        if decoded["correlation_id"] != request.correlation_id:
            return Observation(MALFORMED, detail=f"correlation id {decoded['correlation_id']}",
                               clause="fluvio.framing.correlation-id",
                               expected=f"correlation id {request.correlation_id}")
        if request.api_key == messages.STREAM_FETCH:  # a stream's answer, read late (a step's)
            codes = [decoded["body"]["partition"]["error_code"].code]
        else:
            codes = [p["error_code"].code for t in decoded["body"].get("responses", ()) for p in t["partitions"]]
        if codes == [0]:
            return Observation(ANSWER, detail="partition error 0")
        wrong = [c for c in codes if c] or [None]
        return Observation(ERROR, code=wrong[0], detail=f"partition errors {codes}")

    #: step requests' correlation ids, apart from the mutants' (which count up from 1) and the keepalive's
    STEP_IDS = 1 << 30

    @property
    def step(self):
        """The step maker (``Adapter.step``), where there is a stream topic to open a stream on."""
        return self._step if self.stream_topic is not None else None

    def _step(self, kind: str, rng: random.Random) -> Mutant:
        """A valid request of a step kind (``protocols/fluvio/states.py``): a StreamFetch at the log end of the
        empty stream topic, which opens a stream on the connection (``stream-open``) and is never answered while
        nothing is produced there (fluvio.stream.waits-for-data): an unanswered mutant."""
        if kind != "StreamFetch" or self.stream_topic is None:
            raise ValueError(f"fluvio has no step {kind!r} here (stream topic: {self.stream_topic})")
        self._steps += 1
        correlation = self.STEP_IDS + self._steps
        version = messages.SPU_ADVERTISED[messages.STREAM_FETCH][1]
        body = {"topic": self.stream_topic, "partition": 0, "fetch_offset": 0, "max_bytes": messages.DEFAULT_MAX_BYTES,
                "isolation": messages.READ_UNCOMMITTED, "wasm_module": b"", "smartmodule": None,
                "derivedstream": None, "smartmodules": [], "consumer_id": None}
        frame = messages.encode_request(messages.STREAM_FETCH, version, correlation, body)
        return Mutant(frame, "valid", "frame", STREAM_WAITS, Request(messages.STREAM_FETCH, version, correlation),
                      request="StreamFetch", unanswered=True)

    def seeds(self) -> list[bytes]:
        """Valid Produce requests (v7 and v25) and ApiVersions, for the raw-replay baseline."""
        rng = random.Random(0)
        mutator = BulkMutator(rng, self.topic, ("valid",))
        return [mutator.mutant("valid").frame for _ in range(8)] + [self.keepalive]


#: a guided run's step: a StreamFetch at the log end of a partition nothing is produced to is never answered
STREAM_WAITS = reactions.silence_allowed("fluvio.stream.waits-for-data", "a stream opened at the log end "
                                         "(a guided run's step)", also=())


def stream_topic(topic: str) -> str:
    """The topic a guided run's StreamFetch steps stream from: empty, no mutant produces to it (its name is no
    mutation of the fuzzed topic's: a changed topic name cannot become it by a cut or a byte edit alone)."""
    return f"stream-{topic}"


def fuzz_setup(topic: str) -> list[bytes]:
    """Requests that prepare a target for :func:`fuzz_adapter`: an empty Produce creates the topic, another the
    stream topic of the guided run's steps."""
    return [produce_frame(topic, b"", 1), produce_frame(stream_topic(topic), b"", 2)]


def fuzz_adapter(topic: str, answers: list[bytes]) -> FluvioFuzz:
    return FluvioFuzz(topic, streams=stream_topic(topic))


def offline_adapter() -> FluvioFuzz:
    """An adapter built without a target (for checks of the mutants themselves)."""
    return FluvioFuzz("wirecheck-offline", streams=stream_topic("wirecheck-offline"))
