"""Kafka's machine-readable message definitions, loaded from kafka-python's package data.

kafka-python ships Apache Kafka's ``clients/src/main/resources/common/message/*.json`` (Apache-2.0) under
``kafka/protocol/schemas/resources``. We read them at run time with ``importlib.resources`` and never copy
them: the JSON *is* the spec. The format is documented in Kafka's ``common/message/README.md``: JSON with
``//`` comments, ``validVersions``/``flexibleVersions`` per message, and per field ``versions``,
``nullableVersions``, ``taggedVersions``/``tag``, ``default``, nested ``fields`` and ``commonStructs``.
"""

from __future__ import annotations

import functools
import importlib.resources
import importlib.resources.abc
import json
import re
import warnings
from dataclasses import dataclass, field

RESOURCES = "kafka.protocol.schemas.resources"

_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; ``high`` None means open-ended ("3+"); empty when ``low`` > ``high``."""

    low: int
    high: int | None

    @classmethod
    def parse(cls, text: str | None) -> "Versions":
        if text is None or text == "none":
            return cls(1, 0)  # empty
        text = text.strip()
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        if "-" in text:
            low, high = text.split("-", 1)
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        return self.low <= version and (self.high is None or version <= self.high)

    def __str__(self) -> str:
        if self.high is None:
            return f"{self.low}+"
        if self.high < self.low:
            return "none"
        return f"{self.low}-{self.high}"


@dataclass(frozen=True)
class FieldDef:
    name: str
    type: str  # "int32", "string", "[]int32", "[]Partition", "Cursor", ...
    versions: Versions
    nullable_versions: Versions
    tagged_versions: Versions
    tag: int | None
    default: object  # the raw JSON default (a string most of the time), or None if absent
    flexible_override: Versions | None  # per-field flexibleVersions (only RequestHeader.ClientId uses it)
    ignorable: bool
    fields: tuple["FieldDef", ...] | None  # for struct types
    about: str = ""

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.fields is not None

    def present_in(self, version: int) -> bool:
        return version in self.versions

    def tagged_in(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged_versions

    def nullable_in(self, version: int) -> bool:
        return version in self.nullable_versions


@dataclass(frozen=True)
class MessageDef:
    name: str  # "ProduceRequest"
    kind: str  # "request", "response", "header", "data"
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    fields: tuple[FieldDef, ...]
    latest_version_unstable: bool = False
    listeners: tuple[str, ...] = field(default_factory=tuple)

    def flexible(self, version: int) -> bool:
        return version in self.flexible_versions


def _field(raw: dict, structs: dict[str, list]) -> FieldDef:
    struct_name = raw["type"][2:] if raw["type"].startswith("[]") else raw["type"]
    sub = raw.get("fields")
    if sub is None and struct_name in structs:
        sub = structs[struct_name]
    return FieldDef(
        name=raw["name"],
        type=raw["type"],
        versions=Versions.parse(raw.get("versions")),
        nullable_versions=Versions.parse(raw.get("nullableVersions")),
        tagged_versions=Versions.parse(raw.get("taggedVersions")),
        tag=raw.get("tag"),
        default=raw.get("default"),
        flexible_override=Versions.parse(raw["flexibleVersions"]) if "flexibleVersions" in raw else None,
        ignorable=bool(raw.get("ignorable", False)),
        fields=tuple(_field(f, structs) for f in sub) if sub is not None else None,
        about=raw.get("about", ""),
    )


def parse_definition(text: str) -> MessageDef:
    """Parse one definition file (JSON with ``//`` line comments)."""
    raw = json.loads(_COMMENT.sub("", text))
    structs = {s["name"]: s["fields"] for s in raw.get("commonStructs", [])}
    return MessageDef(
        name=raw["name"],
        kind=raw["type"],
        api_key=raw.get("apiKey"),
        valid_versions=Versions.parse(raw["validVersions"]),
        flexible_versions=Versions.parse(raw.get("flexibleVersions", "none")),
        fields=tuple(_field(f, structs) for f in raw["fields"]),
        latest_version_unstable=bool(raw.get("latestVersionUnstable", False)),
        listeners=tuple(raw.get("listeners", ())),
    )


@functools.cache
def resources() -> importlib.resources.abc.Traversable:
    """kafka-python's folder of message definitions. Importing its package runs kafka-python's own loader, which
    warns (DeprecationWarning, legacy importlib.resources API) once per file: 218 lines before pytest's header in an
    installed run, none of them ours to act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".* is deprecated\. Use files\(\) instead", category=DeprecationWarning)
        return importlib.resources.files(RESOURCES)


@functools.cache
def definitions() -> dict[str, MessageDef]:
    """Every definition shipped with kafka-python, by message name."""
    result = {}
    for entry in resources().iterdir():
        if entry.name.endswith(".json"):
            definition = parse_definition(entry.read_text(encoding="utf-8"))
            result[definition.name] = definition
    if not result:
        raise RuntimeError(f"no Kafka message definitions found in {RESOURCES}")
    return result


@functools.cache
def by_api_key() -> dict[int, tuple[MessageDef, MessageDef]]:
    """api_key -> (request definition, response definition)."""
    requests, responses = {}, {}
    for definition in definitions().values():
        if definition.kind == "request":
            requests[definition.api_key] = definition
        elif definition.kind == "response":
            responses[definition.api_key] = definition
    return {key: (requests[key], responses[key]) for key in sorted(requests) if key in responses}


def header(name: str) -> MessageDef:
    """``RequestHeader`` or ``ResponseHeader``."""
    return definitions()[name]
