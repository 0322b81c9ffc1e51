"""Kafka values: valid messages for any (api key, version) straight from the definitions, as Hypothesis strategies
(property-based cases, which shrink) and as a seeded ``random.Random`` walk of the same codecs (bulk mutants,
thousands a second), and record batches.

Valid values respect the definitions: fields exist only in their versions, null only where
``nullableVersions`` allows it, tagged fields only where ``taggedVersions`` allows them, integers in their
type's range (with the boundaries drawn often), strings and bytes of useful sizes (stack notes: Hypothesis'
default binary sizes are tiny, so sizes are drawn explicitly).
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass

from hypothesis import strategies as st

from wirecheck.protocols import compression
from wirecheck.protocols import fields as f
from wirecheck.protocols.kafka import messages, records
from wirecheck.protocols.kafka.codec import TAGGED, NullableStruct, StructCodec, _Sized

# ---------------------------------------------------------------------------------------------------------
# Valid values


@functools.cache
def _integers(low: int, high: int):
    """Integers in [low, high], with the boundaries (and 0, +-1) drawn often."""
    boundaries = sorted({v for v in (low, high, 0, -1, 1, low + 1, high - 1) if low <= v <= high})
    small = st.integers(max(low, -1000), min(high, 1000))
    return st.one_of(st.sampled_from(boundaries), small, st.integers(low, high))


# Strategies are built once and cached: building (and validating) strategy objects inside every draw costs
# more than drawing from them.


@functools.cache
def _exact_text(size: int):
    return st.text(min_size=size, max_size=size)


@functools.cache
def _exact_binary(size: int):
    return st.binary(min_size=size, max_size=size)


@functools.cache
def _sized_text(max_size: int):
    """Text whose length is drawn uniformly-ish (st.text's own sizes are tiny, see the stack notes)."""
    return st.integers(0, max_size).flatmap(_exact_text)


@functools.cache
def _sized_binary(max_size: int):
    return st.integers(0, max_size).flatmap(_exact_binary)


@functools.lru_cache(maxsize=None)
def value_strategy(codec, *, max_items: int = 3, max_text: int = 24, unknown_tags: bool = False,
                   records_strategy=None):
    """A strategy for values the codec accepts (a dict for a struct)."""
    if isinstance(codec, _Sized):
        codec = codec.codec
    if isinstance(codec, StructCodec):
        return _struct_strategy(codec, max_items, max_text, unknown_tags, records_strategy)
    if isinstance(codec, NullableStruct):
        return st.none() | value_strategy(codec.inner, max_items=max_items, max_text=max_text,
                                          unknown_tags=unknown_tags, records_strategy=records_strategy)
    if isinstance(codec, f.ArrayCodec):
        items = st.lists(value_strategy(codec.item, max_items=max(1, max_items - 1), max_text=max_text,
                                        unknown_tags=unknown_tags, records_strategy=records_strategy),
                         max_size=max_items)
        return st.none() | items if codec.nullable else items
    if isinstance(codec, f.LengthPrefixed):
        base = _sized_text(max_text) if codec.text else _sized_binary(max_text * 2)
        return st.none() | base if codec.nullable else base
    if codec is f.BOOL:
        return st.booleans()
    if codec is f.UUID:
        return st.one_of(st.just(uuid.UUID(int=0)), st.uuids())
    if codec is f.FLOAT64:
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(codec, f.FixedCodec):
        return _integers(codec.low, codec.high)
    raise TypeError(f"no strategy for codec {codec!r}")


def _struct_strategy(codec: StructCodec, max_items, max_text, unknown_tags, records_strategy):
    options = dict(max_items=max_items, max_text=max_text, unknown_tags=unknown_tags,
                   records_strategy=records_strategy)
    required = {}
    for name, field_codec, _ in codec.regular:
        definition = codec.defs[name]
        if definition.type == "records" and records_strategy is not None:
            inner = records_strategy
            required[name] = st.none() | inner if getattr(field_codec, "codec", field_codec).nullable else inner
        else:
            required[name] = value_strategy(field_codec, **options)
    optional = {name: value_strategy(field_codec, **options) for name, field_codec, _ in codec.tagged.values()}
    if codec.flexible and unknown_tags:
        first_free = max(codec.tagged, default=-1) + 1
        optional[TAGGED] = st.dictionaries(st.integers(first_free + 100, first_free + 10_000),
                                           _sized_binary(8), min_size=1, max_size=2)
    return st.fixed_dictionaries(required, optional=optional)


@functools.cache
def _key_choice(keys: tuple[int, ...]):
    return st.sampled_from(keys)


@functools.cache
def _version_range(low: int, high: int):
    return st.integers(low, high)


@st.composite
def api_and_version(draw, api_keys=None, kind: str = "request", include_removed: bool = False,
                    version_ranges=None):
    """(api key, version); ``version_ranges`` (api key -> (min, max)) narrows versions, e.g. to a target's."""
    keys = tuple(sorted(api_keys if api_keys is not None else messages.api_keys()))
    api_key = draw(_key_choice(keys))
    low, high = messages.versions(api_key)
    if include_removed:
        low = messages.encodable_versions(api_key).start  # 0, or a kio-only API's oldest kept version
    if version_ranges and api_key in version_ranges:
        low, high = version_ranges[api_key]
    version = draw(_version_range(low, high))
    return api_key, version


def bodies(api_key: int, version: int, kind: str = "request", **options):
    """Valid bodies (dicts) for one message."""
    codec = messages.request_codec(api_key, version) if kind == "request" else messages.response_codec(api_key,
                                                                                                      version)
    options.setdefault("records_strategy", DEFAULT_RECORDS)
    return value_strategy(codec, **options)


def layer_examples() -> dict:
    """Every message layer (protocols.kafka.layers.message_layers) -> a strategy of built body layers."""
    from wirecheck.protocols.kafka import layers

    return {cls.__name__: bodies(api_key, version, kind, unknown_tags=True).map(cls.from_value)
            for api_key, version, kind, cls in layers.body_classes()}


@dataclass(frozen=True)
class Message:
    api_key: int
    version: int
    kind: str
    body: dict


@st.composite
def any_message(draw, api_keys=None, kind: str = "request", include_removed: bool = False, version_ranges=None,
                **options) -> Message:
    """A valid message of any api key and version the definitions have."""
    api_key, version = draw(api_and_version(api_keys, kind, include_removed, version_ranges))
    return Message(api_key, version, kind, draw(bodies(api_key, version, kind, **options)))


client_ids = st.one_of(st.none(), st.just("wirecheck"), _sized_text(16))
correlation_ids = st.integers(0, 2**31 - 1)


@st.composite
def request_frames(draw, api_keys=None, include_removed: bool = False, **options) -> bytes:
    message = draw(any_message(api_keys, "request", include_removed, **options))
    return messages.encode_request(message.api_key, message.version, draw(correlation_ids), draw(client_ids),
                                   message.body)


# ---------------------------------------------------------------------------------------------------------
# Record batches


_HEADERS = st.lists(st.tuples(_sized_text(8), st.none() | _sized_binary(8)), max_size=2)
_KEYS = st.none() | _sized_binary(16)
_TIMESTAMP_DELTAS = st.integers(0, 10_000)


@functools.cache
def _values(max_value: int):
    return st.none() | _sized_binary(max_value)


@st.composite
def record_lists(draw, max_records: int = 4, max_value: int = 64):
    count = draw(st.integers(1, max_records))
    values = _values(max_value)
    return [records.Record(value=draw(values), key=draw(_KEYS), headers=draw(_HEADERS), offset_delta=index,
                           timestamp_delta=draw(_TIMESTAMP_DELTAS)) for index in range(count)]


_BASE_OFFSETS = st.sampled_from([0, 0, 1, 2**40])
_BASE_TIMESTAMPS = st.integers(0, 2**41)
_PRODUCER_IDS = st.sampled_from([-1, -1, 0, 1000])
_PRODUCER_EPOCHS = st.sampled_from([-1, 0, 5])
_SEQUENCES = st.sampled_from([-1, 0, 7])
_LEADER_EPOCHS = st.sampled_from([-1, 0])


@functools.cache
def _codec_choice(codecs: tuple[int, ...]):
    return st.sampled_from(codecs)


@st.composite
def record_batches(draw, max_records: int = 4, codecs=tuple(compression.NAMES)) -> records.RecordBatch:
    return records.RecordBatch(
        records=draw(record_lists(max_records)),
        base_offset=draw(_BASE_OFFSETS),
        compression=draw(_codec_choice(tuple(codecs))),
        base_timestamp=draw(_BASE_TIMESTAMPS),
        producer_id=draw(_PRODUCER_IDS),
        producer_epoch=draw(_PRODUCER_EPOCHS),
        base_sequence=draw(_SEQUENCES),
        partition_leader_epoch=draw(_LEADER_EPOCHS),
    )


def record_batch_bytes(max_records: int = 4, codecs=tuple(compression.NAMES)):
    return record_batches(max_records, codecs).map(records.encode_batch)


DEFAULT_RECORDS = record_batch_bytes(max_records=2)


# ---------------------------------------------------------------------------------------------------------
# Bulk generation without Hypothesis: a seeded random.Random walks the same codecs. Hypothesis spends ~0.1 ms
# per draw on bookkeeping (shrinking needs it); bulk cases need thousands of frames per second and replay by
# seed instead of shrinking.

_BOUNDARY_PICKS = (0, 1, -1)


def random_value(rng, codec, depth: int = 0, max_items: int = 3, max_text: int = 24):
    """A valid value for ``codec`` drawn from ``rng`` (a ``random.Random``)."""
    if isinstance(codec, _Sized):
        codec = codec.codec
    if isinstance(codec, StructCodec):
        value = {name: random_value(rng, c, depth + 1, max_items, max_text) for name, c, _ in codec.regular}
        for name, c, _ in codec.tagged.values():
            if rng.random() < 0.3:
                value[name] = random_value(rng, c, depth + 1, max_items, max_text)
        return value
    if isinstance(codec, NullableStruct):
        return None if rng.random() < 0.2 else random_value(rng, codec.inner, depth, max_items, max_text)
    if isinstance(codec, f.ArrayCodec):
        if codec.nullable and rng.random() < 0.1:
            return None
        count = rng.randint(0, max(0, max_items - depth))
        return [random_value(rng, codec.item, depth + 1, max_items, max_text) for _ in range(count)]
    if isinstance(codec, f.LengthPrefixed):
        if codec.nullable and rng.random() < 0.15:
            return None
        size = rng.randint(0, max_text)
        if codec.text:
            return "".join(chr(rng.choice((rng.randint(0x20, 0x7E), rng.randint(0xA0, 0x2FFF)))) for _ in range(size))
        return rng.randbytes(size)
    if codec is f.BOOL:
        return rng.random() < 0.5
    if codec is f.UUID:
        return uuid.UUID(int=rng.getrandbits(128))
    if codec is f.FLOAT64:
        return rng.uniform(-1e9, 1e9)
    if isinstance(codec, f.FixedCodec):
        roll = rng.random()
        if roll < 0.2:
            return rng.choice((codec.low, codec.high))
        if roll < 0.4 and codec.low < 0:
            return rng.choice(_BOUNDARY_PICKS)
        return rng.randint(codec.low, codec.high)
    raise TypeError(f"no generator for codec {codec!r}")


def random_request(rng, api_keys=None, version_ranges=None) -> tuple[int, int, dict]:
    """(api key, version, valid body). ``version_ranges`` (api key -> (min, max)) narrows the versions, e.g.
    to what a target advertises; by default the definitions' ranges."""
    keys = sorted(api_keys if api_keys is not None else messages.api_keys())
    api_key = rng.choice(keys)
    low, high = (version_ranges or {}).get(api_key, messages.versions(api_key))
    version = rng.randint(low, high)
    return api_key, version, random_value(rng, messages.request_codec(api_key, version))
