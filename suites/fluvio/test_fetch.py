"""Fetch (key 1) and FetchOffsets (key 1002) (notes §5.1-§5.3)."""

import pytest

from wirecheck.protocols.fluvio import errors, messages, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.fluvio.client import C, INVALID_TOPIC, NO_SUCH_PARTITION, Fluvio, batch_of, new_topic

case = pytest.mark.case


def _three_batches(client, topic):
    start = client.log_end(topic)
    batches = [batch_of([b"a0", b"a1"]), batch_of([b"b0"]), batch_of([b"c0", b"c1", b"c2"])]
    bases = [client.produce_ok(topic, 0, b) for b in batches]
    return start, [records.as_stored(b, base) for b, base in zip(batches, bases)]


@case("fluvio.fetch.stored-batches")
@pytest.mark.parametrize("at", [0, 1, 2, 3, 5], ids=lambda n: f"offset+{n}")
def test_fetch_starts_at_the_batch_holding_the_offset(target, at):
    client, topic = new_topic(target, stem="fetch")
    start, stored = _three_batches(client, topic)
    first = 0 if at < 2 else 1 if at < 3 else 2
    got = client.fetch_batches(topic, 0, start + at)
    if got != stored[first:]:
        raise Divergence(C["fluvio.fetch.stored-batches"], f"stored batches {first}..2 (base offset assigned, CRC "
                         "recomputed)", str([b.hex() for b in got])[:800])


@case("fluvio.fetch.high-watermark")
def test_high_watermark_is_the_log_end(target):
    client, topic = new_topic(target, stem="hw")
    start, _ = _three_batches(client, topic)
    entry = client.fetch(topic, 0, start, clause_id="fluvio.fetch.high-watermark")
    if entry["high_watermark"] != start + 6:
        raise Divergence(C["fluvio.fetch.high-watermark"], f"high_watermark {start + 6}", str(entry["high_watermark"]))
    if entry["log_start_offset"] != 0:
        raise Divergence(C["fluvio.fetch.high-watermark"], "log_start_offset 0", str(entry["log_start_offset"]))


@case("fluvio.fetch.at-end")
def test_fetch_at_the_log_end_is_empty(target):
    client, topic = new_topic(target, stem="atend")
    start, _ = _three_batches(client, topic)
    entry = client.fetch(topic, 0, start + 6, clause_id="fluvio.fetch.at-end")
    if entry["error_code"].code != 0 or entry["records"] != b"":
        raise Divergence(C["fluvio.fetch.at-end"], "error 0 and an empty RecordSet",
                         f"{entry['error_code']}, {len(entry['records'])} record bytes")


@case("fluvio.fetch.beyond-end")
@pytest.mark.parametrize("beyond", [1, 1000, 2**62])
def test_fetch_beyond_the_log_end_is_other(target, beyond):
    client, topic = new_topic(target, stem="beyond")
    start, _ = _three_batches(client, topic)
    entry = client.fetch(topic, 0, start + 6 + beyond, clause_id="fluvio.fetch.beyond-end",
                         decode_clause="fluvio.errors.encoding")
    error = entry["error_code"]
    if error.code != errors.OTHER or not isinstance(error.payload.get("message"), str):
        raise Divergence(C["fluvio.fetch.beyond-end"], "Other (2) with a message", str(error))


@case("fluvio.fetch.unknown-partition")
@pytest.mark.parametrize("where", ["topic", "partition"])
def test_fetch_unknown_is_not_leader(target, where):
    client, topic = new_topic(target, stem="fnl")
    name, partition = (INVALID_TOPIC, 0) if where == "topic" else (topic, NO_SUCH_PARTITION)
    entry = client.fetch(name, partition, 0, clause_id="fluvio.fetch.unknown-partition")
    if entry["error_code"].code != errors.NOT_LEADER_FOR_PARTITION or entry["records"]:
        raise Divergence(C["fluvio.fetch.unknown-partition"], "NotLeaderForPartition (6), no records",
                         f"{entry['error_code']}, {len(entry['records'])} record bytes")


@case("fluvio.fetch.max-bytes")
@pytest.mark.parametrize("max_bytes", [1, 60, 100, 200])
def test_fetch_respects_max_bytes(target, max_bytes):
    client, topic = new_topic(target, stem="maxb")
    start, stored = _three_batches(client, topic)
    entry = client.fetch(topic, 0, start, max_bytes=max_bytes, clause_id="fluvio.fetch.max-bytes")
    data = entry["records"]
    if len(data) > max_bytes:
        raise Divergence(C["fluvio.fetch.max-bytes"], f"at most {max_bytes} record bytes", f"{len(data)} bytes")
    if data != b"".join(stored)[: len(data)]:
        raise Divergence(C["fluvio.fetch.max-bytes"], "a prefix of the stored batches", data.hex()[:400])


@case("fluvio.fetch.isolation-invalid", hostile=True)
@pytest.mark.parametrize("isolation", [2, 0xFF])
def test_fetch_isolation_other_than_0_1_closes(target, isolation):
    client, topic = new_topic(target, stem="fiso")
    client.send(messages.FETCH, client.version(messages.FETCH), Fluvio.fetch_body(topic, 0, 0, isolation=isolation))
    client.closes("fluvio.fetch.isolation-invalid")


@case("fluvio.fetch.isolation-invalid", hostile=True)
def test_stream_fetch_isolation_other_than_0_1_closes(target):
    client, topic = new_topic(target, stem="siso")
    client.stream_fetch(topic, 0, 0, isolation=7)
    client.closes("fluvio.fetch.isolation-invalid")


@case("fluvio.offsets.values")
def test_fetch_offsets_reports_start_and_high_watermark(target):
    client, topic = new_topic(target, stem="offv")
    before = client.fetch_offsets(topic, [0])[0]
    client.produce_ok(topic, 0, batch_of([b"1", b"2", b"3"]))
    after = client.fetch_offsets(topic, [0])[0]
    if after["error_code"].code != 0 or after["partition_index"] != 0:
        raise Divergence(C["fluvio.offsets.values"], "error 0 for partition 0", str(after))
    if after["last_stable_offset"] != before["last_stable_offset"] + 3 or after["start_offset"] != 0:
        raise Divergence(C["fluvio.offsets.values"], f"start 0, last_stable {before['last_stable_offset'] + 3}",
                         f"start {after['start_offset']}, last_stable {after['last_stable_offset']}")


@case("fluvio.offsets.unknown-partition")
@pytest.mark.parametrize("where", ["topic", "partition"])
def test_fetch_offsets_unknown_is_3001(target, where):
    client, topic = new_topic(target, stem="offu")
    name, partition = (INVALID_TOPIC, 0) if where == "topic" else (topic, NO_SUCH_PARTITION)
    entry = client.fetch_offsets(name, [partition], clause_id="fluvio.offsets.unknown-partition")[0]
    if entry["error_code"].code != errors.PARTITION_NOT_LEADER:
        raise Divergence(C["fluvio.offsets.unknown-partition"], "PartitionNotLeader (3001)", str(entry["error_code"]))


@case("fluvio.errors.encoding")
def test_error_payloads_keep_the_stream_in_sync(target):
    """Other(String) in the middle of a multi-partition Fetch: the entries after it must still decode."""
    client, topic = new_topic(target, stem="sync")
    start, stored = _three_batches(client, topic)
    body = Fluvio.fetch_body(topic, 0, start + 1000)
    body["topics"][0]["fetch_partitions"].append({**body["topics"][0]["fetch_partitions"][0], "fetch_offset": start})
    version = client.version(messages.FETCH)
    answer = client.call(messages.FETCH, version, body, "fluvio.errors.encoding",
                         decode_clause="fluvio.errors.encoding")
    parts = answer["topics"][0]["partitions"]
    if len(parts) == 2 and parts[0]["error_code"].code != errors.OTHER:  # which code it is: the beyond-end clause's
        raise Divergence(C["fluvio.fetch.beyond-end"], "Other (2) with a message", str(parts[0]["error_code"]))
    if len(parts) != 2 or records.split_batches(parts[1]["records"]) != stored:
        raise Divergence(C["fluvio.errors.encoding"], "Other(message), then partition 0's batches",
                         str([(str(p["error_code"]), len(p["records"])) for p in parts]))
