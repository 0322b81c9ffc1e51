"""The reference broker's RustLog faults (targets/reference/rustlog/faults.py) and the clause the suite must report
each under (see ``ProtocolSpec.faults``)."""

FAULTS: dict[str, str] = {
    "rustlog.batch-not-atomic": "rustlog.produce.batch-atomic",
    "rustlog.beyond-hw-416": "rustlog.fetch.beyond-hw",
    "rustlog.commit-groups-shared": "rustlog.commit.group-isolation",
    "rustlog.commit-unknown-topic-succeeds": "rustlog.commit.unknown-topic",
    "rustlog.crash-on-deep-json": "rustlog.robustness.survives",
    "rustlog.error-details-missing": "rustlog.errors.details",
    "rustlog.fetch-exceeds-frame": "rustlog.fetch.response-size",
    "rustlog.fetch-uses-group-offset": "rustlog.fetch.group-id-ignored",
    "rustlog.float-accepted": "rustlog.request.invalid-fields",
    "rustlog.invalid-utf8-accepted": "rustlog.framing.invalid-utf8",
    "rustlog.length-counts-header": "rustlog.framing.response-frame",
    "rustlog.malformed-json-kept-open": "rustlog.framing.malformed-json",
    "rustlog.max-frame-rejected": "rustlog.framing.max-size-accepted",
    "rustlog.next-offset-off-by-one": "rustlog.fetch.next-offset",
    "rustlog.offset-fetch-zero": "rustlog.commit.no-commit-null",
    "rustlog.oversize-kept-open": "rustlog.framing.oversize",
    "rustlog.partition-count-unbounded": "rustlog.admin.partition-count",
    "rustlog.partition-error-404": "rustlog.produce.unknown-partition",
    "rustlog.pong-wrong-type": "rustlog.ping.pong",
    "rustlog.produce-base-offset-off-by-one": "rustlog.produce.offsets",
    "rustlog.record-limit-1001": "rustlog.produce.record-limit",
    "rustlog.topic-name-unchecked": "rustlog.admin.topic-name",
    "rustlog.unknown-type-closes": "rustlog.request.unknown-type",
    "rustlog.zero-length-ignored": "rustlog.framing.zero-length",
}


#: reference-broker variant -> the clause whose other permitted reading it takes (the whole suite passes against it)
VARIANTS = {
    "rustlog.deep-nesting-closes": "rustlog.robustness.no-hang",
}
