"""Produce and consume throughput of the reference broker's Kafka personality, with two real clients.

Method: start ``python -m wirecheck.broker --protocols kafka`` on an ephemeral 127.0.0.1 port (one process,
one core at most: asyncio), create one topic per run with one partition, then
- produce N records of 1 KiB (random bytes, no compression, the client's default batching and acks) and time
  from the first send to the end of flush();
- consume the same N records from offset 0 with a manually assigned partition (no group), timing from the
  first poll to the N-th record.
MB/s counts record values only (N x 1024 bytes / 1e6 / seconds). Client and broker share the machine, so the
numbers are a lower bound for the broker alone; "broker busy" (broker CPU seconds / phase seconds, from
/proc/<pid>/stat) says whether the broker or the client was the bottleneck.

It also times the broker's table-driven codec on the hot path (decode a Produce v9 request carrying one 16 KiB
batch, encode a Fetch v12 response carrying 1 MiB of batches): the numbers decide whether a hand-written
struct fast path for Produce/Fetch would be worth its code.

Usage: python bench/kafka_broker_throughput.py [--records 20000] [--size 1024] [--durable batch|none]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: the broker package lives at the repo root


def start_broker(tmp: Path, fsync: str | None) -> tuple[subprocess.Popen, int]:
    ready = tmp / "ready.json"
    args = [sys.executable, "-m", "wirecheck.broker", "--protocols", "kafka", "--kafka-port", "0",
            "--ready-file", str(ready)]
    if fsync is not None:
        args += ["--data-dir", str(tmp / "data"), "--fsync", fsync]
    proc = subprocess.Popen(args, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    deadline = time.monotonic() + 20
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("broker did not start")
        time.sleep(0.05)
    return proc, json.loads(ready.read_text())["ports"]["kafka"]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the broker process has used so far (/proc/<pid>/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def create_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the futures resolve
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(timeout=10)


def confluent_produce(bootstrap: str, topic: str, values: list[bytes]) -> float:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    start = time.perf_counter()
    for value in values:
        while True:
            try:
                producer.produce(topic, value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.01)
    assert producer.flush(60) == 0
    return time.perf_counter() - start


def confluent_consume(bootstrap: str, topic: str, count: int) -> float:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-unused", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got, start, deadline = 0, time.perf_counter(), time.monotonic() + 120
    while got < count and time.monotonic() < deadline:
        for message in consumer.consume(1000, 1.0):
            if message.error() is None:
                got += 1
    elapsed = time.perf_counter() - start
    consumer.close()
    assert got >= count, f"consumed {got} of {count}"
    return elapsed


def kafka_python_produce(bootstrap: str, topic: str, values: list[bytes]) -> float:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    start = time.perf_counter()
    for value in values:
        producer.send(topic, value=value, partition=0)
    producer.flush(timeout=120)
    elapsed = time.perf_counter() - start
    producer.close(timeout=10)
    return elapsed


def kafka_python_consume(bootstrap: str, topic: str, count: int) -> float:
    from kafka import KafkaConsumer
    from kafka.structs import TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=10000)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek(TopicPartition(topic, 0), 0)
    got, start = 0, time.perf_counter()
    for _ in consumer:
        got += 1
        if got == count:
            break
    elapsed = time.perf_counter() - start
    consumer.close()
    assert got == count, f"consumed {got} of {count}"
    return elapsed


def codec_timings(repeat: int = 2000) -> tuple[float, float]:
    """Microseconds per Produce v9 request decode and per Fetch v12 response encode."""
    import timeit

    from kafka.protocol.producer.produce import ProduceRequest

    from wirecheck.broker.kafka.codec import Message

    batch = os.urandom(16 * 1024)
    request = ProduceRequest(version=9, acks=-1, timeout_ms=1000, topic_data=[ProduceRequest.TopicProduceData(
        name="t", partition_data=[ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=batch)])])
    body = bytes(request.encode())
    produce, fetch = Message("ProduceRequest"), Message("FetchResponse")
    response = {"Responses": [{"Topic": "t", "Partitions": [{"PartitionIndex": 0, "HighWatermark": 10,
                                                               "Records": os.urandom(1 << 20)}]}]}
    decode_s = timeit.timeit(lambda: produce.decode(body, 9), number=repeat) / repeat
    encode_s = timeit.timeit(lambda: fetch.encode(response, 12), number=repeat // 10) / (repeat // 10)
    return decode_s * 1e6, encode_s * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--durable", choices=["batch", "none"], default=None,
                        help="run the broker with --data-dir and this --fsync policy (default: memory only)")
    args = parser.parse_args()
    values = [os.urandom(args.size) for _ in range(args.records)]
    megabytes = args.records * args.size / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_broker(Path(tmp), args.durable)
        bootstrap = f"127.0.0.1:{port}"
        rows = []
        try:
            for client, produce, consume in (("confluent-kafka", confluent_produce, confluent_consume),
                                             ("kafka-python", kafka_python_produce, kafka_python_consume)):
                topic = f"bench-{client}"
                create_topic(bootstrap, topic)
                cpu0 = cpu_seconds(proc.pid)
                p = produce(bootstrap, topic, values)
                cpu1 = cpu_seconds(proc.pid)
                c = consume(bootstrap, topic, args.records)
                cpu2 = cpu_seconds(proc.pid)
                rows.append((client, megabytes / p, args.records / p, (cpu1 - cpu0) / p,
                             megabytes / c, args.records / c, (cpu2 - cpu1) / c))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"{args.records} records x {args.size} B, 1 partition, no compression, "
          f"storage: {'memory' if args.durable is None else 'durable, fsync ' + args.durable}")
    print("broker busy = broker CPU seconds / wall seconds of the phase (1.0: the broker is the bottleneck)")
    print(f"{'client':16} {'produce MB/s':>12} {'rec/s':>8} {'broker busy':>11} "
          f"{'consume MB/s':>12} {'rec/s':>8} {'broker busy':>11}")
    for client, pm, pr, pb, cm, cr, cb in rows:
        print(f"{client:16} {pm:12.1f} {pr:8.0f} {pb:11.2f} {cm:12.1f} {cr:8.0f} {cb:11.2f}")
    decode_us, encode_us = codec_timings()
    print(f"codec: Produce v9 decode (one 16 KiB batch) {decode_us:.1f} us; "
          f"Fetch v12 encode (1 MiB of records) {encode_us:.1f} us")


if __name__ == "__main__":
    main()
