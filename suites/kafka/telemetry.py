"""Steps of the client telemetry (KIP-714) cases: the OTLP metrics payload a client pushes."""

from __future__ import annotations

import struct
import time
import uuid

from wirecheck.protocols import compression
from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, Kafka, expect, short


GET_SUBSCRIPTIONS, PUSH = 71, 72

ZERO_ID = uuid.UUID(int=0)

UNSUPPORTED_COMPRESSION_TYPE, INVALID_RECORD, THROTTLING_QUOTA_EXCEEDED = 76, 87, 89

UNKNOWN_SUBSCRIPTION_ID, TELEMETRY_TOO_LARGE = 117, 118

#: a TelemetryMaxBytes above this is not pushed past (the too-large case would send that much)
LARGEST_PROBE = 16 << 20

#: a push interval below this cannot be told from the suite's own pace (two pushes a few milliseconds apart)
SHORTEST_JUDGED_INTERVAL_MS = 200


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def metrics_data(padding: int = 0) -> bytes:
    """MetricsData{resource_metrics: [ResourceMetrics{scope_metrics: [ScopeMetrics{metrics: [Metric{name, gauge:
    Gauge{data_points: [NumberDataPoint{time_unix_nano, as_int 1}]}}]}], schema_url: "x" * padding}]}."""
    point = b"\x19" + struct.pack("<Q", time.time_ns()) + b"\x31" + struct.pack("<q", 1)  # fields 3 and 6, fixed64
    metric = _field(1, b"org.apache.kafka.client.wirecheck.probe") + _field(5, _field(1, point))
    resource_metrics = _field(2, _field(2, metric)) + (_field(3, b"x" * padding) if padding else b"")
    return _field(1, resource_metrics)


class Instance:
    """One telemetry client instance on its own connection: its id and subscription once it asked for one."""

    def __init__(self, target):
        self.client = Kafka(target)
        self.client.require(GET_SUBSCRIPTIONS, 0)  # UNIMPLEMENTED unless both APIs are advertised at v0
        self.client.require(PUSH, 0)
        self.target = target
        self.subscription: dict = {}

    def get(self, instance_id: uuid.UUID, clause_id: str) -> dict:
        return self.client.call(GET_SUBSCRIPTIONS, 0, {"ClientInstanceId": instance_id}, clause_id)

    def subscribe(self) -> dict:
        """A subscription for a new instance (a precondition: the broker assigns the id)."""
        with self.target.precondition("a telemetry subscription for a new client instance"):
            answer = self.get(ZERO_ID, "kafka.telemetry.instance-id")
            expect("kafka.telemetry.instance-id", answer["ErrorCode"], errors.NONE)
            if answer["ClientInstanceId"] == ZERO_ID:
                raise Divergence(C["kafka.telemetry.instance-id"], "a non-zero ClientInstanceId", short(answer))
        self.subscription = answer
        return answer

    def codec(self) -> int:
        """The first accepted type the suite can compress with (the client's choice, KIP-714), else 0 (none)."""
        return next((c for c in self.subscription["AcceptedCompressionTypes"] if c in compression.NAMES and c), 0)

    def push(self, clause_id: str, metrics: bytes | None = None, codec: int | None = None, **fields) -> dict:
        codec = self.codec() if codec is None else codec
        payload = metrics_data() if metrics is None else metrics
        if metrics is None and codec:
            payload = compression.compress(codec, payload)
        body = {"ClientInstanceId": self.subscription.get("ClientInstanceId", ZERO_ID),
                "SubscriptionId": self.subscription.get("SubscriptionId", 0), "Terminating": False,
                "CompressionType": codec, "Metrics": payload, **fields}
        return self.client.call(PUSH, 0, body, clause_id)


def expect_push(clause_id: str, answer: dict, code: int) -> None:
    """A push's ErrorCode must be ``code`` under ``clause_id``; UNKNOWN_SUBSCRIPTION_ID to a push under the very
    SubscriptionId the broker answered says the broker loses its own subscriptions, which
    kafka.telemetry.push-accepted owns, whatever case pushed."""
    if answer["ErrorCode"] == UNKNOWN_SUBSCRIPTION_ID and code != UNKNOWN_SUBSCRIPTION_ID:
        clause_id = "kafka.telemetry.push-accepted"
    expect(clause_id, answer["ErrorCode"], code)


def accepted_push(instance: Instance, **fields) -> None:
    """A push the broker must accept (a precondition of the cases about what comes after it)."""
    with instance.target.precondition("a well-formed push under the subscription accepted"):
        expect_push("kafka.telemetry.push-accepted", instance.push("kafka.telemetry.push-accepted", **fields),
                    errors.NONE)

