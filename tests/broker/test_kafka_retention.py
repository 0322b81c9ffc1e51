"""Broker-wide time retention of the Kafka personality (``--kafka-retention-ms``, run every
``--kafka-retention-check-ms``): closed segments past the retention go, the active segment stays, and a topic's
retention.ms override wins over the broker default."""

from __future__ import annotations

import time

from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse

from wirecheck.broker.kafka.storage import SEGMENT_MS, Partition
from wirecheck.broker.kafka import records as stored
from tests.broker.test_kafka_data import fetch, new_topic, produce
from tests.interop.kafka_support import InProcessBroker, record_batch

DAY = 24 * 3600 * 1000


def log_start(w, topic: str) -> int:
    """ListOffsets EARLIEST: the log start offset (a Fetch below it is out of range, and answers -1 there, as Kafka)."""
    return w.call(ListOffsetsRequest, ListOffsetsResponse, 7, replica_id=-1, isolation_level=0, topics=[
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}]}]
    ).topics[0].partitions[0].offset


def log_start_after_sweeps(w, topic: str, expected: int) -> int:
    """The partition's log start offset once it is ``expected``, or after several retention runs (50 ms apart)."""
    deadline = time.monotonic() + 5
    while True:
        start = log_start(w, topic)
        if start == expected or time.monotonic() > deadline:
            return start
        time.sleep(0.05)


def log_start_after_a_while(w, topic: str) -> int:
    time.sleep(0.3)  # several retention runs (50 ms apart)
    return log_start(w, topic)


def test_default_retention_drops_closed_segments_only():
    now = int(time.time() * 1000)
    with InProcessBroker(retention_ms=DAY, retention_check_ms=50) as b, b.wire() as w:
        topic = new_topic(w)
        produce(w, topic, record_batch([b"month-old"], timestamps=[now - 30 * DAY]))
        produce(w, topic, record_batch([b"also-old"], timestamps=[now - 30 * DAY]))  # the same segment
        produce(w, topic, record_batch([b"fresh"], timestamps=[now]))  # more than segment.ms later: rolls
        assert log_start_after_sweeps(w, topic, 2) == 2
        assert fetch(w, topic, 0).error_code == 1  # OFFSET_OUT_OF_RANGE below the new log start


def test_the_active_segment_stays_however_old():
    old = int(time.time() * 1000) - 30 * DAY
    with InProcessBroker(retention_ms=DAY, retention_check_ms=50) as b, b.wire() as w:
        topic = new_topic(w)
        for i in range(3):
            produce(w, topic, record_batch([b"old-%d" % i], timestamps=[old]))
        assert log_start_after_a_while(w, topic) == 0


def test_topic_override_keeps_what_the_default_would_drop():
    from tests.broker.kafka_admin_probes import set_config

    now = int(time.time() * 1000)
    with InProcessBroker(retention_ms=DAY, retention_check_ms=50) as b, b.wire() as w:
        topic = new_topic(w)
        assert set_config(w, topic, "retention.ms", "-1") == 0
        produce(w, topic, record_batch([b"month-old"], timestamps=[now - 30 * DAY]))
        produce(w, topic, record_batch([b"fresh"], timestamps=[now]))
        assert log_start_after_a_while(w, topic) == 0


def test_the_broker_default_is_described():
    with InProcessBroker(retention_ms=DAY) as b, b.wire() as w:
        topic = new_topic(w)
        r = w.call(DescribeConfigsRequest, DescribeConfigsResponse, 4, resources=[
            {"resource_type": 2, "resource_name": topic, "configuration_keys": ["retention.ms"]},
            {"resource_type": 4, "resource_name": "0", "configuration_keys": ["log.retention.ms"]}],
            include_synonyms=False, include_documentation=False)
        assert [(c.name, c.value) for res in r.results for c in res.configs] == [
            ("retention.ms", str(DAY)), ("log.retention.ms", str(DAY))]


def test_segments_roll_by_time_and_by_size():
    partition = Partition(0)
    for _offset, ts in enumerate([0, 1, SEGMENT_MS + 2, SEGMENT_MS + 3]):
        data = record_batch([b"x"], timestamps=[ts])
        partition.append(data, stored.parse_header(data))
    assert partition.expire_segments(before_ms=SEGMENT_MS) == 2  # the first segment (offsets 0-1) is closed
    assert partition.log_start == 2
    assert partition.expire_segments(before_ms=10 * SEGMENT_MS) == 0  # the rest is the active segment
    small = Partition(0)
    for _ in range(3):
        data = record_batch([b"y" * 100], timestamps=[0])
        small.append(data, stored.parse_header(data))
    assert small.expire_segments(before_ms=1, segment_bytes=len(data) + 1) == 2  # one batch per segment
