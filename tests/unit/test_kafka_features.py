"""The reference broker's KIP-584 features in ApiVersions: as Apache Kafka 4.4 lists them, by request version."""

from __future__ import annotations

from wirecheck.protocols.kafka import messages
from wirecheck.broker.kafka.features import features_fields


def test_none_before_v3():
    assert features_fields(2) == {}


def test_v3_leaves_out_supported_features_from_level_0_and_finalizes_each():
    fields = features_fields(3)
    assert fields["SupportedFeatures"] == []  # each starts at 0 (KAFKA-17011: only v4 readers take MinVersion 0)
    finalized = {f["Name"]: (f["MinVersionLevel"], f["MaxVersionLevel"]) for f in fields["FinalizedFeatures"]}
    assert finalized == {"transaction.version": (2, 2), "group.version": (1, 1), "share.version": (1, 1)}
    assert fields["FinalizedFeaturesEpoch"] >= 0


def test_v4_lists_the_supported_ranges():
    supported = {f["Name"]: (f["MinVersion"], f["MaxVersion"]) for f in features_fields(4)["SupportedFeatures"]}
    assert supported == {"transaction.version": (0, 2), "group.version": (0, 1), "share.version": (0, 1)}


def test_the_fields_encode_as_the_tagged_fields_a_client_reads():
    body = {"ErrorCode": 0, "ApiKeys": [], "ThrottleTimeMs": 0, **features_fields(4)}
    decoded = messages.response_codec(18, 4).decode(messages.response_codec(18, 4).encode(body))
    assert {f["Name"]: f["MaxVersionLevel"] for f in decoded["FinalizedFeatures"]}["transaction.version"] == 2
