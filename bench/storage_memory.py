"""Memory of a durable personality holding more data than its cache (issue 31): write N records through the
personality's own wire protocol with ``--data-dir``, restart the broker on the same directory, read every record
back, and report the broker's peak and settled resident memory.

The broker runs as a child process (tests/crash_support.py's CrashableBroker: ephemeral loopback ports, the same
ones after the restart) with ``--fsync none`` (the page cache, not fsync, is what is measured here) and
``--cache-bytes``. One partition (or segment), so the read back checks the order too: a CRC-32C chained over the
payloads in order must match the one over what was acknowledged, and so must the count. Peak is the kernel's
VmHWM of each broker process (the write run, and the read run after the restart), read just before it stops;
settled is VmRSS after the read back and a short pause. Goal (10 million records, >= 1 GB on disk): peak < 150 MB,
settled < 100 MB.

    python bench/storage_memory.py --protocol fluvio --records 1000000 [--record-bytes 100] [--batch 1000]
                                   [--cache-bytes N] [--json FILE]

Clients: Fluvio and RustLog over raw sockets with the broker tests' encoders (tests/broker/*_support.py), Kafka with
confluent-kafka (librdkafka), Barco with httpx (HTTP producer, HTTP/2 consumer), Pravega with pravega-client for
the stream (controller) and the reader, and the segment store's wire protocol for the appends (pravega-client
appends one event at a time, ~6k/s here: 10M would take half an hour).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import crc32c

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import machine_info

from tests.crash_support import CrashableBroker, barco_bodies
from wirecheck.broker.batchlog import DEFAULT_CACHE_BYTES

MB = 1 << 20
SETTLE_SECONDS = 2.0
TIMEOUT = 60.0  # seconds for any one request
PRAVEGA_EVENTS_IN_FLIGHT = 4000  # Pravega: events sent before their acknowledgements are read


# padding compression can hardly shrink (Barco stores zstd), the same in every process: base64 of seeded bytes
_PADDING = base64.b64encode(random.Random(31).randbytes(3 * MB // 4))


def payload(number: int, size: int) -> bytes:
    """Record ``number``'s value: JSON (Barco's producer takes NDJSON) padded to ``size`` bytes."""
    head = b'{"n":%d,"p":"' % number
    pad = max(size - len(head) - 2, 0)
    at = number * 7919 % (len(_PADDING) - pad)
    return head + _PADDING[at:at + pad] + b'"}'


def chain(checksum: int, values) -> int:
    for value in values:
        checksum = crc32c.crc32c(value, checksum)
    return checksum


def memory(pid: int) -> dict[str, float]:
    """VmHWM (the process's peak resident set) and VmRSS from /proc/<pid>/status, in MB (kB / 1024)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {key: int(fields[key].split()[0]) / 1024 for key in ("VmHWM", "VmRSS")}


def bytes_on_disk(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())


# -- one writer and one reader per protocol: write(broker, topic, args) -> checksum; read(...) -> (count, checksum)


def fluvio_write(broker: CrashableBroker, topic: str, args) -> int:
    from tests.broker import fluvio_support as fl

    checksum = 0
    with fl.Client(broker.ports["fluvio"], TIMEOUT) as client:
        for first in range(0, args.records, args.batch):
            values = [payload(i, args.record_bytes) for i in range(first, min(first + args.batch, args.records))]
            error, base = client.produce(topic, fl.batch(values))
            if error != 0 or base != first:
                raise RuntimeError(f"fluvio produce at {first}: error {error}, base offset {base}")
            checksum = chain(checksum, values)
    return checksum


def fluvio_read(broker: CrashableBroker, topic: str, args) -> tuple[int, int]:
    from tests.broker import fluvio_support as fl

    count, checksum, offset = 0, 0, 0
    with fl.Client(broker.ports["fluvio"], TIMEOUT) as client:
        while count < args.records:
            part = client.fetch(topic, offset, max_bytes=4 * MB)
            batches = fl.batches_of(part["records"])
            if part["error"] != 0 or not batches:
                break
            for batch in batches:
                if not batch["crc_ok"]:
                    raise RuntimeError(f"fluvio batch at {batch['base']}: CRC mismatch")
                values = list(_fluvio_values(batch["data"]))
                count += len(values)
                checksum = chain(checksum, values)
                offset = batch["base"] + batch["lod"] + 1
    return count, checksum


def _varint(data: bytes, at: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (value >> 1) ^ -(value & 1), at


def _fluvio_values(batch: bytes):
    """The values of a stored batch's records (header 57 bytes, i32 count, then each record, notes §4.3)."""
    count, at = int.from_bytes(batch[57:61], "big"), 61
    for _ in range(count):
        length, at = _varint(batch, at)
        end = at + length
        _, pos = _varint(batch, at + 1)  # after attributes: timestamp delta
        _, pos = _varint(batch, pos)  # offset delta
        if batch[pos]:  # Some(key)
            key_length, pos = _varint(batch, pos + 1)
            pos += key_length
        else:
            pos += 1
        value_length, pos = _varint(batch, pos)
        yield batch[pos:pos + value_length]
        at = end


def rustlog_write(broker: CrashableBroker, topic: str, args) -> int:
    from tests.broker import rustlog_support as rl

    checksum = 0
    with rl.Client(broker.ports["rustlog"], TIMEOUT) as client:
        rl.create_topic(client, topic)
        for first in range(0, args.records, args.batch):
            values = [payload(i, args.record_bytes) for i in range(first, min(first + args.batch, args.records))]
            answer = rl.produce(client, topic, values)
            if answer.get("type") != "ProduceResponse":
                raise RuntimeError(f"rustlog produce at {first}: {answer}")
            checksum = chain(checksum, values)
    return checksum


def rustlog_read(broker: CrashableBroker, topic: str, args) -> tuple[int, int]:
    from tests.broker import rustlog_support as rl

    count, checksum, offset = 0, 0, 0
    with rl.Client(broker.ports["rustlog"], TIMEOUT) as client:
        while count < args.records:
            answer = rl.fetch(client, topic, offset, max_bytes=4 * MB)
            if not answer.get("records"):
                break
            values = rl.payloads_of(answer)
            count += len(values)
            checksum = chain(checksum, values)
            offset = answer["next_offset"]
    return count, checksum


def kafka_write(broker: CrashableBroker, topic: str, args) -> int:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = f"127.0.0.1:{broker.ports['kafka']}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until its futures resolve
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(timeout=TIMEOUT)
    failed: list = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20,
                         "batch.num.messages": args.batch, "batch.size": MB, "enable.idempotence": False})
    checksum = 0
    for i in range(args.records):
        value = payload(i, args.record_bytes)
        while True:
            try:
                producer.produce(topic, value=value, partition=0,
                                 on_delivery=lambda err, msg: err and failed.append(err))
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                producer.poll(0.05)
        checksum = crc32c.crc32c(value, checksum)
    if producer.flush(600) or failed:
        raise RuntimeError(f"kafka: not acknowledged: {failed[:3]}")
    return checksum


def kafka_read(broker: CrashableBroker, topic: str, args) -> tuple[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{broker.ports['kafka']}", "group.id": "storage-bench",
                         "enable.auto.commit": False, "fetch.max.bytes": 4 * MB})
    consumer.assign([TopicPartition(topic, 0, 0)])
    count, checksum, idle_since = 0, 0, time.monotonic()
    try:
        while count < args.records and time.monotonic() - idle_since < 10:
            messages = consumer.consume(args.batch, 1.0)
            values = [m.value() for m in messages if m.error() is None]
            if values:
                idle_since = time.monotonic()
            count += len(values)
            checksum = chain(checksum, values)
    finally:
        consumer.close()
    return count, checksum


def barco_write(broker: CrashableBroker, topic: str, args) -> int:
    import httpx

    checksum = 0
    with httpx.Client(base_url=f"http://127.0.0.1:{broker.endpoints['producer-http']}", timeout=TIMEOUT) as client:
        for first in range(0, args.records, args.batch):
            values = [payload(i, args.record_bytes) for i in range(first, min(first + args.batch, args.records))]
            reply = client.post(f"/v1/topic/{topic}/messages", params={"partitionKey": "k"},
                                content=b"\n".join(values) + b"\n", headers={"content-type": "application/x-ndjson"})
            if reply.status_code != 200:
                raise RuntimeError(f"barco produce at {first}: {reply.status_code} {reply.text[:200]}")
            checksum = chain(checksum, values)
    return checksum


def barco_read(broker: CrashableBroker, topic: str, args) -> tuple[int, int]:
    count, checksum = 0, 0
    for body in barco_bodies(broker, topic, args.records, timeout=TIMEOUT):
        checksum = crc32c.crc32c(body, checksum)
        count += 1
    return count, checksum


def pravega_write(broker: CrashableBroker, topic: str, args) -> int:
    """The stream is created through the controller, as pravega-client does; the events go to its one segment over
    the segment store's wire protocol: one standalone AppendBlockEnd per ``--batch`` events (``--batch 1``: one
    event per append, as pravega-client sends them), about ``PRAVEGA_EVENTS_IN_FLIGHT`` events sent before the
    replies are read, each DataAppended checked."""
    import socket
    import uuid

    import pravega_client
    from wirecheck.protocols.pravega import commands as cmd

    manager = pravega_client.StreamManager(f"tcp://127.0.0.1:{broker.ports['pravega-controller']}")
    assert manager.create_scope(topic) and manager.create_stream(topic, "events", 1)
    segment, writer = f"{topic}/events/0.#epoch.0", uuid.uuid4()
    per_round = max(PRAVEGA_EVENTS_IN_FLIGHT // args.batch, 1) * args.batch
    checksum = 0
    with socket.create_connection(("127.0.0.1", broker.ports["pravega"]), timeout=TIMEOUT) as sock:
        replies = sock.makefile("rb")
        sock.sendall(cmd.encode("SetupAppend", request_id=0, writer_id=writer, segment=segment, delegation_token=""))
        reply = _pravega_reply(replies)
        if reply.name != "AppendSetup":
            raise RuntimeError(f"pravega SetupAppend: {reply.name} {reply.fields}")
        for round_first in range(0, args.records, per_round):
            frames, sent = [], []
            for first in range(round_first, min(round_first + per_round, args.records), args.batch):
                values = [payload(i, args.record_bytes) for i in range(first, min(first + args.batch, args.records))]
                data = b"".join(map(cmd.event, values))
                last = first + len(values)  # event numbers count from 1: the last one is the count sent so far
                frames.append(cmd.encode("AppendBlockEnd", writer_id=writer, size_of_whole_events=len(data),
                                         data=data, num_events=len(values), last_event_number=last, request_id=last))
                sent.append(last)
                checksum = chain(checksum, values)
            sock.sendall(b"".join(frames))
            for expected in sent:
                reply = _pravega_reply(replies)
                if reply.name != "DataAppended" or reply["event_number"] != expected:
                    raise RuntimeError(f"pravega append of event {expected}: {reply.name} {reply.fields}")
    return checksum


def _pravega_reply(replies):
    from wirecheck.protocols.pravega import commands as cmd

    header = replies.read(cmd.HEADER_SIZE)
    if len(header) < cmd.HEADER_SIZE:
        raise RuntimeError("pravega: the broker closed the connection")
    return cmd.decode(header + replies.read(cmd.HEADER.unpack(header)[1]))


def pravega_read(broker: CrashableBroker, topic: str, args, quiet: float = 5.0) -> tuple[int, int]:
    import asyncio

    import pravega_client

    manager = pravega_client.StreamManager(f"tcp://127.0.0.1:{broker.ports['pravega-controller']}")
    reader = manager.create_reader_group(f"rg{time.monotonic_ns()}", topic, "events").create_reader("reader-0")
    state = [0, 0]  # count, checksum

    async def collect() -> None:
        while state[0] < args.records:
            try:
                async with asyncio.timeout(quiet):
                    segment_slice = await reader.get_segment_slice_async()
            except TimeoutError:
                return
            for event in segment_slice:
                state[1] = crc32c.crc32c(bytes(event.data()), state[1])
                state[0] += 1
            reader.release_segment(segment_slice)

    try:
        asyncio.run(collect())
    finally:
        reader.reader_offline()
    return state[0], state[1]


CLIENTS = {"fluvio": (fluvio_write, fluvio_read), "rustlog": (rustlog_write, rustlog_read),
           "kafka": (kafka_write, kafka_read), "barco": (barco_write, barco_read),
           "pravega": (pravega_write, pravega_read)}


def run(args) -> dict:
    write, read = CLIENTS[args.protocol]
    extra = ["--fsync", "none", "--cache-bytes", str(args.cache_bytes)]
    topic = f"mem{time.monotonic_ns()}"
    with tempfile.TemporaryDirectory(prefix="wirecheck-storage-", dir=args.scratch) as scratch:
        data = Path(scratch) / "data"
        with CrashableBroker(args.protocol, data, *extra) as broker:
            try:
                return _phases(args, broker, data, write, read, topic)
            except BaseException:
                print(f"failed; the broker's log ends:\n{broker.log_tail()}", file=sys.stderr)
                raise


def _phases(args, broker: CrashableBroker, data: Path, write, read, topic: str) -> dict:
    """Write, stop, restart, read back, settle: one line per phase, the result as a dict."""
    print(f"started: VmRSS {memory(broker.proc.pid)['VmRSS']:.1f} MB", flush=True)
    started = time.monotonic()
    expected = write(broker, topic, args)
    write_s = time.monotonic() - started
    written = memory(broker.proc.pid)
    print(f"write: {args.records} records acknowledged in {write_s:.1f} s "
          f"({args.records / max(write_s, 1e-3):,.0f} records/s); VmHWM {written['VmHWM']:.1f} MB, "
          f"VmRSS {written['VmRSS']:.1f} MB", flush=True)
    broker.stop()
    on_disk = bytes_on_disk(data)
    print(f"stopped: {on_disk / MB:,.1f} MB on disk", flush=True)
    started = time.monotonic()
    broker.start()
    restarted = memory(broker.proc.pid)
    print(f"restart: ready in {time.monotonic() - started:.1f} s; VmHWM {restarted['VmHWM']:.1f} MB, "
          f"VmRSS {restarted['VmRSS']:.1f} MB", flush=True)
    started = time.monotonic()
    count, checksum = read(broker, topic, args)
    read_s = time.monotonic() - started
    after_read = memory(broker.proc.pid)
    print(f"read: {count} records in {read_s:.1f} s ({count / max(read_s, 1e-3):,.0f} records/s), checksum "
          f"{'matches' if checksum == expected else 'DIFFERS'}; VmHWM {after_read['VmHWM']:.1f} MB, "
          f"VmRSS {after_read['VmRSS']:.1f} MB", flush=True)
    time.sleep(SETTLE_SECONDS)
    settled = memory(broker.proc.pid)
    print(f"settled: VmRSS {settled['VmRSS']:.1f} MB after {SETTLE_SECONDS:.0f} s", flush=True)
    return {"protocol": args.protocol, "records": args.records, "record_bytes": args.record_bytes,
               "batch": args.batch, "cache_bytes": args.cache_bytes, "bytes_on_disk": on_disk,
               "records_read": count, "checksum_ok": count == args.records and checksum == expected,
               "peak_rss_mb": round(max(written["VmHWM"], settled["VmHWM"]), 1),
               "peak_rss_mb_per_process": {"write": round(written["VmHWM"], 1), "read": round(settled["VmHWM"], 1)},
               "settled_rss_mb": round(settled["VmRSS"], 1), "write_s": round(write_s, 1), "read_s": round(read_s, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=sorted(CLIENTS), required=True)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--record-bytes", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1000, help="records per produce request (or flush)")
    parser.add_argument("--cache-bytes", type=int, default=DEFAULT_CACHE_BYTES,
                        help="the broker's --cache-bytes (default: the broker's own default)")
    parser.add_argument("--scratch", default=None, help="directory for the data directory (default: $TMPDIR)")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    print(machine_info())
    print("command: python bench/storage_memory.py " + " ".join(sys.argv[1:]), flush=True)
    result = run(args)
    print(json.dumps(result), flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    sys.exit(0 if result["checksum_ok"] else 1)


if __name__ == "__main__":
    main()
