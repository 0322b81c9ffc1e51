"""Produce, Fetch, FetchOffsets, ApiVersions, StreamFetch and UpdateOffsets of the Fluvio personality."""

from __future__ import annotations

import socket
import struct

import pytest

from tests.broker.fluvio_support import (
    ThreadBroker, api_versions_body, batch, batches_of, decode_api_versions, decode_fetch, decode_produce,
    decode_stream_fetch, decode_update_offsets, fetch_body, produce_body, record_set, request, s16,
    stream_fetch_body, update_offsets_body,
)


@pytest.fixture(scope="module")
def broker():
    with ThreadBroker(max_request_size=4096, topics={"three": 3}) as b:
        yield b


@pytest.fixture
def c(broker):
    with broker.client() as client:
        yield client


def leo(c, topic, partition=0):
    return c.fetch_offsets(topic, partition)[3]


# ---------------------------------------------------------------------------------------------- ApiVersions

def test_api_versions_lists_what_is_implemented(c):
    error, keys, platform = decode_api_versions(c.call(18, 2, api_versions_body()))
    assert error == 0 and platform == "0.0.0"
    assert keys == [(0, 0, 25), (1, 0, 25), (1002, 23, 25), (1003, 0, 25), (1005, 0, 0)]


@pytest.mark.parametrize("version, body", [(0, b""), (1, api_versions_body(client_version=""))])
def test_api_versions_for_legacy_clients_caps_stream_fetch_at_15(c, version, body):
    _, keys, _ = decode_api_versions(c.call(18, version, body))
    assert (1003, 0, 15) in keys


# ---------------------------------------------------------------------------------------------- Produce

def test_offsets_are_assigned_from_the_leo_by_last_offset_delta(c):
    assert c.produce("offsets", batch([b"a", b"b", b"c"])) == (0, 0)
    assert c.produce("offsets", batch([b"d"]), batch([b"e", b"f"])) == (0, 3)
    assert leo(c, "offsets") == 6
    stored = batches_of(c.fetch("offsets", 0)["records"])
    assert [b["base"] for b in stored] == [0, 3, 4] and all(b["crc_ok"] for b in stored)
    # the LEO follows last_offset_delta, not the records really there (A14)
    assert c.produce("offsets", batch([b"g"], last_offset_delta=9)) == (0, 6)
    assert leo(c, "offsets") == 16


def test_stored_batch_is_the_produced_one_with_the_base_offset_set(c):
    sent = batch([b"x", b"y"], base_offset=777, timestamp=1700000000000, epoch=5)
    c.produce("stored", batch([b"w"]))
    c.produce("stored", sent)
    [_, stored] = batches_of(c.fetch("stored", 0)["records"])
    assert stored["base"] == 1 and stored["data"][8:] == sent[8:]


@pytest.mark.parametrize("version", [0, 1, 2, 5, 7, 24, 25])
def test_produce_answers_in_the_layout_of_its_version(c, version):
    body = c.call(0, version, produce_body([("versions", [(0, record_set(batch([b"v"])))])]))
    [(name, [(index, error, _base)])] = decode_produce(body, version)
    assert (name, index, error) == ("versions", 0, 0)


def test_one_response_entry_per_partition_entry_in_order(c):
    parts = [(0, record_set(batch([b"1"]))), (1, record_set(batch([b"2"]))), (0, record_set(batch([b"3", b"4"]))),
             (7, record_set(batch([b"5"])))]
    [(_, entries)] = decode_produce(c.call(0, 25, produce_body([("three", parts)])))
    assert entries == [(0, 0, 0), (1, 0, 0), (0, 0, 1), (7, 6, 0)]


def test_unknown_partition_and_invalid_topic_name_get_not_leader(c):
    c.produce("known", batch([b"a"]))
    assert c.produce("known", batch([b"a"]), partition=1) == (6, 0)
    assert c.produce("Not_Valid", batch([b"a"])) == (6, 0)
    assert c.fetch("Not_Valid", 0)["error"] == 6
    assert c.fetch_offsets("Not_Valid")[0] == 3001


def test_isolation_any_i16_is_accepted(c):
    for isolation in (1, -1, 0, 7, -32768, 32767):
        assert c.produce("isolation", batch([b"i"]), isolation=isolation)[0] == 0


def test_smartmodules_trailer_may_be_absent(c):
    assert c.produce("trailer", batch([b"t"]), smartmodules=None) == (0, 0)
    assert c.produce("trailer", batch([b"t"])) == (0, 1)


def test_smartmodules_are_refused_with_their_codes(c):
    c.produce("sm", batch([b"s"]))
    predefined = b"\x00\x00\x00\x01" + b"\x00" + s16("my-filter") + b"\x00" + b"\x00\x00" + b"\x00" + b"\x00"
    adhoc = b"\x00\x00\x00\x01" + b"\x01" + b"\x00\x00\x00\x02ab" + b"\x00" + b"\x00\x00" + b"\x00" + b"\x01" + s16("n")
    assert c.produce("sm", batch([b"s"]), smartmodules=predefined)[0] == (6001, "my-filter")
    error = c.produce("sm", batch([b"s"]), smartmodules=adhoc)[0]
    assert error[0] == 6002 and error[2] == "n"
    assert leo(c, "sm") == 1


def test_empty_sets_succeed_without_writing(c):
    c.produce("empty", batch([b"a"]))
    assert c.produce("empty") == (0, 0)
    assert c.produce("empty", batch([b"a"], last_offset_delta=-1)) == (0, 0)
    assert leo(c, "empty") == 1


def test_negative_delta_among_real_batches_is_a_storage_error_without_short_circuit(c):
    c.produce("mixed", batch([b"a"]))
    assert c.produce("mixed", batch([b"b"]), batch([b"c"], last_offset_delta=-1)) == (56, 0)
    assert leo(c, "mixed") == 1
    assert c.produce("mixed", batch([b"d"])) == (0, 1)


def test_bad_crc_is_refused_and_nothing_written(c):
    c.produce("crc", batch([b"a"]))
    error, base = c.produce("crc", batch([b"b"], crc=0x12345678))
    assert error[0] == 2 and "CRC" in error[1] and base == 0
    assert leo(c, "crc") == 1


def test_schema_id_batches_are_accepted(c):
    assert c.produce("schema", batch([b"a"], schema_id=42)) == (0, 0)
    [stored] = batches_of(c.fetch("schema", 0)["records"])
    assert stored["crc_ok"] and stored["data"][57:61] == b"\x00\x00\x00\x2a"


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_known_compression_bits_are_accepted_undecompressed(c, codec):
    assert c.produce(f"codec-{codec}", batch(records=b"not really compressed", attributes=codec))[0] == 0


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_unknown_compression_bits_get_compression_error(c, codec):
    assert c.produce("codec-bad", batch([b"a"], attributes=codec)) == (9000, 0)


def test_batch_over_max_request_size_is_message_too_large(c):
    assert c.produce("large", batch([b"x" * 5000])) == (10, 0)
    assert c.produce("large", batch([b"x" * 3000])) == (0, 0)


# ---------------------------------------------------------------------------------------------- Fetch

def test_fetch_starts_at_the_batch_holding_the_offset_and_cuts_at_max_bytes(c):
    for values in ([b"a", b"b"], [b"c", b"d", b"e"], [b"f"]):
        c.produce("fetch", batch(values))
    part = c.fetch("fetch", 3)
    assert (part["error"], part["hw"], part["log_start"], part["next_filter"]) == (0, 6, 0, 0)
    assert [b["base"] for b in batches_of(part["records"])] == [2, 5]
    cut = c.fetch("fetch", 0, max_bytes=100)["records"]
    assert len(cut) == 100 and [b["base"] for b in batches_of(cut)] == [0]
    assert c.fetch("fetch", 6)["records"] == b"" and c.fetch("fetch", 6)["error"] == 0


def test_fetch_errors_carry_their_payloads(c):
    c.produce("fetch-errors", batch([b"a"]))
    assert c.fetch("fetch-errors", 5)["error"] == (2, "start offset: 5 is greater than leo: 1")
    assert c.fetch("fetch-errors", -3)["error"] == (71, -3, 0)
    assert c.fetch("fetch-errors", 0, partition=4)["error"] == 6


def test_fetch_below_v3_has_no_max_bytes_and_returns_no_records(c):
    c.produce("old-fetch", batch([b"a"]))
    body = c.call(1, 2, fetch_body([("old-fetch", [(0, 0)])], version=2))
    [(_, [part])] = decode_fetch(body, 2)
    assert part["error"] == 0 and part["hw"] == 1 and part["records"] == b""


def test_fetch_offsets_reports_start_and_hw(c):
    c.produce("fo", batch([b"a", b"b"]))
    assert c.fetch_offsets("fo") == (0, 0, 0, 2)
    assert c.fetch_offsets("fo", 9) == (3001, 9, 0, 0)


def test_pipelined_requests_are_answered_in_order(c):
    frames = b"".join(request(1002, 25, n, struct.pack(">i", 0)) for n in range(10, 20))
    c.send_raw(frames)
    assert [c.recv()[0] for _ in range(10)] == list(range(10, 20))


# ---------------------------------------------------------------------------------------------- StreamFetch

def open_stream(c, topic, offset, correlation, partition=0, **kw):
    c.send_raw(request(1003, 25, correlation, stream_fetch_body(topic, partition, offset, **kw)))


def expect_silence(c, wait=0.2):
    c.sock.settimeout(wait)
    try:
        with pytest.raises(socket.timeout):
            c.recv()
    finally:
        c.sock.settimeout(5)


def test_stream_pushes_records_and_waits_for_update_offsets(broker, c):
    c.produce("stream", batch([b"a", b"b"]))
    open_stream(c, "stream", 0, 500)
    correlation, body = c.recv()
    topic, stream_id, part = decode_stream_fetch(body)
    assert (correlation, topic, stream_id, part["hw"]) == (500, "stream", 1, 2)
    assert [b["base"] for b in batches_of(part["records"])] == [0]
    with broker.client() as producer:
        producer.produce("stream", batch([b"c"]))
    expect_silence(c)  # flow control: nothing more until the client acknowledges
    assert decode_update_offsets(c.call(1005, 0, update_offsets_body([(2, 1)]))) == [(1, 0)]
    correlation, body = c.recv()
    _, _, part = decode_stream_fetch(body)
    assert correlation == 500 and [b["base"] for b in batches_of(part["records"])] == [2]
    # caught up: the next produce is pushed once the client has acknowledged it all
    c.call(1005, 0, update_offsets_body([(3, 1)]))
    with broker.client() as producer:
        producer.produce("stream", batch([b"d"]))
    _, body = c.recv()
    assert [b["base"] for b in batches_of(decode_stream_fetch(body)[2]["records"])] == [3]


def test_stream_at_the_end_waits_and_other_requests_are_served(broker, c):
    c.produce("stream-wait", batch([b"a"]))
    open_stream(c, "stream-wait", 1, 600)
    expect_silence(c)
    assert c.fetch_offsets("stream-wait") == (0, 0, 0, 1)  # served while the stream is open
    with broker.client() as producer:
        producer.produce("stream-wait", batch([b"b"]))
    correlation, body = c.recv()
    assert correlation == 600 and decode_stream_fetch(body)[2]["hw"] == 2


def test_stream_ids_count_from_one_per_connection_and_refusals_use_zero(c):
    c.produce("ids", batch([b"a"]))
    open_stream(c, "nope", 0, 1)
    _, stream_id, part = decode_stream_fetch(c.recv()[1])
    assert (stream_id, part["error"]) == (0, 6)
    open_stream(c, "ids", 0, 2)
    open_stream(c, "ids", 0, 3)
    ids = sorted(decode_stream_fetch(c.recv()[1])[1] for _ in range(2))
    assert ids == [1, 2]
    open_stream(c, "ids", 5, 4)
    correlation, body = c.recv()
    _, stream_id, part = decode_stream_fetch(body)
    assert (correlation, stream_id, part["error"]) == (4, 3, (2, "start offset: 5 is greater than leo: 1"))


def test_update_offsets_for_an_unknown_session(c):
    assert decode_update_offsets(c.call(1005, 0, update_offsets_body([(0, 42)]))) == [(42, 3002)]


def test_stream_with_a_smartmodule_is_refused_with_one_response(c):
    c.produce("stream-sm", batch([b"a"]))
    predefined = b"\x00\x00\x00\x01" + b"\x00" + s16("f") + b"\x00" + b"\x00\x00" + b"\x00" + b"\x00"
    open_stream(c, "stream-sm", 0, 9, smartmodules=predefined)
    _, stream_id, part = decode_stream_fetch(c.recv()[1])
    assert stream_id == 1 and part["error"] == (6001, "f")


# ---------------------------------------------------------------------------------------------- retention, memory

def test_retention_moves_the_log_start_and_evicts_older_offsets():
    with ThreadBroker(retention_records=3) as b, b.client() as c:
        for _n in range(4):
            c.produce("ret", batch([b"a", b"b"]))
        assert c.fetch_offsets("ret") == (0, 0, 4, 8)
        assert c.fetch("ret", 1)["error"] == (71, 1, 4)
        part = c.fetch("ret", 4)
        assert part["log_start"] == 4 and [x["base"] for x in batches_of(part["records"])] == [4, 6]


def test_memory_budget_answers_partition_full():
    with ThreadBroker(max_store_bytes=1000) as b, b.client() as c:
        assert c.produce("full", batch([b"x" * 600])) == (0, 0)
        assert c.produce("full", batch([b"x" * 600])) == ((72, "full", 0), 0)
        assert c.fetch_offsets("full")[3] == 1
