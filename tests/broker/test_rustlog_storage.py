"""RustLog broker: the durable log (--data-dir): restart, torn tails, retention, storage errors, bounded cache."""

from __future__ import annotations

import errno
import os
import signal

import pytest

from wirecheck.broker.rustlog import durable

from tests.broker.rustlog_support import ProcessBroker, ThreadBroker, create_topic, fetch, payloads_of, produce


def partition_dir(data_dir, topic="t", partition=0):
    return data_dir / "rustlog" / topic / str(partition)


def describe(client, topic="t", partition=0):
    response = client.request({"type": "DescribePartition", "topic": topic, "partition": partition})
    return response["log_start_offset"], response["high_watermark"], response["segment_count"]


def test_acknowledged_records_survive_a_restart(tmp_path):
    records = [b"rec-%d" % i for i in range(7)] + [b"", bytes(range(256))]
    args = ["--data-dir", str(tmp_path), "--segment-records", "4"]
    with ProcessBroker(*args, workdir=tmp_path / "run1") as broker, broker.client() as client:
        create_topic(client, "t", 2)
        create_topic(client, "other", 1)
        for start in range(0, len(records), 3):
            produce(client, "t", records[start:start + 3])
        assert client.request({"type": "OffsetCommit", "group": "g", "topic": "t", "partition": 0,
                               "offset": 3})["success"]
        before = fetch(client, "t", 0)
        assert broker.terminate() == 0
    # one batch-log file; segments (4 records) are the unit of segment_count and retention, not files
    assert sorted(p.name for p in partition_dir(tmp_path).iterdir()) == ["00000000000000000000.batchlog"]
    with ProcessBroker(*args, workdir=tmp_path / "run2") as broker, broker.client() as client:
        assert fetch(client, "t", 0) == before  # payloads, offsets and timestamps
        assert payloads_of(before) == records
        assert describe(client) == (0, 9, 3)
        assert client.request({"type": "ListTopics"})["topics"] == [
            {"name": "other", "partition_count": 1}, {"name": "t", "partition_count": 2}]
        # Commits are in memory only (seed §Offset Commit Request).
        assert client.request({"type": "OffsetFetch", "group": "g", "topic": "t", "partition": 0})["offset"] is None
        assert produce(client, "t", [b"after"])["base_offset"] == 9
        assert produce(client, "t", [b"p1"], partition=1)["base_offset"] == 0


def test_killed_broker_keeps_acknowledged_records(tmp_path):
    args = ["--data-dir", str(tmp_path)]
    with ProcessBroker(*args, workdir=tmp_path / "run1") as broker, broker.client() as client:
        create_topic(client, "t")
        produce(client, "t", [b"a", b"b"])
        broker.process.send_signal(signal.SIGKILL)  # no shutdown path at all
        broker.process.wait(10)
    with ProcessBroker(*args, workdir=tmp_path / "run2") as broker, broker.client() as client:
        assert payloads_of(fetch(client, "t", 0)) == [b"a", b"b"]


@pytest.mark.parametrize("damage", ["torn-header", "torn-payload", "bad-crc"])
def test_torn_tail_is_truncated_on_restart(tmp_path, damage):
    args = ["--data-dir", str(tmp_path), "--segment-records", "3"]
    with ProcessBroker(*args, workdir=tmp_path / "run1") as broker, broker.client() as client:
        create_topic(client, "t")
        produce(client, "t", [b"one", b"two", b"three"])
        produce(client, "t", [b"four", b"five"])
        assert broker.terminate() == 0
    last = partition_dir(tmp_path) / "00000000000000000000.batchlog"
    data = last.read_bytes()
    if damage == "torn-header":
        last.write_bytes(data + b"\x00\x00\x00\x09\x00\x00")  # half of a third batch's header
        expected = [b"one", b"two", b"three", b"four", b"five"]
    elif damage == "torn-payload":
        last.write_bytes(data[:-2])  # the last batch lost its end: the whole batch goes
        expected = [b"one", b"two", b"three"]
    else:
        last.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))  # a flipped bit in the last payload
        expected = [b"one", b"two", b"three"]
    with ProcessBroker(*args, workdir=tmp_path / "run2") as broker, broker.client() as client:
        assert payloads_of(fetch(client, "t", 0)) == expected
        assert produce(client, "t", [b"next"])["base_offset"] == len(expected)
        assert payloads_of(fetch(client, "t", 0))[-1] == b"next"
        assert broker.terminate() == 0
    with ProcessBroker(*args, workdir=tmp_path / "run3") as broker, broker.client() as client:
        assert payloads_of(fetch(client, "t", 0)) == expected + [b"next"]


def test_durable_retention_keeps_whole_segments_across_a_restart(tmp_path):
    args = ["--data-dir", str(tmp_path), "--segment-records", "5", "--retention-records", "5", "--fsync", "none"]
    with ProcessBroker(*args, workdir=tmp_path / "run1") as broker, broker.client() as client:
        create_topic(client, "t")
        produce(client, "t", [b"%d" % i for i in range(23)])
        assert describe(client) == (15, 23, 2)  # the log start falls inside the one batch
        assert broker.terminate() == 0
    with ProcessBroker(*args, workdir=tmp_path / "run2") as broker, broker.client() as client:
        assert describe(client) == (15, 23, 2)
        assert fetch(client, "t", 14)["code"] == 416
        assert payloads_of(fetch(client, "t", 15)) == [b"%d" % i for i in range(15, 23)]


def test_durable_retention_deletes_files_it_has_passed(tmp_path, monkeypatch):
    monkeypatch.setattr(durable, "FILE_BYTES", 200)  # a new file after about every second batch
    config = dict(data_dir=tmp_path, segment_records=5, retention_records=10, fsync="none")
    with ThreadBroker(**config) as broker, broker.client() as client:
        create_topic(client, "t")
        for batch in range(12):
            produce(client, "t", [b"%d-%d" % (batch, i) for i in range(4)])
        assert describe(client) == (35, 48, 3)
        files = sorted(p.name for p in partition_dir(tmp_path).iterdir())
        assert len(files) < 6 and files[0] <= "%020d.batchlog" % 35 < files[1], files
    with ThreadBroker(**config) as broker, broker.client() as client:
        assert describe(client) == (35, 48, 3)
        assert payloads_of(fetch(client, "t", 35)) == [b"%d-%d" % (o // 4, o % 4) for o in range(35, 48)]


def test_reads_beyond_a_small_cache_come_back_from_the_files_after_a_restart(tmp_path):
    # 300 batches of ~2 KiB through an 8 KiB cache: almost every read after the restart is a file read
    batches = [[b"%03d:%02d:" % (b, i) + bytes([b % 251]) * 200 for i in range(10)] for b in range(300)]
    args = ["--data-dir", str(tmp_path), "--cache-bytes", "8192", "--fsync", "none"]
    with ProcessBroker(*args, workdir=tmp_path / "run1") as broker, broker.client() as client:
        create_topic(client, "t")
        for batch in batches:
            produce(client, "t", batch)
        assert broker.terminate() == 0
    records = [record for batch in batches for record in batch]
    with ProcessBroker(*args, workdir=tmp_path / "run2") as broker, broker.client() as client:
        got, offset = [], 0
        while offset < len(records):
            response = fetch(client, "t", offset, max_bytes=50_000)
            assert [r["offset"] for r in response["records"]] == list(range(offset, response["next_offset"]))
            got += payloads_of(response)
            offset = response["next_offset"]
        assert got == records
        for offset in (2999, 1234, 7, 1500):  # mid-batch starts, out of order
            assert payloads_of(fetch(client, "t", offset, max_bytes=1))[0] == records[offset]


@pytest.mark.parametrize("code,error", [(507, errno.ENOSPC), (503, errno.EIO)])
def test_storage_failure_is_reported_and_nothing_is_appended(tmp_path, monkeypatch, code, error):
    with ThreadBroker(data_dir=tmp_path) as broker, broker.client() as client:
        create_topic(client, "t")
        produce(client, "t", [b"kept"])
        real_fsync = os.fsync

        def failing_fsync(fd):  # the bytes reached the file; then the "disk" fails
            raise OSError(error, os.strerror(error))

        monkeypatch.setattr(os, "fsync", failing_fsync)
        try:
            response = produce(client, "t", [b"lost", b"lost"])
        finally:
            monkeypatch.setattr(os, "fsync", real_fsync)
        assert response["type"] == "Error" and response["code"] == code, response
        assert describe(client) == (0, 1, 1)
        assert produce(client, "t", [b"again"])["base_offset"] == 1
    with ThreadBroker(data_dir=tmp_path) as broker, broker.client() as client:
        assert payloads_of(fetch(client, "t", 0)) == [b"kept", b"again"]


def test_durable_batches_are_atomic(tmp_path):
    from tests.broker.test_rustlog_messages import concurrent_batches

    with ThreadBroker(data_dir=tmp_path) as broker, broker.client() as client:
        create_topic(client, "t")
        bases, stored = concurrent_batches(broker, "t")
        for base, tag in zip(bases, (b"A", b"B")):
            assert stored[base:base + 1000] == [b"%s%04d" % (tag, i) for i in range(1000)]


def test_provisioned_topics_exist_at_start_and_keep_their_records(tmp_path):
    # --rustlog-topics: an operator's topics, there before any client connects; a restart keeps them as they are.
    args = ["--data-dir", str(tmp_path), "--rustlog-topics", "orders:3,events:1"]
    with ProcessBroker(*args, workdir=tmp_path / "run1") as broker, broker.client() as client:
        assert client.request({"type": "ListTopics"})["topics"] == [
            {"name": "events", "partition_count": 1}, {"name": "orders", "partition_count": 3}]
        produce(client, "orders", [b"kept"], partition=2)
        assert broker.terminate() == 0
    with ProcessBroker(*args, workdir=tmp_path / "run2") as broker, broker.client() as client:
        assert payloads_of(fetch(client, "orders", 0, partition=2)) == [b"kept"]
        assert client.request({"type": "CreateTopic", "topic": "orders", "partition_count": 3})["type"] == "Error"
