"""The reference broker's KIP-714 telemetry state (broker/kafka/telemetry.py), driven without a socket:
what the suite cannot watch from outside (the clock of the push interval, the bound on instances remembered, every
codec's payload check)."""

from __future__ import annotations

import uuid

import pytest
from wirecheck.protocols import compression
from wirecheck.suites.kafka.telemetry import metrics_data
from wirecheck.broker.kafka import telemetry as t

from tests.broker.test_kafka_consumer_groups import call, wire_probe


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(**options) -> tuple[t.Telemetry, Clock]:
    clock = Clock()
    return t.Telemetry(1000, 4096, [""], clock=clock, **options), clock


def push(state: t.Telemetry, answer: dict, codec: int = 0, metrics: bytes | None = None, **fields) -> int:
    body = {"ClientInstanceId": answer["ClientInstanceId"], "SubscriptionId": answer["SubscriptionId"],
            "Terminating": False, "CompressionType": codec,
            "Metrics": compression.compress(codec, metrics_data()) if metrics is None else metrics, **fields}
    return state.push(body, 0)["ErrorCode"]


def test_pushes_follow_the_interval_from_the_later_of_get_and_push():
    state, clock = make()
    answer = state.subscriptions({"ClientInstanceId": t.ZERO_ID}, 0)
    assert answer["ClientInstanceId"] != t.ZERO_ID and answer["RequestedMetrics"] == [""]
    assert push(state, answer) == t.NONE  # the first after a get, at once
    clock.now += 0.5
    assert push(state, answer) == t.THROTTLING_QUOTA_EXCEEDED
    clock.now += 0.5
    assert push(state, answer) == t.NONE  # a full interval after the accepted push
    assert push(state, answer, Terminating=True) == t.NONE  # terminating: never throttled
    assert push(state, answer) == t.INVALID_REQUEST  # nothing after the terminating push


@pytest.mark.parametrize("codec", sorted(compression.NAMES))
def test_every_accepted_codec_decompresses_and_garbage_does_not(codec):
    state, _ = make()
    answer = state.subscriptions({"ClientInstanceId": t.ZERO_ID}, 0)
    assert push(state, answer, codec) == t.NONE
    answer = state.subscriptions({"ClientInstanceId": uuid.uuid4().bytes}, 0)
    assert push(state, answer, codec, metrics=b"\x07garbage" * 8) == t.INVALID_RECORD


def test_instances_remembered_are_bounded_oldest_first():
    state, _ = make(max_instances=3)
    ids = [state.subscriptions({"ClientInstanceId": t.ZERO_ID}, 0)["ClientInstanceId"] for _ in range(5)]
    assert list(state.instances) == ids[2:]


def test_the_subscription_id_changes_with_the_subscription():
    state, _ = make()
    other = t.Telemetry(2000, 4096, [""])
    own = uuid.uuid4().bytes
    first = state.subscriptions({"ClientInstanceId": own}, 0)["SubscriptionId"]
    assert state.subscriptions({"ClientInstanceId": own}, 0)["SubscriptionId"] == first
    assert other.subscriptions({"ClientInstanceId": own}, 0)["SubscriptionId"] != first


def _subscribe(w) -> dict:
    return call(w, 71, 0, {"ClientInstanceId": uuid.UUID(int=0)})


def _push(w, answer: dict | None = None, **fields) -> int:
    answer = answer or _subscribe(w)
    body = {"ClientInstanceId": answer["ClientInstanceId"], "SubscriptionId": answer["SubscriptionId"],
            "Terminating": False, "CompressionType": 0, "Metrics": metrics_data(), **fields}
    return call(w, 72, 0, body)["ErrorCode"]



#: for tests/broker/test_kafka_faults.py: each telemetry fault changes what a probe over the wire answers
TELEMETRY_PROBES = {
    "kafka.telemetry-instance-id-not-assigned":
        (wire_probe(lambda w: _subscribe(w)["ClientInstanceId"] != uuid.UUID(int=0)), True),
    "kafka.telemetry-subscription-id-unstable": (wire_probe(_push), t.NONE),
    "kafka.telemetry-subscription-unchecked":
        (wire_probe(lambda w: _push(w, SubscriptionId=_subscribe(w)["SubscriptionId"] ^ 1)), t.UNKNOWN_SUBSCRIPTION_ID),
    "kafka.telemetry-compression-unchecked": (wire_probe(lambda w: _push(w, CompressionType=7)), 76),
    "kafka.telemetry-size-unchecked": (wire_probe(lambda w: _push(w, Metrics=bytes(1024 * 1024 + 1))), 118),
    "kafka.telemetry-null-instance-accepted":
        (wire_probe(lambda w: _push(w, {**_subscribe(w), "ClientInstanceId": uuid.UUID(int=0)})), t.INVALID_REQUEST),
}
