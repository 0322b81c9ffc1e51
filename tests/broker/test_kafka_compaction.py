"""The Kafka personality's log cleaner (compaction.py): on a topic with cleanup.policy=compact, the closed segments
keep only the newest record of each key, offsets unchanged; the active segment is not touched."""

from __future__ import annotations

import time

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from tests.broker.kafka_admin_probes import set_config
from tests.broker.test_kafka_data import batches_in, fetch, new_topic, produce
from tests.interop.kafka_support import InProcessBroker

DAY = 24 * 3600 * 1000
OLD = int(time.time() * 1000) - 30 * DAY


def keyed_batch(pairs: list[tuple[bytes, bytes]], timestamp: int, compression: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=compression, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, (key, value) in enumerate(pairs):
        builder.append(i, timestamp=timestamp, key=key, value=value, headers=[])
    return bytes(builder.build())


def log(w, topic: str) -> list[tuple[int, bytes, bytes]]:
    """(offset, key, value) of every record, each batch's CRC checked."""
    out = []
    for _, data in batches_in(fetch(w, topic, 0).records):
        batch = DefaultRecordBatch(data)
        assert batch.validate_crc()
        out += [(record.offset, record.key, record.value) for record in batch]
    return out


def compacted(w, topic: str, expected: list) -> list:
    """The log once the cleaner (running every 50 ms) has made it ``expected``, or as it is after 5 s."""
    deadline = time.monotonic() + 5
    while (got := log(w, topic)) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return got


def compact_topic(w) -> str:
    topic = new_topic(w)
    assert set_config(w, topic, "cleanup.policy", "compact") == 0
    return topic


def test_closed_segments_keep_the_newest_record_of_each_key():
    with InProcessBroker(retention_check_ms=50) as b, b.wire() as w:
        topic = compact_topic(w)
        for pairs in ([(b"k1", b"a"), (b"k2", b"b")], [(b"k1", b"c")], [(b"k2", b"d")]):
            produce(w, topic, keyed_batch(pairs, OLD))
        produce(w, topic, keyed_batch([(b"k1", b"active")], OLD + 8 * DAY))  # a new (active) segment
        expected = [(2, b"k1", b"c"), (3, b"k2", b"d"), (4, b"k1", b"active")]
        assert compacted(w, topic, expected) == expected
        assert fetch(w, topic, 0).high_watermark == 5  # offsets never move


def test_a_partly_cleaned_compressed_batch_is_rewritten():
    with InProcessBroker(retention_check_ms=50) as b, b.wire() as w:
        topic = compact_topic(w)
        produce(w, topic, keyed_batch([(b"k1", b"a"), (b"k2", b"b"), (b"k3", b"c")], OLD, compression=1))
        produce(w, topic, keyed_batch([(b"k2", b"z")], OLD))
        produce(w, topic, keyed_batch([(b"k9", b"active")], OLD + 8 * DAY))
        expected = [(0, b"k1", b"a"), (2, b"k3", b"c"), (3, b"k2", b"z"), (4, b"k9", b"active")]
        assert compacted(w, topic, expected) == expected
        first = DefaultRecordBatch(batches_in(fetch(w, topic, 0).records)[0][1])
        assert first.last_offset_delta == 2  # the batch still spans offsets 0-2


def test_the_active_segment_is_not_compacted_nor_a_delete_topic():
    with InProcessBroker(retention_check_ms=50) as b, b.wire() as w:
        compact, plain = compact_topic(w), new_topic(w)
        assert set_config(w, plain, "retention.ms", "-1") == 0  # only compaction could remove anything
        for topic in (compact, plain):
            for value in (b"a", b"b"):
                produce(w, topic, keyed_batch([(b"k", value)], OLD))  # one segment: the active one
        produce(w, plain, keyed_batch([(b"k", b"c")], OLD + 8 * DAY))
        time.sleep(0.3)  # several cleaner runs
        assert [v for _, _, v in log(w, compact)] == [b"a", b"b"]
        assert [v for _, _, v in log(w, plain)] == [b"a", b"b", b"c"]  # cleanup.policy delete: no cleaning
