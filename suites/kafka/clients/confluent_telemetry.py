"""The confluent-kafka ``telemetry`` job (python_driver.py runs it): produce and consume with KIP-714 metrics push
on, and report what librdkafka's own telemetry log says of each client's subscription and pushes.

The conversation is the client's, so what the broker did with a push is read from the client: librdkafka's
``debug=telemetry`` log names every GetTelemetrySubscriptions answer it parsed and every push's outcome
("PushTelemetryRequest succeeded" / "... failed: <broker error>"). That works against any Kafka-compatible target.

Job: ``topic``, ``group``, ``records`` (as produce-consume), ``wait`` (seconds to wait, after the records were
consumed, for each client's first accepted push). Gives ``produced``, ``consumed`` and ``telemetry``: per client
(``producer``, ``consumer``) the GetTelemetrySubscriptions answers parsed, the PushIntervalMs and the number of
requested metrics of the last one, the pushes accepted, and every telemetry error line.
"""

from __future__ import annotations

import logging
import re
import time

from wirecheck.suites.kafka.clients import python_common as common
from wirecheck.suites.kafka.clients.confluent_driver import confluent_to_server

#: librdkafka's telemetry log lines that report a failure (rdkafka_telemetry.c, rdkafka_request.c)
FAILURES = ("GetTelemetrySubscriptionsRequest failed", "PushTelemetryRequest failed", "encode error",
            "not supported by broker", "Failed to uncompress", "exceeds telemetry_max_bytes")
PUSHED = "PushTelemetryRequest succeeded"
INTERVAL = re.compile(r"Parsing: push interval (\d+)")
REQUESTED = re.compile(r"Parsing: requested metrics count (\d+)")


class TelemetryLog(logging.Handler):
    """One client's telemetry debug lines (confluent-kafka hands librdkafka's log to a Python logger on poll)."""

    def __init__(self, name: str):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.logger = logging.getLogger(f"wirecheck.telemetry.{name}")
        self.logger.setLevel(logging.DEBUG)
        self.logger.propagate = False
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def last(self, pattern: re.Pattern) -> int | None:
        found = [int(m.group(1)) for m in map(pattern.search, self.lines) if m]
        return found[-1] if found else None

    def pushed(self) -> int:
        return sum(PUSHED in line for line in self.lines)

    def settled(self) -> bool:
        """Nothing more to wait for: a push accepted, an error seen, or a subscription asking for no metrics."""
        return bool(self.pushed() or self.failures() or self.last(REQUESTED) == 0)

    def failures(self) -> list[str]:
        return [line for line in self.lines if any(mark in line for mark in FAILURES)]

    def summary(self) -> dict:
        return {"subscriptions": sum("Parsing: client instance id" in line for line in self.lines),
                "push_interval_ms": self.last(INTERVAL), "requested_metrics": self.last(REQUESTED),
                "pushes_accepted": self.pushed(), "failures": self.failures()[:10]}


def telemetry(job: dict) -> dict:
    from confluent_kafka import Consumer, Producer

    logs = {"producer": TelemetryLog("producer"), "consumer": TelemetryLog("consumer")}

    def settings(role: str) -> dict:
        return {**confluent_to_server(job), "enable.metrics.push": True, "debug": "telemetry",
                "logger": logs[role].logger}

    producer = Producer(settings("producer"))
    delivered: dict[int, list] = {}
    for index, r in enumerate(job["records"]):
        producer.produce(job["topic"], value=common.raw(r["value"]), key=common.raw(r["key"]),
                         partition=r["partition"], timestamp=r["timestamp"],
                         headers=[(n, common.raw(v)) for n, v in r["headers"]],
                         on_delivery=lambda err, msg, index=index: delivered.__setitem__(
                             index, [msg.partition(), msg.offset()] if err is None else [None, str(err)]))
    if producer.flush(common.PRODUCE_SECONDS):
        raise common.Waiting("delivery reports of the produced records")
    result = {"produced": [delivered[i] for i in range(len(job["records"]))], "consumed": []}
    consumer = Consumer({**settings("consumer"), "group.id": job["group"], "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([job["topic"]])
    try:
        end = time.monotonic() + common.CONSUME_SECONDS
        while len(result["consumed"]) < len(job["records"]):
            if time.monotonic() > end:
                raise common.Waiting(f"records ({len(result['consumed'])} of {len(job['records'])} consumed)")
            producer.poll(0)
            m = consumer.poll(0.2)
            if m is None:
                continue
            if m.error():
                raise RuntimeError(f"consumer error: {m.error()}")
            result["consumed"].append(common.consumed_record(m.partition(), m.offset(), m.key(), m.value(),
                                                             m.headers(), m.timestamp()[1]))
        end = time.monotonic() + job["wait"]  # both clients keep running until each has pushed (or cannot)
        while time.monotonic() < end and not all(log.settled() for log in logs.values()):
            producer.poll(0.1)
            consumer.poll(0.1)
    finally:
        consumer.close()
        producer.flush(1)
    result["telemetry"] = {role: log.summary() for role, log in logs.items()}
    return result
