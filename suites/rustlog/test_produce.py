"""Produce (seed §Produce Request, §Produce Response)."""

import pytest

from wirecheck.protocols.rustlog.clauses import MAX_RECORD, MAX_RECORDS
from wirecheck.protocols.rustlog.layers import encode_frame
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.rustlog.client import C, RustLog, b64, new_topic, partition_count, produced, short

case = pytest.mark.case


@case("rustlog.produce.offsets")
def test_offsets_are_consecutive_from_the_high_watermark(target):
    client, topic = new_topic(target, partitions=2)
    first = client.produce(topic, 1, [b"a", b"b", b"c"])
    second = client.produce(topic, 1, [b"d", b"e"])
    other = client.produce(topic, 0, [b"z"])
    got = (first["base_offset"], second["base_offset"], other["base_offset"])
    if got != (0, 3, 0):
        raise Divergence(C["rustlog.produce.offsets"], "base offsets 0, 3 (partition 1) and 0 (partition 0)", str(got))


@case("rustlog.produce.unknown-topic")
def test_unknown_topic_is_404(target):
    RustLog(target).error({"type": "Produce", "topic": target.unique("missing"), "partition": 0,
                           "records": ["AA=="]}, 404, "rustlog.produce.unknown-topic")


@case("rustlog.errors.topic-not-found-details")
def test_unknown_topic_error_lists_available_topics(target):
    client = RustLog(target)
    missing = target.unique("missing")
    with target.precondition(f"a Produce to the missing topic {missing} answered 404"):
        error = client.error({"type": "Produce", "topic": missing, "partition": 0, "records": ["AA=="]}, 404,
                             "rustlog.produce.unknown-topic")
    details = client.details(error)
    if not isinstance(details.get("available_topics"), list):
        raise Divergence(C["rustlog.errors.topic-not-found-details"], "details.available_topics: a list",
                         short(details))


@case("rustlog.produce.unknown-partition")
@pytest.mark.parametrize("partition", [None, 1000, 2**32 - 1], ids=["first-unknown", "1000", "u32-max"])
def test_unknown_partition_is_405(target, partition):
    # 1000 is past the largest partition count (MAX_PARTITIONS): unknown on every topic.
    client, topic = new_topic(target, partitions=2, shared=True)
    partition = partition_count(target, client, topic) if partition is None else partition
    client.error({"type": "Produce", "topic": topic, "partition": partition, "records": ["AA=="]}, 405,
                 "rustlog.produce.unknown-partition")


@case("rustlog.produce.record-limit")
@pytest.mark.parametrize("count,accepted", [(MAX_RECORDS, True), (MAX_RECORDS + 1, False)], ids=["1000", "1001"])
def test_record_count_limit(target, count, accepted):
    client, topic = new_topic(target)
    request = {"type": "Produce", "topic": topic, "partition": 0, "records": [b64(b"%d" % i) for i in range(count)]}
    if accepted:
        answer = client.ok(request, "rustlog.produce.record-limit")
        if answer["record_count"] != count:
            raise Divergence(C["rustlog.produce.record-limit"], f"record_count {count}", short(answer))
    else:
        client.error(request, 400, "rustlog.produce.record-limit")
        if client.high_watermark(topic, 0) != 0:
            raise Divergence(C["rustlog.produce.record-limit"], "nothing appended by a rejected batch",
                             f"high_watermark {client.high_watermark(topic, 0)}")


@case("rustlog.produce.invalid-base64")
@pytest.mark.parametrize("record", ["SGVsbG8", "SGVsbG8==", "SGVs bG8=", "S-_y", "====", "SGVsbG8=\n", "\u00e9AAA"])
def test_invalid_base64_is_400(target, record):
    client, topic = new_topic(target)
    client.error({"type": "Produce", "topic": topic, "partition": 0, "records": ["AA==", record]}, 400,
                 "rustlog.produce.invalid-base64")
    if client.high_watermark(topic, 0) != 0:
        raise Divergence(C["rustlog.produce.invalid-base64"], "the rejected batch appends nothing",
                         f"high_watermark {client.high_watermark(topic, 0)}")


@case("rustlog.produce.record-too-large", hostile=True)
def test_record_above_the_limit_is_413(target):
    client, topic = new_topic(target, stem="x")
    client.session.deadline = max(target.deadline, 10.0)
    answer = client.call({"type": "Produce", "topic": topic, "partition": 0,
                          "records": [b64(b"\0" * (MAX_RECORD + 1))]}, "rustlog.produce.record-too-large")
    if answer["type"] != "Error" or answer["code"] != 413:
        raise Divergence(C["rustlog.produce.record-too-large"], "Error 413", short(answer))


@case("rustlog.produce.empty-batch")
def test_empty_batch_appends_nothing(target):
    client, topic = new_topic(target)
    produced(target, client, topic, 0, [b"one", b"two"])
    answer = client.call({"type": "Produce", "topic": topic, "partition": 0, "records": []},
                         "rustlog.produce.empty-batch")
    if answer != {"type": "ProduceResponse", "base_offset": 2, "record_count": 0}:
        raise Divergence(C["rustlog.produce.empty-batch"], "ProduceResponse base_offset 2, record_count 0",
                         short(answer))


@case("rustlog.produce.topic-name")
@pytest.mark.parametrize("name", ["", "a" * 256, "has space", "dot.ted", "slash/ed", "\u00fcmlaut"],
                         ids=["empty", "256", "space", "dot", "slash", "non-ascii"])
def test_produce_to_an_invalid_topic_name_is_400(target, name):
    client = RustLog(target)
    answer = client.call({"type": "Produce", "topic": name, "partition": 0, "records": ["AA=="]},
                         "rustlog.produce.topic-name")
    if answer["type"] != "Error" or answer["code"] != 400:
        raise Divergence(C["rustlog.produce.topic-name"], "Error 400", short(answer))


@case("rustlog.produce.batch-atomic")
def test_concurrent_batches_do_not_interleave(target):
    """Eight connections each send a Produce of 200 records to one partition, all at once: every request but its
    last byte first, then the eight last bytes back to back, so that the server has all eight whole before it can
    finish the first (threads started one after another would let a busy machine serialise them, and a server
    that appends record by record would pass by luck)."""
    _, topic = new_topic(target)
    batches, size, results = 8, 200, {}
    clients = [RustLog(target) for _ in range(batches)]
    frames = [encode_frame({"type": "Produce", "topic": topic, "partition": 0,
                            "records": [b64(b"%d:%d" % (n, i)) for i in range(size)]}) for n in range(batches)]
    target.races(f"{batches} Produce requests completed back to back")
    for client, frame in zip(clients, frames):
        client.send(frame[:-1])
    for client, frame in zip(clients, frames):
        client.send(frame[-1:])
    for n, client in enumerate(clients):
        answer = client.receive("rustlog.produce.batch-atomic", "an answer to a concurrent Produce")
        if answer["type"] != "ProduceResponse":
            raise Divergence(C["rustlog.produce.batch-atomic"], "a ProduceResponse", short(answer))
        results[n] = answer["base_offset"]
        client.close()
    reader = RustLog(target)
    records, offset = [], 0
    while offset < batches * size:
        answer = reader.fetch(topic, 0, offset, 1 << 20)
        if not answer["records"]:
            break
        records += reader.payloads(answer)
        offset = answer["next_offset"]
    for n in results:  # found by content: where each batch landed is produce.offsets' concern
        base = records.index(b"%d:0" % n) if b"%d:0" % n in records else 0
        mine = records[base : base + size]
        if mine != [b"%d:%d" % (n, i) for i in range(size)]:
            raise Divergence(C["rustlog.produce.batch-atomic"],
                             f"batch {n} at offsets {base}..{base + size - 1} contiguous",
                             f"found {[r.decode(errors='replace') for r in mine[:6]]}...")
