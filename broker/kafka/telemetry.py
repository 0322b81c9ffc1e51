"""KIP-714 client telemetry: GetTelemetrySubscriptions (71) and PushTelemetry (72).

The protocol (KIP-714 'Client API', 'Broker API'; GetTelemetrySubscriptionsRequest.json, PushTelemetryRequest.json):

* a client asks for its subscription with ClientInstanceId zero (it has none yet): the broker assigns a random
  UUID and answers it; later requests echo it back. The subscription names the metrics wanted (empty: none, a
  lone "" : all), the push interval, the size limit and the compression types accepted, under a SubscriptionId;
* the client then pushes its metrics (OTLP MetricsData, protobuf, compressed with one of the accepted types or
  not at all) under that SubscriptionId, one push per interval; a last push with Terminating=true says it closes.

The checks of a push come in the order Kafka's ClientMetricsManager makes them: a zero instance id is
INVALID_REQUEST; a push after the instance's terminating push is INVALID_REQUEST; another SubscriptionId is
UNKNOWN_SUBSCRIPTION_ID; a push sooner than the interval (except the first after a GetTelemetrySubscriptions, and a
terminating one) is THROTTLING_QUOTA_EXCEEDED; a compression type not accepted is UNSUPPORTED_COMPRESSION_TYPE;
Metrics above TelemetryMaxBytes is TELEMETRY_TOO_LARGE; Metrics that do not decompress into a protobuf message
are INVALID_RECORD (Kafka's answer when its receiver plugin cannot read them).

Decisions: one subscription for every client (an operator's metrics list, push interval and size limit, options
--kafka-telemetry-*); its SubscriptionId is a checksum of the subscription, so it changes whenever the
subscription does (and two brokers with one configuration answer the same); GetTelemetrySubscriptions itself is not rate-limited (Kafka
also throttles it; nothing requires it). The metrics are checked and dropped: there is no exporter.
"""

from __future__ import annotations

import collections
import time
import uuid
import zlib
from dataclasses import dataclass

from wirecheck.broker.kafka import records
from wirecheck.broker.kafka.faults import KafkaFaults, KafkaVariants
from wirecheck.broker.kafka.errors import (INVALID_RECORD, INVALID_REQUEST, NONE, TELEMETRY_TOO_LARGE,
                                           THROTTLING_QUOTA_EXCEEDED, UNKNOWN_SUBSCRIPTION_ID,
                                           UNSUPPORTED_COMPRESSION_TYPE)


ZERO_ID = bytes(16)
#: zstd, lz4, gzip, snappy: Kafka's order of preference (ClientTelemetryUtils); NONE is always accepted (KIP-714:
#: a client that supports none of them pushes uncompressed)
ACCEPTED_COMPRESSION = (4, 3, 1, 2)
#: client instances remembered (Kafka's ClientMetricsManager cache holds 16384); the least recently seen is
#: forgotten first, and pushes again after a GetTelemetrySubscriptions or under the same SubscriptionId
MAX_INSTANCES = 16384


@dataclass
class Instance:
    subscription_id: int
    last_get: float = float("-inf")  # monotonic seconds
    last_push: float = float("-inf")
    terminating: bool = False


class Telemetry:
    def __init__(self, push_interval_ms: int, max_bytes: int, metrics: list[str],
                 faults: KafkaFaults | None = None, variants: KafkaVariants | None = None,
                 max_instances: int = MAX_INSTANCES, clock=time.monotonic):
        self.push_interval_ms = push_interval_ms
        self.max_bytes = max_bytes
        self.metrics = list(metrics)
        self.faults = KafkaFaults() if faults is None else faults
        self.variants = KafkaVariants() if variants is None else variants
        self.max_instances = max_instances
        self.clock = clock
        self.instances: collections.OrderedDict[bytes, Instance] = collections.OrderedDict()
        # what the SubscriptionId sums up: a changed subscription gets new ids
        self._subscription = repr((self.metrics, push_interval_ms, max_bytes, ACCEPTED_COMPRESSION)).encode()

    def _subscription_id(self, salt: bytes = b"") -> int:
        value = zlib.crc32(salt + self._subscription)
        return value - (1 << 32) if value >= 1 << 31 else value  # an INT32

    def _instance(self, instance_id: bytes) -> Instance:
        instance = self.instances.get(instance_id)
        if instance is None:
            # per instance, as Apache Kafka's ClientMetricsManager.computeSubscriptionId: a CRC of the subscription
            # XORed with the client instance id's hash (server/src/main/java/org/apache/kafka/server/
            # ClientMetricsManager.java), so two instances never share an id
            instance = self.instances[instance_id] = Instance(self._subscription_id(instance_id))
            while len(self.instances) > self.max_instances:
                self.instances.popitem(last=False)  # the least recently seen
        else:
            self.instances.move_to_end(instance_id)
        return instance

    # ------------------------------------------------------------------------------------------ subscriptions

    def subscriptions(self, req: dict, version: int) -> dict:
        instance_id = req["ClientInstanceId"]
        if instance_id == ZERO_ID:
            instance_id = uuid.uuid4().bytes  # never zero: version 4 bits are set
        instance = self._instance(instance_id)
        instance.last_get = self.clock()
        answered_id = instance.subscription_id
        if self.faults.telemetry_subscription_id_unstable:
            answered_id = self._subscription_id(uuid.uuid4().bytes)  # fault: not the id pushes are checked against
        if self.faults.telemetry_instance_id_not_assigned and req["ClientInstanceId"] == ZERO_ID:
            instance_id = ZERO_ID  # fault: the zero id answered back, none assigned
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "ClientInstanceId": instance_id,
                "SubscriptionId": answered_id, "AcceptedCompressionTypes": list(ACCEPTED_COMPRESSION),
                "PushIntervalMs": self.push_interval_ms, "TelemetryMaxBytes": self.max_bytes,
                "DeltaTemporality": True, "RequestedMetrics": list(self.metrics)}

    # ------------------------------------------------------------------------------------------ push

    def push(self, req: dict, version: int) -> dict:
        return {"ThrottleTimeMs": 0, "ErrorCode": self._push_error(req)}

    def _push_error(self, req: dict) -> int:
        instance_id = req["ClientInstanceId"]
        if instance_id == ZERO_ID and not self.faults.telemetry_null_instance_accepted:
            return INVALID_REQUEST
        instance = self._instance(instance_id)
        if instance.terminating and not self.variants.telemetry_terminating_forgotten:
            return INVALID_REQUEST  # the instance said its last push was its last
        instance.terminating = instance.terminating or req["Terminating"]
        if req["SubscriptionId"] != instance.subscription_id and not self.faults.telemetry_subscription_unchecked:
            return UNKNOWN_SUBSCRIPTION_ID
        if not self._push_due(instance, req["Terminating"]):
            return THROTTLING_QUOTA_EXCEEDED
        codec = req["CompressionType"]
        if codec != 0 and codec not in ACCEPTED_COMPRESSION and not self.faults.telemetry_compression_unchecked:
            return UNSUPPORTED_COMPRESSION_TYPE
        metrics = req["Metrics"] or b""
        if len(metrics) > self.max_bytes and not self.faults.telemetry_size_unchecked:
            return TELEMETRY_TOO_LARGE  # the bytes on the wire, compressed, as Kafka measures them
        if not self.variants.telemetry_metrics_unread and not _readable(codec, metrics):
            return INVALID_RECORD
        return NONE

    def _push_due(self, instance: Instance, terminating: bool) -> bool:
        """The push interval has passed since the later of the last get and the last push; the first push after a
        get is due at once (the client jitters its first push), and a terminating push always is."""
        now = self.clock()
        if self.variants.telemetry_push_unthrottled or terminating or instance.last_get > instance.last_push:
            instance.last_push = now
            return True
        if now - max(instance.last_get, instance.last_push) < self.push_interval_ms / 1000:
            return False
        instance.last_push = now
        return True


def _readable(codec: int, metrics: bytes) -> bool:
    """Decompresses with ``codec`` into a well-formed protobuf message (the OTLP MetricsData is not read deeper)."""
    try:
        return _protobuf_fields_ok(records.decompress(codec, metrics))
    except Exception:  # noqa: BLE001 - any codec's failure is the same verdict: unreadable
        return False


def _protobuf_fields_ok(data: bytes) -> bool:
    """Every field of the top-level message has a valid tag and fits in the bytes (protobuf wire format: varint,
    64-bit, length-delimited, 32-bit; groups are not used by OTLP)."""
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        if tag >> 3 == 0:
            return False
        wire = tag & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            pos += size
        elif wire == 5:
            pos += 4
        else:
            return False
        if pos > len(data):
            return False
    return True


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while shift < 64:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
    raise ValueError("varint longer than 10 bytes")
