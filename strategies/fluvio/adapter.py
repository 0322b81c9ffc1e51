"""Fluvio SPU for the bulk engine (``strategies/engine.py``): the adapter (Produce mutants on one topic,
ApiVersions as the keepalive), and the request that prepares a target for it."""

from __future__ import annotations

import random

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

    def __init__(self, topic: str, operators=BulkMutator.OPERATORS):
        self.topic = topic
        self.operators = operators
        self.keepalive = hello()

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
        codes = [p["error_code"].code for t in decoded["body"].get("responses", ()) for p in t["partitions"]]
        if codes == [0]:
            return Observation(ANSWER, detail="partition error 0")
        wrong = [c for c in codes if c] or [None]
        return Observation(ERROR, code=wrong[0], detail=f"partition errors {codes}")

    def seeds(self) -> list[bytes]:
        """Valid Produce requests (v7 and v25) and ApiVersions, for the raw-replay baseline."""
        rng = random.Random(0)
        mutator = BulkMutator(rng, self.topic, ("valid",))
        return [mutator.mutant("valid").frame for _ in range(8)] + [self.keepalive]


def fuzz_setup(topic: str) -> list[bytes]:
    """Requests that prepare a target for :func:`fuzz_adapter`: an empty Produce creates the topic."""
    return [produce_frame(topic, b"", 1)]


def fuzz_adapter(topic: str, answers: list[bytes]) -> FluvioFuzz:
    return FluvioFuzz(topic)


def offline_adapter() -> FluvioFuzz:
    """An adapter built without a target (for checks of the mutants themselves)."""
    return FluvioFuzz("wirecheck-offline")
