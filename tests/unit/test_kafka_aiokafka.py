"""Our definition-driven codec against aiokafka's hand-written schemas (classic, non-flexible versions).

aiokafka 0.14 writes each request/response schema by hand, including versions Kafka 4 removed (Produce 0-2,
Fetch 0-3, ...), which our codec derives from the definitions' field ranges. For random valid bodies of every
(api, version) aiokafka has: aiokafka's schema consumes our bytes exactly and writes them back unchanged.
"""

from __future__ import annotations

import importlib
import inspect
import io
import random

import pytest

from wirecheck.protocols.kafka import messages
from wirecheck.strategies import kafka as kafka_strategies

pytest.importorskip("aiokafka")

MODULES = ("produce", "fetch", "offset", "metadata", "commit", "group", "coordination", "admin", "transaction")
EXAMPLES = 30


def aiokafka_classes():
    found = []
    for name in MODULES:
        module = importlib.import_module(f"aiokafka.protocol.{name}")
        for class_name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not isinstance(getattr(cls, "API_VERSION", None), int):
                continue
            if not hasattr(cls, "SCHEMA") or not hasattr(cls, "API_KEY"):
                continue
            kind = "request" if "Request" in class_name else "response"
            try:
                codec = (messages.request_codec if kind == "request" else messages.response_codec)(
                    cls.API_KEY, cls.API_VERSION)
            except messages.UnknownApi:
                continue
            if not codec.flexible:
                found.append(pytest.param(cls, codec, id=class_name))
    return found


CLASSES = aiokafka_classes()


def test_aiokafka_covers_removed_versions():
    ids = {p.id for p in CLASSES}
    assert {"ProduceRequest_v0", "ProduceResponse_v2", "FetchRequest_v1", "FetchResponse_v3"} <= ids
    assert len(ids) > 150


@pytest.mark.parametrize(("cls", "codec"), CLASSES)
def test_aiokafka_schema_reads_and_rewrites_our_bytes(cls, codec):
    rng = random.Random(f"{cls.__name__}")
    for _ in range(EXAMPLES):
        ours = codec.encode(kafka_strategies.random_value(rng, codec))
        stream = io.BytesIO(ours)
        decoded = cls.SCHEMA.decode(stream)
        assert stream.tell() == len(ours), f"aiokafka read {stream.tell()} of our {len(ours)} bytes"
        assert bytes(cls.SCHEMA.encode(decoded)) == ours
