"""Every Fluvio fault changes what the wire shows: one probe per fault, run against a clean and a faulted broker.

A probe returns an observation; the test passes when the two observations differ. The clean observation is
pinned too, so a probe that sees nothing useful (the same wrong value on both brokers) cannot pass.
"""

from __future__ import annotations

import gzip
import socket
import struct
import time

import pytest

from wirecheck.broker.fluvio import FAULTS
from tests.broker.fluvio_support import (
    Closed, ThreadBroker, api_versions_body, batch, batches_of, decode_api_versions, decode_fetch, decode_produce,
    decode_fetch_consumer_offsets, decode_stream_fetch, decode_update_offsets, fetch_body,
    fetch_consumer_offsets_body, fetch_offsets_body, produce_body, record, record_set, request, s16,
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


def compression_code_with_a_stream_open(b: ThreadBroker):
    """The same wrong compression bits, on a connection that holds a stream parked at the end of its topic."""
    with b.client() as c:
        c.produce("zs", batch([b"a"]))
        c.send_raw(request(1003, 25, 77, stream_fetch_body("zs", 0, 1)))
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


def above_max_version(b: ThreadBroker):
    with b.client() as c:
        return c.outcome(request(0, 26, 1, produce_body([("amv", [(0, record_set(batch([b"a"])))])])))


def after_negative_delta(b: ThreadBroker):
    with b.client() as c:
        c.produce("nd", batch([b"a"]), batch([], last_offset_delta=-1), batch([b"b"]))
        return c.produce("nd", batch([b"c"]))[0]


def consumer_offsets(b: ThreadBroker, delete: bool = False, only: str | None = None):
    """Two consumers commit offsets 3 and 4 on their streams; then (optionally) the first is deleted; the list
    (optionally filtered to one consumer id) as FetchConsumerOffsets shows it."""
    with b.client() as c:
        c.produce("co", batch([b"a"]))
        for stream_id, (consumer, offset) in enumerate((("one", 3), ("two", 4)), start=1):
            c.send_raw(request(1003, 25, 10 + stream_id, stream_fetch_body("co", 0, 0, consumer_id=consumer)))
            c.recv()
            c.call(1006, 25, struct.pack(">qI", offset, stream_id))
        if delete:
            c.call(1007, 25, b"\x00\x02co" + struct.pack(">I", 0) + b"\x00\x03one")
        return decode_fetch_consumer_offsets(c.call(1008, 25, fetch_consumer_offsets_body(only)))


def consumer_offset_unknown_session(b: ThreadBroker):
    with b.client() as c:
        return struct.unpack(">qh", c.call(1006, 25, struct.pack(">qI", 7, 9))[:10])


def fetch_at_end(b: ThreadBroker):
    with b.client() as c:
        c.produce("end", batch([b"a"]))
        return c.fetch("end", 1)["error"]


def fetch_isolation_2(b: ThreadBroker):
    with b.client() as c:
        c.produce("fi", batch([b"a"]))
        return c.outcome(request(1, 25, 1, fetch_body([("fi", [(0, 0)])], isolation=2)))


def fetch_cut(b: ThreadBroker):
    with b.client() as c:
        c.produce("mb", batch([b"a"]), batch([b"b"]))
        return len(c.fetch("mb", 0, max_bytes=50)["records"])


def fetch_from_second_batch(b: ThreadBroker):
    with b.client() as c:
        c.produce("early", batch([b"a"]))
        c.produce("early", batch([b"b"]))
        return [x["base"] for x in batches_of(c.fetch("early", 1)["records"])]


def fetch_unknown(b: ThreadBroker):
    with b.client() as c:
        return c.fetch("nope", 0)["error"]


def pipelined_order(b: ThreadBroker):
    """Correlation ids of the answers to a FetchOffsets and an ApiVersions sent in one write."""
    with b.client() as c:
        c.produce("po", batch([b"a"]))
        c.send_raw(request(1002, 25, 101, fetch_offsets_body([("po", [0])])) + request(18, 2, 102, api_versions_body()))
        return [c.recv()[0], c.recv()[0]]


def split_size_prefix(b: ThreadBroker):
    with b.client() as c:
        frame = request(18, 2, 9, api_versions_body())
        c.send_raw(frame[:3])
        time.sleep(0.2)
        return c.outcome(frame[3:])


def big_answer_size(b: ThreadBroker):
    with b.client() as c:
        c.produce("big", batch([b"x" * 70_000]))
        c.send_raw(request(1, 25, 1, fetch_body([("big", [(0, 0)])])))
        return struct.unpack(">i", c._exactly(4))[0] > 0xFFFF


def zero_size(b: ThreadBroker):
    with b.client() as c:
        return c.outcome(struct.pack(">i", 0))


def invalid_utf8(b: ThreadBroker):
    with b.client() as c:
        body = s16("0.18.2") + struct.pack(">h", 2) + b"\xff\xfe" + s16("x86_64")
        return c.outcome(request(18, 2, 1, body))


def gzip_stored(b: ThreadBroker):
    with b.client() as c:
        sent = batch(records=gzip.compress(struct.pack(">i", 1) + record(b"zipped"), 6, mtime=0), attributes=1,
                     last_offset_delta=0)
        c.produce("gz", sent)
        return c.fetch("gz", 0)["records"] == sent


def empty_produce(b: ThreadBroker):
    with b.client() as c:
        c.produce("ep", batch([b"a"]))
        return c.produce("ep")


def read_committed(b: ThreadBroker):
    with b.client() as c:
        body = produce_body([("rc", [(0, record_set(batch([b"a"])))])], isolation=-1, timeout=3000)
        return c.outcome(request(0, 25, 1, body), wait=1.0)


def negative_timeout(b: ThreadBroker):
    with b.client() as c:
        return c.outcome(request(0, 25, 1, produce_body([("nt", [(0, record_set(batch([b"a"])))])], timeout=-1)))


def count_field_stored(b: ThreadBroker):
    with b.client() as c:
        c.produce("cnt", batch([b"a"], count=7))
        return struct.unpack_from(">i", c.fetch("cnt", 0)["records"], 57)[0]


def record_set_overrun(b: ThreadBroker):
    with b.client() as c:
        data = batch([b"a"])
        body = produce_body([("ov", [(0, struct.pack(">i", len(data) + 100) + data)])])
        return c.outcome(request(0, 25, 1, body))


def schema_stored(b: ThreadBroker):
    with b.client() as c:
        c.produce("sch", batch([b"a"]), batch([b"b"], schema_id=42))
        return [x["data"][22] & 0x10 for x in batches_of(c.fetch("sch", 0)["records"])]


def just_over_the_limit(b: ThreadBroker):
    with b.client() as c:
        return c.produce("big", batch([b"\0" * (33_554_432 - 57)]))[0]


def unknown_topic(b: ThreadBroker):
    with b.client() as c:
        return c.produce("NO_SUCH", batch([b"a"]))[0]


def padded_varint(b: ThreadBroker):
    with b.client() as c:
        one = record(b"padded")
        records = struct.pack(">i", 1) + bytes([one[0] | 0x80, 0x80, 0x00]) + one[1:]
        body = produce_body([("pad", [(0, record_set(batch(records=records, last_offset_delta=0)))])])
        return c.outcome(request(0, 25, 1, body))


def stalled_peer(b: ThreadBroker):
    with b.client() as stalled, b.client() as c:
        stalled.send_raw(request(18, 2, 1, api_versions_body())[:10])
        time.sleep(0.1)
        return c.outcome(request(18, 2, 2, api_versions_body()))


def request_behind_a_stream(b: ThreadBroker):
    with b.client() as c:
        c.produce("sb", batch([b"a"]))
        c.send_raw(request(1003, 25, 1, stream_fetch_body("sb", 0, 1)))  # at the log end: it waits
        return c.outcome(request(18, 2, 2, api_versions_body()))


def refused_stream_id(b: ThreadBroker):
    with b.client() as c:
        c.send_raw(request(1003, 25, 1, stream_fetch_body("nope", 0, 0)))
        return decode_stream_fetch(c.recv()[1])[1]


def stream_at_end(b: ThreadBroker):
    with b.client() as c:
        c.produce("se", batch([b"a"]))
        return c.outcome(request(1003, 25, 1, stream_fetch_body("se", 0, 1)))


def legacy_api_keys(b: ThreadBroker):
    with b.client() as c:
        return sorted(k for k, _, _ in decode_api_versions(c.call(18, 0, b""))[1])


def platform_version(b: ThreadBroker):
    with b.client() as c:
        return decode_api_versions(c.call(18, 2, api_versions_body()))[2]


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
    "fluvio.stream-open-compression-wrong": (compression_code_with_a_stream_open, 9000),
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
    "fluvio.version-above-max-silent": (above_max_version, "closed"),
    "fluvio.negative-delta-short-circuits": (after_negative_delta, 0),
    "fluvio.consumer-offset-not-stored": (consumer_offsets, (0, [("one", "co", 0, 3), ("two", "co", 0, 4)])),
    "fluvio.consumer-offset-unknown-session-ok": (consumer_offset_unknown_session, (7, 3002)),
    "fluvio.consumer-offset-delete-ignored": (lambda b: consumer_offsets(b, delete=True),
                                              (0, [("two", "co", 0, 4)])),
    "fluvio.consumer-offset-filter-ignored": (lambda b: consumer_offsets(b, only="two"), (0, [("two", "co", 0, 4)])),
    "fluvio.fetch-at-end-is-beyond": (fetch_at_end, 0),
    "fluvio.fetch-beyond-end-clamped": (fetch_beyond_leo, (2, "start offset: 5 is greater than leo: 1")),
    "fluvio.fetch-isolation-any-nonzero": (fetch_isolation_2, "closed"),
    "fluvio.fetch-max-bytes-ignored": (fetch_cut, 50),
    "fluvio.fetch-starts-one-early": (fetch_from_second_batch, [1]),
    "fluvio.fetch-unknown-partition-3001": (fetch_unknown, 6),
    "fluvio.fetch-offsets-overtaken": (pipelined_order, [101, 102]),
    "fluvio.partial-size-prefix": (split_size_prefix, "answered"),
    "fluvio.response-size-u16": (big_answer_size, True),
    "fluvio.zero-size-skipped": (zero_size, "closed"),
    "fluvio.utf8-lossy": (invalid_utf8, "closed"),
    "fluvio.compression-recompressed": (gzip_stored, True),
    "fluvio.empty-produce-base-is-leo": (empty_produce, (0, 0)),
    "fluvio.read-committed-waits-timeout": (read_committed, "answered"),
    "fluvio.negative-timeout-accepted": (negative_timeout, "closed"),
    "fluvio.record-count-rewritten": (count_field_stored, 7),
    "fluvio.recordset-overrun-clamped": (record_set_overrun, "closed"),
    "fluvio.schema-id-dropped": (schema_stored, [0, 0x10]),
    "fluvio.too-large-records-only": (just_over_the_limit, 10),
    "fluvio.unknown-topic-not-found": (unknown_topic, 6),
    "fluvio.padded-varint-hangs": (padded_varint, "answered"),
    "fluvio.reads-serialised": (stalled_peer, "answered"),
    "fluvio.stream-blocks-connection": (request_behind_a_stream, "answered"),
    "fluvio.stream-refusal-numbered": (refused_stream_id, 0),
    "fluvio.stream-at-end-answers-empty": (stream_at_end, "silent"),
    "fluvio.apiversions-legacy-drops-stream-fetch": (legacy_api_keys, [0, 1, 1002, 1003, 1005]),
    "fluvio.platform-version-empty": (platform_version, "0.0.0"),
}


def test_every_fault_has_a_probe():
    # The SC's faults (fluvio.sc-*) are probed through the suite in tests/quality (test_sc.py), the safety faults
    # (fluvio.safety-*) by the safety runs in tests/safety, not here.
    assert set(PROBES) == {fault for fault in FAULTS if not fault.startswith(("fluvio.sc-", "fluvio.safety-"))}
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
