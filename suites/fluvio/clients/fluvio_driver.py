"""The real ``fluvio`` Python client, driven by a job on stdin: ``python -m
wirecheck.suites.fluvio.clients.fluvio_driver``.

Job: ``{"action", "sc": "HOST:PORT", "topic", ...}`` with action one of

- ``produce-consume`` (``records``: [{"key", "value"}], base64): the first half sent one at a time, each
  waited for, the rest as one batch; then partition 0 streamed from the beginning, from ``from_offset`` and from
  the end (the last ``from_end`` records);
- ``consumer-offsets`` (``values``: text records, ``consumer``): an offset consumer reads two records from the
  beginning and commits; the stored offsets are listed; a new consumer of the same id reads two more; the offset
  is deleted and the offsets listed again;
- ``topic-admin`` (``missing``: a topic name never created): create, list, create again, delete a missing one,
  delete, list.

Output: one JSON line of what the client observed (judged by the case), its errors as text. The client connects
to the SC, which names the SPU that leads each partition. It holds the GIL while it waits on the server, so a
blocked call cannot be timed out from inside: before each call that can block the driver prints a
``{"waiting_for": ...}`` line, and the case's time limit stops it; the last such line says what never came.
"""

from __future__ import annotations

import base64
import itertools
import json
import sys
from importlib import metadata

VERSION = metadata.version("fluvio")


def b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode()


def waiting(what: str, **seen) -> None:
    print(json.dumps({"waiting_for": what, **seen}), flush=True)


def connect(job: dict):
    import fluvio

    config = fluvio.FluvioConfig.new(job["sc"])
    config.disable_tls()
    config.set_use_spu_local_address(False)  # the SPU at the address the SC gives, not the SPU's own idea of it
    waiting(f"a connection to the SC at {job['sc']}")
    return fluvio, config


def read(fluvio, client, topic: str, offset, count: int, what: str) -> list[dict]:
    got: list[dict] = []
    stream = client.partition_consumer(topic, 0).stream(offset)
    for _ in range(count):
        waiting(f"record {len(got) + 1} of {count} streamed {what}", consumed=got)
        record = next(stream)
        got.append({"offset": record.offset(), "key": b64(record.key()), "value": b64(record.value())})
    return got


def produce_consume(job: dict) -> dict:
    fluvio, config = connect(job)
    client = fluvio.Fluvio.connect_with_config(config)
    producer = client.topic_producer(job["topic"])
    pairs = [(base64.b64decode(r["key"]), base64.b64decode(r["value"])) for r in job["records"]]
    half = len(pairs) // 2
    outputs = []
    for i, (key, value) in enumerate(pairs[:half]):  # one at a time, then the rest as one batch
        waiting(f"the acknowledgement of record {i + 1} of {len(pairs)}")
        outputs.append(producer.send(list(key), list(value)))
        outputs[-1] = outputs[-1].wait()
    waiting(f"the acknowledgement of records {half + 1} to {len(pairs)}, sent as one batch")
    outputs += [output.wait() for output in producer.send_all(pairs[half:])]
    produced = [[meta.partition_id(), meta.offset()] for meta in outputs]
    waiting("the producer's flush", produced=produced)
    producer.flush()
    topic, count, start, tail = job["topic"], len(job["records"]), job["from_offset"], job["from_end"]
    return {"produced": produced,
            "from_beginning": read(fluvio, client, topic, fluvio.Offset.beginning(), count, "from the beginning"),
            "from_offset": read(fluvio, client, topic, fluvio.Offset.absolute(start), count - start,
                                f"from offset {start}"),
            "from_end": read(fluvio, client, topic, fluvio.Offset.from_end(tail), tail, f"from {tail} before the end")}


def offset_consumer(fluvio, client, topic: str, consumer_id: str, start=None):
    """A consumer whose offsets it commits by hand, reading what is there and then stopping."""
    builder = fluvio.ConsumerConfigExtBuilder(topic)
    if start is not None:
        builder.offset_start(start)
    builder.offset_consumer(consumer_id)
    builder.offset_strategy(fluvio.OffsetManagementStrategy.MANUAL)
    builder.disable_continuous(True)
    return client.consumer_with_config(builder.build())


def stored_offsets(client, consumer_id: str) -> list:
    waiting("the list of consumer offsets")
    return [[o.consumer_id, o.topic, o.partition, o.offset] for o in client.consumer_offsets()
            if o.consumer_id == consumer_id]


def consumer_offsets(job: dict) -> dict:
    fluvio, config = connect(job)
    client = fluvio.Fluvio.connect_with_config(config)
    topic, consumer_id = job["topic"], job["consumer"]
    producer = client.topic_producer(topic)
    for value in job["values"]:
        waiting(f"the acknowledgement of {value!r}")
        producer.send_string(value).wait()
    producer.flush()
    waiting("two records for the first consumer")
    first = offset_consumer(fluvio, client, topic, consumer_id, fluvio.Offset.beginning())
    first_read = [[r.offset(), r.value_string()] for r in itertools.islice(first, 2)]
    waiting("the commit of the first consumer's offset", first=first_read)
    first.offset_commit()
    first.offset_flush()
    stored = stored_offsets(client, consumer_id)
    waiting("two records for the resumed consumer", first=first_read, stored=stored)
    resumed = offset_consumer(fluvio, client, topic, consumer_id)  # no start: from the committed offset on
    resumed_read = [[r.offset(), r.value_string()] for r in itertools.islice(resumed, 2)]
    waiting("the deletion of the consumer offset")
    client.delete_consumer_offset(consumer_id, topic, 0)
    return {"first": first_read, "stored": stored, "resumed": resumed_read,
            "after_delete": stored_offsets(client, consumer_id)}


def attempt(call) -> str | None:
    """None when the call succeeds, else the client's error."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the client's errors are what the case judges
        return f"{type(exc).__name__}: {exc}"
    return None


def topic_admin(job: dict) -> dict:
    fluvio, config = connect(job)
    admin = fluvio.FluvioAdmin.connect_with_config(config)
    topic, missing = job["topic"], job["missing"]
    seen: dict = {}
    waiting(f"the creation of {topic}")
    seen["created"] = attempt(lambda: admin.create_topic(topic))
    waiting("the list of topics", **seen)
    seen["all_topics"] = [t.name() for t in admin.all_topics()]
    seen["listed"] = [t.name() for t in admin.list_topics([topic])]
    seen["partitions"] = [p.name() for p in admin.list_partitions([])]
    waiting(f"the second creation of {topic}", **seen)
    seen["created_again"] = attempt(lambda: admin.create_topic(topic))
    waiting(f"the deletion of {missing}, which does not exist", **seen)
    seen["deleted_missing"] = attempt(lambda: admin.delete_topic(missing))
    waiting(f"the deletion of {topic}", **seen)
    seen["deleted"] = attempt(lambda: admin.delete_topic(topic))
    waiting("the list of topics after the deletion", **seen)
    seen["all_topics_after"] = [t.name() for t in admin.all_topics()]
    return seen


ACTIONS = {"produce-consume": produce_consume, "consumer-offsets": consumer_offsets, "topic-admin": topic_admin}


def main() -> int:
    job = json.loads(sys.stdin.read())
    result = ACTIONS[job["action"]](job)
    print(json.dumps({"client": "fluvio-python", "version": VERSION, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
