"""What the Barco suite must report when the reference broker runs with each of its faults.

Namespaced fault name (``--fault``, ``--reference-fault``) -> the clause the suite reports FAILED. The faults
themselves are the broker's (targets/reference/barco/faults.py); tests/quality checks that both lists agree
and that the suite catches each fault naming this clause.
"""

FAULTS: dict[str, str] = {
    "barco.commit-ignored": "barco.consumer.commit",
    "barco.crc-unchecked": "barco.framing.header-crc",
    "barco.discovery-binary-port-missing": "barco.discovery.brokers",
    "barco.empty-200": "barco.consumer.poll-empty",
    "barco.heartbeat-wrong-op": "barco.producer.heartbeat",
    "barco.http-get-allowed": "barco.http-producer.method",
    "barco.json-start-offset-missing": "barco.consumer.poll-json",
    "barco.message-lengths-unchecked": "barco.producer.message-lengths",
    "barco.ndjson-one-record": "barco.http-producer.content-types",
    "barco.no-rewind": "barco.consumer.at-least-once",
    "barco.poll-offset-gap": "barco.consumer.offsets-continuous",
    "barco.reregister-different-accepted": "barco.consumer.register-conflict",
    "barco.response-crc-wrong": "barco.framing.response-header",
    "barco.retry-after-missing": "barco.consumer.retry-after",
    "barco.startup-not-required": "barco.producer.startup-first",
    "barco.stream-id-wrong": "barco.framing.stream-id-echo",
    "barco.timestamp-ignored": "barco.producer.timestamp",
    "barco.topic-unvalidated": "barco.producer.topic-valid",
    "barco.unknown-op-silent": "barco.producer.unknown-opcode",
    "barco.unregistered-204": "barco.consumer.unregistered",
    "barco.zstd-no-checksum": "barco.consumer.payload-zstd",
}


#: reference-broker variant -> the clause whose other permitted reading it takes (the whole suite passes against it)
VARIANTS = {
    "barco.oversize-error-discard": "barco.framing.oversize",
    "barco.topic-any-bytes": "barco.producer.topic-valid",
    "barco.router-decodes-path": "barco.http-producer.topic-valid",
    "barco.register-any-topic": "barco.consumer.register-invalid",
}
