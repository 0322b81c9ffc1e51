"""kio's serializer as the oracle for every (api, version) that only kio's classes define (the Kafka 4 APIs).

Per message two deterministic witnesses built from kio's own classes: "full" (every field set and unlike
its default and its neighbours, nullable ones non-null, arrays of one element; these APIs have no tagged
fields, the folding test in tests/unit/test_kafka_kio_definitions.py proves tags on kafka-python's) and
"empty" (nullable fields null, arrays empty, the rest at their defaults). kio writes each; our codec decodes
the bytes strictly and re-encodes them byte for byte, the generated scapy layer rebuilds them, and kio reads
our whole frame's body back to the same object. Header versions are checked against kio's header classes.
(Bodies generated on our side and read by kio: test_kafka_vs_kio.py, which covers these APIs too.)
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import itertools
import types
import typing
import uuid

import pytest

from wirecheck.protocols.kafka import kio_definitions, layers, messages

import kio.index as kio_index  # noqa: E402  (kio is a dependency: never skipped)
import kio.serial as kio_serial  # noqa: E402
from kio.static.primitive import Records  # noqa: E402

UTC = datetime.UTC

CASES = [(api_key, version, kind) for api_key in kio_definitions.api_keys()
         for version in messages.encodable_versions(api_key) for kind in ("request", "response")]


def _optional(annotation):
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        return True, next(arg for arg in typing.get_args(annotation) if arg is not type(None))
    return False, annotation


def _scalar(base, kafka_type: str, n: int):
    """A value of kio's type for one field, distinct per ``n``."""
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return list(base)[2 + n % 5]
    if kafka_type == "uuid":
        return uuid.UUID(int=0x1000 + n)
    if kafka_type in ("timedelta_i32", "timedelta_i64"):
        return base.parse(datetime.timedelta(milliseconds=100 + n))
    if kafka_type == "datetime_i64":
        return base.parse(datetime.datetime.fromtimestamp(1_700_000_000 + n, UTC))
    if kafka_type == "bool":
        return True
    if kafka_type == "string":
        return base(f"s{n}")
    if kafka_type == "records":
        return Records(bytes([n % 256, 1, 2]))
    if kafka_type == "bytes":
        return bytes([n % 256, 7])
    if kafka_type == "float64":
        return base(n + 0.5)
    return base(1 + n % 100)  # every integer type holds 1..100


def witness(cls, full: bool, counter=None):
    """An instance of kio's class ``cls``: every field set (``full``) or every field as empty as allowed."""
    counter = counter if counter is not None else itertools.count()
    values = {}
    for fd in dataclasses.fields(cls):
        kafka_type = fd.metadata.get("kafka_type", "struct")
        nullable, inner = _optional(fd.type)
        is_array = typing.get_origin(inner) is tuple
        element = typing.get_args(inner)[0] if is_array else inner
        has_default = fd.default is not dataclasses.MISSING or fd.default_factory is not dataclasses.MISSING
        if not full:
            if nullable and kafka_type not in ("uuid", "datetime_i64"):
                values[fd.name] = None
            elif is_array:
                values[fd.name] = ()
            elif not has_default:
                values[fd.name] = witness(element, False, counter) if dataclasses.is_dataclass(element) else (
                    None if nullable else _scalar(element, kafka_type, next(counter)))
            continue
        if dataclasses.is_dataclass(element):
            item = witness(element, True, counter)
        else:
            item = _scalar(_optional(element)[1], kafka_type, next(counter))
        values[fd.name] = (item,) if is_array else item
    return cls(**values)


def kio_class(api_key: int, version: int, kind: str):
    load = kio_index.load_request_schema if kind == "request" else kio_index.load_response_schema
    return load(api_key, version)


def header_version(cls) -> int:
    """kio's header class for a message: ``kio.schema.request_header.v2.header`` -> 2."""
    return int(cls.__header_schema__.__module__.split(".")[-2].removeprefix("v"))


def kio_write(cls, obj) -> bytes:
    out = io.BytesIO()
    kio_serial.entity_writer(cls)(out, obj)
    return out.getvalue()


@pytest.mark.parametrize(("api_key", "version", "kind"), CASES,
                         ids=[f"{messages.api_name(a)}-v{v}-{k}" for a, v, k in CASES])
@pytest.mark.parametrize("full", [True, False], ids=["full", "empty"])
def test_kio_bytes_decode_and_rebuild_with_ours(api_key, version, kind, full):
    cls = kio_class(api_key, version, kind)
    obj = witness(cls, full)
    theirs = kio_write(cls, obj)
    codec = messages.request_codec(api_key, version) if kind == "request" else messages.response_codec(
        api_key, version)
    ours = codec.decode(theirs)  # strict: every byte used
    assert codec.encode(ours) == theirs
    assert bytes(layers.body_class(api_key, version, kind).from_value(ours)) == theirs
    if kind == "request":
        assert messages.request_header_version(api_key, version) == header_version(cls)
        frame = messages.encode_request(api_key, version, 7, "wirecheck", ours)
    else:
        assert messages.response_header_version(api_key, version) == header_version(cls)
        frame = messages.encode_response(api_key, version, 7, ours)
    body = frame[len(frame) - len(theirs):]
    assert body == theirs
    reread, size = kio_serial.entity_reader(cls)(body, 0)
    assert size == len(body) and reread == obj


def test_the_full_witness_sets_every_field():
    """A witness that left fields at their defaults would leave field order and tagged fields unproven."""
    cls = kio_class(68, 1, "request")
    obj = witness(cls, True)
    decoded = messages.request_codec(68, 1).decode(kio_write(cls, obj))
    assert decoded["TopicPartitions"][0]["Partitions"] and decoded["SubscribedTopicRegex"] is not None
    assert len({v for v in decoded.values() if isinstance(v, (int, str)) and not isinstance(v, bool)}) >= 7
