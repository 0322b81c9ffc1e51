"""Kafka 4 message definitions that kafka-python lacks, folded from kio's generated dataclasses.

kafka-python 3.0.12 ships Apache Kafka's JSON for 52 API keys (see ``schema``), at the very versions kio 0.6.5
has for them (Kafka 4.1: Produce 3-13, Fetch 4-18...); the newer client-facing APIs (KIP-848 consumer groups,
KIP-714 telemetry, KIP-932 share groups, KIP-1071 streams groups, delegation tokens, KIP-853 voter changes)
are not among them. kio (Aiven, PyPI) generates one frozen dataclass per
(message, version) from the same Apache JSON, so this module reads those classes and folds them back into the
definition model ``schema`` uses (:class:`schema.MessageDef`: fields with version ranges). kafka-python's JSON
stays the source wherever it has an API: it is the upstream text itself, with field names, ``about`` and
removed-version ranges that kio's per-version classes do not carry; kio fills only the API keys it lacks.

kio's generator conventions (read from its package, ``kio/schema/*`` and ``kio/serial``), and how each is
undone here:

* field names are snake_case and durations/instants drop the ``Ms`` suffix (``ThrottleTimeMs`` ->
  ``throttle_time``, kafka_type ``timedelta_i32``): names are turned back into the JSON's CamelCase, taking
  kafka-python's spelling of the same name where it has one (``ISR``-style acronyms), else capitalising;
* ``kafka_type`` refines the wire type (``error_code`` int16, ``timedelta_i32`` int32, ``timedelta_i64`` and
  ``datetime_i64`` int64) and names the element type of arrays;
* ``X | None`` marks a nullable field, except uuid (kio maps the zero UUID to None) and datetime_i64 (a -1
  instant is None), whose wire forms have no null;
* ``metadata["tag"]`` is the tag of a tagged field; defaults are typed values (timedeltas, enums, instances)
  and are turned back into the JSON's raw defaults; a nullable struct array has none (see
  ``NULL_DEFAULT_ARRAYS``).

The reading is proven where it can be: folded from kio, the 52 keys kafka-python also has compile to the very
codecs its JSON gives, at every version (``tests/unit/test_kafka_kio_definitions.py``).

Loading imports kio's schema modules, which import Hypothesis (``kio.static.primitive``): about 0.4 s. So
:func:`definitions` is called per API key, only when a key is first used; listing the keys costs nothing.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import functools
import importlib
import re
import types
import typing
import uuid

from wirecheck.protocols.kafka import schema
from wirecheck.protocols.kafka.schema import FieldDef, MessageDef, Versions

#: The client-facing Kafka 4 API keys kio defines and kafka-python does not. Client-facing: Kafka's JSON lists
#: the "broker" listener (an ordinary client may send it to a broker) and the broker does not authorize it as
#: CLUSTER_ACTION (``ApiKeys.clusterAction``: only brokers and controllers send it). Value: the JSON listeners.
CLIENT_FACING = {
    38: ("broker", "controller"),  # CreateDelegationToken (admin client)
    39: ("broker", "controller"),  # RenewDelegationToken
    40: ("broker", "controller"),  # ExpireDelegationToken
    41: ("broker", "controller"),  # DescribeDelegationToken
    64: ("broker", "controller"),  # UnregisterBroker (Admin.unregisterBroker)
    68: ("broker",),  # ConsumerGroupHeartbeat (KIP-848)
    69: ("broker",),  # ConsumerGroupDescribe
    71: ("broker",),  # GetTelemetrySubscriptions (KIP-714)
    72: ("broker",),  # PushTelemetry
    76: ("broker",),  # ShareGroupHeartbeat (KIP-932)
    77: ("broker",),  # ShareGroupDescribe
    78: ("broker",),  # ShareFetch
    79: ("broker",),  # ShareAcknowledge
    80: ("controller", "broker"),  # AddRaftVoter (Admin.addRaftVoter, KIP-853)
    81: ("controller", "broker"),  # RemoveRaftVoter
    88: ("broker",),  # StreamsGroupHeartbeat (KIP-1071)
    89: ("broker",),  # StreamsGroupDescribe
    90: ("broker",),  # DescribeShareGroupOffsets (admin client)
    91: ("broker",),  # AlterShareGroupOffsets
    92: ("broker",),  # DeleteShareGroupOffsets
}

#: kio's other API keys, left out as broker-internal: controller-only (KRaft quorum and broker lifecycle) or
#: cluster actions on the broker listener (share-group state, sent by share partition leaders to the share
#: coordinator). Kept as a list so a new kio release's keys are noticed (``tests/unit/test_kafka_kio_definitions``).
BROKER_INTERNAL = {
    52: "Vote", 53: "BeginQuorumEpoch", 54: "EndQuorumEpoch", 56: "AlterPartition", 58: "Envelope",
    59: "FetchSnapshot", 62: "BrokerRegistration", 63: "BrokerHeartbeat", 67: "AllocateProducerIds",
    70: "ControllerRegistration", 73: "AssignReplicasToDirs", 82: "UpdateRaftVoter",
    83: "InitializeShareGroupState", 84: "ReadShareGroupState", 85: "WriteShareGroupState",
    86: "DeleteShareGroupState", 87: "ReadShareGroupStateSummary",
}

#: Nullable arrays of structs whose JSON default is "null" ("unchanged since the last heartbeat"): kio's classes
#: give such arrays no default at all, and most of Kafka's nullable struct arrays default to empty instead, so
#: these facts come from the Apache JSON files named. Only the encoding of a body that leaves them out depends on it.
NULL_DEFAULT_ARRAYS = {
    "ConsumerGroupHeartbeatRequest": ("TopicPartitions",),
    "StreamsGroupHeartbeatRequest": ("ActiveTasks", "StandbyTasks", "WarmupTasks", "ClientTags", "TaskOffsets",
                                     "TaskEndOffsets"),
    "StreamsGroupHeartbeatResponse": ("Status", "ActiveTasks", "StandbyTasks", "WarmupTasks",
                                      "PartitionsByUserEndpoint"),
}

_WIRE_TYPE = {"error_code": "int16", "timedelta_i32": "int32", "timedelta_i64": "int64", "datetime_i64": "int64"}
_MS_SUFFIXED = {"timedelta_i32", "timedelta_i64", "datetime_i64"}  # kio drops the JSON name's "Ms" for these
_NEVER_NULL = {"uuid", "datetime_i64"}  # kio's None stands for a wire value (zero UUID, -1), not a null
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_CAMEL_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|[A-Z]+|\d+")


def available() -> bool:
    """Is kio installed? (It is the ``differential`` extra; without it only kafka-python's APIs exist.)"""
    return _index() is not None


@functools.cache
def _index():
    try:
        return importlib.import_module("kio.schema.index")
    except ImportError:
        return None


def api_keys() -> list[int]:
    """The API keys this module defines (cheap: kio's index only, no schema module is imported)."""
    index = _index()
    if index is None:
        return []
    return sorted(key for key in CLIENT_FACING if key in index.api_key_map)


def _load_class(path: str) -> type:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def snake(name: str) -> str:
    """A JSON field name as kio's generator spells it (``ThrottleTimeMs`` -> ``throttle_time_ms``)."""
    return "_".join(word.lower() for word in _CAMEL_WORD.findall(name))


@functools.cache
def _known_names() -> dict[str, str]:
    """snake_case -> kafka-python's CamelCase spelling, over every field of every definition it ships."""
    spellings: collections.Counter[str] = collections.Counter()

    def visit(fields):
        for fd in fields:
            spellings[fd.name] += 1
            if fd.fields:
                visit(fd.fields)

    for definition in schema.definitions().values():
        visit(definition.fields)
    names: dict[str, str] = {}
    for name, _ in spellings.most_common():  # the usual spelling wins (one file writes "timeoutMs")
        names.setdefault(snake(name), name)
    return names


def json_name(kio_name: str, kafka_type: str) -> str:
    """kio's field name back as the JSON's (the ``Ms`` kio drops comes back for durations and instants)."""
    if kafka_type in _MS_SUFFIXED:
        kio_name += "_ms"
    known = _known_names().get(kio_name)
    if known is not None:
        return known
    return "".join(word.capitalize() for word in kio_name.split("_"))


def _optional(annotation) -> tuple[bool, object]:
    """(is ``X | None``, X)."""
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            return True, args[0]
    return False, annotation


@dataclasses.dataclass
class _Draft:
    """One field while the versions are folded: the versions it appears in, nullable in, tagged in."""

    name: str
    type: str
    tag: int | None
    default: object
    versions: list[int] = dataclasses.field(default_factory=list)
    nullable: list[int] = dataclasses.field(default_factory=list)
    tagged: list[int] = dataclasses.field(default_factory=list)
    children: list[_Draft] | None = None


def _raw_default(kio_field: dataclasses.Field, kafka_type: str, nullable: bool, is_struct: bool):
    """The JSON ``default`` a kio default stands for (None: not given, the type's zero applies)."""
    if kio_field.default is not dataclasses.MISSING:
        value = kio_field.default
    elif kio_field.default_factory is not dataclasses.MISSING:
        value = kio_field.default_factory()
    else:
        return None
    if is_struct or isinstance(value, (tuple, bytes)):
        return "null" if value is None and nullable else None  # structs and arrays default to their zero
    if value is None:
        if kafka_type == "datetime_i64":
            return -1
        return "null" if nullable else None
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, datetime.timedelta):
        return round(value / datetime.timedelta(milliseconds=1))
    if isinstance(value, datetime.datetime):
        return round((value - _EPOCH) / datetime.timedelta(milliseconds=1))
    if isinstance(value, str):
        return str(value)  # kio's phantom string types (GroupId...) as plain text
    if isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"{kio_field.name}: no JSON default for {value!r}")


def _fold(drafts: list[_Draft], cls: type, version: int, where: str) -> None:
    """Add ``cls`` (kio's class of one struct at ``version``) to ``drafts``, keeping the wire order."""
    last = -1
    for kio_field in dataclasses.fields(cls):
        kafka_type = kio_field.metadata.get("kafka_type", "struct")  # nested entities carry none
        nullable, inner = _optional(kio_field.type)
        is_array = typing.get_origin(inner) is tuple
        element = typing.get_args(inner)[0] if is_array else inner
        element = _optional(element)[1]
        struct = element if dataclasses.is_dataclass(element) else None
        if kafka_type in _NEVER_NULL:
            nullable = False
        element_type = struct.__name__ if struct else _WIRE_TYPE.get(kafka_type, kafka_type)
        field_type = ("[]" if is_array else "") + element_type
        name = json_name(kio_field.name, kafka_type)
        index = next((i for i, d in enumerate(drafts) if d.name == name), None)
        if index is None:
            index = last + 1
            drafts.insert(index, _Draft(name, field_type, kio_field.metadata.get("tag"), None,
                                        children=[] if struct else None))
        elif index <= last:
            raise ValueError(f"{where}.{name}: v{version} puts it before a field that precedes it elsewhere")
        elif struct is None and drafts[index].type != field_type:
            raise ValueError(f"{where}.{name}: {drafts[index].type} in older versions, {field_type} in v{version}")
        draft = drafts[index]
        draft.versions.append(version)
        if nullable:
            draft.nullable.append(version)
        if "tag" in kio_field.metadata:
            draft.tag = kio_field.metadata["tag"]
            draft.tagged.append(version)
        draft.default = _raw_default(kio_field, kafka_type, nullable, struct is not None)
        if struct is not None:
            _fold(draft.children, struct, version, f"{where}.{name}")
        last = index


def _range(versions: list[int], newest: int, what: str) -> Versions:
    """The contiguous range ``versions`` spans; open-ended ("3+") when it reaches the newest version."""
    if not versions:
        return Versions(1, 0)
    low, high = min(versions), max(versions)
    if sorted(versions) != list(range(low, high + 1)):
        raise ValueError(f"{what}: versions {versions} are not contiguous")
    return Versions(low, None if high == newest else high)


def _field_def(draft: _Draft, newest: int, where: str) -> FieldDef:
    what = f"{where}.{draft.name}"
    return FieldDef(
        name=draft.name,
        type=draft.type,
        versions=_range(draft.versions, newest, what),
        nullable_versions=_range(draft.nullable, newest, what + " (nullable)"),
        tagged_versions=_range(draft.tagged, newest, what + " (tagged)"),
        tag=draft.tag,
        default=draft.default,
        flexible_override=None,
        ignorable=False,
        fields=None if draft.children is None else tuple(_field_def(c, newest, what) for c in draft.children),
    )


def fold_message(classes: dict[int, type], kind: str, api_key: int, listeners: tuple[str, ...] = ()) -> MessageDef:
    """One definition from kio's classes of a message, by version."""
    drafts: list[_Draft] = []
    name = ""
    for version, cls in sorted(classes.items()):
        name = cls.__name__
        _fold(drafts, cls, version, name)
    for draft in drafts:
        if draft.name in NULL_DEFAULT_ARRAYS.get(name, ()):
            draft.default = "null"
    newest = max(classes)
    flexible = [version for version, cls in classes.items() if cls.__flexible__]
    return MessageDef(
        name=name,
        kind=kind,
        api_key=api_key,
        valid_versions=Versions(min(classes), newest),
        flexible_versions=_range(flexible, newest, name + " (flexible)"),
        fields=tuple(_field_def(d, newest, name) for d in drafts),
        listeners=listeners,
    )


def load(api_key: int, listeners: tuple[str, ...] = ()) -> tuple[MessageDef, MessageDef]:
    """(request, response) definitions of one API key, from kio (any key kio has, for tests as well)."""
    index = _index()
    by_version = index.schema_name_map[index.api_key_map[api_key]]
    pair = []
    for kind in ("request", "response"):
        classes = {version: _load_class(paths[getattr(index.EntityType, kind)]) for version, paths in
                   by_version.items()}
        pair.append(fold_message(classes, kind, api_key, listeners))
    return pair[0], pair[1]


@functools.cache
def definitions(api_key: int) -> tuple[MessageDef, MessageDef]:
    """(request, response) of one client-facing API key kafka-python lacks."""
    if api_key not in api_keys():
        raise KeyError(api_key)
    return load(api_key, CLIENT_FACING[api_key])
