"""Barco binary producer bulk mutants: frames traced by their codec (``protocols.barco.wire``), one shared
operator applied to each (``strategies.rules``), and the reaction decisions D1-D6 of protocols/barco/clauses.py
permit. Every connection opens with STARTUP (the adapter's ``greeting``); the mutants follow it.
"""

from __future__ import annotations

import random

from wirecheck.protocols import reactions
from wirecheck.protocols.barco import wire
from wirecheck.protocols.reactions import ANSWER, ERROR
from wirecheck.strategies import operators
from wirecheck.strategies.barco.values import INVALID_TOPICS
from wirecheck.strategies.binary import Span, set_int
from wirecheck.strategies.rules import AS_IS, CHECKSUM, WHOLE, Rule, RuleMutator
from wirecheck.strategies.traced import TracedSeed, sized, spans_from_trace

NO_HANG = "barco.robustness.no-hang"

for _name, _family, _doc, _apply in (
        ("barco-heartbeat", "valid", "a HEARTBEAT, answered with READY", operators.as_is),
        ("barco-body-on-control", "length-lie", "a HEARTBEAT carrying a body the target must skip (D6)",
         operators.append),
        ("barco-opcode", "unknown-enum", "an opcode the producer does not serve", operators.set_field),
        ("barco-second-startup", "duplicate-field", "STARTUP again on a started connection", operators.as_is),
        ("barco-version", "unknown-enum", "a version byte other than 1", operators.set_field),
        ("barco-message-overrun", "length-lie", "a message length running past the body", operators.overrun),
        ("barco-no-messages", "drop-field", "a PRODUCE without messages", operators.get("drop-field").apply),
        ("barco-topic", "invalid-utf8", "a topic name D5 forbids (empty, '..', '/', NUL, not UTF-8)",
         operators.replace_sized),
        ("barco-truncated-topic", "truncation", "a body that ends inside the key or topic",
         operators.get("truncate").apply),
        ("barco-body-short", "truncation", "a consistent frame whose body stops early",
         operators.get("truncate").apply),
        ("barco-body-long", "length-lie", "a body length promising more than is sent", operators.overrun),
        ("barco-timestamp", "valid", "a PRODUCE with the timestamp flag and any int64 timestamp", operators.set_field),
        ("barco-flags", "unknown-enum", "undefined flag bits (ignored)", operators.set_field),
        ("barco-empty-message", "boundary-int", "a zero-length message", operators.insert),
        ("barco-pipelined", "concatenation", "a frame pipelined behind others", operators.as_is)):
    operators.register(_name, _family, _doc, apply=_apply)

# -- reactions ------------------------------------------------------------------------------------------------


def _answer(clause: str) -> reactions.Reaction:
    return reactions.answer(clause)


def _error(clause: str) -> reactions.Reaction:
    return reactions.error_answer(clause, codes=(wire.SERVER_ERROR,))


def _close(clause: str) -> reactions.Reaction:
    return reactions.close(clause, errors_first=True)


def _error_stays_open(clause: str) -> reactions.Reaction:
    """ERROR(0) and the connection stays open (D3, a SHOULD); ending the connection after it is NON-STRICT. Such
    mutants are not pipelined: a close would take the frames behind them along."""
    return reactions.error_or_close(clause, codes=(wire.SERVER_ERROR,), prefer={ERROR}, errors_before_close=True)


def _answer_stays_open(clause: str, codes=None) -> reactions.Reaction:
    """An answer and the connection stays open (a SHOULD); an ERROR or a close instead is NON-STRICT."""
    prefer = {ANSWER} if codes is None else {ANSWER, ERROR}
    return reactions.answer_or_close(clause, prefer=prefer, errors_before_close=True,
                                     codes=frozenset(codes) if codes is not None else None)


#: D4: a close (ERROR(0) first permitted), or ERROR(0) with the announced body then discarded (notes §11)
OVERSIZE_REFUSED = reactions.error_or_close("barco.framing.oversize", codes=(wire.SERVER_ERROR,),
                                            why="a close, or ERROR(0) and the body discarded", keeps_open=False)
OVERSIZE_MAY_WAIT = reactions.silence_allowed("barco.framing.oversize", "the body limit is the operator's",
                                              patience=0.05, errors_before_close=True)
UNKNOWN_OPCODE = _error("barco.producer.unknown-opcode")
# with a body, whether the connection stays open is D6's (skip it, or take it for a protocol error and close:
# notes §10.9); the ERROR(0) itself stays unknown-opcode's
UNKNOWN_OPCODE_WITH_BODY = reactions.error_or_close(
    "barco.producer.unknown-opcode", codes=(wire.SERVER_ERROR,), prefer={ERROR},
    clauses={"close": "barco.framing.body-consumed", "keepalive": "barco.framing.body-consumed"})
BODY_LONG = reactions.silence_allowed(NO_HANG, patience=0.05)


def _unknown_opcode(seed: TracedSeed, span: Span, frame: bytes) -> reactions.Reaction:
    return UNKNOWN_OPCODE_WITH_BODY if seed.field("body").size else UNKNOWN_OPCODE


def _body_length_told(span: Span, frame: bytes) -> int:
    return int.from_bytes(frame[span.start : span.end], "big")


def _oversize(seed: TracedSeed, span: Span, frame: bytes) -> reactions.Reaction:
    return OVERSIZE_REFUSED if _body_length_told(span, frame) == 0xFFFFFFFF else OVERSIZE_MAY_WAIT


def _may_wait(seed: TracedSeed, span: Span, frame: bytes) -> bool:
    """Up to 32 MiB the limit is the operator's (POLAR_MAX_MESSAGE_SIZE): waiting for the body conforms too."""
    return _body_length_told(span, frame) != 0xFFFFFFFF


def _body_short(seed: TracedSeed, span: Span, frame: bytes) -> reactions.Reaction:
    """A cut inside the key or the topic is notes §2.5's "EOF"; a cut among the messages leaves fewer of them."""
    if len(frame) < seed.field("messages").start:
        return _error("barco.producer.truncated-body")
    return _answer_stays_open("barco.producer.message-lengths", codes={0})


# -- seeds traced by the codec --------------------------------------------------------------------------------


def traced_frame(opcode: int, body: bytes = b"", flags: int = 0) -> TracedSeed:
    """A control frame (or any opcode with an opaque body) and its header's spans; stream id 0."""
    trace: list = []
    frame = wire.frame(opcode, body, 0, flags, trace=trace)
    return TracedSeed(wire.OPCODES.get(opcode, f"op{opcode}"), frame,
                      spans_from_trace(trace) + (Span("frame", "frame", 0, len(frame)),))


def traced_produce(topic: str, messages: list[bytes], key: bytes, timestamp: int | None = None) -> TracedSeed:
    """A PRODUCE and its spans: the header's, each body field's, ``frame`` and ``topic`` (its length and bytes)."""
    trace: list = []
    body = wire.produce_body(topic, messages, key, timestamp, trace=trace)
    flags = wire.FLAG_TIMESTAMP if timestamp is not None else 0
    frame = wire.frame(wire.PRODUCE, body, 0, flags, trace=trace)
    seed = TracedSeed("PRODUCE", frame, spans_from_trace(trace))
    whole = (Span("frame", "frame", 0, len(frame)), sized(seed.field("topic", "length"), seed.field("topic", "data")))
    return TracedSeed("PRODUCE", frame, seed.spans + whole)


def _last_message_length(seed: TracedSeed, rng: random.Random) -> Span:
    return seed.of_kind("length")[-1]


def _topic(seed: TracedSeed, rng: random.Random) -> Span:
    return seed.field("topic", "sized")


# -- the rules: operator -> seeds, field, choices, re-framing, permitted reaction --------------------------------

_OTHER_OPCODES = (0, wire.READY, wire.ERROR, wire.PRODUCE_RESPONSE, *range(7, 256))

RULES = {
    "valid": Rule("produce", "frame", _answer("barco.producer.produce-ack"), reframe=AS_IS),
    "barco-heartbeat": Rule("heartbeat", "frame", _answer("barco.producer.heartbeat"), reframe=AS_IS),
    "barco-body-on-control": Rule("heartbeat", "body", _answer_stays_open("barco.framing.body-consumed"),
                                  (range(1, 40),)),
    "barco-opcode": Rule("control-with-body", "opcode", _unknown_opcode, _OTHER_OPCODES, CHECKSUM),
    "barco-second-startup": Rule("startup", "opcode", _error("barco.producer.second-startup"), reframe=AS_IS),
    "bad-crc": Rule("produce", "crc", _close("barco.framing.header-crc"), reframe=AS_IS),
    "barco-version": Rule("produce", "version", _close("barco.framing.version"), (0, 2, 255), CHECKSUM),
    "oversize": Rule("empty-produce", "body_length", _oversize, (wire.MAX_BODY + 1, 1 << 25, 0xFFFFFFFF), CHECKSUM,
                     _may_wait),
    "trailing-bytes": Rule("produce", "body", _error_stays_open("barco.producer.message-lengths"), (range(1, 4),)),
    "barco-message-overrun": Rule("produce", _last_message_length, _error_stays_open("barco.producer.message-lengths"),
                                  (range(1, 1000),), AS_IS),
    "barco-no-messages": Rule("produce", "messages", _error("barco.producer.no-messages")),
    "barco-topic": Rule("produce", _topic, _error("barco.producer.topic-valid"), INVALID_TOPICS),
    "barco-truncated-topic": Rule("produce", _topic, _error("barco.producer.truncated-body")),
    "barco-body-short": Rule("produce", "body", _body_short),
    "barco-body-long": Rule("produce", "body_length", BODY_LONG, (range(1, 100),), CHECKSUM, incomplete=True),
    "barco-timestamp": Rule("timestamped", "timestamp", _answer("barco.producer.timestamp"),
                            (range(-(2**63), 2**63),), AS_IS),
    "barco-flags": Rule("produce", "flags", _answer("barco.producer.produce-ack"), (range(2, 256, 2),), CHECKSUM),
    "barco-empty-message": Rule("produce", "messages", _answer("barco.producer.empty-message"),
                                (wire.messages_part([b""]),)),
    # two frames in one mutant would need two answers: send a heartbeat-sized one
    "barco-pipelined": Rule("heartbeat", "frame", _answer("barco.framing.pipelining"), reframe=AS_IS),
}


class BulkMutator(RuleMutator):
    """Seeded mutants of valid producer frames: each operator breaks one field in a known way."""

    RULES = RULES
    OPERATORS = ("valid", "barco-heartbeat", "barco-body-on-control", "barco-opcode", "barco-second-startup", "bad-crc",
                 "barco-version", "oversize", "trailing-bytes", "barco-message-overrun", "barco-no-messages",
                 "barco-topic", "barco-truncated-topic", "barco-body-short", "barco-body-long", "barco-timestamp",
                 "barco-flags", "barco-empty-message", "barco-pipelined")
    POOL = 256  # PRODUCE seeds kept and reused: tracing one costs more than mutating it

    def __init__(self, rng: random.Random, topic: str, operators=OPERATORS):
        super().__init__(rng, operators)
        self.topic = topic
        self._pools: dict[str, list[TracedSeed]] = {"produce": [], "timestamped": []}
        self._fixed = {"heartbeat": traced_frame(wire.HEARTBEAT), "startup": traced_frame(wire.STARTUP),
                       "empty-produce": traced_frame(wire.PRODUCE)}
        # every frame has the same header: its spans, looked up once
        header = self._fixed["heartbeat"]
        self._stream_id, self._body_length, self._crc = (header.field(name) for name in ("stream_id", "body_length",
                                                                                          "crc"))

    def _produce(self, timestamped: bool) -> TracedSeed:
        rng = self.rng
        messages = [rng.randbytes(rng.randrange(0, 64)) for _ in range(rng.randrange(1, 5))]
        key = rng.randbytes(rng.randrange(0, 8))
        return traced_produce(self.topic, messages, key, 0 if timestamped else None)

    def _unstamped(self, group: str) -> TracedSeed:
        """A seed of the group, stream id 0: PRODUCEs from a pool grown by one in four draws until it is full."""
        if group in self._fixed:
            return self._fixed[group]
        if group == "control-with-body":  # any body, possibly empty (barco-opcode)
            return traced_frame(wire.HEARTBEAT, self.rng.randbytes(self.rng.randrange(0, 20)))
        pool = self._pools[group]
        if len(pool) < self.POOL and (not pool or self.rng.random() < 0.25):
            pool.append(self._produce(group == "timestamped"))
            return pool[-1]
        return self.rng.choice(pool)

    def seed(self, group: str) -> TracedSeed:
        """A seed of the group with a fresh stream id (its answer must echo it), the head crc fixed."""
        seed = self._unstamped(group)
        sid = self.rng.randrange(0, 0xFFFF)
        return seed.with_frame(self._head_crc(set_int(seed.frame, self._stream_id, sid)), sid)

    def reframe(self, seed: TracedSeed, frame: bytes, mode: str) -> bytes:
        """WHOLE: the body length made true, then the head crc; CHECKSUM: the head crc only (the lie is in the
        header)."""
        if mode == WHOLE:
            frame = set_int(frame, self._body_length, len(frame) - self._crc.end)
        return self._head_crc(frame)

    def _head_crc(self, frame: bytes) -> bytes:
        crc = self._crc
        return frame[: crc.start] + wire.crc(frame[: crc.start]).to_bytes(crc.size, "big") + frame[crc.end :]
