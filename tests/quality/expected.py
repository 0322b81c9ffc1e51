"""What each reference-broker fault must make its suite report: fault -> (clause reported FAILED, scope).

The quality runs use --strict, so SHOULD clauses fail too. ``scope`` limits a faulted run to one suite module
(None: the whole suite); either way the run stops at the first FAILED record of the expected clause.
"""

RUSTLOG = {
    "batch-not-atomic": ("rustlog.produce.batch-atomic", None),
    "beyond-hw-416": ("rustlog.fetch.beyond-hw", None),
    "commit-groups-shared": ("rustlog.commit.group-isolation", None),
    "commit-unknown-topic-succeeds": ("rustlog.commit.unknown-topic", None),
    "crash-on-deep-json": ("rustlog.robustness.survives", None),
    "error-details-missing": ("rustlog.errors.details", None),
    "fetch-exceeds-frame": ("rustlog.fetch.response-size", None),
    "fetch-uses-group-offset": ("rustlog.fetch.group-id-ignored", None),
    "float-accepted": ("rustlog.request.invalid-fields", None),
    "invalid-utf8-accepted": ("rustlog.framing.invalid-utf8", None),
    "length-counts-header": ("rustlog.framing.response-frame", None),
    "malformed-json-kept-open": ("rustlog.framing.malformed-json", None),
    "max-frame-rejected": ("rustlog.framing.max-size-accepted", None),
    "next-offset-off-by-one": ("rustlog.fetch.next-offset", None),
    "offset-fetch-zero": ("rustlog.commit.no-commit-null", None),
    "oversize-kept-open": ("rustlog.framing.oversize", None),
    "partition-count-unbounded": ("rustlog.admin.partition-count", None),
    "partition-error-404": ("rustlog.produce.unknown-partition", None),
    "pong-wrong-type": ("rustlog.ping.pong", None),
    "produce-base-offset-off-by-one": ("rustlog.produce.offsets", None),
    "record-limit-1001": ("rustlog.produce.record-limit", None),
    "topic-name-unchecked": ("rustlog.admin.topic-name", None),
    "unknown-type-closes": ("rustlog.request.unknown-type", None),
    "zero-length-ignored": ("rustlog.framing.zero-length", None),
}

KAFKA = {
    "acks0-responds": ("kafka.produce.acks-zero", None),
    "advertise-unimplemented": ("kafka.api-versions.advertised-implemented", None),
    "apiversions-unsupported-not-v0": ("kafka.api-versions.unsupported-version", None),
    "commit-not-stored": ("kafka.commit.round-trip", None),
    "coordinator-port-hardcoded": ("kafka.group.find-coordinator", None),
    "correlation-id-wrong": ("kafka.header.correlation-id", None),
    "crash-on-hostile-array": ("kafka.robustness.survives", None),
    "crc-ieee": ("kafka.produce.crc-mismatch", None),
    "create-duplicate-no-error": ("kafka.topics.already-exists", None),
    "fetch-beyond-hw-empty": ("kafka.fetch.out-of-range", None),
    "fetch-ignores-offset": ("kafka.fetch.records", None),
    "fetch-no-long-poll": ("kafka.fetch.long-poll", None),
    "flexible-header-v1": ("kafka.header.response-v1-flexible", None),
    "generation-not-bumped": ("kafka.group.generation", None),
    "heartbeat-ignores-rebalance": ("kafka.group.rebalance-in-progress", None),
    "hw-off-by-one": ("kafka.fetch.high-watermark", None),
    "leader-gets-no-metadata": ("kafka.group.leader-metadata", None),
    "listoffsets-latest-off-by-one": ("kafka.list-offsets.earliest-latest", None),
    "malformed-body-answered": ("kafka.encoding.malformed-body", None),
    "message-too-large-unchecked": ("kafka.produce.message-too-large", None),
    "metadata-empty-means-all": ("kafka.metadata.empty-list", None),
    "produce-autocreates": ("kafka.produce.unknown-topic", None),
    "sequence-not-checked": ("kafka.idempotence.out-of-order", None),
    "tagged-fields-misskipped": ("kafka.encoding.unknown-tags", None),
    "throttle-missing-metadata-v5": ("kafka.api-versions.advertised-implemented", None),
    "unknown-key-stays-open": ("kafka.header.unknown-api-key", None),
    "wrong-error-unknown-partition": ("kafka.produce.unknown-topic", None),
}

FLUVIO = {
    "apiversions-overadvertise": ("fluvio.versions.every-version", "test_versions"),
    "compression-error-wrong": ("fluvio.produce.compression-invalid", "test_produce"),
    "correlation-id-wrong": ("fluvio.framing.correlation-id", "test_framing"),
    "crash-on-huge-record-count": ("fluvio.robustness.survives", "test_produce"),
    "crc-unchecked": ("fluvio.produce.bad-crc", "test_produce"),
    "error-code-unknown-partition-wrong": ("fluvio.produce.unknown-partition", "test_produce"),
    "error-payload-missing": ("fluvio.errors.encoding", "test_fetch"),
    "fetch-hw-off-by-one": ("fluvio.fetch.high-watermark", "test_fetch"),
    "fetch-offsets-start-is-hw": ("fluvio.offsets.values", "test_fetch"),
    "fetch-offsets-wrong-code": ("fluvio.offsets.unknown-partition", "test_fetch"),
    "isolation-strict": ("fluvio.produce.isolation-other", "test_produce"),
    "negative-size-stays-open": ("fluvio.framing.negative-size-unanswered", "test_framing"),
    "offsets-follow-record-count": ("fluvio.produce.offsets", "test_produce"),
    "produce-base-offset-wrong": ("fluvio.produce.offsets", "test_produce"),
    "produce-responses-merged": ("fluvio.produce.response-entries", "test_produce"),
    "stream-fetch-no-updates": ("fluvio.stream.flow-control", "test_stream"),
    "stream-id-zero": ("fluvio.stream.records", "test_stream"),
    "throttle-missing": ("fluvio.produce.response-fields", "test_produce"),
    "unknown-key-stays-open": ("fluvio.header.unknown-api-key", "test_framing"),
    "update-offsets-unknown-session-ok": ("fluvio.update-offsets.status", "test_stream"),
}


EXPECTED = {"rustlog": RUSTLOG, "kafka": KAFKA, "fluvio": FLUVIO}
