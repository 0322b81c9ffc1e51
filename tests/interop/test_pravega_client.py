"""The real Pravega Python client (bindings of the Rust client) against the reference broker: the controller
(gRPC) and the segment store (wire protocol) together. Everything written is read back byte-identical.

The client holds the GIL while it waits on the broker, so the broker must be another process (the launcher's).
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from wirecheck.targets.launcher import launch

pravega_client = pytest.importorskip("pravega_client", reason="the pravega client (interop extra)")

pytestmark = pytest.mark.interop

CONTROLLER = "pravega-controller"
READ_DEADLINE = 30.0
_names = itertools.count()


@pytest.fixture(scope="module")
def manager(tmp_path_factory):
    broker = launch(["pravega"], workdir=tmp_path_factory.mktemp("pravega-broker"))
    try:
        assert CONTROLLER in broker.ports, f"no controller listener in {broker.ports}"
        yield pravega_client.StreamManager(f"tcp://127.0.0.1:{broker.ports[CONTROLLER]}")
        assert broker.alive, f"broker {broker.exit_status()}:\n{broker.log_tail()}"
    finally:
        broker.stop()


@pytest.fixture
def scope(manager):
    name = f"scope{next(_names)}"
    assert manager.create_scope(name)
    return name


def test_scope_and_stream_creation(manager, scope):
    assert not manager.create_scope(scope)  # exists already
    assert manager.create_stream(scope, "events", 3)
    assert not manager.create_stream(scope, "events", 3)


def read_events(reader_group, count: int) -> list[bytes]:
    """Read through one reader until ``count`` events arrived (or the deadline passed)."""
    reader = reader_group.create_reader("reader-0")

    async def collect() -> list[bytes]:
        events: list[bytes] = []
        async with asyncio.timeout(READ_DEADLINE):
            while len(events) < count:
                segment_slice = await reader.get_segment_slice_async()
                events.extend(bytes(event.data()) for event in segment_slice)
                reader.release_segment(segment_slice)
        return events

    try:
        return asyncio.run(collect())
    finally:
        reader.reader_offline()


def test_events_with_and_without_routing_keys_read_back_through_a_reader_group(manager, scope):
    manager.create_stream(scope, "events", 2)
    writer = manager.create_writer(scope, "events")
    keyless = [f"keyless-{i}".encode() for i in range(20)]
    keyed = {key: [f"{key}-{i}-é".encode() for i in range(15)] for key in ("alpha", "beta", "gamma")}
    for payload in keyless:
        writer.write_event_bytes(payload)
    for i in range(15):
        for key, payloads in keyed.items():
            writer.write_event_bytes(payloads[i], key)
    writer.write_event("text event ✓")
    writer.flush()

    group = manager.create_reader_group(f"rg{next(_names)}", scope, "events")
    expected = keyless + [p for payloads in keyed.values() for p in payloads] + ["text event ✓".encode()]
    events = read_events(group, len(expected))
    assert sorted(events) == sorted(expected)
    # one routing key -> one segment: its events keep their order
    for key, payloads in keyed.items():
        assert [e for e in events if e.startswith(key.encode() + b"-")] == payloads


def test_byte_stream_round_trip(manager, scope):
    manager.create_stream(scope, "bytes", 1)  # a byte stream has exactly one segment
    stream = manager.create_byte_stream(scope, "bytes")
    data = bytes(range(256)) * 40 + b"\x00tail"
    for start in range(0, len(data), 1000):
        stream.write(data[start:start + 1000])
    stream.flush()
    assert stream.current_tail_offset() == len(data)

    stream.seek(0, 0)
    received = bytearray()
    buffer = bytearray(4096)
    while len(received) < len(data):
        n = stream.readinto(buffer)
        assert n > 0
        received += buffer[:n]
    assert bytes(received) == data

    stream.seek(100, 0)
    part = bytearray(50)
    assert stream.readinto(part) == 50 and bytes(part) == data[100:150]


def test_seal_and_delete_a_stream(manager, scope):
    manager.create_stream(scope, "doomed", 2)
    writer = manager.create_writer(scope, "doomed")
    writer.write_event("before the seal")
    writer.flush()
    assert manager.seal_stream(scope, "doomed")
    assert manager.delete_stream(scope, "doomed")
    assert manager.delete_scope(scope)
