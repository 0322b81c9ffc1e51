"""RustLog requests, valid and mutated, derived from the layers' field kinds.

Two engines share the same knowledge:
- Hypothesis strategies (``valid_request``, ``invalid_request``, ``hostile_frame``) for property-based cases,
  which shrink a failure to a minimal frame;
- :class:`BulkMutator`, a seeded ``random.Random`` generator of plain bytes for the bulk fuzz case and the
  benchmark, thousands of mutants per second (scapy and Hypothesis are too slow for that loop).

Every mutant carries an :class:`Expect`: what the spec allows the target to do with it.
"""

from __future__ import annotations

import base64
import enum
import json
import random
import struct
from dataclasses import dataclass

from hypothesis import strategies as st

from protocols.rustlog.clauses import MAX_FRAME, MAX_PARTITIONS, MAX_RECORDS
from protocols.rustlog.layers import REQUESTS, U32_MAX, U64_MAX, Kind, encode_frame, encode_payload
from strategies.mutations import invalid_utf8_variants, length_lies


class Expect(enum.Enum):
    ERROR_OPEN = "an Error (400) and the connection stays open"
    CLOSE = "the connection closes (an Error frame first is optional)"
    ERROR_OPEN_OR_CLOSE = "an Error and the connection stays open, or the connection closes"
    ANSWER_OPEN = "any well-formed answer and the connection stays open"
    CLOSE_SILENTLY = "no answer: the frame never completes and we close our side"


@dataclass(frozen=True)
class Mutant:
    frame: bytes
    operator: str
    expect: Expect
    clause: str  # the clause a wrong reaction violates


# -- values of each kind -----------------------------------------------------------------------------------

TOPIC_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def topic_names(min_size: int = 1, max_size: int = 255) -> st.SearchStrategy[str]:
    return st.text(TOPIC_ALPHABET, min_size=min_size, max_size=max_size)


def payloads(max_size: int = 256) -> st.SearchStrategy[bytes]:
    # stack.md: st.binary(max_size=N) is tiny on average; draw the size first.
    return st.integers(0, max_size).flatmap(lambda n: st.binary(min_size=n, max_size=n))


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


def _kind_key(kind: Kind) -> str:
    return "b64list" if kind.name == "list" and kind.items and kind.items.name == "b64" else kind.name


def sample_request(kind: str, topic: str = "t", partition: int = 0) -> dict:
    """A valid request of each type, on a topic the caller created."""
    values = {"topic": topic, "partition": partition, "records": [b64(b"wirecheck")], "group_id": "g",
              "group": "g", "offset": 0, "max_bytes": 1024, "partition_count": 1}
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


def valid_request(topics: list[str], partitions: int = 1) -> st.SearchStrategy[dict]:
    """Any well-formed request against existing topics (the answer may still be an Error, e.g. 416)."""
    topic = st.sampled_from(topics)
    partition = st.integers(0, partitions - 1)
    offset = st.one_of(st.integers(0, 50), st.just(U64_MAX))
    records = st.lists(payloads(64).map(b64), max_size=8)
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("Produce"), "topic": topic, "partition": partition,
                               "records": records}),
        st.fixed_dictionaries({"type": st.just("Fetch"), "group_id": st.text(max_size=8), "topic": topic,
                               "partition": partition, "offset": offset, "max_bytes": st.integers(0, 1 << 20)}),
        st.fixed_dictionaries({"type": st.just("OffsetCommit"), "group": st.text(max_size=8), "topic": topic,
                               "partition": partition, "offset": offset}),
        st.fixed_dictionaries({"type": st.just("OffsetFetch"), "group": st.text(max_size=8), "topic": topic,
                               "partition": partition}),
        st.fixed_dictionaries({"type": st.just("DescribeTopic"), "topic": topic}),
        st.fixed_dictionaries({"type": st.just("DescribePartition"), "topic": topic, "partition": partition}),
        st.sampled_from([{"type": "ListTopics"}, {"type": "MetricsFetch"}, {"type": "Ping"}]),
    )


def invalid_request(topic: str) -> st.SearchStrategy[dict]:
    """A request with exactly one field missing or of the wrong type/range: always a 400, connection open."""
    return st.sampled_from(invalid_field_variants(topic)).map(lambda pair: pair[1])


@st.composite
def hostile_frame(draw, topic: str = "t") -> Mutant:
    """A whole frame broken at the framing level or the JSON level, with its expectation."""
    kind = draw(st.sampled_from(sorted(REQUESTS)))
    payload = encode_payload(sample_request(kind, topic))
    choice = draw(st.sampled_from(["truncate-json", "invalid-utf8", "not-object", "unknown-type", "bad-field"]))
    if choice == "truncate-json":
        cut = draw(st.integers(1, len(payload) - 1))
        return Mutant(encode_frame(payload[:cut]), choice, Expect.CLOSE, "rustlog.framing.malformed-json")
    if choice == "invalid-utf8":
        variant = draw(st.sampled_from(invalid_utf8_variants(payload)))
        return Mutant(encode_frame(variant), choice, Expect.CLOSE, "rustlog.framing.invalid-utf8")
    if choice == "not-object":
        _, body = draw(st.sampled_from(NOT_OBJECTS))
        return Mutant(encode_frame(body), choice, Expect.ERROR_OPEN_OR_CLOSE, "rustlog.request.not-object")
    if choice == "unknown-type":
        name = draw(st.sampled_from(UNKNOWN_TYPES))
        return Mutant(encode_frame({"type": name}), choice, Expect.ERROR_OPEN, "rustlog.request.unknown-type")
    request = draw(invalid_request(topic))
    return Mutant(encode_frame(request), choice, Expect.ERROR_OPEN, "rustlog.request.invalid-fields")


# -- bulk mutation (no Hypothesis, no scapy) ---------------------------------------------------------------


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
            {"type": "OffsetCommit", "group": "g", "topic": self.topic, "partition": 0, "offset": rng.randrange(9)},
            {"type": "Ping", "extra": rng.random()},  # unknown extra fields are ignored
        ])
        return Mutant(encode_frame(request), "valid", Expect.ANSWER_OPEN, "rustlog.robustness.no-hang")

    def _bad_field(self) -> Mutant:
        name, request = self.rng.choice(self._variants)
        return Mutant(encode_frame(request), f"bad-field:{name}", Expect.ERROR_OPEN, "rustlog.request.invalid-fields")

    def _unknown_type(self) -> Mutant:
        return Mutant(encode_frame({"type": self.rng.choice(UNKNOWN_TYPES)}), "unknown-type", Expect.ERROR_OPEN,
                      "rustlog.request.unknown-type")

    def _not_object(self) -> Mutant:
        name, body = self.rng.choice(NOT_OBJECTS)
        return Mutant(encode_frame(body), f"not-object:{name}", Expect.ERROR_OPEN_OR_CLOSE,
                      "rustlog.request.not-object")

    def _truncated_json(self) -> Mutant:
        payload = self._payload()
        return Mutant(encode_frame(payload[: self.rng.randrange(1, len(payload))]), "truncated-json", Expect.CLOSE,
                      "rustlog.framing.malformed-json")

    def _invalid_utf8(self) -> Mutant:
        variant = self.rng.choice(invalid_utf8_variants(self._payload()))
        return Mutant(encode_frame(variant), "invalid-utf8", Expect.CLOSE, "rustlog.framing.invalid-utf8")

    def _boundary(self) -> Mutant:
        rng = self.rng
        request = rng.choice([
            {"type": "CreateTopic", "topic": self.topic, "partition_count": rng.choice([0, MAX_PARTITIONS + 1])},
            {"type": "CreateTopic", "topic": rng.choice(["", "x" * 256, "a b", "a.b"]), "partition_count": 1},
            {"type": "Produce", "topic": self.topic, "partition": 0, "records": ["AA=="] * (MAX_RECORDS + 1)},
            {"type": "Produce", "topic": self.topic, "partition": 0, "records": [rng.choice(["A", "AA=", "A===",
                                                                                               "@@@@"])]},
        ])
        return Mutant(encode_frame(request), "boundary", Expect.ERROR_OPEN, "rustlog.request.invalid-fields")

    def _length_lie(self) -> Mutant:
        frame = encode_frame(self._payload())
        lie = self.rng.choice(length_lies(frame, header=4, fmt=">I", max_body=MAX_FRAME))
        # A shorter length frames a prefix of the JSON (malformed: close); a longer one never completes.
        return Mutant(lie.data, f"length-lie:{lie.name}",
                      Expect.CLOSE if lie.shorter else Expect.CLOSE_SILENTLY, "rustlog.framing.malformed-json")

    def _oversize(self) -> Mutant:
        length = self.rng.choice([MAX_FRAME + 1, MAX_FRAME + 4096, 0x7FFFFFFF, 0xFFFFFFFF])
        return Mutant(struct.pack(">I", length) + b"{}", "oversize", Expect.CLOSE, "rustlog.framing.oversize")

    def _zero_length(self) -> Mutant:
        return Mutant(struct.pack(">I", 0), "zero-length", Expect.CLOSE, "rustlog.framing.zero-length")

    def _deep_nesting(self) -> Mutant:
        depth = self.rng.choice([65, 1000, 100_000])
        body = b'{"type":"Ping","x":' + b"[" * depth + b"]" * depth + b"}"
        return Mutant(encode_frame(body), f"deep-nesting:{depth}", Expect.ANSWER_OPEN, "rustlog.robustness.no-hang")


def to_json(mutant: Mutant) -> str:
    """A mutant as one JSON line (for crash files and reproducers)."""
    return json.dumps({"operator": mutant.operator, "expect": mutant.expect.name, "clause": mutant.clause,
                       "frame_hex": mutant.frame.hex()})
