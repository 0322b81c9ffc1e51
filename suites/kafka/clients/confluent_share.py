"""The ``share-group`` scenario for confluent-kafka (librdkafka's ShareConsumer, KIP-932), run by python_driver.

Job: ``topic`` (``partitions`` of them), ``group``, ``values``. Two ShareConsumer members of one share group, in
explicit acknowledgement mode: each record a member gets is acknowledged ACCEPT and committed (commit_sync, which
sends ShareAcknowledge or piggy-backs on the next ShareFetch) before the next poll. Output: ``consumed``
([member, partition, offset, value]) and ``ack_errors`` (every commit that came back with an error).

A share partition starts at the latest offset (share.auto.offset.reset, KIP-932's default), fixed when a member
first fetches it, and nothing tells a client when that has happened: so the driver first produces a probe record
to every partition, again every half second, until a probe came back from each partition; only then are the job's
values produced. Probes are acknowledged like any record and left out of ``consumed``.
"""

from __future__ import annotations

import threading
import time

from wirecheck.suites.kafka.clients.confluent_driver import confluent_produce, confluent_to_server
from wirecheck.suites.kafka.clients.python_common import CONSUME_SECONDS, Group, Waiting, b64, raw, wait_until

PROBE = b"wirecheck-share-probe"
POLL_SECONDS = 0.2


def share_member(job: dict, group: Group, name: str, probes: set, ack_errors: list,
                 stop: threading.Event) -> threading.Thread:
    """One ShareConsumer member: poll, note, ACCEPT and commit every record, until ``stop``; then close."""
    from confluent_kafka import ShareConsumer

    def run():
        try:
            consumer = ShareConsumer({**confluent_to_server(job), "group.id": job["group"],
                                      "share.acknowledgement.mode": "explicit"})
            try:
                consumer.subscribe([job["topic"]])
                while not stop.is_set():
                    messages = consumer.poll(POLL_SECONDS)
                    for message in messages:
                        if message.error() is not None:
                            group.errors.append(f"{name}: {message.error()}")
                            continue
                        with group.lock:
                            if message.value() == PROBE:
                                probes.add(message.partition())
                            else:
                                group.consumed.append([name, message.partition(), message.offset(),
                                                       b64(message.value())])
                        consumer.acknowledge(message)
                    if len(messages):
                        for partition, error in consumer.commit_sync(CONSUME_SECONDS).items():
                            if error is not None:
                                ack_errors.append(f"{name} {partition.topic}-{partition.partition}: {error}")
            finally:
                consumer.close()
        except Exception as exc:  # noqa: BLE001 - any failure of a member is reported for the case to judge
            group.errors.append(f"{name}: {type(exc).__name__}: {exc}")
    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def share_group(job: dict) -> dict:
    values, partitions = [raw(v) for v in job["values"]], job["partitions"]
    produce = confluent_produce(job)
    group, probes, ack_errors, stop = Group(), set(), [], threading.Event()
    threads = [share_member(job, group, name, probes, ack_errors, stop) for name in ("a", "b")]
    try:
        end = time.monotonic() + CONSUME_SECONDS
        while len(probes) < partitions:  # every share partition started before the values are produced
            produce([(p, PROBE) for p in range(partitions) if p not in probes])
            time.sleep(0.5)
            if group.errors:
                raise RuntimeError("; ".join(group.errors))
            if time.monotonic() > end:
                raise Waiting(f"a probe record back from each of the {partitions} partitions")
        produce([(i % partitions, v) for i, v in enumerate(values)])
        wait_until(lambda: group.count() >= len(values), f"all {len(values)} records consumed", group=group)
        time.sleep(0.5)  # a record delivered twice may still come
    finally:
        stop.set()
        for thread in threads:
            thread.join(CONSUME_SECONDS)
    if group.errors:
        raise RuntimeError("; ".join(group.errors))
    with group.lock:
        return {"consumed": list(group.consumed), "ack_errors": sorted(ack_errors)}
