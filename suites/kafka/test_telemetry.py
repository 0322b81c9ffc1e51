"""KIP-714 client telemetry: GetTelemetrySubscriptions (71) and PushTelemetry (72). A target that does not advertise
both is UNIMPLEMENTED for every case here.

Each case is one client instance of its own: it asks for its subscription, then pushes as a client does (a small
OTLP MetricsData, compressed with a type the broker accepts) or as a broken client would. The first push after a
GetTelemetrySubscriptions is never early (clients jitter it), so each case pushes once per subscription except where
it is about the push interval.
"""

from __future__ import annotations

import uuid

import pytest
from wirecheck.protocols import compression
from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.kafka.client import C, expect, short
from wirecheck.suites.kafka.telemetry import (INVALID_RECORD, Instance, LARGEST_PROBE, SHORTEST_JUDGED_INTERVAL_MS,
                                              TELEMETRY_TOO_LARGE, THROTTLING_QUOTA_EXCEEDED, UNKNOWN_SUBSCRIPTION_ID,
                                              UNSUPPORTED_COMPRESSION_TYPE, ZERO_ID, accepted_push, expect_push,
                                              metrics_data)

case = pytest.mark.case


# -- the cases -------------------------------------------------------------------------------------------------


@case("kafka.telemetry.instance-id")
def test_zero_instance_id_gets_a_new_one_and_a_known_one_is_echoed(target):
    clause = "kafka.telemetry.instance-id"
    instance = Instance(target)
    first, second = instance.get(ZERO_ID, clause), instance.get(ZERO_ID, clause)
    for answer in (first, second):
        expect(clause, answer["ErrorCode"], errors.NONE)
        if answer["ClientInstanceId"] == ZERO_ID:
            raise Divergence(C[clause], "a new non-zero ClientInstanceId for a zero one", short(answer))
        if answer["PushIntervalMs"] <= 0 or answer["TelemetryMaxBytes"] <= 0:
            raise Divergence(C[clause], "a PushIntervalMs and a TelemetryMaxBytes above 0", short(answer))
    if first["ClientInstanceId"] == second["ClientInstanceId"]:
        raise Divergence(C[clause], "a different new id for each zero ClientInstanceId",
                         f"{first['ClientInstanceId']} twice")
    own = uuid.uuid4()  # an id the client already has (KIP-714: it keeps one for its lifetime)
    answer = instance.get(own, clause)
    expect(clause, answer["ErrorCode"], errors.NONE)
    if answer["ClientInstanceId"] != own:
        raise Divergence(C[clause], f"the ClientInstanceId sent, {own}, echoed", short(answer))


@case("kafka.telemetry.push-accepted")
def test_push_under_the_subscription_is_accepted(target):
    clause = "kafka.telemetry.push-accepted"
    instance = Instance(target)
    instance.subscribe()
    answer = instance.push(clause)
    expect(clause, answer["ErrorCode"], errors.NONE)
    # uncompressed is always an option (a client that supports none of the accepted types), for a new instance
    plain = Instance(target)
    plain.subscribe()
    try:
        expect(clause, plain.push(clause, codec=0)["ErrorCode"], errors.NONE)
    except Divergence as divergence:
        raise divergence.with_note("the push was uncompressed (CompressionType 0)") from None


@case("kafka.telemetry.unknown-subscription")
def test_push_under_another_subscription_id(target):
    clause = "kafka.telemetry.unknown-subscription"
    instance = Instance(target)
    subscription = instance.subscribe()
    wrong = subscription["SubscriptionId"] + 1 if subscription["SubscriptionId"] < 2**31 - 1 else 0
    expect(clause, instance.push(clause, SubscriptionId=wrong)["ErrorCode"], UNKNOWN_SUBSCRIPTION_ID)


@case("kafka.telemetry.unsupported-compression")
def test_push_with_a_compression_type_not_accepted(target):
    clause = "kafka.telemetry.unsupported-compression"
    instance = Instance(target)
    accepted = set(instance.subscribe()["AcceptedCompressionTypes"])
    codec = next(c for c in range(1, 128) if c not in accepted)  # 5 and up name no codec at all
    answer = instance.push(clause, metrics=metrics_data(), codec=codec)
    try:
        expect_push(clause, answer, UNSUPPORTED_COMPRESSION_TYPE)
    except Divergence as divergence:
        raise divergence.with_note(f"CompressionType {codec}, accepted {sorted(accepted)}") from None


@case("kafka.telemetry.too-large")
def test_push_above_telemetry_max_bytes(target):
    clause = "kafka.telemetry.too-large"
    instance = Instance(target)
    limit = instance.subscribe()["TelemetryMaxBytes"]
    if limit >= LARGEST_PROBE:
        raise Unimplemented(f"TelemetryMaxBytes {limit}: the suite pushes at most {LARGEST_PROBE} bytes")
    base = len(metrics_data())
    payload = metrics_data(padding=limit + 1 - base)
    payload = metrics_data(padding=limit + 1 - base - (len(payload) - (limit + 1)))  # the length varints grew
    answer = instance.push(clause, metrics=payload, codec=0)
    try:
        expect_push(clause, answer, TELEMETRY_TOO_LARGE)
    except Divergence as divergence:
        raise divergence.with_note(f"{len(payload)} bytes of Metrics, TelemetryMaxBytes {limit}") from None


@case("kafka.telemetry.null-instance")
def test_push_with_a_zero_instance_id(target):
    clause = "kafka.telemetry.null-instance"
    instance = Instance(target)
    expect(clause, instance.push(clause, codec=0)["ErrorCode"], errors.INVALID_REQUEST)


@case("kafka.telemetry.push-interval")
def test_early_push_is_throttled_but_not_a_terminating_one(target):
    clause = "kafka.telemetry.push-interval"
    instance = Instance(target)
    interval = instance.subscribe()["PushIntervalMs"]
    if interval < SHORTEST_JUDGED_INTERVAL_MS:
        raise Unimplemented(f"PushIntervalMs {interval}: too short to push early on purpose")
    accepted_push(instance)
    answer = instance.push(clause)  # at once, long before the interval
    try:
        expect_push(clause, answer, THROTTLING_QUOTA_EXCEEDED)
    except Divergence as divergence:
        raise divergence.with_note(f"the second push came at once; PushIntervalMs {interval}") from None
    answer = instance.push(clause, Terminating=True)
    try:
        expect_push(clause, answer, errors.NONE)
    except Divergence as divergence:
        raise divergence.with_note("a terminating push right after another one") from None


@case("kafka.telemetry.terminated")
def test_push_after_terminating_is_refused(target):
    clause = "kafka.telemetry.terminated"
    instance = Instance(target)
    instance.subscribe()
    accepted_push(instance, Terminating=True)
    expect_push(clause, instance.push(clause), errors.INVALID_REQUEST)


@case("kafka.telemetry.unreadable-metrics")
def test_metrics_that_do_not_decompress(target):
    clause = "kafka.telemetry.unreadable-metrics"
    instance = Instance(target)
    instance.subscribe()
    codec = instance.codec()
    garbage = b"\x07not metrics, not compressed" * 4  # wire type 7 is no protobuf field either
    answer = instance.push(clause, metrics=garbage, codec=codec)
    try:
        expect_push(clause, answer, INVALID_RECORD)
    except Divergence as divergence:
        raise divergence.with_note(f"CompressionType {codec} ({compression.NAMES.get(codec)})") from None
