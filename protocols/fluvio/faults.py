"""The reference broker's Fluvio faults (targets/reference/fluvio/faults.py) and the clause the suite must report
each under (see ``ProtocolSpec.faults``)."""

FAULTS: dict[str, str] = {
    "fluvio.apiversions-overadvertise": "fluvio.versions.every-version",
    "fluvio.compression-error-wrong": "fluvio.produce.compression-invalid",
    "fluvio.correlation-id-wrong": "fluvio.framing.correlation-id",
    "fluvio.crash-on-huge-record-count": "fluvio.robustness.survives",
    "fluvio.crc-unchecked": "fluvio.produce.bad-crc",
    "fluvio.error-code-unknown-partition-wrong": "fluvio.produce.unknown-partition",
    "fluvio.error-payload-missing": "fluvio.errors.encoding",
    "fluvio.fetch-hw-off-by-one": "fluvio.fetch.high-watermark",
    "fluvio.fetch-offsets-start-is-hw": "fluvio.offsets.values",
    "fluvio.fetch-offsets-wrong-code": "fluvio.offsets.unknown-partition",
    "fluvio.isolation-strict": "fluvio.produce.isolation-other",
    "fluvio.negative-size-stays-open": "fluvio.framing.negative-size-unanswered",
    "fluvio.offsets-follow-record-count": "fluvio.produce.offsets",
    "fluvio.produce-base-offset-wrong": "fluvio.produce.offsets",
    "fluvio.produce-responses-merged": "fluvio.produce.response-entries",
    "fluvio.stream-fetch-no-updates": "fluvio.stream.flow-control",
    "fluvio.stream-id-zero": "fluvio.stream.records",
    "fluvio.throttle-missing": "fluvio.produce.response-fields",
    "fluvio.unknown-key-stays-open": "fluvio.header.unknown-api-key",
    "fluvio.update-offsets-unknown-session-ok": "fluvio.update-offsets.status",
}
