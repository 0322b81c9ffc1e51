"""Kill -9 and restart: the reference broker on fixed ports with a data directory, and the verdict on what a client
read back after the crash (nothing acknowledged lost, nothing recovered twice, order kept).

Used by the crash tests of each durable personality and by ``bench/crash_durability.py`` (the long version).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 30.0


class CrashableBroker:
    """One personality of the reference broker as a child process with ``--data-dir``: the first start binds
    ephemeral ports, every restart binds the same ones (clients reconnect to the addresses they know)."""

    def __init__(self, protocol: str, data_dir: Path, *extra: str):
        self.protocol = protocol
        self.data_dir = data_dir
        self.extra = list(extra)
        self.ports: dict[str, int] = {}  # the ready file's "ports": the primary listener and side listeners
        self.endpoints: dict[str, int] = {}  # the ready file's endpoints of this protocol
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def _port_flags(self) -> list[str]:
        if not self.ports:  # first start: every listener ephemeral
            from wirecheck.broker.personality import discover

            info = discover()[self.protocol]
            return [f"--{self.protocol}-port", "0", *(arg for endpoint in info.endpoints
                                                      for arg in (info.port_flag(endpoint), "0"))]
        flags = []
        for name, port in self.ports.items():  # "pravega" -> --pravega-port, "pravega-controller" -> its own flag
            flags += [f"--{name}-port", str(port)]
        for endpoint, port in self.endpoints.items():
            flags += [f"--{self.protocol}-{endpoint}-port", str(port)]
        return flags

    def start(self) -> None:
        ready = self.data_dir.parent / f"{self.data_dir.name}-ready.json"
        ready.unlink(missing_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "wirecheck.broker", "--protocols", self.protocol,
                 "--data-dir", str(self.data_dir), "--ready-file", str(ready), *self._port_flags(), *self.extra],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))))
        deadline = time.monotonic() + START_TIMEOUT
        while not ready.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"broker did not start (start {self.starts + 1}):\n{self.log_tail()}")
            time.sleep(0.05)
        bound = json.loads(ready.read_text())
        self.ports, self.endpoints = bound["ports"], bound.get("endpoints", {}).get(self.protocol, {})
        self.starts += 1

    @property
    def log_path(self) -> Path:
        return self.data_dir.parent / f"{self.data_dir.name}-broker.log"

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, so only what was written and synced before survives."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def __enter__(self):
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@dataclass
class CrashVerdict:
    """What was acknowledged before the kill against what a reader recovered after the restart."""

    acknowledged: list[int]  # record numbers, in the order their acknowledgements came
    recovered: list[int]  # record numbers, in the order the reader got them (one partition or segment)
    in_flight: int  # how many records were sent without an answer when the broker died

    @property
    def lost(self) -> list[int]:
        return sorted(set(self.acknowledged) - set(self.recovered))

    @property
    def duplicated(self) -> list[int]:
        seen, twice = set(), []
        for number in self.recovered:
            if number in seen:
                twice.append(number)
            seen.add(number)
        return twice

    @property
    def out_of_order(self) -> bool:
        return self.recovered != sorted(self.recovered)

    @property
    def unexplained(self) -> list[int]:
        """Recovered records that were neither acknowledged nor in flight at the kill (invented data)."""
        sent = len(self.acknowledged) + self.in_flight
        return [number for number in self.recovered if number >= sent or number < 0]

    def problems(self) -> list[str]:
        found = []
        if self.lost:
            found.append(f"{len(self.lost)} acknowledged records lost, first {self.lost[:5]}")
        if self.duplicated:
            found.append(f"{len(self.duplicated)} records recovered twice, first {self.duplicated[:5]}")
        if self.out_of_order:
            found.append("records recovered out of order")
        if self.unexplained:
            found.append(f"records recovered that were never sent: {self.unexplained[:5]}")
        return found

    def line(self) -> str:
        return (f"acknowledged {len(self.acknowledged)}, recovered {len(self.recovered)}, lost {len(self.lost)}, "
                f"duplicated {len(self.duplicated)}, in flight at the kill {self.in_flight}"
                f"{'' if not self.out_of_order else ', OUT OF ORDER'}")


# -- scenarios: a real client produces with acknowledgements, the broker is killed mid-stream, a reader reads back


def _number(body: bytes) -> int:
    return json.loads(body)["n"]


def barco_scenario(broker: CrashableBroker, kill_after: int, per_request: int = 10) -> CrashVerdict:
    """httpx posts NDJSON records (``{"n": i}``, ``per_request`` to a request, one partition key) to the HTTP
    producer, each 200 acknowledging its records; the broker is killed once ``kill_after`` are acknowledged, then
    restarted, and a new consumer group reads the topic from the earliest offset over HTTP/2 (httpx again)."""
    import threading

    import httpx

    topic, acknowledged, sent = f"crash-{time.monotonic_ns()}", [], [0]
    enough = threading.Event()

    def produce() -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{broker.endpoints['producer-http']}", timeout=10) as client:
            n = 0
            while True:
                numbers = range(n, n + per_request)
                sent[0] = n + per_request
                try:
                    reply = client.post(f"/v1/topic/{topic}/messages", params={"partitionKey": "k"},
                                        content=b"".join(b'{"n":%d}\n' % i for i in numbers),
                                        headers={"content-type": "application/x-ndjson"})
                except httpx.HTTPError:
                    return  # the broker died: this request's records are in flight
                if reply.status_code != 200:
                    return
                acknowledged.extend(numbers)
                n += per_request
                if len(acknowledged) >= kill_after:
                    enough.set()

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    if not enough.wait(300):
        raise RuntimeError(f"only {len(acknowledged)} records acknowledged in 300 s:\n{broker.log_tail()}")
    broker.kill()
    producer.join(30)
    in_flight = sent[0] - len(acknowledged)
    broker.start()
    return CrashVerdict(list(acknowledged), _barco_read_all(broker, topic, sent[0]), in_flight)


def _barco_read_all(broker: CrashableBroker, topic: str, at_most: int) -> list[int]:
    return [_number(body) for body in barco_bodies(broker, topic, at_most)]


def barco_bodies(broker: CrashableBroker, topic: str, at_most: int, timeout: float = 20):
    """Every record body of ``topic`` in order, read by a new consumer group from the earliest offset over HTTP/2
    until ``at_most`` came or five polls in a row were empty."""
    import httpx
    import zstandard

    from wirecheck.protocols.barco import wire

    consumer_id, count, empty = f"reader-{time.monotonic_ns()}", 0, 0
    with httpx.Client(base_url=f"http://127.0.0.1:{broker.endpoints['consumer']}", http1=False, http2=True,
                      timeout=timeout) as consumer:
        reply = consumer.put("/v1/consumer/register", params={"consumerId": consumer_id, "group": consumer_id,
                                                               "topic": topic, "onNewGroup": "startFromEarliest"})
        reply.raise_for_status()
        while empty < 5 and count < at_most:
            reply = consumer.post("/v1/consumer/poll", params={"consumerId": consumer_id})
            if reply.status_code == 204:
                empty += 1
                continue
            reply.raise_for_status()
            empty = 0
            for item in wire.parse_poll_response(reply.content):
                raw = zstandard.ZstdDecompressor().stream_reader(item.payload, read_across_frames=False).read()
                at = 0
                while at < len(raw):  # {i64 timestamp, u32 length, body} records
                    length = int.from_bytes(raw[at + 8 : at + 12], "big")
                    yield raw[at + 12 : at + 12 + length]
                    count += 1
                    at += 12 + length


def pravega_scenario(broker: CrashableBroker, kill_after: int, per_flush: int = 100) -> CrashVerdict:
    """The ``pravega`` client writes events (``{"n": i}``, one routing key, so one segment and one order) and
    flushes every ``per_flush``: a flush that returns acknowledges them. The writer runs in a child process (the
    client holds the GIL while it waits on the broker); the broker is killed once ``kill_after`` are flushed, then
    restarted, and a new reader group reads the stream: scope, stream and reader group metadata must have
    survived the kill too (the controller's snapshot)."""
    import pravega_client

    controller = f"tcp://127.0.0.1:{broker.ports['pravega-controller']}"
    scope, stream = f"crash{time.monotonic_ns()}", "events"
    manager = pravega_client.StreamManager(controller)
    assert manager.create_scope(scope) and manager.create_stream(scope, stream, 1)
    acknowledged = _writer_child(broker, kill_after, ["pravega-writer", controller, scope, stream, str(per_flush)])
    broker.start()
    return CrashVerdict(list(range(acknowledged)), _pravega_read_all(broker, scope, stream), per_flush)


def _pravega_write_forever(controller: str, scope: str, stream: str, per_flush: int) -> None:
    import pravega_client

    manager = pravega_client.StreamManager(controller)  # owns the client's runtime: it must outlive the writer
    writer = manager.create_writer(scope, stream)
    n = 0
    while True:
        for i in range(n, n + per_flush):
            writer.write_event_bytes(b'{"n":%d}' % i, "k")
        writer.flush()
        n += per_flush
        print(n, flush=True)


def _pravega_read_all(broker: CrashableBroker, scope: str, stream: str, quiet: float = 3.0) -> list[int]:
    import asyncio

    import pravega_client

    manager = pravega_client.StreamManager(f"tcp://127.0.0.1:{broker.ports['pravega-controller']}")
    group = manager.create_reader_group(f"rg{time.monotonic_ns()}", scope, stream)
    reader = group.create_reader("reader-0")
    got: list[int] = []

    async def collect() -> None:
        last_event = time.monotonic()
        while time.monotonic() - last_event < quiet:  # no event for ``quiet`` seconds: the segment is read
            try:
                async with asyncio.timeout(quiet):
                    segment_slice = await reader.get_segment_slice_async()
            except TimeoutError:
                return
            before = len(got)
            got.extend(_number(bytes(event.data())) for event in segment_slice)
            reader.release_segment(segment_slice)
            if len(got) > before:
                last_event = time.monotonic()

    try:
        asyncio.run(collect())
    finally:
        reader.reader_offline()
    return got



def _writer_child(broker: CrashableBroker, kill_after: int, argv: list[str]) -> int:
    """Run ``python -m tests.crash_support ARGV...`` (a writer that prints its acknowledged count after each flush),
    kill the broker once ``kill_after`` are acknowledged, then the writer; returns the count acknowledged."""
    writer = subprocess.Popen([sys.executable, "-m", "tests.crash_support", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    acknowledged = 0
    try:
        for line in writer.stdout:
            acknowledged = int(line)
            if acknowledged >= kill_after:
                break
        if acknowledged < kill_after:
            raise RuntimeError(f"the writer stopped at {acknowledged} acknowledged records:\n{broker.log_tail()}")
        broker.kill()
    finally:
        writer.kill()
        writer.wait(10)
        # the writer ran on between our read and the kill: a flush it finished then was acknowledged too
        later = [int(line) for line in writer.stdout.read().split() if line.isdigit()]
        acknowledged = max([acknowledged, *later])
    return acknowledged


def kafka_scenario(broker: CrashableBroker, kill_after: int, per_flush: int = 100) -> CrashVerdict:
    """confluent-kafka (librdkafka) produces ``{"n": i}`` with acks=all to a one-partition topic and flushes every
    ``per_flush`` (a flush that returns with nothing queued acknowledges them); after the kill and the restart a
    consumer of a new group reads the partition from the start."""
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap, topic = f"127.0.0.1:{broker.ports['kafka']}", f"crash-{time.monotonic_ns()}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive its futures
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(timeout=10)
    acknowledged = _writer_child(broker, kill_after, ["kafka-writer", bootstrap, topic, str(per_flush)])
    broker.start()
    return CrashVerdict(list(range(acknowledged)), _kafka_read_all(bootstrap, topic), per_flush)


def _kafka_write_forever(bootstrap: str, topic: str, per_flush: int) -> None:
    from confluent_kafka import Producer

    failed = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    n = 0
    while True:
        for i in range(n, n + per_flush):
            producer.produce(topic, value=b'{"n":%d}' % i, partition=0,
                             on_delivery=lambda err, msg: err and failed.append(err))
        if producer.flush(30) or failed:
            return  # not acknowledged: the broker is gone
        n += per_flush
        print(n, flush=True)


def _kafka_read_all(bootstrap: str, topic: str, quiet: float = 3.0) -> list[int]:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got, last = [], time.monotonic()
    try:
        while time.monotonic() - last < quiet:
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            got.append(_number(message.value()))
            last = time.monotonic()
    finally:
        consumer.close()
    return got


def rustlog_scenario(broker: CrashableBroker, kill_after: int, per_request: int = 100) -> CrashVerdict:
    """A RustLog client (no client library exists: JSON frames over a socket, as the seed specifies them) produces
    ``per_request`` records a request; the answer acknowledges them. After the kill and the restart it fetches the
    partition from offset 0."""
    import base64
    import socket
    import struct

    def request(sock, obj) -> dict:
        payload = json.dumps(obj).encode()
        sock.sendall(struct.pack(">I", len(payload)) + payload)
        size = struct.unpack(">I", _read(sock, 4))[0]
        return json.loads(_read(sock, size))

    topic, acknowledged = f"crash-{time.monotonic_ns()}", 0
    address = ("127.0.0.1", broker.ports["rustlog"])
    with socket.create_connection(address, timeout=10) as sock:
        request(sock, {"type": "CreateTopic", "topic": topic, "partition_count": 1})
        while acknowledged < kill_after:
            records = [base64.b64encode(b'{"n":%d}' % i).decode() for i in range(acknowledged, acknowledged + per_request)]
            answer = request(sock, {"type": "Produce", "topic": topic, "partition": 0, "records": records})
            if answer.get("type") != "ProduceResponse":
                raise RuntimeError(f"produce refused: {answer}")
            acknowledged += per_request
        # the next request is in flight when the broker dies
        records = [base64.b64encode(b'{"n":%d}' % i).decode() for i in range(acknowledged, acknowledged + per_request)]
        payload = json.dumps({"type": "Produce", "topic": topic, "partition": 0, "records": records}).encode()
        sock.sendall(struct.pack(">I", len(payload)) + payload)
        broker.kill()
    broker.start()
    got, offset = [], 0
    with socket.create_connection(address, timeout=10) as sock:
        while True:
            answer = request(sock, {"type": "Fetch", "group_id": "", "topic": topic, "partition": 0, "offset": offset,
                                    "max_bytes": 1 << 20})
            if not answer.get("records"):
                break
            got += [_number(base64.b64decode(r["payload"])) for r in answer["records"]]
            offset = answer["next_offset"]
    return CrashVerdict(list(range(acknowledged)), got, per_request)


def _read(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError(f"closed after {len(data)} of {n} bytes")
        data += chunk
    return data

def fluvio_scenario(broker: CrashableBroker, kill_after: int, per_flush: int = 100) -> CrashVerdict:
    """The ``fluvio`` client produces ``{"n": i}`` to a one-partition topic and flushes every ``per_flush``, then
    waits for each record's metadata (the SPU's answer: acknowledged). The writer runs in a child process (the
    client holds the GIL while it waits); the broker is killed once ``kill_after`` are acknowledged, restarted,
    and a consumer reads the partition from the beginning: the topic must have survived the kill too."""
    import fluvio

    sc, topic = f"127.0.0.1:{broker.endpoints['sc']}", f"crash-{time.monotonic_ns()}"
    fluvio.FluvioAdmin.connect_with_config(_fluvio_config(sc)).create_topic(topic)
    acknowledged = _writer_child(broker, kill_after, ["fluvio-writer", sc, topic, str(per_flush)])
    broker.start()
    return CrashVerdict(list(range(acknowledged)), _fluvio_read_all(sc, topic), per_flush)


def _fluvio_config(sc: str):
    import fluvio

    config = fluvio.FluvioConfig.new(sc)  # no profile in $HOME needed
    config.set_use_spu_local_address(False)
    config.disable_tls()
    return config


def _fluvio_write_forever(sc: str, topic: str, per_flush: int) -> None:
    import fluvio

    producer = fluvio.Fluvio.connect_with_config(_fluvio_config(sc)).topic_producer(topic)
    n = 0
    while True:
        outputs = [producer.send([], list(b'{"n":%d}' % i)) for i in range(n, n + per_flush)]
        producer.flush()
        for output in outputs:
            output.wait()  # raises if the SPU refused or never answered
        n += per_flush
        print(n, flush=True)


def _fluvio_read_all(sc: str, topic: str) -> list[int]:
    import fluvio

    client = fluvio.Fluvio.connect_with_config(_fluvio_config(sc))
    builder = fluvio.ConsumerConfigExtBuilder(topic)
    builder.partition(0)
    builder.offset_start(fluvio.Offset.beginning())
    builder.disable_continuous(True)  # stop at the end of the partition instead of waiting for more
    return [_number(bytes(record.value())) for record in client.consumer_with_config(builder.build())]


if __name__ == "__main__":  # the writer children of the scenarios whose client holds the GIL while it waits
    if sys.argv[1] == "fluvio-writer":
        _fluvio_write_forever(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "pravega-writer":
        _pravega_write_forever(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif sys.argv[1] == "kafka-writer":
        _kafka_write_forever(sys.argv[2], sys.argv[3], int(sys.argv[4]))
