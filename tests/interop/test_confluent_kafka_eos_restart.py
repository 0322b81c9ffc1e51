"""Exactly-once consume-transform-produce with confluent-kafka (librdkafka) through the reference broker, which is
killed (SIGKILL) in the middle of a transaction and restarted on the same port and ``--data-dir``: the
read_committed output holds every input record transformed exactly once, in order.

The loop is the one librdkafka documents for EOS: consume, produce the results and the consumer's positions in
one transaction, commit; when a transaction fails it is aborted and the consumer rewinds to its committed offsets.
After the restart librdkafka 2.x looks the group coordinator up again for TxnOffsetCommit only once an idle
connection of its own is closed (a client-side wait; every request the broker gets is answered at once). With the
broker's default 30 s idle timeout that wait was 30 s, and under load twice that, past the transaction timeout, so
the broker rightly aborted the transaction and fenced the producer. The broker here closes idle connections after
5 s (the case takes about 10 s) and the transaction timeout is far above any such wait.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("confluent_kafka", reason="confluent_kafka is in the interop extra: pip install wirecheck[interop]")
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from tests.interop.kafka_support import ROOT
from tests.interop.confluent_support import create_topic, read_all

pytestmark = pytest.mark.interop
RECORDS = 120
PER_TRANSACTION = 10
KILL_IN_TRANSACTION = 5  # the broker dies after this transaction's records are produced, before its commit


class RestartableBroker:
    """The reference broker as a child process on a fixed port with a data directory, killable and restartable."""

    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc: subprocess.Popen | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        ready = self.data_dir / "ready.json"
        ready.unlink(missing_ok=True)
        log = open(self.data_dir / "broker.log", "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wirecheck.broker", "--protocols", "kafka", "--kafka-port", str(self.port),
             "--data-dir", str(self.data_dir), "--ready-file", str(ready), "--idle-timeout", "5"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        log.close()
        deadline = time.monotonic() + 15
        while not ready.exists():
            assert self.proc.poll() is None and time.monotonic() < deadline, (self.data_dir / "broker.log").read_text()
            time.sleep(0.05)
        assert json.loads(ready.read_text())["ports"]["kafka"] == self.port

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def broker(tmp_path):
    b = RestartableBroker(tmp_path)
    b.start()
    yield b
    b.stop()


def rewind(consumer: Consumer) -> None:
    """After an aborted transaction: back to the committed offsets (the start when nothing is committed yet)."""
    for tp in consumer.committed(consumer.assignment(), timeout=30):
        consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))


def test_consume_transform_produce_survives_a_broker_kill(broker):
    source, sink, group = "eos-in", "eos-out", "eos-group"
    create_topic(broker.bootstrap, source, 1)
    create_topic(broker.bootstrap, sink, 1)
    feeder = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    for i in range(RECORDS):
        feeder.produce(source, value=b"r%03d" % i, partition=0)
    assert feeder.flush(15) == 0

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "eos-transformer",
                         "transaction.timeout.ms": 300000})
    producer.init_transactions(30)
    consumer.assign([TopicPartition(source, 0)])
    transactions, aborted, killed = 0, 0, False
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            batch = [m for m in consumer.consume(PER_TRANSACTION, timeout=1.0) if m.error() is None]
            if not batch:
                if consumer.position([TopicPartition(source, 0)])[0].offset >= RECORDS:
                    break
                continue
            producer.begin_transaction()
            for message in batch:
                producer.produce(sink, value=b"t-" + message.value(), partition=0)
            transactions += 1
            if transactions == KILL_IN_TRANSACTION and not killed:
                producer.flush(15)  # the records are in the log, the transaction still open
                broker.kill()
                killed = True
                broker.start()
            try:
                producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                                     consumer.consumer_group_metadata(), 30)
                producer.commit_transaction(30)
            except KafkaException as exc:
                if not exc.args[0].txn_requires_abort():
                    raise
                producer.abort_transaction(30)
                aborted += 1
                rewind(consumer)
    finally:
        consumer.close()
    assert killed
    output = read_all(broker.bootstrap, sink, "read_committed", RECORDS, seconds=30)
    assert output == [b"t-r%03d" % i for i in range(RECORDS)], f"{aborted} transactions aborted"
