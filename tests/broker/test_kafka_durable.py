"""Kafka personality with --data-dir: topics and batches survive a restart; a torn tail is cut off."""

from __future__ import annotations

from kafka.protocol.admin.topics import DeleteTopicsRequest, DeleteTopicsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from tests.broker.test_kafka_data import batches_in, fetch, new_topic, produce
from tests.interop.kafka_support import InProcessBroker, record_batch


def test_batches_and_topics_survive_a_restart(tmp_path):
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w, partitions=2)
        produce(w, topic, record_batch([b"a", b"b"]))
        produce(w, topic, record_batch([b"c"]), partition=1)
        before = fetch(w, topic, 0).records
        topic_id = w.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": topic}]).topics[0].topic_id
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert fetch(w, topic, 0).records == before
        assert fetch(w, topic, 0, partition=1).high_watermark == 1
        assert produce(w, topic, record_batch([b"d"])).base_offset == 2
        meta = w.call(MetadataRequest, MetadataResponse, 12, topics=[{"name": topic}])
        assert meta.topics[0].topic_id == topic_id and len(meta.topics[0].partitions) == 2


def test_torn_tail_is_truncated_on_recovery(tmp_path):
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w)
        produce(w, topic, record_batch([b"kept"]))
        produce(w, topic, record_batch([b"torn"]))
    (log_file,) = (tmp_path / "kafka" / "logs").iterdir()
    data = log_file.read_bytes()
    log_file.write_bytes(data[:-5])  # a crash in the middle of the second batch
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        part = fetch(w, topic, 0)
        assert part.high_watermark == 1 and len(batches_in(part.records)) == 1
        assert produce(w, topic, record_batch([b"next"])).base_offset == 1
    assert [base for base, _ in batches_in(log_file.read_bytes())] == [0, 1]  # torn bytes gone from the file


def test_deleted_topics_stay_deleted(tmp_path):
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        topic = new_topic(w)
        produce(w, topic, record_batch([b"a"]))
        w.call(DeleteTopicsRequest, DeleteTopicsResponse, 5, topic_names=[topic], timeout_ms=1000)
    assert list((tmp_path / "kafka" / "logs").iterdir()) == []
    with InProcessBroker(data_dir=tmp_path) as b, b.wire() as w:
        assert produce(w, topic, record_batch([b"a"])).error_code == 3
