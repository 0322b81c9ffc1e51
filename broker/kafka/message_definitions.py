"""The message definitions the codec compiles: Apache Kafka's own ``*.json`` (Apache-2.0), as shipped inside the
kafka-python package as package data (the broker reads them, it does not use kafka-python's codec), and the
KIP-848, KIP-932 and KIP-714 messages that folder lacks (kip*_messages.py)."""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
import warnings

from wirecheck.broker.kafka import kip714_messages, kip848_messages, kip932_messages

_COMMENTS = re.compile(r"^\s*//.*$", re.MULTILINE)


class VersionRange:
    """A JSON version spec: ``"3+"``, ``"0-4"``, ``"7"`` or ``"none"``."""

    __slots__ = ("low", "high")

    def __init__(self, spec: str | None):
        if spec is None or spec == "none":
            self.low, self.high = 1, 0  # empty
        elif spec.endswith("+"):
            self.low, self.high = int(spec[:-1]), 1 << 15
        elif "-" in spec:
            low, high = spec.split("-")
            self.low, self.high = int(low), int(high)
        else:
            self.low = self.high = int(spec)

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high


@functools.cache
def _definitions() -> importlib.resources.abc.Traversable:
    """kafka-python's folder of message definitions (the spec's data, shared with the suite; the code reading it
    is our own). Importing its package warns once per file (legacy importlib.resources API): silenced here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".* is deprecated\. Use files\(\) instead", category=DeprecationWarning)
        return importlib.resources.files("kafka.protocol.schemas.resources")


def load_message(name: str) -> dict:
    """One message definition, comments stripped and common structs inlined."""
    data = kip848_messages.definition(name)  # the KIP-848 messages kafka-python's folder lacks
    if data is None:
        data = kip932_messages.definition(name)  # KIP-932's, likewise
    if data is None:
        data = kip714_messages.definition(name)  # likewise the KIP-714 telemetry messages
    if data is None:
        text = _definitions().joinpath(name + ".json").read_text(encoding="utf-8")
        data = json.loads(_COMMENTS.sub("", text))
    common = {s["name"]: s["fields"] for s in data.get("commonStructs", [])}

    def inline(fields):
        for f in fields:
            inner = f["type"][2:] if f["type"].startswith("[]") else f["type"]
            if "fields" not in f and inner in common:
                f["fields"] = common[inner]
            if "fields" in f:
                inline(f["fields"])

    inline(data["fields"])
    return data

