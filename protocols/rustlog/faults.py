"""The reference broker's RustLog faults (broker/rustlog/faults.py) and the clause the suite must report
each under (see ``ProtocolSpec.faults``)."""

FAULTS: dict[str, str] = {
    "rustlog.at-hw-next-offset-zero": "rustlog.fetch.at-hw",
    "rustlog.base64-whitespace-trimmed": "rustlog.produce.invalid-base64",
    "rustlog.batch-not-atomic": "rustlog.produce.batch-atomic",
    "rustlog.below-log-start-served": "rustlog.fetch.below-log-start",
    "rustlog.beyond-hw-416": "rustlog.fetch.beyond-hw",
    "rustlog.commit-groups-shared": "rustlog.commit.group-isolation",
    "rustlog.commit-ignores-partition": "rustlog.commit.round-trip",
    "rustlog.commit-unknown-topic-succeeds": "rustlog.commit.unknown-topic",
    "rustlog.crash-on-deep-json": "rustlog.robustness.survives",
    "rustlog.create-existing-succeeds": "rustlog.admin.create-duplicate",
    "rustlog.deep-json-silent": "rustlog.robustness.no-hang",
    "rustlog.describe-unknown-400": "rustlog.admin.describe-unknown",
    "rustlog.error-details-missing": "rustlog.errors.details",
    "rustlog.error-message-key-wrong": "rustlog.errors.shape",
    "rustlog.fetch-exceeds-frame": "rustlog.fetch.response-size",
    "rustlog.fetch-missing-partition-empty": "rustlog.fetch.unknown-partition",
    "rustlog.fetch-unknown-topic-405": "rustlog.fetch.unknown-topic",
    "rustlog.fetch-uses-group-offset": "rustlog.fetch.group-id-ignored",
    "rustlog.float-accepted": "rustlog.request.invalid-fields",
    "rustlog.header-read-global-lock": "rustlog.robustness.slow-peer",
    "rustlog.invalid-utf8-accepted": "rustlog.framing.invalid-utf8",
    "rustlog.length-counts-header": "rustlog.framing.response-frame",
    "rustlog.list-skips-empty-topics": "rustlog.admin.list",
    "rustlog.malformed-json-kept-open": "rustlog.framing.malformed-json",
    "rustlog.max-frame-rejected": "rustlog.framing.max-size-accepted",
    "rustlog.next-offset-off-by-one": "rustlog.fetch.next-offset",
    "rustlog.not-found-closes": "rustlog.request.stays-open",
    "rustlog.offset-fetch-zero": "rustlog.commit.no-commit-null",
    "rustlog.oversize-kept-open": "rustlog.framing.oversize",
    "rustlog.partition-count-unbounded": "rustlog.admin.partition-count",
    "rustlog.partition-error-404": "rustlog.produce.unknown-partition",
    "rustlog.partitions-created-counts-topics": "rustlog.admin.create",
    "rustlog.payload-base64url": "rustlog.fetch.records",
    "rustlog.pipeline-queue-drops": "rustlog.framing.pipelining",
    "rustlog.pong-wrong-type": "rustlog.ping.pong",
    "rustlog.produce-auto-creates-topic": "rustlog.produce.unknown-topic",
    "rustlog.produce-base-offset-off-by-one": "rustlog.produce.offsets",
    "rustlog.record-limit-1001": "rustlog.produce.record-limit",
    "rustlog.segment-count-zero-when-empty": "rustlog.admin.describe-topic",
    "rustlog.split-header-misread": "rustlog.framing.partial-header",
    "rustlog.timestamp-millis": "rustlog.fetch.timestamp",
    "rustlog.topic-name-unchecked": "rustlog.admin.topic-name",
    "rustlog.u64-via-double": "rustlog.request.u64-range",
    "rustlog.unknown-type-closes": "rustlog.request.unknown-type",
    "rustlog.zero-length-ignored": "rustlog.framing.zero-length",
}


#: reference-broker variant -> the clause whose other permitted reading it takes (the whole suite passes against it)
VARIANTS = {
    "rustlog.deep-nesting-closes": "rustlog.robustness.no-hang",
    "rustlog.oversize-close-silent": "rustlog.framing.oversize",
    "rustlog.zero-length-close-silent": "rustlog.framing.zero-length",
    "rustlog.not-object-closes": "rustlog.request.not-object",
    "rustlog.details-empty-object": "rustlog.errors.details",
    "rustlog.not-found-details-null": "rustlog.errors.topic-not-found-details",
    "rustlog.record-limit-10mb": "rustlog.produce.record-too-large",
    "rustlog.empty-batch-rejected": "rustlog.produce.empty-batch",
    "rustlog.invalid-topic-404": "rustlog.produce.topic-name",
    "rustlog.lookup-invalid-name-404": "rustlog.request.invalid-fields",
    "rustlog.beyond-hw-next-offset-hw": "rustlog.fetch.beyond-hw",
    "rustlog.max-bytes-with-header": "rustlog.fetch.max-bytes",
    "rustlog.max-bytes-zero-one-record": "rustlog.fetch.max-bytes-zero",
    "rustlog.create-existing-false": "rustlog.admin.create-duplicate",
    "rustlog.list-creation-order": "rustlog.admin.list-sorted",
    "rustlog.describe-partition-minimal": "rustlog.admin.describe-partition",
    "rustlog.empty-record-rejected": "rustlog.produce.invalid-base64",
    "rustlog.metrics-other-counters": "rustlog.admin.metrics",
}

#: reference-broker safety fault -> the anomalies of ``wirecheck safety rustlog`` (reports/safety/checker.py) that
#: show it, any one of which catches it; like Kafka's (protocols/kafka/faults.py), no conformance clause can, so they
#: stay out of FAULTS and are proven by tests/safety.
SAFETY_FAULTS: dict[str, tuple[str, ...]] = {
    "rustlog.safety-log-end-reused": ("inconsistent-offsets",),
}
