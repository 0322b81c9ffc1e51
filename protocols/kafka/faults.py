"""What the Kafka suite must report when the reference broker runs with each of its faults.

Namespaced fault name (``--fault``, ``--reference-fault``) -> the clause the suite reports FAILED. The faults
themselves are the broker's (targets/reference/kafka/faults.py); tests/quality checks that both lists agree
and that the suite catches each fault naming this clause.
"""

FAULTS: dict[str, str] = {
    "kafka.acks0-responds": "kafka.produce.acks-zero",
    "kafka.advertise-unimplemented": "kafka.api-versions.advertised-implemented",
    "kafka.apiversions-unsupported-not-v0": "kafka.api-versions.unsupported-version",
    "kafka.commit-not-stored": "kafka.commit.round-trip",
    "kafka.coordinator-port-hardcoded": "kafka.group.find-coordinator",
    "kafka.correlation-id-wrong": "kafka.header.correlation-id",
    "kafka.crash-on-hostile-array": "kafka.robustness.survives",
    "kafka.crc-ieee": "kafka.produce.crc-mismatch",
    "kafka.create-duplicate-no-error": "kafka.topics.already-exists",
    "kafka.fetch-beyond-hw-empty": "kafka.fetch.out-of-range",
    "kafka.fetch-ignores-offset": "kafka.fetch.records",
    "kafka.fetch-no-long-poll": "kafka.fetch.long-poll",
    "kafka.flexible-header-v1": "kafka.header.response-v1-flexible",
    "kafka.generation-not-bumped": "kafka.group.generation",
    "kafka.heartbeat-ignores-rebalance": "kafka.group.rebalance-in-progress",
    "kafka.hw-off-by-one": "kafka.fetch.high-watermark",
    "kafka.leader-gets-no-metadata": "kafka.group.leader-metadata",
    "kafka.listoffsets-latest-off-by-one": "kafka.list-offsets.earliest-latest",
    "kafka.malformed-body-answered": "kafka.encoding.malformed-body",
    "kafka.message-too-large-unchecked": "kafka.produce.message-too-large",
    "kafka.metadata-empty-means-all": "kafka.metadata.empty-list",
    "kafka.produce-autocreates": "kafka.produce.unknown-topic",
    "kafka.sequence-not-checked": "kafka.idempotence.out-of-order",
    "kafka.tagged-fields-misskipped": "kafka.encoding.unknown-tags",
    "kafka.throttle-missing-metadata-v5": "kafka.api-versions.advertised-implemented",
    "kafka.unknown-key-stays-open": "kafka.header.unknown-api-key",
    "kafka.wrong-error-unknown-partition": "kafka.produce.unknown-topic",
}
