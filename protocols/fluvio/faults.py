"""What the Fluvio suite must report when the reference broker runs with each of its faults.

Namespaced fault name (``--fault``, ``--reference-fault``) -> the clause the suite reports FAILED. The faults
themselves are the broker's (targets/reference/fluvio/faults.py); tests/quality checks that both lists agree
and that the suite catches each fault naming this clause.
"""

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
