"""The feature flags the broker advertises in ApiVersions v3+ (KIP-584), as a Kafka 4 broker fills them.

Apache Kafka 4.4.0 (KRaft, formatted with its defaults) answers ApiVersions v4 with SupportedFeatures
group.version 0-1, share.version 0-2, transaction.version 0-2 (and kraft.version, metadata.version,
streams.version, eligible.leader.replicas.version), FinalizedFeatures at one level each (MinVersionLevel =
MaxVersionLevel: group.version 1, transaction.version 2, share.version 2, ...) and FinalizedFeaturesEpoch the
metadata log offset they were read at; seen on the wire. Clients gate protocols on the finalized levels: the Java
producer takes KIP-890's transactions v2 (Produce v12, TxnOffsetCommit v5, EndTxn v5, no AddPartitionsToTxn) only
where transaction.version >= 2 is finalized (TransactionVersion.TV_2).

Decisions: only the features of protocols this broker implements are listed: transaction.version 2
(transactions_v2.py), group.version 1 (GV_1: KIP-848's consumer groups, consumer_groups.py), share.version 1
(SV_1: KIP-932's share groups, share_groups.py; SV_2 is Kafka 4.4's, IBP_4_4_IV0, beyond the share versions
implemented here). No metadata.version, kraft.version, streams.version or eligible.leader.replicas.version: this
broker has no metadata log, Raft quorum, Streams groups or ELR, and no client gates on them. The levels never
change while the broker runs, so FinalizedFeaturesEpoch is a constant (>= 0: the Java client keeps the finalized
features of the highest epoch it has seen, starting below 0, ApiVersions.update).
"""

from __future__ import annotations

#: name -> (lowest, highest) level the broker supports
SUPPORTED = {"group.version": (0, 1), "share.version": (0, 1), "transaction.version": (0, 2)}
#: name -> the level finalized (each at its highest)
FINALIZED = {name: high for name, (_, high) in SUPPORTED.items()}
FINALIZED_EPOCH = 1
#: ApiVersionsRequest.json: "Version 4 fixes KAFKA-17011, which blocked SupportedFeatures.MinVersion from being 0"
MIN_LEVEL_0_FROM = 4


def features_fields(version: int) -> dict:
    """The ApiVersions response fields that carry the features (tagged, v3+). To a v3 request a supported feature
    whose lowest level is 0 is left out, as Kafka does (ApiVersionsResponse.maybeFilterSupportedFeatureKeys with
    alterFeatureLevel0 for versions below 4); finalized levels are all >= 1 and always listed."""
    if version < 3:
        return {}
    supported = [{"Name": name, "MinVersion": low, "MaxVersion": high} for name, (low, high) in SUPPORTED.items()
                 if low > 0 or version >= MIN_LEVEL_0_FROM]
    finalized = [{"Name": name, "MaxVersionLevel": level, "MinVersionLevel": level}
                 for name, level in FINALIZED.items()]
    return {"SupportedFeatures": supported, "FinalizedFeaturesEpoch": FINALIZED_EPOCH, "FinalizedFeatures": finalized}
