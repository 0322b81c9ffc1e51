"""Interop fixtures: one reference broker (Kafka personality) per session, as a child process."""

from __future__ import annotations

import itertools

import pytest

from tests.interop.kafka_support import broker_process

_names = itertools.count()


@pytest.fixture(scope="session")
def kafka_bootstrap() -> str:
    with broker_process() as port:
        yield f"127.0.0.1:{port}"


@pytest.fixture
def unique():
    """A fresh name per call, so tests sharing the broker never share a topic or group."""
    def make(prefix: str) -> str:
        return f"{prefix}-{next(_names)}"
    return make
