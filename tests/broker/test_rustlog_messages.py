"""RustLog broker: request validation and the semantics of every message (decisions D3-D12)."""

from __future__ import annotations

import base64
import itertools
import json
import time

import pytest

from tests.broker.rustlog_support import (
    MAX_FRAME, ThreadBroker, create_topic, encode, fetch, frame, payloads_of, produce,
)

MAX_RECORD = 7_864_000
U64_MAX = 2**64 - 1
_names = itertools.count()


@pytest.fixture(scope="module")
def broker():
    with ThreadBroker() as running:
        yield running


@pytest.fixture
def client(broker):
    with broker.client() as connected:
        yield connected


@pytest.fixture
def topic(client):
    name = f"topic-{next(_names)}"
    create_topic(client, name, 3)
    return name


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def assert_error(response: dict, code: int) -> dict:
    assert response["type"] == "Error" and response["code"] == code, response
    assert isinstance(response["message"], str) and response["message"]
    assert "details" in response
    return response


# -- field validation (D2) -----------------------------------------------------------------------------------

def fetch_request(name: str, **overrides) -> dict:
    return {"type": "Fetch", "group_id": "g", "topic": name, "partition": 0, "offset": 0, "max_bytes": 100,
            **overrides}


@pytest.mark.parametrize("field,value", [
    ("offset", "1"), ("offset", True), ("offset", 1.0), ("offset", None), ("offset", -1), ("offset", 2**64),
    ("offset", 1e3), ("offset", [0]), ("partition", 2**32), ("partition", -1), ("max_bytes", 2**64),
    ("group_id", None), ("group_id", 5), ("topic", 7), ("offset", 10**30),
])
def test_invalid_field_is_400_and_stays_open(client, topic, field, value):
    client.send(fetch_request(topic, **{field: value}))
    assert_error(client.recv(), 400)
    assert client.request({"type": "Ping"}) == {"type": "Pong"}


def test_huge_integer_is_400_not_malformed(client, topic):
    payload = json.dumps(fetch_request(topic, offset=0)).replace('"offset": 0', '"offset": ' + "9" * 5000)
    response, closed = client.exchange(frame(payload.encode()))
    assert_error(response, 400)
    assert not closed


@pytest.mark.parametrize("missing", ["group_id", "topic", "partition", "offset", "max_bytes"])
def test_missing_field_is_400(client, topic, missing):
    request = fetch_request(topic)
    del request[missing]
    assert_error(client.request(request), 400)


def test_u64_max_is_exact(client, topic):
    response = client.request(fetch_request(topic, offset=U64_MAX, max_bytes=U64_MAX))
    assert response == {"type": "FetchResponse", "records": [], "next_offset": U64_MAX}
    assert client.request({"type": "OffsetCommit", "group": "g", "topic": topic, "partition": 0,
                           "offset": U64_MAX})["success"] is True
    assert client.request({"type": "OffsetFetch", "group": "g", "topic": topic, "partition": 0})["offset"] == U64_MAX


def test_u32_max_partition_is_valid_but_missing(client, topic):
    assert_error(client.request(fetch_request(topic, partition=2**32 - 1)), 405)


# -- produce -------------------------------------------------------------------------------------------------

def test_produce_offsets_are_consecutive(client, topic):
    assert produce(client, topic, [b"a", b"b"]) == {"type": "ProduceResponse", "base_offset": 0, "record_count": 2}
    assert produce(client, topic, [b"c"]) == {"type": "ProduceResponse", "base_offset": 2, "record_count": 1}
    assert produce(client, topic, [b"z"], partition=2)["base_offset"] == 0  # offsets are per partition
    assert payloads_of(fetch(client, topic, 0)) == [b"a", b"b", b"c"]


def test_empty_batch_reports_hw(client, topic):
    produce(client, topic, [b"x"] * 4)
    assert produce(client, topic, []) == {"type": "ProduceResponse", "base_offset": 4, "record_count": 0}


def test_record_limit(client, topic):
    assert produce(client, topic, [b""] * 1000)["record_count"] == 1000
    response = assert_error(produce(client, topic, [b""] * 1001), 400)
    assert fetch(client, topic, 1000)["records"] == []  # nothing of the refused batch was stored
    assert response["details"]["max_records"] == 1000


@pytest.mark.parametrize("record", ["aGVsbG8", "aGVs bG8=", "aGVsbG8=\n", "aGV-bG8_", "a===", "=aaa", "aGVsbG8=aGVs",
                                    "é", 5, None])
def test_invalid_base64_is_400(client, topic, record):
    assert_error(client.request({"type": "Produce", "topic": topic, "partition": 0, "records": ["", record]}), 400)
    assert fetch(client, topic, 0)["records"] == []  # the batch is all or nothing


def test_empty_string_is_a_zero_length_record(client, topic):
    assert produce(client, topic, [b""])["record_count"] == 1
    assert fetch(client, topic, 0)["records"][0]["payload"] == ""


def test_records_must_be_an_array(client, topic):
    for records in ("aGk=", None, {"0": "aGk="}):
        assert_error(client.request({"type": "Produce", "topic": topic, "partition": 0, "records": records}), 400)


def test_unknown_topic_404_lists_topics(client, topic):
    response = assert_error(produce(client, "no-such-topic", [b"x"]), 404)
    available = response["details"]["available_topics"]
    assert topic in available and available == sorted(available)


def test_unknown_partition_405(client, topic):
    response = assert_error(produce(client, topic, [b"x"], partition=3), 405)
    assert response["details"] == {"partition_count": 3}
    assert_error(fetch(client, topic, 0, partition=3), 405)


@pytest.mark.parametrize("name", ["", "a" * 256, "a.b", "a b", "ü", "../x", "a/b"])
def test_invalid_topic_name_is_400_everywhere(client, name):
    assert_error(client.request({"type": "CreateTopic", "topic": name, "partition_count": 1}), 400)
    assert_error(produce(client, name, [b"x"]), 400)
    assert_error(fetch(client, name, 0), 400)
    assert_error(client.request({"type": "DescribeTopic", "topic": name}), 400)
    assert_error(client.request({"type": "DescribePartition", "topic": name, "partition": 0}), 400)
    commit = {"type": "OffsetCommit", "group": "g", "topic": name, "partition": 0, "offset": 1}
    assert client.request(commit) == {"type": "OffsetCommitResponse", "success": False}
    lookup = {"type": "OffsetFetch", "group": "g", "topic": name, "partition": 0}
    assert client.request(lookup) == {"type": "OffsetFetchResponse", "offset": None}


def test_record_size_limit_and_largest_record_is_fetchable(client, topic):
    largest = bytes(range(256)) * (MAX_RECORD // 256) + b"\x01" * (MAX_RECORD % 256)
    response = assert_error(produce(client, topic, [largest + b"!"]), 413)
    assert response["details"]["max_record_size"] == MAX_RECORD
    assert produce(client, topic, [largest])["record_count"] == 1
    assert produce(client, topic, [largest])["base_offset"] == 1
    client.send(fetch_request(topic, group_id="", max_bytes=U64_MAX))
    length, payload = client.recv_frame()
    assert length <= MAX_FRAME
    response = json.loads(payload)
    assert len(response["records"]) == 1 and response["next_offset"] == 1  # the second would overflow the frame
    assert base64.b64decode(response["records"][0]["payload"]) == largest


# -- fetch ---------------------------------------------------------------------------------------------------

def test_fetch_semantics(client, topic):
    before = time.time_ns() // 1000
    produce(client, topic, [b"0" * 10, b"1" * 10, b"2" * 10, b"3" * 10])
    after = time.time_ns() // 1000
    whole = fetch(client, topic, 0)
    assert [r["offset"] for r in whole["records"]] == [0, 1, 2, 3] and whole["next_offset"] == 4
    assert all(before <= r["timestamp"] <= after for r in whole["records"])
    assert fetch(client, topic, 2)["next_offset"] == 4
    assert fetch(client, topic, 4) == {"type": "FetchResponse", "records": [], "next_offset": 4}
    assert fetch(client, topic, 9) == {"type": "FetchResponse", "records": [], "next_offset": 9}
    assert fetch(client, topic, 1, max_bytes=0) == {"type": "FetchResponse", "records": [], "next_offset": 1}
    assert payloads_of(fetch(client, topic, 1, max_bytes=1)) == [b"1" * 10]  # the first record always comes
    assert len(fetch(client, topic, 0, max_bytes=20)["records"]) == 2
    assert len(fetch(client, topic, 0, max_bytes=29)["records"]) == 2
    assert len(fetch(client, topic, 0, max_bytes=30)["records"]) == 3


def test_fetch_unknown_topic_404(client):
    assert_error(fetch(client, "nope-nope", 0), 404)


def test_group_id_never_moves_the_fetch(client, topic):
    produce(client, topic, [b"a", b"b", b"c"])
    client.request({"type": "OffsetCommit", "group": "readers", "topic": topic, "partition": 0, "offset": 2})
    assert fetch(client, topic, 0, group_id="readers")["records"][0]["offset"] == 0


def test_fetch_is_capped_by_the_frame():
    with ThreadBroker(max_frame=10_000) as small, small.client() as client:
        create_topic(client, "t")
        assert_error(produce(client, "t", [b"x" * 7300]), 413)  # the cap follows max_frame
        for _ in range(5):
            assert produce(client, "t", [b"x" * 3000])["record_count"] == 1
        client.send(fetch_request("t", max_bytes=10**9))
        length, payload = client.recv_frame()
        assert length <= 10_000 and len(json.loads(payload)["records"]) == 2


# -- commits -------------------------------------------------------------------------------------------------

def test_commits(client, topic):
    def commit(group, offset, partition=0, name=topic):
        return client.request({"type": "OffsetCommit", "group": group, "topic": name, "partition": partition,
                               "offset": offset})["success"]

    def committed(group, partition=0, name=topic):
        return client.request({"type": "OffsetFetch", "group": group, "topic": name,
                               "partition": partition})["offset"]

    assert committed("a") is None
    assert commit("a", 5) is True and commit("b", 7) is True and commit("", 9) is True  # beyond HW is fine
    assert (committed("a"), committed("b"), committed("")) == (5, 7, 9)
    assert committed("a", partition=1) is None
    assert commit("a", 3) is True and committed("a") == 3
    assert commit("a", 1, partition=3) is False and committed("a", partition=3) is None
    assert commit("a", 1, name="missing-topic") is False and committed("a", name="missing-topic") is None


# -- admin ---------------------------------------------------------------------------------------------------

def test_create_topic_limits(client):
    name = f"limits-{next(_names)}"
    for bad in (0, 1001, 2**32 - 1):
        assert_error(client.request({"type": "CreateTopic", "topic": name, "partition_count": bad}), 400)
    create_topic(client, name, 1000)
    response = assert_error(client.request({"type": "CreateTopic", "topic": name, "partition_count": 2}), 400)
    assert name in response["message"] and response["details"] == {"topic": name, "partition_count": 1000}
    create_topic(client, "A" * 255 + "", 1)


def test_list_and_describe(client, topic):
    produce(client, topic, [b"a", b"b"], partition=1)
    listed = client.request({"type": "ListTopics"})
    names = [t["name"] for t in listed["topics"]]
    assert names == sorted(names) and {"name": topic, "partition_count": 3} in listed["topics"]
    described = client.request({"type": "DescribeTopic", "topic": topic})
    assert described == {"type": "DescribeTopicResponse", "topic": topic, "partitions": [
        {"partition": p, "high_watermark": 2 if p == 1 else 0, "log_start_offset": 0, "segment_count": 1}
        for p in range(3)]}
    assert client.request({"type": "DescribePartition", "topic": topic, "partition": 1}) == {
        "type": "DescribePartitionResponse", "topic": topic, "partition": 1, "high_watermark": 2,
        "log_start_offset": 0, "segment_count": 1}
    assert_error(client.request({"type": "DescribeTopic", "topic": "missing-topic"}), 404)
    assert_error(client.request({"type": "DescribePartition", "topic": "missing-topic", "partition": 0}), 404)
    assert_error(client.request({"type": "DescribePartition", "topic": topic, "partition": 3}), 405)


def test_metrics():
    with ThreadBroker() as fresh, fresh.client() as client, fresh.client():
        create_topic(client, "m", 4)
        produce(client, "m", [b"abc", b"de"])
        fetch(client, "m", 0)
        metrics = client.request({"type": "MetricsFetch"})
        assert metrics == {"type": "MetricsFetchResponse", "metrics": {
            "messages_produced_total": 2, "messages_fetched_total": 2, "bytes_in_total": 5, "bytes_out_total": 5,
            "active_connections": 2, "topics": 1, "partitions": 4}}


# -- retention (in memory: segments behave as on disk) --------------------------------------------------------

def test_retention_and_log_start():
    with ThreadBroker(segment_records=10, retention_records=10) as small, small.client() as client:
        create_topic(client, "r")
        produce(client, "r", [b"%d" % i for i in range(35)])
        described = client.request({"type": "DescribePartition", "topic": "r", "partition": 0})
        assert (described["log_start_offset"], described["high_watermark"], described["segment_count"]) == (20, 35, 2)
        response = assert_error(fetch(client, "r", 19), 416)
        assert response["details"] == {"valid_range": {"start": 20, "end": 35}, "high_watermark": 35}
        assert payloads_of(fetch(client, "r", 20))[0] == b"20"
        produce(client, "r", [b"x"] * 5)  # HW 40: segment [20, 30) goes, 10 records remain
        described = client.request({"type": "DescribePartition", "topic": "r", "partition": 0})
        assert (described["log_start_offset"], described["segment_count"]) == (30, 1)


def test_segments_without_retention():
    with ThreadBroker(segment_records=10) as small, small.client() as client:
        create_topic(client, "s")
        counts = []
        for n in (10, 1, 9, 1):
            produce(client, "s", [b"x"] * n)
            counts.append(client.request({"type": "DescribePartition", "topic": "s", "partition": 0})["segment_count"])
        assert counts == [1, 2, 2, 3]
        assert [r["offset"] for r in fetch(client, "s", 5)["records"]] == list(range(5, 21))


# -- concurrency ---------------------------------------------------------------------------------------------

def concurrent_batches(broker, topic: str) -> tuple[list[int], list[bytes]]:
    """Two connections send a 1000-record batch each at the same moment; returns bases and the stored log."""
    clients = [broker.client(), broker.client()]
    try:
        frames = [encode({"type": "Produce", "topic": topic, "partition": 0,
                          "records": [b64(b"%s%04d" % (tag, i)) for i in range(1000)]}) for tag in (b"A", b"B")]
        for c, data in zip(clients, frames):
            c.send_raw(data[:-1])
        for c, data in zip(clients, frames):
            c.send_raw(data[-1:])
        bases = [c.recv()["base_offset"] for c in clients]
        stored = []
        while len(stored) < 2000:
            stored += payloads_of(fetch(clients[0], topic, len(stored), max_bytes=10**9))
        return bases, stored
    finally:
        for c in clients:
            c.close()


def test_batches_are_atomic(broker, client, topic):
    bases, stored = concurrent_batches(broker, topic)
    for base, tag in zip(bases, (b"A", b"B")):
        assert stored[base:base + 1000] == [b"%s%04d" % (tag, i) for i in range(1000)]
