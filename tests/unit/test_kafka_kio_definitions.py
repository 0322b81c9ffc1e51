"""The Kafka 4 definitions folded from kio's classes (protocols/kafka/kio_definitions.py).

The loader's reading of kio's conventions is proven where it can be: for every API key kafka-python's JSON
also has, the folded definition compiles, at every version kio defines, to the codec the JSON compiles to
(field order, names, types, nullability, tags, defaults).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from wirecheck.protocols import fields as f
from wirecheck.protocols.kafka import kio_definitions, messages, schema
from wirecheck.protocols.kafka.codec import (
    NullableStruct,
    StructCodec,
    _Sized,
    message_codec,
)

import kio.schema.index as kio_index  # noqa: E402  (kio is a dependency: never skipped)

#: the JSON itself spells these in lowerCamelCase; the loader's CamelCase is the usual spelling elsewhere
JSON_SPELLINGS = {"timeoutMs", "validateOnly"}
#: a nullable struct array whose JSON default is "null": kio's class carries no default to say so (the one case
#: among kafka-python's APIs; the kio-only ones are listed in NULL_DEFAULT_ARRAYS)
UNKNOWABLE_DEFAULTS = {("ListPartitionReassignmentsRequest", "Topics")}


def shape(codec, message: str):
    """A codec as comparable data: wire kinds, names, nullability, tags and defaults, nested."""
    if isinstance(codec, _Sized):
        codec = codec.codec
    if isinstance(codec, NullableStruct):
        return ("nullable", shape(codec.inner, message))
    if isinstance(codec, f.ArrayCodec):
        prefix = codec.prefix if codec.prefix == "compact" else codec.prefix.name
        return ("array", prefix, codec.nullable, shape(codec.item, message))
    if isinstance(codec, StructCodec):
        def entry(name, item, default):
            if (message, name) in UNKNOWABLE_DEFAULTS:
                default = "?"
            spelled = name[0].upper() + name[1:] if name in JSON_SPELLINGS else name
            return spelled, shape(item, message), default if not isinstance(item, StructCodec) else None
        return ("struct", codec.flexible, [entry(*e) for e in codec.regular],
                {tag: entry(*e) for tag, e in codec.tagged.items()})
    return (type(codec).__name__, getattr(codec, "name", None), getattr(codec, "nullable", None))


@pytest.mark.parametrize("api_key", sorted(schema.by_api_key()), ids=messages.api_name)
def test_folding_kio_reproduces_kafka_pythons_definition(api_key):
    request, response = schema.by_api_key()[api_key]
    for ours, folded in zip((request, response), kio_definitions.load(api_key)):
        assert folded.name == ours.name
        assert folded.valid_versions == ours.valid_versions  # the same Kafka release's JSON
        for version in range(folded.valid_versions.low, folded.valid_versions.high + 1):
            assert shape(message_codec(folded, version), ours.name) == shape(message_codec(ours, version),
                                                                              ours.name), f"{ours.name} v{version}"


def test_every_kio_api_key_is_decided():
    """A kio release with a new API key fails here until the key is called client-facing or broker-internal."""
    kio_keys = set(kio_index.api_key_map)
    undecided = kio_keys - set(schema.by_api_key()) - set(kio_definitions.CLIENT_FACING) - set(
        kio_definitions.BROKER_INTERNAL)
    assert not undecided
    assert not set(kio_definitions.CLIENT_FACING) & set(schema.by_api_key())  # kafka-python's JSON wins there
    assert not set(kio_definitions.CLIENT_FACING) & set(kio_definitions.BROKER_INTERNAL)


def test_client_facing_keys_join_the_api_list_and_internal_ones_do_not():
    keys = set(messages.api_keys())
    assert set(kio_definitions.CLIENT_FACING) <= keys
    assert not set(kio_definitions.BROKER_INTERNAL) & keys
    assert {messages.api_name(key) for key in (68, 69, 71, 72, 76, 77, 78, 79)} == {
        "ConsumerGroupHeartbeat", "ConsumerGroupDescribe", "GetTelemetrySubscriptions", "PushTelemetry",
        "ShareGroupHeartbeat", "ShareGroupDescribe", "ShareFetch", "ShareAcknowledge"}
    assert messages.api_key_by_name("ShareFetch") == 78


def test_kio_only_keys_encode_their_kept_versions_only():
    assert messages.versions(76) == (1, 1)
    assert messages.encodable_versions(76) == range(1, 2)  # v0 (Kafka 4.0 early access) is not described
    assert messages.encodable_versions(38) == range(1, 4)  # v0 removed by KIP-896
    assert messages.encodable_versions(0).start == 0  # kafka-python's APIs keep their removed versions
    with pytest.raises(messages.UnknownApi):
        messages.request_codec(76, 0)


def test_names_and_defaults_read_as_the_json_says():
    codec = messages.request_codec(68, 1)
    assert codec.field_names() == ["GroupId", "MemberId", "MemberEpoch", "InstanceId", "RackId",
                                   "RebalanceTimeoutMs", "SubscribedTopicNames", "SubscribedTopicRegex",
                                   "ServerAssignor", "TopicPartitions"]
    # a heartbeat that leaves the optional fields out says "unchanged": nulls, and RebalanceTimeoutMs -1
    assert codec.encode({"GroupId": "g", "MemberId": "m", "MemberEpoch": 0}) == bytes.fromhex(
        "0267" "026d" "00000000" "00" "00" "ffffffff" "00" "00" "00" "00" "00")


@pytest.mark.parametrize("message", sorted(kio_definitions.NULL_DEFAULT_ARRAYS))
def test_null_default_arrays_name_nullable_arrays(message):
    api_key = next(key for key in kio_definitions.api_keys()
                   if message in (d.name for d in kio_definitions.definitions(key)))
    definition = next(d for d in kio_definitions.definitions(api_key) if d.name == message)
    by_name = {fd.name: fd for fd in definition.fields}
    for name in kio_definitions.NULL_DEFAULT_ARRAYS[message]:
        fd = by_name[name]
        assert fd.is_array and fd.nullable_in(definition.valid_versions.low) and fd.default == "null"


def test_listing_the_api_keys_loads_no_kio_schema():
    """Every suite process lists the API keys; kio's classes (and the Hypothesis import they pull in, about
    0.4 s) load only when a kio-only key is used."""
    probe = ("import sys; from wirecheck.protocols.kafka import messages; keys = messages.api_keys(); "
             "messages.request_codec(3, 12); messages.api_key_by_name('Metadata'); "
             "assert 68 in keys; assert 'kio.static.primitive' not in sys.modules, 'kio loaded'; "
             "messages.request_codec(68, 1); assert 'kio.static.primitive' in sys.modules")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
