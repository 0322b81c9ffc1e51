"""A real Python Kafka client, driven by a job on stdin: ``python -m wirecheck.suites.kafka.clients.python_driver
CLIENT`` with CLIENT one of kafka-python, confluent-kafka, aiokafka.

Job: ``{"action": "produce-consume", "bootstrap", "topic", "group", "codec", "records": [{"partition", "key",
"value", "headers": [[name, value]], "timestamp"}], "rounds": N}`` (the records are produced in N rounds, each
flushed before the next, so that later batches start at offsets above 0) (keys, values and header values base64, null allowed for a
key; timestamps in ms), or ``{"action": "describe"}``. Output (one JSON line): the client's name and version, the
codecs it offers, and for produce-consume ``produced`` ([partition, offset] per record, in job order) and
``consumed`` (each record read back, in the order read). The client's defaults apply except where the job says
otherwise (the consumer reads from the earliest offset and commits nothing).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time

CONSUME_SECONDS = 20  # the case's own limit is longer: a driver that gives up says what it waited for
CODECS = ("gzip", "snappy", "lz4", "zstd")


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def raw(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def consumed_record(partition: int, offset: int, key, value, headers, timestamp: int) -> dict:
    return {"partition": partition, "offset": offset, "key": b64(key), "value": b64(value),
            "headers": [[name, b64(data)] for name, data in headers or []], "timestamp": timestamp}


def rounds(job: dict) -> list[list[dict]]:
    """The job's records split into its rounds, in order."""
    count, records = job.get("rounds", 1), job["records"]
    size = -(-len(records) // count)
    return [records[i:i + size] for i in range(0, len(records), size)]


class Waiting(Exception):
    """The driver's own limit passed: says what it was waiting for."""


# -- kafka-python ----------------------------------------------------------------------------------------------


def kafka_python(job: dict) -> dict:
    import kafka
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import codec

    offered = [c for c, has in zip(CODECS, (codec.has_gzip(), codec.has_snappy(), codec.has_lz4(),
                                            codec.has_zstd())) if has]
    result = {"client": "kafka-python", "version": kafka.__version__, "codecs": offered}
    if job["action"] == "describe":
        return result
    options = {} if job["codec"] == "none" else {"compression_type": job["codec"]}
    producer = KafkaProducer(bootstrap_servers=job["bootstrap"], **options)
    try:
        futures = []
        for part in rounds(job):
            futures += [producer.send(job["topic"], key=raw(r["key"]), value=raw(r["value"]), partition=r["partition"],
                                      timestamp_ms=r["timestamp"], headers=[(n, raw(v)) for n, v in r["headers"]])
                        for r in part]
            producer.flush(timeout=CONSUME_SECONDS)
        result["produced"] = [[m.partition, m.offset] for m in (f.get(timeout=CONSUME_SECONDS) for f in futures)]
    finally:
        producer.close(timeout=5)
    consumer = KafkaConsumer(job["topic"], bootstrap_servers=job["bootstrap"], group_id=job["group"],
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=CONSUME_SECONDS * 1000)
    try:
        result["consumed"] = []
        for m in consumer:
            result["consumed"].append(consumed_record(m.partition, m.offset, m.key, m.value, m.headers, m.timestamp))
            if len(result["consumed"]) >= len(job["records"]):
                break
    finally:
        consumer.close()
    return result


# -- confluent-kafka (librdkafka) ------------------------------------------------------------------------------


def confluent_kafka(job: dict) -> dict:
    import confluent_kafka
    from confluent_kafka import Consumer, Producer

    result = {"client": "confluent-kafka", "version": f"{confluent_kafka.__version__} (librdkafka "
                                                      f"{confluent_kafka.libversion()[0]})",
              "codecs": list(CODECS)}  # librdkafka builds in every codec
    if job["action"] == "describe":
        return result
    producer = Producer({"bootstrap.servers": job["bootstrap"], "compression.type": job["codec"]})
    delivered: dict[int, list] = {}

    def report(index):
        def done(err, msg):
            delivered[index] = [msg.partition(), msg.offset()] if err is None else [None, str(err)]
        return done

    index = 0
    for part in rounds(job):
        for r in part:
            producer.produce(job["topic"], value=raw(r["value"]), key=raw(r["key"]), partition=r["partition"],
                             timestamp=r["timestamp"], headers=[(n, raw(v)) for n, v in r["headers"]],
                             on_delivery=report(index))
            index += 1
        if producer.flush(CONSUME_SECONDS):
            raise Waiting("delivery reports of the produced records")
    result["produced"] = [delivered[i] for i in range(len(job["records"]))]
    consumer = Consumer({"bootstrap.servers": job["bootstrap"], "group.id": job["group"],
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([job["topic"]])
    result["consumed"] = []
    end = time.monotonic() + CONSUME_SECONDS
    try:
        while len(result["consumed"]) < len(job["records"]):
            if time.monotonic() > end:
                raise Waiting(f"records ({len(result['consumed'])} of {len(job['records'])} consumed)")
            m = consumer.poll(0.5)
            if m is None:
                continue
            if m.error():
                raise RuntimeError(f"consumer error: {m.error()}")
            result["consumed"].append(consumed_record(m.partition(), m.offset(), m.key(), m.value(), m.headers(),
                                                      m.timestamp()[1]))
    finally:
        consumer.close()
    return result


# -- aiokafka --------------------------------------------------------------------------------------------------


def aiokafka(job: dict) -> dict:
    return asyncio.run(_aiokafka(job))


async def _aiokafka(job: dict) -> dict:
    import aiokafka as library
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka import codec

    offered = ["gzip"] + [c for c, has in (("snappy", codec.has_snappy()), ("lz4", codec.has_lz4()),
                                           ("zstd", codec.has_zstd())) if has]
    result = {"client": "aiokafka", "version": library.__version__, "codecs": offered}
    if job["action"] == "describe":
        return result
    producer = AIOKafkaProducer(bootstrap_servers=job["bootstrap"],
                                compression_type=None if job["codec"] == "none" else job["codec"])
    await producer.start()
    try:
        sent = [await producer.send_and_wait(job["topic"], raw(r["value"]), key=raw(r["key"]), partition=r["partition"],
                                             timestamp_ms=r["timestamp"],
                                             headers=[(n, raw(v)) for n, v in r["headers"]])
                for r in job["records"]]
        result["produced"] = [[m.partition, m.offset] for m in sent]
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(job["topic"], bootstrap_servers=job["bootstrap"], group_id=job["group"],
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    result["consumed"] = []
    end = time.monotonic() + CONSUME_SECONDS
    try:
        while len(result["consumed"]) < len(job["records"]):
            if time.monotonic() > end:
                raise Waiting(f"records ({len(result['consumed'])} of {len(job['records'])} consumed)")
            batches = await consumer.getmany(timeout_ms=500)
            for messages in batches.values():
                for m in messages:
                    result["consumed"].append(consumed_record(m.partition, m.offset, m.key, m.value, m.headers,
                                                              m.timestamp))
    finally:
        await consumer.stop()
    return result


DRIVERS = {"kafka-python": kafka_python, "confluent-kafka": confluent_kafka, "aiokafka": aiokafka}


def main() -> int:
    job = json.loads(sys.stdin.read())
    try:
        result = DRIVERS[sys.argv[1]](job)
    except Waiting as waiting:
        print(json.dumps({"waiting_for": str(waiting)}))
        return 3
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
