"""Every Fluvio fault changes what the wire shows: one probe per fault, run against a clean and a faulted broker.

A probe returns an observation; the test passes when the two observations differ. The clean observation is
pinned too, so a probe that sees nothing useful (the same wrong value on both brokers) cannot pass.
"""

from __future__ import annotations

import socket
import struct

import pytest

from wirecheck.targets.reference.fluvio import FAULTS
from tests.broker.fluvio_support import (
    Closed, ThreadBroker, api_versions_body, batch, batches_of, decode_api_versions, decode_fetch, decode_produce,
    decode_stream_fetch, decode_update_offsets, fetch_body, produce_body, record_set, request,
    stream_fetch_body, update_offsets_body,
)


def stream_then_update(b: ThreadBroker):
    """Records pushed after an UpdateOffsets, or 'silent'."""
    with b.client() as c:
        c.produce("s", batch([b"a"]))
        c.send_raw(request(1003, 25, 77, stream_fetch_body("s", 0, 0)))
        c.recv()
        c.call(1005, 0, update_offsets_body([(1, 1)]))
        with b.client() as producer:
            producer.produce("s", batch([b"b"]))
        c.sock.settimeout(0.5)
        try:
            _, body = c.recv()
        except socket.timeout:
            return "silent"
        return [x["base"] for x in batches_of(decode_stream_fetch(body)[2]["records"])]


def crc_served(b: ThreadBroker):
    with b.client() as c:
        error, _ = c.produce("crc", batch([b"a"], crc=0xDEADBEEF))
        records = c.fetch("crc", 0)["records"]
        return [x["crc_ok"] for x in batches_of(records)]


def unknown_partition(b: ThreadBroker):
    with b.client() as c:
        c.produce("u", batch([b"a"]))
        return c.produce("u", batch([b"a"]), partition=3)[0], c.fetch("u", 0, partition=3)["error"]


def fetch_hw(b: ThreadBroker):
    with b.client() as c:
        c.produce("hw", batch([b"a", b"b"]))
        return c.fetch("hw", 0)["hw"]


def base_offsets(b: ThreadBroker):
    with b.client() as c:
        return [c.produce("base", batch([b"a", b"b"]))[1] for _ in range(2)]


def overadvertise(b: ThreadBroker):
    with b.client() as c:
        _, keys, _ = decode_api_versions(c.call(18, 2, api_versions_body()))
        top = dict((k, hi) for k, _, hi in keys)[0]
        try:
            body = c.call(0, top, produce_body([("adv", [(0, record_set(batch([b"a"])))])]))
        except Closed:
            return "closed"
        return decode_produce(body, top)[0][1][0][1]


def fetch_offsets_code(b: ThreadBroker):
    with b.client() as c:
        return c.fetch_offsets("nope")[0]


def fetch_offsets_start(b: ThreadBroker):
    with b.client() as c:
        c.produce("fos", batch([b"a", b"b"]))
        return c.fetch_offsets("fos")


def compression_code(b: ThreadBroker):
    with b.client() as c:
        return c.produce("z", batch([b"a"], attributes=6))[0]


def offsets_by_count(b: ThreadBroker):
    with b.client() as c:
        c.produce("count", batch([b"a", b"b"], count=9))
        return c.produce("count", batch([b"c"]))[1]


def after_negative_size(b: ThreadBroker):
    with b.client() as c:
        return c.outcome(struct.pack(">i", -8) + request(18, 2, 1, api_versions_body()), wait=0.5)


def correlation(b: ThreadBroker):
    with b.client() as c:
        c.send_raw(request(18, 2, 4242, api_versions_body()))
        return c.recv()[0]


def huge_count_then_probe(b: ThreadBroker):
    with b.client() as c:
        c.outcome(request(0, 25, 1, produce_body([("huge", [(0, record_set(batch([b"a"], count=2**31 - 1)))])])))
    with b.client() as c:
        return c.outcome(request(18, 2, 1, api_versions_body()), wait=0.5)


def unknown_key(b: ThreadBroker):
    with b.client() as c:
        return c.outcome(request(4000, 0, 1, b""), wait=0.5)


def unknown_session(b: ThreadBroker):
    with b.client() as c:
        return decode_update_offsets(c.call(1005, 0, update_offsets_body([(0, 5)])))


def first_stream_id(b: ThreadBroker):
    with b.client() as c:
        c.produce("sid", batch([b"a"]))
        c.send_raw(request(1003, 25, 1, stream_fetch_body("sid", 0, 0)))
        return decode_stream_fetch(c.recv()[1])[1]


def fetch_beyond_leo(b: ThreadBroker):
    with b.client() as c:
        c.produce("beyond", batch([b"a"]))
        body = c.call(1, 25, fetch_body([("beyond", [(0, 5)])]))
        try:
            return decode_fetch(body)[0][1][0]["error"]
        except (AssertionError, struct.error, UnicodeDecodeError) as exc:
            return f"undecodable: {type(exc).__name__}"


def repeated_partition(b: ThreadBroker):
    with b.client() as c:
        parts = [(0, record_set(batch([b"a"]))), (0, record_set(batch([b"b"])))]
        return decode_produce(c.call(0, 25, produce_body([("rep", parts)])))[0][1]


def throttle(b: ThreadBroker):
    with b.client() as c:
        body = c.call(0, 7, produce_body([("thr", [(0, record_set(batch([b"a"])))])]))
        return body[-4:], len(body)


def odd_isolation(b: ThreadBroker):
    with b.client() as c:
        frame = request(0, 25, 1, produce_body([("iso", [(0, record_set(batch([b"a"])))])], isolation=0))
        return c.outcome(frame)


PROBES = {
    "fluvio.crc-unchecked": (crc_served, []),
    "fluvio.error-code-unknown-partition-wrong": (unknown_partition, (6, 6)),
    "fluvio.fetch-hw-off-by-one": (fetch_hw, 2),
    "fluvio.produce-base-offset-wrong": (base_offsets, [0, 2]),
    "fluvio.apiversions-overadvertise": (overadvertise, 0),
    "fluvio.stream-fetch-no-updates": (stream_then_update, [1]),
    "fluvio.fetch-offsets-wrong-code": (fetch_offsets_code, 3001),
    "fluvio.fetch-offsets-start-is-hw": (fetch_offsets_start, (0, 0, 0, 2)),
    "fluvio.compression-error-wrong": (compression_code, 9000),
    "fluvio.offsets-follow-record-count": (offsets_by_count, 2),
    "fluvio.negative-size-stays-open": (after_negative_size, "closed"),
    "fluvio.correlation-id-wrong": (correlation, 4242),
    "fluvio.crash-on-huge-record-count": (huge_count_then_probe, "answered"),
    "fluvio.unknown-key-stays-open": (unknown_key, "closed"),
    "fluvio.update-offsets-unknown-session-ok": (unknown_session, [(5, 3002)]),
    "fluvio.stream-id-zero": (first_stream_id, 1),
    "fluvio.error-payload-missing": (fetch_beyond_leo, (2, "start offset: 5 is greater than leo: 1")),
    "fluvio.produce-responses-merged": (repeated_partition, [(0, 0, 0), (0, 0, 1)]),
    "fluvio.throttle-missing": (throttle, (b"\x00\x00\x00\x00", 47)),
    "fluvio.isolation-strict": (odd_isolation, "answered"),
}


def test_every_fault_has_a_probe():
    # The SC's faults (fluvio.sc-*) are probed through the suite in tests/quality (test_sc.py), not here.
    assert set(PROBES) == {fault for fault in FAULTS if not fault.startswith("fluvio.sc-")}
    assert len(FAULTS) >= 12


@pytest.mark.parametrize("fault", sorted(PROBES))
def test_fault_is_observable(fault):
    probe, clean_value = PROBES[fault]
    with ThreadBroker() as clean:
        clean_seen = probe(clean)
    with ThreadBroker(faults=[fault]) as faulted:
        faulted_seen = probe(faulted)
    assert clean_seen == clean_value
    assert faulted_seen != clean_seen, f"{fault}: both brokers showed {clean_seen!r}"
