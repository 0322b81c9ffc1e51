"""RustLog values: valid JSON values of each wire kind (``protocols.rustlog.layers``) as Hypothesis strategies for
property-based cases, the requests the suite sends, and the wrong values of each kind every field must refuse."""

from __future__ import annotations

import base64
import random

from hypothesis import strategies as st

from wirecheck.protocols.rustlog.layers import REQUESTS, TOPIC_RE, U32_MAX, U64_MAX, Kind

#: the consumer group mutants commit for: a name of its own, since the topic may be a user's (configured mode)
FUZZ_GROUP = "wirecheck-fuzz"


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


def kind_key(kind: Kind) -> str:
    """The key of ``WRONG_VALUES`` for a field's wire kind."""
    return "b64list" if kind.name == "list" and kind.items and kind.items.name == "b64" else kind.name


#: (request type, field name) of every request field, by the key of its wrong values
FIELDS_BY_KIND: dict[str, list[tuple[str, str]]] = {}
for _type, _cls in REQUESTS.items():
    for _field in _cls.fields_desc:
        FIELDS_BY_KIND.setdefault(kind_key(_field.kind), []).append((_type, _field.name))


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
            for i, value in enumerate(WRONG_VALUES[kind_key(field.kind)]):
                mutated = dict(base)
                mutated[field.name] = value
                out.append((f"{kind}.{field.name}-wrong{i}", mutated))
    return out


def random_valid_request(rng: random.Random, topic: str, partitions: int) -> dict:
    """A valid request with random values (records, offsets, an unknown extra field, which is ignored)."""
    return rng.choice([
        {"type": "Produce", "topic": topic, "partition": rng.randrange(partitions),
         "records": [b64(rng.randbytes(rng.randrange(64))) for _ in range(rng.randrange(1, 6))]},
        {"type": "Fetch", "group_id": "", "topic": topic, "partition": rng.randrange(partitions),
         "offset": rng.choice([0, 1, rng.randrange(100), U64_MAX]), "max_bytes": rng.randrange(4096)},
        {"type": "OffsetCommit", "group": FUZZ_GROUP, "topic": topic, "partition": 0, "offset": rng.randrange(9)},
        {"type": "Ping", "extra": rng.random()},  # unknown extra fields are ignored
    ])


NOT_OBJECTS: list[tuple[str, bytes]] = [
    ("array", b'[{"type":"Ping"}]'), ("string", b'"Ping"'), ("number", b"42"), ("null", b"null"),
    ("true", b"true"), ("empty-object", b"{}"), ("type-number", b'{"type":1}'), ("type-null", b'{"type":null}'),
    ("type-object", b'{"type":{"name":"Ping"}}'), ("type-array", b'{"type":["Ping"]}'),
]

UNKNOWN_TYPES = ["Pingg", "ping", "PING", "", "Produce ", "ProduceResponse", "Pong", "Error", "Delete", "0x0A",
                 "A" * 1000]
