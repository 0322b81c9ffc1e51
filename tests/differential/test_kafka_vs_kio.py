"""Differential test: our definition-driven Kafka codec against kio, an independent codec (Aiven, PyPI).

For generated bodies of every request and response at every version both know: kio decodes our bytes, kio's
re-encoding is byte-for-byte ours, we decode kio's bytes back to the same value, and kio's decoded object,
field by field, equals our value. Examples per test follow the fuzz budget (``--fuzz=ci`` 25, ``nightly``
1,000); the whole file takes well under a minute at the CI budget.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocols import fields as f
from protocols.kafka import messages
from protocols.kafka.codec import NullableStruct, StructCodec, _Sized
from strategies import kafka as kafka_strategies

kio_index = pytest.importorskip("kio.index")
kio_serial = pytest.importorskip("kio.serial")
from kio.schema.errors import ErrorCode  # noqa: E402  (after the importorskip)
from kio.serial._introspect import EntityField, EntityTupleField, classify_field, get_field_tag  # noqa: E402
from kio.serial._introspect import is_optional  # noqa: E402

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def kio_versions(api_key: int) -> list[int]:
    try:
        name = kio_index.api_key_map[api_key]
    except KeyError:
        return []
    low, high = messages.versions(api_key)
    return sorted(v for v in kio_index.schema_name_map[name] if low <= v <= high)


def kio_class(api_key: int, version: int, kind: str):
    load = kio_index.load_request_schema if kind == "request" else kio_index.load_response_schema
    return load(api_key, version)


def to_value(item, codec):
    """A kio value as our codec's value (durations and instants back to milliseconds, enums to ints...)."""
    if isinstance(codec, _Sized):
        codec = codec.codec
    if item is None:  # kio maps the zero UUID and a -1 timestamp to None
        return uuid.UUID(int=0) if codec is f.UUID else (-1 if codec is f.INT64 else None)
    if isinstance(codec, StructCodec):
        return struct_value(item, codec)
    if isinstance(codec, NullableStruct):
        return struct_value(item, codec.inner)
    if isinstance(codec, f.ArrayCodec):
        return [to_value(element, codec.item) for element in item]
    if isinstance(item, datetime.timedelta):
        return round(item / datetime.timedelta(milliseconds=1))
    if isinstance(item, datetime.datetime):
        return round((item - EPOCH) / datetime.timedelta(milliseconds=1))
    if isinstance(item, enum.Enum):
        return item.value
    if isinstance(item, bool):
        return item
    if isinstance(item, int):
        return int(item)
    if isinstance(item, str):
        return str(item)
    if isinstance(item, (bytes, bytearray)):
        return bytes(item)
    if isinstance(item, float):
        return float(item)
    return item


def struct_value(obj, codec: StructCodec) -> dict:
    kio_fields = dataclasses.fields(obj)
    regular = [kf for kf in kio_fields if get_field_tag(kf) is None]
    tagged = {get_field_tag(kf): kf for kf in kio_fields if get_field_tag(kf) is not None}
    assert len(regular) == len(codec.regular), (
        f"{codec.name} v{codec.version}: kio has fields {[k.name for k in regular]}, "
        f"the definition {[name for name, _, _ in codec.regular]}")
    assert sorted(tagged) == sorted(codec.tagged), f"{codec.name}: tags differ"
    value = {name: to_value(getattr(obj, kf.name), field_codec)
             for (name, field_codec, _), kf in zip(codec.regular, regular)}
    for tag, (name, field_codec, _) in codec.tagged.items():
        value[name] = to_value(getattr(obj, tagged[tag].name), field_codec)
    return value


KNOWN_ERROR_CODES = {e.value for e in ErrorCode}
TIMESTAMP_SPAN = 2**41  # kio turns timestamps into datetimes via float seconds: exact up to here (year 2039)


def fit_primitive(item, kafka_type: str, optional: bool):
    """Move a value into kio's domain. kio types some integers (error codes as a closed enum, durations as
    timedelta, instants as non-negative datetimes); the wire allows more, so only these fields are narrowed."""
    if item is None:
        return item
    if kafka_type == "error_code" and item not in KNOWN_ERROR_CODES:
        return 0
    if kafka_type == "timedelta_i64":
        return max(-(10**15), min(10**15, item))
    if kafka_type == "datetime_i64" and not (optional and item == -1):
        return abs(item) % TIMESTAMP_SPAN
    return item


def fit_to_kio(value, codec, cls):
    """A copy of ``value`` (a body for ``codec``) narrowed to what kio's ``cls`` can represent."""
    if isinstance(codec, NullableStruct):
        codec = codec.inner
    if value is None:
        return None
    kio_fields = dataclasses.fields(cls)
    regular = [kf for kf in kio_fields if get_field_tag(kf) is None]
    tagged = {get_field_tag(kf): kf for kf in kio_fields if get_field_tag(kf) is not None}
    pairs = [(name, fc, kf) for (name, fc, _), kf in zip(codec.regular, regular)]
    pairs += [(name, fc, tagged[tag]) for tag, (name, fc, _) in codec.tagged.items() if tag in tagged]
    result = dict(value)
    for name, field_codec, kio_field in pairs:
        if name not in value:
            continue
        item = value[name]
        kind = classify_field(kio_field)
        if isinstance(kind, EntityTupleField):
            result[name] = None if item is None else [fit_to_kio(v, field_codec.item, kind.type_) for v in item]
        elif isinstance(kind, EntityField):
            result[name] = fit_to_kio(item, field_codec, kind.type_)
        else:
            kafka_type = kio_field.metadata["kafka_type"]
            optional = is_optional(kio_field)
            if kind.is_array:
                result[name] = None if item is None else [fit_primitive(v, kafka_type, False) for v in item]
            else:
                result[name] = fit_primitive(item, kafka_type, optional)
    return result


def kio_encode(cls, obj) -> bytes:
    buffer = io.BytesIO()
    kio_serial.entity_writer(cls)(buffer, obj)
    return buffer.getvalue()


CASES = [(kind, key) for key in messages.api_keys() if kio_versions(key) for kind in ("request", "response")]


@st.composite
def kio_message(draw, kind: str, api_key: int):
    version = draw(st.sampled_from(kio_versions(api_key)))
    body = draw(kafka_strategies.bodies(api_key, version, kind, records_strategy=kafka_strategies.record_batch_bytes(
        max_records=2)))
    return version, body


@pytest.mark.parametrize(("kind", "api_key"), CASES, ids=[f"{k}-{messages.api_name(a)}" for k, a in CASES])
def test_codec_agrees_with_kio(kind, api_key, data_strategy=None):
    @given(kio_message(kind, api_key))
    def check(example):
        version, body = example
        codec = messages.request_codec(api_key, version) if kind == "request" else messages.response_codec(
            api_key, version)
        cls = kio_class(api_key, version, kind)
        ours = codec.encode(fit_to_kio(body, codec, cls))
        canonical = codec.decode(ours)
        assert cls.__flexible__ == messages.flexible(api_key, version)
        decoded, size = kio_serial.entity_reader(cls)(ours, 0)
        assert size == len(ours), f"kio used {size} of our {len(ours)} bytes"
        theirs = kio_encode(cls, decoded)
        assert theirs == ours, f"kio re-encodes {theirs.hex()}\nwe encode      {ours.hex()}"
        assert codec.decode(theirs) == canonical
        assert struct_value(decoded, codec) == canonical

    check()


def test_kio_covers_most_apis():
    """The differential test is only worth something if it covers the APIs the suite uses."""
    covered = {key for _, key in CASES}
    for key in (0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 18, 19, 22):
        assert key in covered, messages.api_name(key)
