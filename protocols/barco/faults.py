"""What the Barco suite must report when the reference broker runs with each of its faults.

Namespaced fault name (``--fault``, ``--reference-fault``) -> the clause the suite reports FAILED. The faults
themselves are the broker's (broker/barco/faults.py); tests/quality checks that both lists agree
and that the suite catches each fault naming this clause.
"""

FAULTS: dict[str, str] = {
    "barco.commit-ignored": "barco.consumer.commit",
    "barco.connection-bind-ignored": "barco.consumer.register-connection",
    "barco.consumer-status-404": "barco.consumer.status",
    "barco.crash-on-oversize": "barco.robustness.survives",
    "barco.crc-unchecked": "barco.framing.header-crc",
    "barco.discovery-binary-port-missing": "barco.discovery.brokers",
    "barco.discovery-status-404": "barco.discovery.status",
    "barco.empty-200": "barco.consumer.poll-empty",
    "barco.empty-message-dropped": "barco.producer.empty-message",
    "barco.error-code-unknown": "barco.producer.error-body",
    "barco.error-length-prefixed": "barco.producer.error-body",
    "barco.error-frame-cut": "barco.framing.response-frame",
    "barco.goodbye-keeps-consumer": "barco.consumer.goodbye",
    "barco.h2-reset-ends-connection": "barco.http.stream-reset",
    "barco.h2c-one-stream": "barco.consumer.h2c",
    "barco.heartbeat-wrong-op": "barco.producer.heartbeat",
    "barco.http-bad-request-200": "barco.http.bad-request",
    "barco.http-empty-body-stored": "barco.http-producer.length",
    "barco.http-get-allowed": "barco.http-producer.method",
    "barco.http-pipelining-dropped": "barco.http.keep-alive",
    "barco.http-produce-not-stored": "barco.http-producer.produce",
    "barco.json-start-offset-missing": "barco.consumer.poll-json",
    "barco.message-lengths-unchecked": "barco.producer.message-lengths",
    "barco.missing-consumer-id-204": "barco.http.query",
    "barco.ndjson-one-record": "barco.http-producer.content-types",
    "barco.no-rewind": "barco.consumer.at-least-once",
    "barco.not-found-400": "barco.http.not-found",
    "barco.oversize-buffered": "barco.framing.oversize",
    "barco.partition-key-ignored": "barco.producer.partition-key",
    "barco.pipelined-answer-dropped": "barco.framing.pipelining",
    "barco.poll-content-type-wrong": "barco.consumer.poll-binary",
    "barco.poll-offset-gap": "barco.consumer.offsets-continuous",
    "barco.produce-ack-body": "barco.producer.produce-ack",
    "barco.producer-http-status-404": "barco.http-producer.status",
    "barco.record-cut-64k": "barco.consumer.records",
    "barco.register-post-refused": "barco.consumer.register",
    "barco.reregister-different-accepted": "barco.consumer.register-conflict",
    "barco.reregister-same-refused": "barco.consumer.register-idempotent",
    "barco.response-crc-wrong": "barco.framing.response-header",
    "barco.retry-after-missing": "barco.consumer.retry-after",
    "barco.short-read-body": "barco.robustness.no-hang",
    "barco.startup-not-required": "barco.producer.startup-first",
    "barco.startup-signed-stream-id": "barco.producer.ready",
    "barco.stream-id-wrong": "barco.framing.stream-id-echo",
    "barco.timestamp-ignored": "barco.producer.timestamp",
    "barco.topic-unvalidated": "barco.producer.topic-valid",
    "barco.truncated-body-closes": "barco.producer.truncated-body",
    "barco.unknown-op-silent": "barco.producer.unknown-opcode",
    "barco.unknown-policy-accepted": "barco.consumer.register-invalid",
    "barco.unregistered-204": "barco.consumer.unregistered",
    "barco.zstd-no-checksum": "barco.consumer.payload-zstd",
}


#: reference-broker variant -> the clause whose other permitted reading it takes (the whole suite passes against it)
VARIANTS = {
    "barco.oversize-error-discard": "barco.framing.oversize",
    "barco.topic-any-bytes": "barco.producer.topic-valid",
    "barco.router-decodes-path": "barco.http-producer.topic-valid",
    "barco.register-any-topic": "barco.consumer.register-invalid",
    "barco.crc-error-then-close": "barco.framing.header-crc",
    "barco.version-ignored": "barco.framing.version",
    "barco.control-body-closes": "barco.framing.body-consumed",
    "barco.bad-lengths-close": "barco.producer.message-lengths",
    "barco.empty-produce-acked": "barco.producer.no-messages",
    "barco.error-quotes-input": "barco.producer.error-size",
    "barco.second-startup-ready": "barco.producer.second-startup",
    "barco.keyed-range-zero": "barco.producer.partition-key",
    "barco.frames-invalid-422": "barco.http-producer.frames-invalid",
    "barco.http-chunked-accepted": "barco.http-producer.chunked",
    "barco.consumer-method-404": "barco.consumer.method",
}

#: reference-broker safety fault -> the anomalies of ``wirecheck safety barco`` (reports/safety/checker.py) that show
#: it, any one of which catches it; like Kafka's (protocols/kafka/faults.py), no conformance clause can, so they stay
#: out of FAULTS and are proven by tests/safety. The producer is never told an offset, so a lost chunk shows as
#: unseen (never read) or, when a consumer read it before the restart, as two values at its offsets.
SAFETY_FAULTS: dict[str, tuple[str, ...]] = {
    "barco.safety-unsynced-tail-lost": ("unseen", "inconsistent-offsets"),
}
