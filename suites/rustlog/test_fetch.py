"""Fetch (seed §Fetch Request, §Fetch Response)."""

import time

import pytest

from wirecheck.protocols.rustlog.clauses import MAX_FRAME
from wirecheck.protocols.rustlog.layers import encode_frame
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.rustlog.client import C, RustLog, new_topic, partition_count, produced, short
from wirecheck.targets.transport.outcome import Outcome

case = pytest.mark.case


@case("rustlog.fetch.records")
def test_fetch_returns_what_was_produced(target):
    # A shared topic may hold older records and gain newer ones: our batch is atomic, so the records from its
    # base offset on start with exactly ours.
    client, topic = new_topic(target, shared=True)
    payloads = [b"\x00\xff" * 10, "h\u00e9llo".encode(), bytes(range(256))]
    base = produced(target, client, topic, 0, payloads)
    answer = client.fetch(topic, 0, base)
    if client.payloads(answer)[: len(payloads)] != payloads:
        raise Divergence(C["rustlog.fetch.records"], f"payloads {payloads!r}"[:200],
                         f"{client.payloads(answer)!r}"[:200])
    middle = client.fetch(topic, 0, base + 1)
    if client.payloads(middle)[:2] != payloads[1:]:
        raise Divergence(C["rustlog.fetch.records"], f"records from offset {base + 1} inclusive", short(middle))
    # A zero-length record (base64 ""): notes D3 leave it open, so Error 400 is permitted; a stored one reads back
    # empty. It goes alone, so that a refusal costs the batch above nothing.
    empty = client.call({"type": "Produce", "topic": topic, "partition": 0, "records": [""]},
                        "rustlog.produce.invalid-base64")
    if empty["type"] == "Error" and empty["code"] == 400:
        return
    if empty["type"] != "ProduceResponse" or empty["record_count"] != 1:
        raise Divergence(C["rustlog.produce.invalid-base64"], "a ProduceResponse (record_count 1) or Error 400 for "
                         'the record ""', short(empty))
    read = client.payloads(client.fetch(topic, 0, empty["base_offset"], max_bytes=1))
    if read[:1] != [b""]:
        raise Divergence(C["rustlog.fetch.records"], f"an empty payload at offset {empty['base_offset']}",
                         f"{read[:1]!r}"[:200])


@case("rustlog.fetch.next-offset")
def test_next_offset_follows_the_last_record(target):
    client, topic = new_topic(target, shared=True)
    base = produced(target, client, topic, 0, [b"a", b"b", b"c"])
    for offset in (base, base + 1, base + 2):
        answer = client.fetch(topic, 0, offset)  # checks next_offset = the last record's offset + 1
        if not answer["records"] or answer["next_offset"] < base + 3:
            raise Divergence(C["rustlog.fetch.next-offset"], f"records from {offset}, next_offset >= {base + 3}",
                             short(answer))


@case("rustlog.fetch.at-hw")
def test_fetch_at_the_high_watermark_is_empty(target):
    client, topic = new_topic(target)
    produced(target, client, topic, 0, [b"a", b"b"])
    answer = client.fetch(topic, 0, 2)
    if answer["records"] or answer["next_offset"] != 2:
        raise Divergence(C["rustlog.fetch.at-hw"], "no records, next_offset 2", short(answer))


@case("rustlog.fetch.beyond-hw")
@pytest.mark.parametrize("distance", [1, 1000])
def test_fetch_beyond_the_high_watermark_is_empty(target, distance):
    client, topic = new_topic(target)
    produced(target, client, topic, 0, [b"a", b"b"])
    offset = 2 + distance
    answer = client.call({"type": "Fetch", "group_id": "", "topic": topic, "partition": 0, "offset": offset,
                          "max_bytes": 1024}, "rustlog.fetch.beyond-hw")
    if answer["type"] != "FetchResponse" or answer["records"] or answer["next_offset"] not in (offset, 2):
        raise Divergence(C["rustlog.fetch.beyond-hw"], f"an empty FetchResponse, next_offset {offset} (or 2)",
                         short(answer))


@case("rustlog.fetch.below-log-start")
def test_fetch_below_the_log_start_is_416(target):
    client, topic = new_topic(target)
    batch = [b"r" * 10] * 1000
    log_start = 0
    # Retention is the target's own business; produce until it moves the log start, within a bound.
    for _ in range(12):
        produced(target, client, topic, 0, batch)
        info = client.describe(topic)["partitions"][0]
        log_start = info["log_start_offset"]
        if log_start > 0:
            break
    if log_start == 0:
        raise Unimplemented("the log start offset never moved after 12,000 records (no observable retention)")
    hw = info["high_watermark"]
    error = client.error({"type": "Fetch", "group_id": "", "topic": topic, "partition": 0, "offset": log_start - 1,
                          "max_bytes": 1024}, 416, "rustlog.fetch.below-log-start")
    details = client.details(error)
    wanted = {"valid_range": {"start": log_start, "end": hw}, "high_watermark": hw}
    if {k: details.get(k) for k in wanted} != wanted:
        raise Divergence(C["rustlog.fetch.below-log-start"], f"details {wanted}", short(details))
    at_start = client.fetch(topic, 0, log_start, 100)
    if not at_start["records"]:
        raise Divergence(C["rustlog.fetch.below-log-start"], f"records at the log start {log_start}", short(at_start))


@case("rustlog.fetch.max-bytes")
def test_max_bytes_limits_the_response(target):
    client, topic = new_topic(target)
    produced(target, client, topic, 0, [b"x" * 100] * 10)
    one = client.fetch(topic, 0, 0, max_bytes=10)  # smaller than one record: still one record
    if len(one["records"]) != 1:
        raise Divergence(C["rustlog.fetch.max-bytes"], "exactly 1 record when max_bytes < one record",
                         f"{len(one['records'])} records")
    some = client.fetch(topic, 0, 0, max_bytes=350)
    sizes = [len(p) for p in client.payloads(some)]
    if not sizes or sum(sizes[:-1]) >= 350 or len(sizes) > 4:
        raise Divergence(C["rustlog.fetch.max-bytes"], "3 or 4 records of 100 bytes for max_bytes 350",
                         f"{len(sizes)} records")


@case("rustlog.fetch.max-bytes-zero")
def test_max_bytes_zero_returns_nothing(target):
    client, topic = new_topic(target)
    produced(target, client, topic, 0, [b"a"])
    answer = client.fetch(topic, 0, 0, max_bytes=0)
    if answer["records"] or answer["next_offset"] != 0:
        raise Divergence(C["rustlog.fetch.max-bytes-zero"], "no records, next_offset 0", short(answer))


@case("rustlog.fetch.response-size", hostile=True)
def test_fetch_response_never_exceeds_max_frame(target):
    client, topic = new_topic(target, stem="big")
    client.session.deadline = max(target.deadline, 15.0)
    big = b"\x01" * 3_000_000
    for _ in range(4):  # 12 MB stored: more than one frame can carry
        produced(target, client, topic, 0, [big])
    reply = client.session.request(encode_frame({"type": "Fetch", "group_id": "", "topic": topic, "partition": 0,
                                                 "offset": 0, "max_bytes": 2**40}))
    if reply.outcome is Outcome.UNFRAMEABLE or (not reply.is_frame and reply.partial):
        raise Divergence(C["rustlog.fetch.response-size"], f"a frame of at most {MAX_FRAME} bytes", str(reply))
    answer = client.decode(reply, "rustlog.fetch.records")
    if not 1 <= len(answer["records"]) < 4:
        raise Divergence(C["rustlog.fetch.response-size"], "1 to 3 records of 3 MB", f"{len(answer['records'])}")


@case("rustlog.fetch.unknown-topic")
def test_fetch_unknown_topic_is_404(target):
    RustLog(target).error({"type": "Fetch", "group_id": "", "topic": target.unique("missing"), "partition": 0,
                           "offset": 0, "max_bytes": 1024}, 404, "rustlog.fetch.unknown-topic")


@case("rustlog.fetch.unknown-partition")
def test_fetch_unknown_partition_is_405(target):
    client, topic = new_topic(target, partitions=3, shared=True)
    count = partition_count(target, client, topic)
    client.error({"type": "Fetch", "group_id": "", "topic": topic, "partition": count, "offset": 0,
                  "max_bytes": 1024}, 405, "rustlog.fetch.unknown-partition")


@case("rustlog.fetch.group-id-ignored")
def test_group_commit_does_not_move_the_fetch(target):
    client, topic = new_topic(target, shared=True)
    base = produced(target, client, topic, 0, [b"0", b"1", b"2", b"3"])
    group = target.unique("g")
    with target.precondition(f"group {group} committed offset {base + 3}"):
        client.commit(group, topic, 0, base + 3)
    answer = client.ok({"type": "Fetch", "group_id": group, "topic": topic, "partition": 0, "offset": base + 1,
                        "max_bytes": 1024}, "rustlog.fetch.group-id-ignored")
    first = answer["records"][0]["offset"] if answer["records"] else None
    if first != base + 1 or client.payloads(answer)[0] != b"1":
        raise Divergence(C["rustlog.fetch.group-id-ignored"], f"records from the requested offset {base + 1}",
                         f"first record at offset {first} (the group committed {base + 3})")


@case("rustlog.fetch.timestamp")
def test_timestamps_are_microseconds_since_epoch(target):
    client, topic = new_topic(target, shared=True)
    before = time.time()
    base = produced(target, client, topic, 0, [b"t"])
    after = time.time()
    stamp = client.fetch(topic, 0, base)["records"][0]["timestamp"]
    # Same host or not, clocks agree within minutes; milliseconds or seconds would be off by 10^3 or more.
    if not (before - 300) * 1e6 <= stamp <= (after + 300) * 1e6:
        raise Divergence(C["rustlog.fetch.timestamp"], f"about {int(before * 1e6)} (microseconds)", str(stamp))
