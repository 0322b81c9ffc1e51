"""RustLog for the bulk engine (``strategies/engine.py``): the adapter (mutants on one topic, Ping as the
keepalive, answers classified) and the request that prepares a target for it."""

from __future__ import annotations

import json
import random

from wirecheck.protocols.reactions import ANSWER, ERROR, MALFORMED, Lazy, Observation
from wirecheck.protocols.rustlog import PING, SPEC
from wirecheck.protocols.rustlog.clauses import CATALOGUE
from wirecheck.protocols.rustlog.layers import REQUESTS, FrameDecodeError, decode_frame, encode_frame
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.rustlog.mutants import BulkMutator
from wirecheck.strategies.rustlog.values import sample_request


def _short(obj, limit: int = 300) -> str:
    text = json.dumps(obj, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


class RustLogFuzz:
    """RustLog for strategies/engine.py: mutants on ``topic``, Ping as the keepalive, answers classified."""

    name = "rustlog"
    catalogue = CATALOGUE
    keepalive = PING
    pipelining_clause = "rustlog.framing.pipelining"
    response_frame_clause = "rustlog.framing.response-frame"
    keepalive_clause = "rustlog.ping.pong"

    def __init__(self, topic: str, partitions: int = 1, operators=BulkMutator.OPERATORS):
        self.topic, self.partitions, self.operators = topic, partitions, operators

    def mutants(self, rng: random.Random) -> BulkMutator:
        return BulkMutator(rng, self.topic, self.partitions, self.operators)

    def is_keepalive_answer(self, frame: bytes) -> bool:
        return SPEC.is_hello_answer(frame)

    def classify(self, mutant: Mutant, frame: bytes) -> Observation:
        try:
            obj = decode_frame(frame)
        except FrameDecodeError as exc:
            return Observation(MALFORMED, detail=str(exc), clause=self.response_frame_clause,
                               expected="a well-formed response frame")
        if obj["type"] == "Error":
            return Observation(ERROR, code=obj.get("code"), detail=Lazy(_short, obj))
        return Observation(ANSWER, detail=Lazy(_short, obj))

    def seeds(self) -> list[bytes]:
        """Valid requests for the raw-replay baseline (reads and a Ping; no topic is created)."""
        return [encode_frame(sample_request(kind, self.topic)) for kind in REQUESTS if kind != "CreateTopic"]


def fuzz_setup(topic: str) -> list[bytes]:
    """Requests that prepare a target for :func:`fuzz_adapter` (a topic of two partitions)."""
    return [encode_frame({"type": "CreateTopic", "topic": topic, "partition_count": 2})]


def fuzz_adapter(topic: str, answers: list[bytes]) -> RustLogFuzz:
    return RustLogFuzz(topic, partitions=2)


def offline_adapter() -> RustLogFuzz:
    """An adapter built without a target (for checks of the mutants themselves)."""
    return RustLogFuzz("wirecheck-offline", partitions=2)
