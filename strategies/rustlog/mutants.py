"""RustLog bulk mutants: requests traced as JSON (``strategies.traced.trace_json``: each value's span in the
frame), one shared operator applied to a traced value (``strategies.rules``), and the reaction the spec permits
(seed §Connection Error Handling). ``hostile_frame`` draws one of them for property-based cases.
"""

from __future__ import annotations

import functools
import json
import random

from hypothesis import strategies as st

from wirecheck.protocols import reactions
from wirecheck.protocols.framing import U32_PREFIX
from wirecheck.protocols.reactions import ERROR
from wirecheck.protocols.rustlog.clauses import MAX_FRAME, MAX_PARTITIONS, MAX_RECORDS
from wirecheck.protocols.rustlog.layers import REQUESTS, encode_frame
from wirecheck.strategies import operators
from wirecheck.strategies.binary import Span, set_int
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.mutations import INVALID_UTF8
from wirecheck.strategies.rules import AS_IS, Rule, RuleMutator
from wirecheck.strategies.rustlog.values import (FIELDS_BY_KIND, NOT_OBJECTS, UNKNOWN_TYPES, WRONG_VALUES,
                                                 random_valid_request, sample_request)
from wirecheck.strategies.traced import TracedSeed, trace_json

NO_HANG = "rustlog.robustness.no-hang"
STAYS_OPEN = "rustlog.request.stays-open"
SILENT_WAIT = 0.25  # seconds we give a target to (wrongly) answer a frame that never completed

for _name, _family, _doc in (
        ("bad-field", "wrong-type", "one request field of the wrong JSON type or range"),
        ("unknown-type", "unknown-enum", "an unknown message type"),
        ("not-object", "wrong-type", "a JSON value that is not an object, or a type of the wrong JSON type"),
        ("boundary-value", "boundary-int", "a value at or past a limit the spec states"),
        ("deep-nesting", "nesting", "valid JSON nested absurdly deep")):
    operators.register(_name, _family, _doc, apply=operators.set_field)


# -- what the spec permits (seed §Connection Error Handling) -------------------------------------------------


#: codes that answer a request whose fields passed (not found, out of range): an invalid field answered with one
#: was taken for a value, which breaks the field's clause, not invalid-code
PROCESSED_CODES = frozenset({404, 405, 413, 416})


def error_400(clause: str) -> reactions.Reaction:
    """An Error with code 400, the connection staying open (another code is NON-STRICT: invalid-code)."""
    accepted = {f"code:{code}": clause for code in sorted(PROCESSED_CODES)}
    return reactions.error_answer(clause, {400}, clauses={"code": "rustlog.request.invalid-code", **accepted,
                                                          "silence": NO_HANG, "keepalive": STAYS_OPEN})


def any_answer(clause: str = NO_HANG) -> reactions.Reaction:
    return reactions.any_answer(clause, clauses={"silence": NO_HANG, "keepalive": STAYS_OPEN})


def closes(clause: str) -> reactions.Reaction:
    """The connection closes; an Error frame first is optional."""
    return reactions.close(clause, errors_first=True)


def error_or_close(clause: str) -> reactions.Reaction:
    """An Error and the connection stays open (preferred), or the connection closes (NON-STRICT)."""
    return reactions.error_or_close(clause, prefer={ERROR}, keeps_open=True,
                                    clauses={"silence": NO_HANG, "keepalive": clause})


def no_answer(clause: str = "rustlog.framing.partial-header") -> reactions.Reaction:
    """The frame never completes: no answer (we close our side; the target may close too)."""
    return reactions.silence_allowed(clause, "a frame that never completed", patience=SILENT_WAIT)


#: a topic *name* (a string) that breaks the naming rule is these clauses' concern, not a wrong field kind: a
#: Produce may answer it 404 (produce.topic-name, decision D4), so a bad-field reaction must not blame that
NAME_CLAUSES = {"CreateTopic.topic": "rustlog.admin.topic-name", "Produce.topic": "rustlog.produce.topic-name"}
#: every other request only looks a topic up: the seed states the naming rule for CreateTopic (and Produce) alone and
#: never says that validation comes before the lookup, so an invalid name may be refused (400) or not found (404)
LOOKUP_NAME_CODES = frozenset({400, 404})

#: Reactions shared by many mutants (built once: the bulk loop makes thousands of mutants per second).
INVALID_FIELDS = error_400("rustlog.request.invalid-fields")
UNKNOWN_TYPE = error_400("rustlog.request.unknown-type")
_NAME_REACTIONS = {field: error_400(clause) for field, clause in NAME_CLAUSES.items()}
LOOKUP_NAME = reactions.error_answer(
    "rustlog.request.invalid-fields", set(LOOKUP_NAME_CODES),
    clauses={"code": "rustlog.request.invalid-code", "silence": NO_HANG, "keepalive": STAYS_OPEN,
             **{f"code:{code}": "rustlog.request.invalid-fields" for code in sorted(PROCESSED_CODES - LOOKUP_NAME_CODES)}})
NOT_OBJECT = error_or_close("rustlog.request.not-object")
MALFORMED_JSON = closes("rustlog.framing.malformed-json")
INVALID_UTF8_CLOSES = closes("rustlog.framing.invalid-utf8")
OVERSIZE = closes("rustlog.framing.oversize")
ZERO_LENGTH = closes("rustlog.framing.zero-length")
NEVER_COMPLETES = no_answer()
MAX_FRAME_WAITS = no_answer("rustlog.framing.max-size-accepted")
SURVIVES = any_answer()
#: Nesting depth is implementation-defined (serde_json stops at 128): an answer, an Error or a close all conform;
#: the liveness probe after the batch is what catches a crash.
DEEP_NESTING = reactions.answer_or_close(NO_HANG, "nesting depth is implementation-defined", keeps_open=False,
                                         clauses={"silence": NO_HANG, "keepalive": STAYS_OPEN})


def _bad_field(seed: TracedSeed, span: Span, frame: bytes) -> reactions.Reaction:
    """A topic name that is a string but breaks the naming rule is its naming clause's, or for a lookup Error 400
    or 404 (LOOKUP_NAME_CODES); a topic of another JSON kind is invalid-fields."""
    if frame[span.start : span.start + 1] != b'"':
        return INVALID_FIELDS
    return _NAME_REACTIONS.get(span.path, LOOKUP_NAME)


def _stated(span: Span, frame: bytes) -> int:
    return int.from_bytes(frame[span.start : span.end], "big")


def _length_lie(seed: TracedSeed, span: Span, frame: bytes) -> reactions.Reaction:
    """A shorter length frames a prefix of the JSON (malformed: close); a longer one never completes, and a claim
    of exactly MAX_FRAME is a length the target must accept and wait out (max-size-accepted)."""
    stated = _stated(span, frame)
    if stated < len(frame) - span.end:
        return MALFORMED_JSON
    return MAX_FRAME_WAITS if stated == MAX_FRAME else NEVER_COMPLETES


def _promises_more(seed: TracedSeed, span: Span, frame: bytes) -> bool:
    return _stated(span, frame) > len(frame) - span.end


# -- seeds traced as JSON ---------------------------------------------------------------------------------------

LENGTH = Span("frame.length", "fixed", U32_PREFIX.length_offset, U32_PREFIX.header_size)


def traced_request(value, name: str | None = None) -> TracedSeed:
    """A frame of the JSON ``value`` (as ``encode_frame`` writes it) and its spans: ``frame``, ``frame.length`` and
    every JSON value's (``trace_json``), the root's path being ``name`` (default: the request's type)."""
    name = name or value["type"]
    payload, spans = trace_json(value, name, U32_PREFIX.header_size)
    frame = encode_frame(payload)
    return TracedSeed(name, frame, (Span("frame", "frame", 0, len(frame)), LENGTH, *spans))


@functools.lru_cache(maxsize=1024)
def _sample(kind: str, topic: str, partition: int = 0) -> TracedSeed:
    return traced_request(sample_request(kind, topic, partition))


def _json(*values) -> tuple[bytes, ...]:
    return tuple(json.dumps(value, separators=(",", ":")).encode() for value in values)


def _root(seed: TracedSeed, rng: random.Random) -> Span:
    return seed.field(seed.name)


def _inner(seed: TracedSeed, rng: random.Random) -> Span:
    """Any JSON value or member inside the root object."""
    root = seed.field(seed.name)
    return rng.choice([s for s in seed.spans if s.start > root.start and s.kind != "data"])


def _text(seed: TracedSeed, rng: random.Random) -> Span:
    """The text of any non-empty string value."""
    return rng.choice([s for s in seed.of_kind("data") if s.end > s.start])


def _member(seed: TracedSeed, rng: random.Random) -> Span:
    """Any member but the type."""
    return rng.choice([s for s in seed.of_kind("member") if s.path != f"{seed.name}.type"])


@functools.cache
def _field_of(kind: str):
    """A chooser of one request field of the wire kind (``values.kind_key``) in a seed of group ``kind:<kind>``."""
    paths: dict[str, list[str]] = {}
    for request, field in FIELDS_BY_KIND[kind]:
        paths.setdefault(request, []).append(f"{request}.{field}")

    def choose(seed: TracedSeed, rng: random.Random) -> Span:
        return seed.field(rng.choice(paths[seed.name]))

    return choose


# -- the rules: operator -> seeds, field, choices, re-framing, permitted reaction --------------------------------

_NOT_OBJECT_ROOTS = tuple(body for name, body in NOT_OBJECTS if not name.startswith("type-"))
_TYPES_NOT_STRINGS = tuple(_json(*(json.loads(body)["type"] for name, body in NOT_OBJECTS if name.startswith("type-"))))
_LIES = (lambda n: n - 1, lambda n: n // 2, lambda n: n + 1, lambda n: 2 * n, lambda n: MAX_FRAME)

RULES = {
    "valid": Rule("valid", "frame", SURVIVES, reframe=AS_IS),
    **{f"bad-field:{kind}": Rule(f"kind:{kind}", _field_of(kind), _bad_field if kind == "topic" else INVALID_FIELDS,
                                 _json(*values)) for kind, values in WRONG_VALUES.items()},
    "drop-field": Rule("with-fields", _member, INVALID_FIELDS),
    "unknown-type": Rule("Ping", "Ping.type", UNKNOWN_TYPE, _json(*UNKNOWN_TYPES)),
    "not-object": Rule("Ping", _root, NOT_OBJECT, _NOT_OBJECT_ROOTS),
    "not-object:type": Rule("Ping", "Ping.type", NOT_OBJECT, _TYPES_NOT_STRINGS),
    "truncate": Rule("request", _inner, MALFORMED_JSON),
    "invalid-utf8": Rule("request", _text, INVALID_UTF8_CLOSES, tuple(INVALID_UTF8)),
    # each limit has a clause of its own: a wrong answer breaks that clause, not invalid-fields
    "boundary-value:partition-count": Rule("CreateTopic", "CreateTopic.partition_count",
                                           error_400("rustlog.admin.partition-count"), _json(0, MAX_PARTITIONS + 1)),
    "boundary-value:topic-name": Rule("CreateTopic", "CreateTopic.topic", error_400("rustlog.admin.topic-name"),
                                      _json("", "x" * 256, "a b", "a.b")),
    "boundary-value:record-limit": Rule("Produce", "Produce.records", error_400("rustlog.produce.record-limit"),
                                        _json(["AA=="] * (MAX_RECORDS + 1))),
    "boundary-value:base64": Rule("Produce", "Produce.records[0]", error_400("rustlog.produce.invalid-base64"),
                                  _json("A", "AA=", "A===", "@@@@")),
    "length-lie": Rule("request", "frame.length", _length_lie, _LIES, AS_IS, _promises_more),
    "oversize": Rule("empty", "frame.length", OVERSIZE, (MAX_FRAME + 1, MAX_FRAME + 4096, 0x7FFFFFFF, 0xFFFFFFFF),
                     AS_IS),
    "zero-length": Rule("Ping", _root, ZERO_LENGTH),
    "deep-nesting": Rule("nested", "Ping.x", DEEP_NESTING, tuple(b"[" * d + b"]" * d for d in (65, 1000, 100_000))),
}

#: the share of each operator (of about 100): a wrong field most, as before the rules
_WRONG_COUNT = {kind: len(WRONG_VALUES[kind]) * len(fields) for kind, fields in FIELDS_BY_KIND.items()}
_MISSING_COUNT = sum(len(fields) for fields in FIELDS_BY_KIND.values())
_BAD_FIELDS = 30 / (sum(_WRONG_COUNT.values()) + _MISSING_COUNT)
WEIGHTS = {**{f"bad-field:{kind}": count * _BAD_FIELDS for kind, count in _WRONG_COUNT.items()},
           "drop-field": _MISSING_COUNT * _BAD_FIELDS, "valid": 12, "unknown-type": 10, "not-object": 4.8,
           "not-object:type": 3.2, "truncate": 10, "invalid-utf8": 8, "boundary-value:partition-count": 1.5,
           "boundary-value:topic-name": 1.5, "boundary-value:record-limit": 1.5, "boundary-value:base64": 1.5,
           "length-lie": 6, "oversize": 4, "zero-length": 3, "deep-nesting": 3}

#: the mutants a single frame proves (the property case's): no framing lies
HOSTILE = ("truncate", "invalid-utf8", "not-object", "not-object:type", "unknown-type", "drop-field",
           *(f"bad-field:{kind}" for kind in WRONG_VALUES))


class BulkMutator(RuleMutator):
    """Seeded, fast mutants of valid requests on ``topic``; the same seed gives the same sequence."""

    RULES = RULES
    OPERATORS = tuple(RULES)
    WEIGHTS = WEIGHTS
    POOL = 256  # valid requests kept and reused: tracing one costs more than mutating it

    def __init__(self, rng: random.Random, topic: str, partitions: int = 1, operators=OPERATORS):
        super().__init__(rng, operators)
        self.topic = topic
        self.partitions = partitions
        self._valid: list[TracedSeed] = []
        self._requests = list(REQUESTS)
        self._with_fields = [kind for kind, cls in REQUESTS.items() for _ in cls.fields_desc]
        self._of_kind = {kind: [request for request, _ in fields] for kind, fields in FIELDS_BY_KIND.items()}
        self._fixed = {"empty": traced_request({}, "body"), "nested": traced_request({"type": "Ping", "x": []})}

    def seed(self, group: str) -> TracedSeed:
        """A traced request of the group: "valid" (random values, from a pool grown by one in four draws until it
        is full), "request" (any type, any partition), "with-fields", "kind:<wire kind>" (a request with a field
        of that kind; as many draws as it has such fields), a request type, "empty" ({}), "nested"."""
        rng = self.rng
        if group == "valid":
            if len(self._valid) < self.POOL and (not self._valid or rng.random() < 0.25):
                self._valid.append(traced_request(random_valid_request(rng, self.topic, self.partitions)))
                return self._valid[-1]
            return rng.choice(self._valid)
        if group == "request":
            return _sample(rng.choice(self._requests), self.topic, rng.randrange(self.partitions))
        if group == "with-fields":
            return _sample(rng.choice(self._with_fields), self.topic)
        if group.startswith("kind:"):
            return _sample(rng.choice(self._of_kind[group.removeprefix("kind:")]), self.topic)
        if group in self._fixed:
            return self._fixed[group]
        return _sample(group, self.topic)

    def reframe(self, seed: TracedSeed, frame: bytes, mode: str) -> bytes:
        """The length prefix made true again (the only re-framing: RustLog frames carry no checksum)."""
        return set_int(frame, LENGTH, len(frame) - LENGTH.end)


@st.composite
def hostile_frame(draw, topic: str = "t") -> Mutant:
    """One mutant broken at the JSON level, with its reaction, for property-based cases: the operator and the seed
    are drawn, so failures shrink."""
    operator = draw(st.sampled_from(HOSTILE))
    return BulkMutator(random.Random(draw(st.integers(0, 2**32 - 1))), topic).mutant(operator)
