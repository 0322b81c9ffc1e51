"""Barco binary producer for the bulk engine (``strategies/engine.py``): the adapter (PRODUCE mutants on one
topic, HEARTBEAT as the keepalive, STARTUP as every connection's greeting) and the request that prepares a
target for it."""

from __future__ import annotations

import random

from wirecheck.protocols.barco import wire
from wirecheck.protocols.barco.clauses import CATALOGUE
from wirecheck.protocols.reactions import ANSWER, ERROR, MALFORMED, Observation
from wirecheck.strategies.barco.mutants import BulkMutator
from wirecheck.strategies.engine import Mutant

FUZZ_ENDPOINT = "producer"  # the framed endpoint bench/fuzz_rate.py and the bulk case fuzz
KEEPALIVE_STREAM = 0xFFFF


class BarcoFuzz:
    """Barco binary producer for strategies/engine.py: PRODUCE mutants on ``topic``, HEARTBEAT as keepalive."""

    name = "barco"
    catalogue = CATALOGUE
    pipelining_clause = "barco.framing.pipelining"
    response_frame_clause = "barco.framing.response-frame"

    def __init__(self, topic: str, operators=BulkMutator.OPERATORS):
        self.topic = topic
        self.operators = operators
        self.keepalive = wire.frame(wire.HEARTBEAT, b"", KEEPALIVE_STREAM)
        self.greeting = wire.frame(wire.STARTUP, b"", 0)

    def mutants(self, rng: random.Random) -> BulkMutator:
        return BulkMutator(rng, self.topic, self.operators)

    keepalive_id = KEEPALIVE_STREAM
    keepalive_clause = "barco.producer.heartbeat"

    @staticmethod
    def answer_id(frame: bytes) -> int | None:
        return wire.parse_header(frame).stream_id if len(frame) >= wire.HEADER_SIZE else None

    @staticmethod
    def request_id(mutant: Mutant) -> int:
        return mutant.context

    def is_keepalive_answer(self, frame: bytes) -> bool:
        return frame == wire.frame(wire.READY, b"", KEEPALIVE_STREAM)

    def classify(self, mutant: Mutant, frame: bytes) -> Observation:
        head = wire.parse_header(frame)
        if head.version != wire.VERSION or head.flags != 0 or not head.crc_ok:
            return Observation(MALFORMED, detail=wire.describe(frame), clause="barco.framing.response-header",
                               expected="version 1, flags 0 and a valid head crc")
        if head.stream_id != mutant.context:
            return Observation(MALFORMED, detail=f"stream id {head.stream_id}", clause="barco.framing.stream-id-echo",
                               expected=f"stream id {mutant.context}")
        if head.opcode in (wire.READY, wire.PRODUCE_RESPONSE):  # notes §2.5: both have an empty body
            if head.body_length == 0:
                return Observation(ANSWER, detail=head.name)
            return Observation(MALFORMED, detail=wire.describe(frame), expected=f"{head.name} with an empty body",
                               clause="barco.producer.produce-ack" if head.opcode == wire.PRODUCE_RESPONSE else
                               "barco.producer.heartbeat")
        if head.opcode == wire.ERROR:
            try:
                code, message = wire.parse_known_error(frame[wire.HEADER_SIZE :])
            except wire.WireError as exc:
                return Observation(MALFORMED, detail=str(exc), clause="barco.producer.error-body",
                                   expected="an ERROR body with code 0, 1 or 2")
            return Observation(ERROR, code=code, detail=message[:80])
        return Observation(MALFORMED, detail=wire.describe(frame), clause=self.response_frame_clause,
                           expected="READY, PRODUCE_RESPONSE or ERROR")

    def seeds(self) -> list[bytes]:
        """STARTUP first (a fresh connection), then valid PRODUCE frames and a HEARTBEAT, for the raw replay."""
        mutator = BulkMutator(random.Random(0), self.topic, ("valid",))
        return [self.greeting] + [mutator.mutant("valid").frame for _ in range(8)] + [self.keepalive]


def fuzz_setup(topic: str) -> list[bytes]:
    return [wire.frame(wire.STARTUP)]


def fuzz_adapter(topic: str, answers: list[bytes]) -> BarcoFuzz:
    return BarcoFuzz(topic)


def offline_adapter() -> BarcoFuzz:
    return BarcoFuzz("wirecheck-offline")
