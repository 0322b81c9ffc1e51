"""Kafka personality under mutated frames: no handler crash, no lost liveness, bounded work.

For every advertised (api, version), a valid request (kafka-python's encoder, default field values) is mutated
by a seeded generator: truncation, byte flips, inflated length/count fields, appended junk. The broker may
answer or close the connection, but it must not log a handler failure and must keep answering ApiVersions.
"""

from __future__ import annotations

import logging
import random
import socket
import struct

import pytest
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse

from tests.broker.test_kafka_framing import ADVERTISED, CLASSES
from tests.interop.kafka_support import InProcessBroker, build

MUTANTS_PER_VERSION = 6


@pytest.fixture(scope="module")
def broker():
    with InProcessBroker(max_frame=1 << 20) as b:
        yield b


def mutate(rng: random.Random, body: bytes) -> bytes:
    data = bytearray(body)
    choice = rng.randrange(5)
    if choice == 0 and len(data) > 10:
        del data[rng.randrange(10, len(data)):]
    elif choice == 1:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(10, len(data)) if len(data) > 10 else 0
            data[i] = rng.randrange(256)
    elif choice == 2 and len(data) > 14:
        i = rng.randrange(10, len(data) - 4)
        data[i:i + 4] = struct.pack(">i", rng.choice([0x7FFFFFFF, -2, 0x10000, 0xFFFF]))
    elif choice == 3:
        data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
    else:
        i = rng.randrange(10, len(data)) if len(data) > 10 else len(data)
        data[i:i] = bytes([0xFF] * rng.randint(1, 9))  # an overlong varint / a negative length
    return bytes(data)


@pytest.mark.parametrize("key,version", ADVERTISED, ids=[f"key{k}-v{v}" for k, v in ADVERTISED])
def test_mutated_requests_never_crash_a_handler(broker, key, version, caplog):
    request_cls, _, fields = CLASSES[key]
    if key == 11 or key == 14:  # joins/syncs may legitimately wait for a rebalance: keep them short-lived
        fields = dict(fields)
    request = build(request_cls, version, **fields)
    request.with_header(correlation_id=1, client_id="fuzz")
    body = bytes(request.encode(header=True))
    rng = random.Random(key * 1000 + version)
    caplog.set_level(logging.ERROR, logger="wirecheck.broker")
    for _ in range(MUTANTS_PER_VERSION):
        mutant = mutate(rng, body)
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as sock:
            sock.settimeout(2)
            sock.sendall(struct.pack(">i", len(mutant)) + mutant)
            try:
                sock.recv(1 << 16)
            except (socket.timeout, ConnectionResetError):
                pass
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not failures, failures[0].getMessage() + "\n" + (failures[0].exc_text or "")
    with broker.wire() as w:
        assert w.call(ApiVersionsRequest, ApiVersionsResponse, 0).error_code == 0
