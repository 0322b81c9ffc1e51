"""RustLog requests, valid and mutated, derived from the layers' field kinds.

Two engines share the same knowledge:
- Hypothesis strategies (``valid_request``, ``hostile_frame``) for property-based cases,
  which shrink a failure to a minimal frame;
- :class:`BulkMutator`, a seeded ``random.Random`` generator of plain bytes for the bulk engine
  (strategies/engine.py), thousands of mutants per second (scapy and Hypothesis are too slow for that loop).

Every mutant carries a :class:`~protocols.reactions.Reaction`: what the spec allows the target to do with it.
:class:`RustLogFuzz` is the protocol's adapter for the bulk engine.
"""

from __future__ import annotations

import base64
import json
import random
import struct

from hypothesis import strategies as st

from wirecheck.protocols import reactions
from wirecheck.protocols.reactions import ANSWER, ERROR, MALFORMED, Lazy, Observation
from wirecheck.protocols.rustlog import PING, SPEC
from wirecheck.protocols.rustlog.clauses import CATALOGUE, MAX_FRAME, MAX_PARTITIONS, MAX_RECORDS
from wirecheck.protocols.rustlog.layers import (REQUESTS, TOPIC_RE, U32_MAX, U64_MAX, FrameDecodeError, Kind, decode_frame,
                                      encode_frame, encode_payload)
from wirecheck.strategies import operators
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.mutations import invalid_utf8_variants, length_lies

NO_HANG = "rustlog.robustness.no-hang"
STAYS_OPEN = "rustlog.request.stays-open"
#: the consumer group mutants commit for: a name of its own, since the topic may be a user's (configured mode)
FUZZ_GROUP = "wirecheck-fuzz"
SILENT_WAIT = 0.25  # seconds we give a target to (wrongly) answer a frame that never completed


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


for _name, _family, _doc in (
        ("bad-field", "wrong-type", "one request field missing or of the wrong JSON type or range"),
        ("unknown-type", "unknown-enum", "an unknown message type"),
        ("not-object", "wrong-type", "a JSON value that is not an object, or a type of the wrong JSON type"),
        ("truncated-json", "truncation", "the JSON cut short, the frame length true"),
        ("boundary-value", "boundary-int", "a value at or past a limit the spec states"),
        ("deep-nesting", "nesting", "valid JSON nested absurdly deep")):
    operators.register(_name, _family, _doc)


# -- values of each kind -----------------------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


#: Values of the wrong JSON type or range for each kind: every one must be rejected with 400.
WRONG_VALUES: dict[str, list] = {
    "u32": [-1, U32_MAX + 1, 1.0, 0.5, "0", True, None, [], {}, 1e3],
    "u64": [-1, U64_MAX + 1, 1.0, "0", False, None, [0], {}, 2.0**64],
    "usize": [-1, U64_MAX + 1, 1.5, "1", True, None],
    "string": [0, True, None, [], {}],
    "topic": ["", "a" * 256, "bad topic", "bad/topic", "bad.topic", "caf\u00e9", 0, None, [], {}],
    "b64list": ["SGVsbG8=", [0], ["SGVsbG8"], ["SGVs bG8="], ["SGVsbG8=="], ["S-_y"], [None], {}, None],
}


_INTEGER_MAX = {"u16": 0xFFFF, "u32": U32_MAX, "u64": U64_MAX, "usize": U64_MAX}


def kind_values(kind: Kind) -> st.SearchStrategy:
    """Valid JSON values of a wire kind (what ``Kind.problems`` accepts)."""
    if kind.nullable:
        return st.none() | kind_values(Kind(kind.name, items=kind.items, struct=kind.struct))
    if kind.name in _INTEGER_MAX:
        return st.integers(0, _INTEGER_MAX[kind.name])
    simple = {"string": st.text(max_size=24), "topic": st.from_regex(TOPIC_RE, fullmatch=True),
              "bool": st.booleans(), "b64": st.binary(max_size=24).map(b64),
              "any-object": st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=3)}
    if kind.name in simple:
        return simple[kind.name]
    if kind.name == "list":
        return st.lists(kind_values(kind.items), max_size=3)
    return st.fixed_dictionaries({field.name: kind_values(field.kind) for field in kind.struct})


def layer_examples() -> dict:
    """Every message layer (protocols.rustlog.layers.message_layers) -> a strategy of built layers."""
    from wirecheck.protocols.rustlog import layers

    return {name: st.fixed_dictionaries({field.name: kind_values(field.kind) for field in cls.fields_desc})
            .map(lambda values, cls=cls: cls(**values)) for name, cls in layers.message_layers().items()}


def _kind_key(kind: Kind) -> str:
    return "b64list" if kind.name == "list" and kind.items and kind.items.name == "b64" else kind.name


def sample_request(kind: str, topic: str = "t", partition: int = 0) -> dict:
    """A valid request of each type, on a topic the caller created."""
    values = {"topic": topic, "partition": partition, "records": [b64(b"wirecheck")], "group_id": FUZZ_GROUP,
              "group": FUZZ_GROUP, "offset": 0, "max_bytes": 1024, "partition_count": 1}
    cls = REQUESTS[kind]
    return {"type": kind, **{f.name: values[f.name] for f in cls.fields_desc}}


def invalid_field_variants(topic: str) -> list[tuple[str, dict]]:
    """(id, request) for every request field: missing, and each wrong value of its kind."""
    out = []
    for kind, cls in REQUESTS.items():
        for field in cls.fields_desc:
            base = sample_request(kind, topic)
            missing = dict(base)
            del missing[field.name]
            out.append((f"{kind}.{field.name}-missing", missing))
            for i, value in enumerate(WRONG_VALUES[_kind_key(field.kind)]):
                mutated = dict(base)
                mutated[field.name] = value
                out.append((f"{kind}.{field.name}-wrong{i}", mutated))
    return out


NOT_OBJECTS: list[tuple[str, bytes]] = [
    ("array", b'[{"type":"Ping"}]'), ("string", b'"Ping"'), ("number", b"42"), ("null", b"null"),
    ("true", b"true"), ("empty-object", b"{}"), ("type-number", b'{"type":1}'), ("type-null", b'{"type":null}'),
    ("type-object", b'{"type":{"name":"Ping"}}'), ("type-array", b'{"type":["Ping"]}'),
]

UNKNOWN_TYPES = ["Pingg", "ping", "PING", "", "Produce ", "ProduceResponse", "Pong", "Error", "Delete", "0x0A",
                 "A" * 1000]


# -- Hypothesis strategies ---------------------------------------------------------------------------------


#: a topic *name* (a string) that breaks the naming rule is these clauses' concern, not a wrong field kind: a
#: Produce may answer it 404 (produce.topic-name, decision D4), so a bad-field reaction must not blame that
NAME_CLAUSES = {"CreateTopic.topic": "rustlog.admin.topic-name", "Produce.topic": "rustlog.produce.topic-name"}


def invalid_field_reaction(name: str, request: dict) -> reactions.Reaction:
    """The reaction to one of invalid_field_variants: a bad name is its naming clause's, else invalid-fields."""
    field = name.rsplit("-", 1)[0]
    if field in NAME_CLAUSES and isinstance(request.get("topic"), str):
        return _NAME_REACTIONS[field]
    return INVALID_FIELDS


@st.composite
def hostile_frame(draw, topic: str = "t") -> Mutant:
    """A whole frame broken at the framing level or the JSON level, with its reaction."""
    kind = draw(st.sampled_from(sorted(REQUESTS)))
    payload = encode_payload(sample_request(kind, topic))
    choice = draw(st.sampled_from(["truncate-json", "invalid-utf8", "not-object", "unknown-type", "bad-field"]))
    if choice == "truncate-json":
        cut = draw(st.integers(1, len(payload) - 1))
        return Mutant(encode_frame(payload[:cut]), "truncated-json", "body", closes("rustlog.framing.malformed-json"))
    if choice == "invalid-utf8":
        variant = draw(st.sampled_from(invalid_utf8_variants(payload)))
        return Mutant(encode_frame(variant), choice, "body", closes("rustlog.framing.invalid-utf8"))
    if choice == "not-object":
        _, body = draw(st.sampled_from(NOT_OBJECTS))
        return Mutant(encode_frame(body), choice, "body", error_or_close("rustlog.request.not-object"))
    if choice == "unknown-type":
        name = draw(st.sampled_from(UNKNOWN_TYPES))
        return Mutant(encode_frame({"type": name}), choice, "type", error_400("rustlog.request.unknown-type"))
    name, request = draw(st.sampled_from(invalid_field_variants(topic)))
    return Mutant(encode_frame(request), choice, request["type"], invalid_field_reaction(name, request))


# -- bulk mutation (no Hypothesis, no scapy) ---------------------------------------------------------------

#: Reactions shared by many mutants (built once: the bulk loop makes thousands of mutants per second).
INVALID_FIELDS = error_400("rustlog.request.invalid-fields")
UNKNOWN_TYPE = error_400("rustlog.request.unknown-type")
_NAME_REACTIONS = {field: error_400(clause) for field, clause in NAME_CLAUSES.items()}
NOT_OBJECT = error_or_close("rustlog.request.not-object")
MALFORMED_JSON = closes("rustlog.framing.malformed-json")
INVALID_UTF8 = closes("rustlog.framing.invalid-utf8")
OVERSIZE = closes("rustlog.framing.oversize")
ZERO_LENGTH = closes("rustlog.framing.zero-length")
NEVER_COMPLETES = no_answer()
MAX_FRAME_WAITS = no_answer("rustlog.framing.max-size-accepted")
SURVIVES = any_answer()
#: Nesting depth is implementation-defined (serde_json stops at 128): an answer, an Error or a close all conform;
#: the liveness probe after the batch is what catches a crash.
DEEP_NESTING = reactions.answer_or_close(NO_HANG, "nesting depth is implementation-defined", keeps_open=False,
                                         clauses={"silence": NO_HANG, "keepalive": STAYS_OPEN})


class BulkMutator:
    """Seeded, fast mutants of valid requests; the same seed gives the same sequence."""

    def __init__(self, rng: random.Random, topic: str, partitions: int = 1):
        self.rng = rng
        self.topic = topic
        self.partitions = partitions
        self._variants = invalid_field_variants(topic)
        self._ops = [
            (30, self._bad_field), (12, self._valid), (10, self._unknown_type), (8, self._not_object),
            (10, self._truncated_json), (8, self._invalid_utf8), (6, self._boundary), (6, self._length_lie),
            (4, self._oversize), (3, self._zero_length), (3, self._deep_nesting),
        ]
        self._weights = [w for w, _ in self._ops]

    def __iter__(self):
        return self

    def __next__(self) -> Mutant:
        (op,) = self.rng.choices([op for _, op in self._ops], self._weights)
        return op()

    def _payload(self) -> bytes:
        kind = self.rng.choice(list(REQUESTS))
        return encode_payload(sample_request(kind, self.topic, self.rng.randrange(self.partitions)))

    def _valid(self) -> Mutant:
        rng = self.rng
        request = rng.choice([
            {"type": "Produce", "topic": self.topic, "partition": rng.randrange(self.partitions),
             "records": [b64(rng.randbytes(rng.randrange(64))) for _ in range(rng.randrange(1, 6))]},
            {"type": "Fetch", "group_id": "", "topic": self.topic, "partition": rng.randrange(self.partitions),
             "offset": rng.choice([0, 1, rng.randrange(100), U64_MAX]), "max_bytes": rng.randrange(4096)},
            {"type": "OffsetCommit", "group": FUZZ_GROUP, "topic": self.topic, "partition": 0,
             "offset": rng.randrange(9)},
            {"type": "Ping", "extra": rng.random()},  # unknown extra fields are ignored
        ])
        return Mutant(encode_frame(request), "valid", request["type"], SURVIVES)

    def _bad_field(self) -> Mutant:
        name, request = self.rng.choice(self._variants)
        return Mutant(encode_frame(request), f"bad-field:{name}", name.rsplit("-", 1)[0],
                      invalid_field_reaction(name, request))

    def _unknown_type(self) -> Mutant:
        return Mutant(encode_frame({"type": self.rng.choice(UNKNOWN_TYPES)}), "unknown-type", "type", UNKNOWN_TYPE)

    def _not_object(self) -> Mutant:
        name, body = self.rng.choice(NOT_OBJECTS)
        return Mutant(encode_frame(body), f"not-object:{name}", "body", NOT_OBJECT)

    def _truncated_json(self) -> Mutant:
        payload = self._payload()
        return Mutant(encode_frame(payload[: self.rng.randrange(1, len(payload))]), "truncated-json", "body",
                      MALFORMED_JSON)

    def _invalid_utf8(self) -> Mutant:
        variant = self.rng.choice(invalid_utf8_variants(self._payload()))
        return Mutant(encode_frame(variant), "invalid-utf8", "body", INVALID_UTF8)

    def _boundary(self) -> Mutant:
        rng = self.rng
        # each field's limit has a clause of its own: a wrong answer breaks that clause, not invalid-fields
        field, request, clause = rng.choice([
            ("CreateTopic.partition_count", {"type": "CreateTopic", "topic": self.topic,
                                             "partition_count": rng.choice([0, MAX_PARTITIONS + 1])},
             "rustlog.admin.partition-count"),
            ("CreateTopic.topic", {"type": "CreateTopic", "topic": rng.choice(["", "x" * 256, "a b", "a.b"]),
                                   "partition_count": 1}, "rustlog.admin.topic-name"),
            ("Produce.records", {"type": "Produce", "topic": self.topic, "partition": 0,
                                 "records": ["AA=="] * (MAX_RECORDS + 1)}, "rustlog.produce.record-limit"),
            ("Produce.records[0]", {"type": "Produce", "topic": self.topic, "partition": 0,
                                    "records": [rng.choice(["A", "AA=", "A===", "@@@@"])]},
             "rustlog.produce.invalid-base64"),
        ])
        return Mutant(encode_frame(request), "boundary-value", field, error_400(clause))

    def _length_lie(self) -> Mutant:
        frame = encode_frame(self._payload())
        lie = self.rng.choice(length_lies(frame, header=4, fmt=">I", max_body=MAX_FRAME))
        # A shorter length frames a prefix of the JSON (malformed: close); a longer one never completes.
        if lie.shorter:
            return Mutant(lie.data, f"length-lie:{lie.name}", "length", MALFORMED_JSON)
        # a claim of exactly MAX_FRAME is a length the target must accept and wait out (max-size-accepted)
        waits = MAX_FRAME_WAITS if struct.unpack_from(">I", lie.data)[0] == MAX_FRAME else NEVER_COMPLETES
        return Mutant(lie.data, f"length-lie:{lie.name}", "length", waits, incomplete=True)

    def _oversize(self) -> Mutant:
        length = self.rng.choice([MAX_FRAME + 1, MAX_FRAME + 4096, 0x7FFFFFFF, 0xFFFFFFFF])
        return Mutant(struct.pack(">I", length) + b"{}", "oversize", "length", OVERSIZE)

    def _zero_length(self) -> Mutant:
        return Mutant(struct.pack(">I", 0), "zero-length", "length", ZERO_LENGTH)

    def _deep_nesting(self) -> Mutant:
        depth = self.rng.choice([65, 1000, 100_000])
        body = b'{"type":"Ping","x":' + b"[" * depth + b"]" * depth + b"}"
        return Mutant(encode_frame(body), f"deep-nesting:{depth}", "x", DEEP_NESTING)


# -- the adapter for the bulk engine ---------------------------------------------------------------------------


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

    def __init__(self, topic: str, partitions: int = 1):
        self.topic, self.partitions = topic, partitions

    def mutants(self, rng: random.Random) -> BulkMutator:
        return BulkMutator(rng, self.topic, self.partitions)

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
