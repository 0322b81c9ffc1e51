"""The KIP-714 client telemetry message definitions kafka-python's JSON folder lacks, in Apache Kafka's JSON model.

GetTelemetrySubscriptions (71) and PushTelemetry (72): GetTelemetrySubscriptionsRequest.json / Response.json and
PushTelemetryRequest.json / Response.json (Kafka 3.7+: v0 only, flexible from v0), written as data so that
:func:`message_definitions.load_message` reads them like the others.
"""

from __future__ import annotations

import copy


def _f(name: str, type_: str) -> dict:
    return {"name": name, "type": type_, "versions": "0+"}


_DEFINITIONS = {
    "GetTelemetrySubscriptionsRequest": [
        _f("ClientInstanceId", "uuid"),  # zero: the client has none yet, the broker assigns one
    ],
    "GetTelemetrySubscriptionsResponse": [
        _f("ThrottleTimeMs", "int32"),
        _f("ErrorCode", "int16"),
        _f("ClientInstanceId", "uuid"),
        _f("SubscriptionId", "int32"),
        _f("AcceptedCompressionTypes", "[]int8"),  # in the broker's order of preference
        _f("PushIntervalMs", "int32"),
        _f("TelemetryMaxBytes", "int32"),
        _f("DeltaTemporality", "bool"),
        _f("RequestedMetrics", "[]string"),  # empty: push nothing; [""]: every metric
    ],
    "PushTelemetryRequest": [
        _f("ClientInstanceId", "uuid"),
        _f("SubscriptionId", "int32"),
        _f("Terminating", "bool"),  # the client's last push before it closes
        _f("CompressionType", "int8"),
        _f("Metrics", "bytes"),  # OTLP MetricsData (protobuf), compressed as CompressionType says
    ],
    "PushTelemetryResponse": [
        _f("ThrottleTimeMs", "int32"),
        _f("ErrorCode", "int16"),
    ],
}


def definition(name: str) -> dict | None:
    """The message's definition (a fresh copy: the codec's loader edits what it is given), or None."""
    fields = _DEFINITIONS.get(name)
    if fields is None:
        return None
    return {"name": name, "validVersions": "0", "flexibleVersions": "0+", "fields": copy.deepcopy(fields)}
