"""Every --fault of the RustLog personality changes what a client observes, and the clean broker does not.

Each probe drives one conversation and returns an observation; the clean broker must give the expected one,
the faulted broker a different one. The suite's quality tests check that the suite *names* the broken clause;
this file only checks that each fault is real.
"""

from __future__ import annotations

import contextlib
import socket
import time

import pytest

from wirecheck.broker.rustlog import FAULTS
from tests.broker.rustlog_support import (
    ProcessBroker, ThreadBroker, create_topic, encode, fetch, frame, produce,
)
from tests.broker.test_rustlog_messages import concurrent_batches

SMALL_FRAME = {"max_frame": 10_000}


def kind(response):
    return None if response is None else response.get("code", response["type"])


def probe_zero_length(client):
    response, _ = client.exchange(b"\x00\x00\x00\x00" + encode({"type": "Ping"}))
    return kind(response)


def probe_oversize(client):
    # The body and a Ping follow the oversized header: only a broker that drained the body answers the Ping.
    response, closed = client.exchange(b"\x00\x00\x27\x11" + b" " * 10_001)
    if closed:
        return "closed"
    assert kind(response) == 413
    return kind(client.request({"type": "Ping"}))


def probe_max_frame(client):
    padded = b'{"type":"Ping"' + b" " * (10_000 - 15) + b"}"
    return kind(client.exchange(frame(padded))[0])


def probe_malformed(client):
    return client.exchange(frame(b'{"type":'))[1]


def probe_invalid_utf8(client):
    return kind(client.exchange(frame(b'{"type":"Ping","x":"\xff"}'))[0])


def probe_unknown_type(client):
    response, closed = client.exchange(encode({"type": "Nope"}))
    return kind(response), closed


def probe_missing_partition(client):
    create_topic(client, "t")
    return kind(produce(client, "t", [b"x"], partition=1)), kind(fetch(client, "t", 0, partition=1))


def probe_record_limit(client):
    create_topic(client, "t")
    return kind(produce(client, "t", [b""] * 1001))


def probe_partition_count(client):
    return kind(client.request({"type": "CreateTopic", "topic": "t", "partition_count": 1001}))


def probe_topic_name(client):
    return kind(client.request({"type": "CreateTopic", "topic": "a.b", "partition_count": 1})), \
        kind(client.request({"type": "CreateTopic", "topic": "x" * 256, "partition_count": 1}))


def probe_next_offset(client):
    create_topic(client, "t")
    produce(client, "t", [b"a", b"b"])
    return fetch(client, "t", 0)["next_offset"]


def probe_beyond_hw(client):
    create_topic(client, "t")
    return kind(fetch(client, "t", 5))


def commit(client, group, offset, topic="t"):
    return client.request({"type": "OffsetCommit", "group": group, "topic": topic, "partition": 0,
                           "offset": offset})["success"]


def committed(client, group, topic="t"):
    return client.request({"type": "OffsetFetch", "group": group, "topic": topic, "partition": 0})["offset"]


def probe_commit_groups(client):
    create_topic(client, "t")
    commit(client, "g1", 1)
    commit(client, "g2", 2)
    return committed(client, "g1")


def probe_commit_unknown(client):
    return commit(client, "g", 1, topic="missing")


def probe_offset_fetch(client):
    create_topic(client, "t")
    return committed(client, "g")


def probe_fetch_group(client):
    create_topic(client, "t")
    produce(client, "t", [b"a", b"b", b"c"])
    commit(client, "g", 2)
    return fetch(client, "t", 0, group_id="g")["records"][0]["offset"]


def probe_batch_atomic(client, broker):
    create_topic(client, "t")
    bases, stored = concurrent_batches(broker, "t")
    return all(stored[base:base + 1000] == [b"%s%04d" % (tag, i) for i in range(1000)]
               for base, tag in zip(bases, (b"A", b"B")))


def probe_fetch_frame(client):
    create_topic(client, "t")
    for _ in range(5):
        produce(client, "t", [b"x" * 3000])
    client.send({"type": "Fetch", "group_id": "", "topic": "t", "partition": 0, "offset": 0, "max_bytes": 10**9})
    length, _ = client.recv_frame()
    return length <= 10_000


def probe_pong(client):
    return client.request({"type": "Ping"})["type"]


def probe_details(client):
    return "details" in client.request({"type": "Nope"})


def probe_length_prefix(client):
    client.send_raw(encode({"type": "Ping"}) * 2)
    length, _ = client.recv_frame()
    return length


def probe_base_offset(client):
    create_topic(client, "t")
    return produce(client, "t", [b"a"])["base_offset"], fetch(client, "t", 0)["records"][0]["offset"]


def probe_float(client):
    create_topic(client, "t")
    return kind(client.request({"type": "Fetch", "group_id": "", "topic": "t", "partition": 0, "offset": 0.0,
                                "max_bytes": 10}))


#: fault -> (probe, what the clean broker must show, broker options)
PROBES = {
    "rustlog.zero-length-ignored": (probe_zero_length, 400, {}),
    "rustlog.oversize-kept-open": (probe_oversize, "closed", SMALL_FRAME),
    "rustlog.max-frame-rejected": (probe_max_frame, "Pong", SMALL_FRAME),
    "rustlog.malformed-json-kept-open": (probe_malformed, True, {}),
    "rustlog.invalid-utf8-accepted": (probe_invalid_utf8, 400, {}),
    "rustlog.unknown-type-closes": (probe_unknown_type, (400, False), {}),
    "rustlog.partition-error-404": (probe_missing_partition, (405, 405), {}),
    "rustlog.record-limit-1001": (probe_record_limit, 400, {}),
    "rustlog.partition-count-unbounded": (probe_partition_count, 400, {}),
    "rustlog.topic-name-unchecked": (probe_topic_name, (400, 400), {}),
    "rustlog.next-offset-off-by-one": (probe_next_offset, 2, {}),
    "rustlog.beyond-hw-416": (probe_beyond_hw, "FetchResponse", {}),
    "rustlog.commit-groups-shared": (probe_commit_groups, 1, {}),
    "rustlog.commit-unknown-topic-succeeds": (probe_commit_unknown, False, {}),
    "rustlog.offset-fetch-zero": (probe_offset_fetch, None, {}),
    "rustlog.fetch-uses-group-offset": (probe_fetch_group, 0, {}),
    "rustlog.batch-not-atomic": (probe_batch_atomic, True, {}),
    "rustlog.fetch-exceeds-frame": (probe_fetch_frame, True, SMALL_FRAME),
    "rustlog.pong-wrong-type": (probe_pong, "Pong", {}),
    "rustlog.error-details-missing": (probe_details, True, {}),
    "rustlog.length-counts-header": (probe_length_prefix, len(b'{"type":"Pong"}'), {}),
    "rustlog.produce-base-offset-off-by-one": (probe_base_offset, (0, 0), {}),
    "rustlog.float-accepted": (probe_float, 400, {}),
}
def probe_partitions_created(client):
    return client.request({"type": "CreateTopic", "topic": "t", "partition_count": 3})["partitions_created"]


def probe_create_existing(client):
    create_topic(client, "t")
    return kind(client.request({"type": "CreateTopic", "topic": "t", "partition_count": 1}))


def probe_segment_count(client):
    create_topic(client, "t")
    return client.request({"type": "DescribeTopic", "topic": "t"})["partitions"][0]["segment_count"]


def probe_describe_unknown(client):
    return kind(client.request({"type": "DescribeTopic", "topic": "missing"}))


def probe_list_topics(client):
    create_topic(client, "t")
    return [t["name"] for t in client.request({"type": "ListTopics"})["topics"]]


def probe_commit_partition(client):
    create_topic(client, "t", 2)
    client.request({"type": "OffsetCommit", "group": "g", "topic": "t", "partition": 1, "offset": 5})
    return committed(client, "g")


def probe_error_keys(client):
    return sorted(client.request({"type": "Nope"}))


def probe_at_hw(client):
    create_topic(client, "t")
    produce(client, "t", [b"a"])
    return fetch(client, "t", 1)["next_offset"]


def probe_below_log_start(client):
    create_topic(client, "t")
    for _ in range(3):
        produce(client, "t", [b"x"] * 10)
    return kind(fetch(client, "t", 0))


def probe_payload_alphabet(client):
    create_topic(client, "t")
    produce(client, "t", [b"\xff\xfe"])
    return fetch(client, "t", 0)["records"][0]["payload"]


def probe_timestamp(client):
    create_topic(client, "t")
    produce(client, "t", [b"a"])
    return fetch(client, "t", 0)["records"][0]["timestamp"] > 10**15  # microseconds since 2001


def probe_fetch_missing_partition(client):
    create_topic(client, "t")
    return kind(fetch(client, "t", 0, partition=1))


def probe_fetch_unknown_topic(client):
    return kind(fetch(client, "missing", 0))


def probe_split_header(client):
    data = encode({"type": "Ping"})
    client.send_raw(data[:2])
    time.sleep(0.05)
    client.send_raw(data[2:])
    return kind(client.recv())


def probe_pipeline(client):
    client.send_raw(encode({"type": "Ping"}) * 20)
    client.sock.settimeout(1.0)
    answers = 0
    with contextlib.suppress(socket.timeout):
        while answers < 20:
            client.recv()
            answers += 1
    return answers


def probe_base64_whitespace(client):
    create_topic(client, "t")
    return kind(client.request({"type": "Produce", "topic": "t", "partition": 0, "records": ["AA==\n"]}))


def probe_produce_unknown_topic(client):
    return kind(produce(client, "missing", [b"x"]))


def probe_not_found_stays_open(client):
    response, closed = client.exchange(encode({"type": "DescribeTopic", "topic": "missing"}))
    return kind(response), closed


def probe_u64(client):
    create_topic(client, "t")
    return kind(fetch(client, "t", 2**64 - 1))


def probe_deep_answered(client):
    return kind(client.exchange(deep_ping(65), wait=1.0)[0])


def probe_stalled_header(client, broker):
    """A peer stalled inside a length prefix, then a new connection's Ping: answered unless the stall holds
    every connection's header read."""
    stalled = broker.client()
    stalled.send_raw(b"\x00\x00")  # stops inside a length prefix
    time.sleep(0.1)  # its two bytes are read (and, with the fault, the lock taken) before the next connection
    try:
        with broker.client(timeout=1.0) as fresh:
            try:
                return kind(fresh.request({"type": "Ping"}))
            except (socket.timeout, TimeoutError):
                return "stalled"
    finally:
        stalled.close()


RETENTION = {"segment_records": 10, "retention_records": 10}

#: entries for PROBES
NEW_PROBES = {
    "rustlog.partitions-created-counts-topics": (probe_partitions_created, 3, {}),
    "rustlog.create-existing-succeeds": (probe_create_existing, 400, {}),
    "rustlog.segment-count-zero-when-empty": (probe_segment_count, 1, {}),
    "rustlog.describe-unknown-400": (probe_describe_unknown, 404, {}),
    "rustlog.list-skips-empty-topics": (probe_list_topics, ["t"], {}),
    "rustlog.commit-ignores-partition": (probe_commit_partition, None, {}),
    "rustlog.error-message-key-wrong": (probe_error_keys, ["code", "details", "message", "type"], {}),
    "rustlog.at-hw-next-offset-zero": (probe_at_hw, 1, {}),
    "rustlog.below-log-start-served": (probe_below_log_start, 416, RETENTION),
    "rustlog.payload-base64url": (probe_payload_alphabet, "//4=", {}),
    "rustlog.timestamp-millis": (probe_timestamp, True, {}),
    "rustlog.fetch-missing-partition-empty": (probe_fetch_missing_partition, 405, {}),
    "rustlog.fetch-unknown-topic-405": (probe_fetch_unknown_topic, 404, {}),
    "rustlog.split-header-misread": (probe_split_header, "Pong", {}),
    "rustlog.pipeline-queue-drops": (probe_pipeline, 20, {}),
    "rustlog.base64-whitespace-trimmed": (probe_base64_whitespace, 400, {}),
    "rustlog.produce-auto-creates-topic": (probe_produce_unknown_topic, 404, {}),
    "rustlog.not-found-closes": (probe_not_found_stays_open, (404, False), {}),
    "rustlog.u64-via-double": (probe_u64, "FetchResponse", {}),
    "rustlog.deep-json-silent": (probe_deep_answered, 400, {}),
    "rustlog.header-read-global-lock": (probe_stalled_header, "Pong", {}),
}
PROBES.update(NEW_PROBES)

PROCESS_FAULTS = {"rustlog.crash-on-deep-json"}  # kills the process: probed in a child process below


def test_every_fault_has_a_probe():
    # the safety faults (".safety-") show only in a history of many operations: tests/safety proves them
    assert set(PROBES) | PROCESS_FAULTS == {fault for fault in FAULTS if ".safety-" not in fault}
    assert all(description.strip() for description in FAULTS.values())


@pytest.mark.parametrize("fault", sorted(PROBES))
def test_fault_changes_behaviour(fault):
    _, expected, options = PROBES[fault]
    clean = observe_clean(fault, options)
    assert clean == expected, f"clean broker: {clean!r}"
    faulted = observe_faulted(fault, options)
    assert faulted != expected, f"--fault {fault} was not observable"


def observe_clean(fault, options):
    probe, _, _ = PROBES[fault]
    with ThreadBroker(**options) as broker, broker.client() as client:
        return run(probe, client, broker)


def observe_faulted(fault, options):
    probe, _, _ = PROBES[fault]
    with ThreadBroker(faults=[fault], **options) as broker, broker.client() as client:
        return run(probe, client, broker)


def run(probe, client, broker):
    return probe(client, broker) if probe.__code__.co_argcount == 2 else probe(client)


def deep_ping(depth: int) -> bytes:
    return frame(b'{"type":"Ping","x":' + b"[" * depth + b"]" * depth + b"}")


@pytest.mark.parametrize("fault", [None, "rustlog.crash-on-deep-json"])
def test_crash_on_deep_json(fault):
    args = ["--fault", fault] if fault else []
    with ProcessBroker(*args) as broker, broker.client() as client:
        response, closed = client.exchange(deep_ping(65))
        if fault:
            assert (response, closed) == (None, True)
            assert broker.process.wait(10) == 70
        else:
            assert response["code"] == 400 and not closed
            assert broker.process.poll() is None
