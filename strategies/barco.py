"""Barco binary producer: Hypothesis strategies for every frame and request, seeded bulk mutants with the
reaction the clauses permit, and the bulk engine's adapter (strategies/engine.py).

Every connection opens with STARTUP (the adapter's ``greeting``); the mutants follow it. Reactions:
decisions D1-D6 of protocols/barco/clauses.py.
"""

from __future__ import annotations

import random
import struct

from hypothesis import strategies as st

from wirecheck.protocols import reactions
from wirecheck.protocols.barco import wire
from wirecheck.protocols.barco.clauses import CATALOGUE
from wirecheck.protocols.reactions import ANSWER, ERROR, MALFORMED, Observation
from wirecheck.strategies import operators
from wirecheck.strategies.engine import Mutant

FUZZ_ENDPOINT = "producer"  # the framed endpoint bench/fuzz_rate.py and the bulk case fuzz
NO_HANG = "barco.robustness.no-hang"
KEEPALIVE_STREAM = 0xFFFF
INVALID_TOPICS = (b"", b"..", b"a/b", b"a\\b", b"nul\x00", b"\xff\xfe", b"../escape", b"tab\tname")

# -- Hypothesis strategies -----------------------------------------------------------------------------------

topic_names = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="/\\."),
                      min_size=1, max_size=40)
partition_keys = st.binary(max_size=32)
message_lists = st.lists(st.binary(max_size=256), min_size=1, max_size=8)
stream_ids = st.integers(0, 0xFFFF)
timestamps = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))


def layer_examples() -> dict:
    """Every message layer (protocols.barco.layers.message_layers) -> a strategy of built layers."""
    from wirecheck.protocols.barco import layers as L

    small = st.binary(max_size=24)
    messages = st.lists(small.map(lambda data: L.Message(data=data)), max_size=3)
    names = st.binary(max_size=12)
    produce = st.builds(L.Produce, key=names, topic=names, messages=messages)
    error = st.builds(L.Error, code=st.sampled_from(sorted(wire.ERROR_CODES)), message=st.binary(max_size=40))
    record = st.builds(L.Record, timestamp=st.integers(-(2**63), 2**63 - 1), body=small)
    item = st.builds(L.PollItem, token=st.integers(-(2**63), 2**63 - 1), range_index=st.integers(0, 255),
                     version=st.integers(0, 2**32 - 1), topic=names, offset=st.integers(-(2**63), 2**63 - 1),
                     chunk=small)

    @st.composite
    def frames(draw):
        frame = L.BarcoFrame(stream_id=draw(stream_ids))
        body = draw(st.sampled_from(["empty", "produce", "timestamped", "error"]))
        if body == "empty":
            frame.opcode = draw(st.sampled_from([wire.STARTUP, wire.READY, wire.HEARTBEAT]))
            return frame
        if body == "error":
            return frame / draw(error)
        if body == "timestamped":
            frame.flags = wire.FLAG_TIMESTAMP
            return frame / L.Produce(timestamp=draw(st.integers(-(2**63), 2**63 - 1)), key=draw(names),
                                     topic=draw(names), messages=draw(messages))
        return frame / draw(produce)

    return {"BarcoFrame": frames(), "Message": small.map(lambda data: L.Message(data=data)), "Produce": produce,
            "Error": error, "Record": record, "Records": st.lists(record, max_size=3).map(lambda r: L.Records(records=r)),
            "PollItem": item, "PollResponse": st.lists(item, max_size=3).map(lambda i: L.PollResponse(items=i))}


@st.composite
def produce_frames(draw, topic: str | None = None) -> tuple[bytes, wire.Produce, int]:
    """A valid PRODUCE frame, what it carries and its stream id."""
    produce = wire.Produce(topic=(topic or draw(topic_names)).encode(), key=draw(partition_keys),
                           messages=draw(message_lists), timestamp=draw(timestamps))
    sid = draw(stream_ids)
    return wire.produce(produce.topic, produce.messages, produce.key, sid, produce.timestamp), produce, sid


@st.composite
def control_frames(draw) -> tuple[bytes, int, int]:
    """STARTUP or HEARTBEAT (optionally with a body, D6): (frame, opcode, stream id)."""
    op = draw(st.sampled_from([wire.STARTUP, wire.HEARTBEAT]))
    sid = draw(stream_ids)
    return wire.frame(op, draw(st.binary(max_size=16)), sid), op, sid


@st.composite
def unknown_op_frames(draw) -> tuple[bytes, int]:
    op = draw(st.integers(0, 255).filter(lambda o: o not in (wire.PRODUCE, wire.HEARTBEAT, wire.STARTUP)))
    sid = draw(stream_ids)
    return wire.frame(op, draw(st.binary(max_size=32)), sid), sid


@st.composite
def invalid_produce_bodies(draw, topic: str) -> tuple[str, bytes]:
    """(what is wrong, body) for a PRODUCE the target must refuse with ERROR(0)."""
    kind = draw(st.sampled_from(["trailing", "overrun", "barco-no-messages", "bad-topic", "truncated"]))
    messages = draw(message_lists)
    body = wire.produce_body(topic, messages)
    if kind == "trailing":
        body += draw(st.binary(min_size=1, max_size=3))
    elif kind == "overrun":
        body = body[:-1] if messages[-1] else body + b"\x00\x00\x00\x05ab"
        if not messages[-1]:
            kind = "trailing"
    elif kind == "barco-no-messages":
        body = wire.produce_body(topic, [])
    elif kind == "bad-topic":
        body = wire.produce_body(draw(st.sampled_from(INVALID_TOPICS)), messages)
    else:
        body = bytes([200]) + b"k" * draw(st.integers(0, 100))
    return kind, body


for _name, _family, _doc in (
        ("barco-heartbeat", "valid", "a HEARTBEAT, answered with READY"),
        ("barco-body-on-control", "length-lie", "a HEARTBEAT carrying a body the target must skip (D6)"),
        ("barco-opcode", "unknown-enum", "an opcode the producer does not serve"),
        ("barco-second-startup", "duplicate-field", "STARTUP again on a started connection"),
        ("barco-version", "unknown-enum", "a version byte other than 1"),
        ("barco-message-overrun", "length-lie", "a message length running past the body"),
        ("barco-no-messages", "drop-field", "a PRODUCE without messages"),
        ("barco-topic", "invalid-utf8", "a topic name D5 forbids (empty, '..', '/', NUL, not UTF-8)"),
        ("barco-truncated-topic", "truncation", "a body that ends inside the key or topic"),
        ("barco-body-short", "truncation", "a consistent frame whose body stops early"),
        ("barco-body-long", "length-lie", "a body length promising more than is sent"),
        ("barco-timestamp", "valid", "a PRODUCE with the timestamp flag and any int64 timestamp"),
        ("barco-flags", "unknown-enum", "undefined flag bits (ignored)"),
        ("barco-empty-message", "boundary-int", "a zero-length message"),
        ("barco-pipelined", "concatenation", "a frame pipelined behind others")):
    operators.register(_name, _family, _doc)

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


# -- bulk mutants ----------------------------------------------------------------------------------------------


class BulkMutator:
    """Seeded mutants of valid producer frames: each operator breaks one field in a known way."""

    OPERATORS = ("valid", "barco-heartbeat", "barco-body-on-control", "barco-opcode", "barco-second-startup", "bad-crc",
                 "barco-version", "oversize", "trailing-bytes", "barco-message-overrun", "barco-no-messages", "barco-topic",
                 "barco-truncated-topic", "barco-body-short", "barco-body-long", "barco-timestamp", "barco-flags",
                 "barco-empty-message", "barco-pipelined")

    def __init__(self, rng: random.Random, topic: str, operators=OPERATORS):
        self.rng = rng
        self.topic = topic
        self.operators = operators

    def __iter__(self):
        return self

    def __next__(self) -> Mutant:
        return self.mutant(self.rng.choice(self.operators))

    def _messages(self) -> list[bytes]:
        rng = self.rng
        return [rng.randbytes(rng.randrange(0, 64)) for _ in range(rng.randrange(1, 5))]

    def mutant(self, operator: str) -> Mutant:
        rng = self.rng
        sid = rng.randrange(0, 0xFFFF)
        messages = self._messages()
        key = rng.randbytes(rng.randrange(0, 8))
        body = wire.produce_body(self.topic, messages, key)

        def m(frame: bytes, reaction, field: str = "frame", incomplete: bool = False) -> Mutant:
            return Mutant(frame, operator, field, reaction, context=sid, incomplete=incomplete)

        if operator == "valid":
            return m(wire.frame(wire.PRODUCE, body, sid), _answer("barco.producer.produce-ack"))
        if operator == "barco-heartbeat":
            return m(wire.frame(wire.HEARTBEAT, b"", sid), _answer("barco.producer.heartbeat"))
        if operator == "barco-body-on-control":
            return m(wire.frame(wire.HEARTBEAT, rng.randbytes(rng.randrange(1, 40)), sid),
                     _answer_stays_open("barco.framing.body-consumed"), "body")
        if operator == "barco-opcode":
            op = rng.choice([0, wire.READY, wire.ERROR, wire.PRODUCE_RESPONSE] + list(range(7, 256)))
            extra = rng.randbytes(rng.randrange(0, 20))
            # with a body, whether the connection stays open is D6's (skip it, or take it for a protocol error and
            # close: notes §10.9); the ERROR(0) itself stays unknown-opcode's
            reaction = _error("barco.producer.unknown-opcode") if not extra else reactions.error_or_close(
                "barco.producer.unknown-opcode", codes=(wire.SERVER_ERROR,), prefer={ERROR},
                clauses={"close": "barco.framing.body-consumed", "keepalive": "barco.framing.body-consumed"})
            return m(wire.frame(op, extra, sid), reaction, "opcode")
        if operator == "barco-second-startup":
            return m(wire.frame(wire.STARTUP, b"", sid), _error("barco.producer.second-startup"), "opcode")
        if operator == "bad-crc":
            frame = bytearray(wire.frame(wire.PRODUCE, body, sid))
            frame[9 + rng.randrange(4)] ^= 1 << rng.randrange(8)
            return m(bytes(frame), _close("barco.framing.header-crc"), "head crc")
        if operator == "barco-version":
            version = rng.choice([0, 2, 255])
            return m(wire.frame(wire.PRODUCE, body, sid, version=version), _close("barco.framing.version"), "barco-version")
        if operator == "oversize":
            length = rng.choice([wire.MAX_BODY + 1, 1 << 25, 0xFFFFFFFF])
            if length == 0xFFFFFFFF:
                return m(wire.header(wire.PRODUCE, length, sid), OVERSIZE_REFUSED, "body length")
            # up to 32 MiB the limit is the operator's (POLAR_MAX_MESSAGE_SIZE): waiting for the body conforms too
            return m(wire.header(wire.PRODUCE, length, sid), OVERSIZE_MAY_WAIT, "body length", incomplete=True)
        if operator == "trailing-bytes":
            return m(wire.frame(wire.PRODUCE, body + rng.randbytes(rng.randrange(1, 4)), sid),
                     _error_stays_open("barco.producer.message-lengths"), "messages")
        if operator == "barco-message-overrun":
            last = len(body) - len(messages[-1]) - 4
            lie = struct.pack(">I", len(messages[-1]) + rng.randrange(1, 1000))
            return m(wire.frame(wire.PRODUCE, body[:last] + lie + body[last + 4 :], sid),
                     _error_stays_open("barco.producer.message-lengths"), "messages[-1].length")
        if operator == "barco-no-messages":
            return m(wire.frame(wire.PRODUCE, wire.produce_body(self.topic, [], key), sid),
                     _error("barco.producer.no-messages"), "messages")
        if operator == "barco-topic":
            return m(wire.frame(wire.PRODUCE, wire.produce_body(rng.choice(INVALID_TOPICS), messages, key), sid),
                     _error("barco.producer.topic-valid"), "topic")
        if operator == "barco-truncated-topic":
            cut = 1 + len(key) + rng.randrange(0, 1 + len(self.topic))
            return m(wire.frame(wire.PRODUCE, body[:cut], sid), _error("barco.producer.truncated-body"), "topic")
        if operator == "barco-body-short":  # a consistent frame whose body stops early: refused, or fewer messages
            cut = rng.randrange(0, len(body))
            if cut < len(body) - len(wire.messages_part(messages)):  # inside the key or the topic: notes §2.5 "EOF"
                return m(wire.frame(wire.PRODUCE, body[:cut], sid), _error("barco.producer.truncated-body"), "topic")
            return m(wire.frame(wire.PRODUCE, body[:cut], sid),
                     _answer_stays_open("barco.producer.message-lengths", codes={0}), "body length")
        if operator == "barco-body-long":  # more body promised than sent: the target waits or closes
            frame = wire.header(wire.PRODUCE, len(body) + rng.randrange(1, 100), sid) + body
            return m(frame, reactions.silence_allowed(NO_HANG, patience=0.05), "body length", incomplete=True)
        if operator == "barco-timestamp":
            ts = rng.randrange(-(2**63), 2**63)
            return m(wire.produce(self.topic, messages, key, sid, ts), _answer("barco.producer.timestamp"), "flags")
        if operator == "barco-flags":
            flags = rng.randrange(1, 128) << 1
            return m(wire.frame(wire.PRODUCE, body, sid, flags=flags), _answer("barco.producer.produce-ack"), "flags")
        if operator == "barco-empty-message":
            return m(wire.frame(wire.PRODUCE, wire.produce_body(self.topic, [b""] + messages, key), sid),
                     _answer("barco.producer.empty-message"), "messages[0]")
        if operator == "barco-pipelined":  # two frames in one mutant would need two answers: send a heartbeat-sized one
            return m(wire.frame(wire.HEARTBEAT, b"", sid), _answer("barco.framing.pipelining"))
        raise ValueError(f"unknown operator {operator!r}")


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
