"""The Barco personality's faults: each breaks one clause on purpose (protocols/barco/faults.py names the clause
the suite must report for each)."""

FAULTS: dict[str, str] = {
    "barco.commit-ignored": "a manual commit answers 204 but stores nothing",
    "barco.connection-bind-ignored": "a ConsumerInfo registration is answered 200 but binds no connection",
    "barco.consumer-status-404": "GET /status on the consumer port is answered 404",
    "barco.crash-on-oversize": "an oversize body length wedges the broker: no endpoint answers again",
    "barco.crc-unchecked": "requests with a wrong head crc are processed",
    "barco.discovery-binary-port-missing": "GET /v1/brokers leaves out producerBinaryPort",
    "barco.discovery-status-404": "GET /status on the discovery port is answered 404",
    "barco.empty-200": "a poll with nothing to read is answered 200 with an empty body instead of 204",
    "barco.empty-message-dropped": "zero-length messages are not stored",
    "barco.error-code-unknown": "ERROR frames carry code 9 (the codes are 0, 1 and 2)",
    "barco.error-frame-cut": "ERROR frames lose their last byte: the header announces one byte more than is sent",
    "barco.goodbye-keeps-consumer": "goodbye is answered 200 but the consumer stays registered",
    "barco.h2-reset-ends-connection": "an HTTP/2 RST_STREAM from the client ends the whole connection (GOAWAY)",
    "barco.h2c-one-stream": "every HTTP/2 stream after a connection's first is refused (RST_STREAM REFUSED_STREAM)",
    "barco.heartbeat-wrong-op": "HEARTBEAT is answered with PRODUCE_RESPONSE instead of READY",
    "barco.http-bad-request-200": "a request that breaks HTTP/1.1 syntax is answered 200",
    "barco.http-empty-body-stored": "a 0-byte HTTP produce body is answered 200 and stored as one empty record",
    "barco.http-get-allowed": "GET on /v1/topic/:topic/messages is answered 200",
    "barco.http-pipelining-dropped": "HTTP/1.1 requests pipelined behind another are dropped unanswered",
    "barco.http-produce-not-stored": "HTTP produce is answered 200 but nothing is stored",
    "barco.json-start-offset-missing": "JSON poll items have no startOffset",
    "barco.message-lengths-unchecked": "trailing bytes after the last message of a PRODUCE are ignored",
    "barco.missing-consumer-id-204": "poll, commit and goodbye without consumerId (no consumer bound) are answered 204",
    "barco.ndjson-one-record": "an x-ndjson body is stored as one record",
    "barco.no-rewind": "a poll of another consumer does not rewind to the last committed offset",
    "barco.not-found-400": "unknown paths on the consumer port are answered 400 instead of 404",
    "barco.oversize-buffered": "a frame body above the limit is waited for and read like any other",
    "barco.partition-key-ignored": "keyed messages get round-robin range indexes, like keyless ones",
    "barco.pipelined-answer-dropped": "a frame with the next one already buffered is dropped unanswered",
    "barco.poll-content-type-wrong": "binary poll answers carry Content-Type application/octet-stream",
    "barco.poll-offset-gap": "every chunk after a reader's first is announced one offset too far",
    "barco.produce-ack-body": "PRODUCE_RESPONSE carries a one-byte body",
    "barco.producer-http-status-404": "GET /status on the HTTP producer port is answered 404",
    "barco.record-cut-64k": "records are stored cut to their first 65535 bytes",
    "barco.register-post-refused": "POST on /v1/consumer/register is answered 405 (only PUT is served)",
    "barco.reregister-different-accepted": "re-registering an id with other topics is answered 200",
    "barco.reregister-same-refused": "registering again with the same id, group and topics is answered 400",
    "barco.response-crc-wrong": "response headers carry a CRC over 8 bytes instead of 9",
    "barco.retry-after-missing": "204 poll answers carry no Retry-After",
    "barco.short-read-body": "a frame body the peer ends early (EOF) is processed as far as it came",
    "barco.startup-not-required": "PRODUCE is served before STARTUP",
    "barco.startup-signed-stream-id": "STARTUP with a stream id above 0x7FFF (negative as int16) gets ERROR(0)",
    "barco.stream-id-wrong": "responses carry the request's stream id + 1",
    "barco.timestamp-ignored": "the PRODUCE timestamp flag is ignored: records get the server's time",
    "barco.topic-unvalidated": "the binary producer accepts any topic name ('..' included)",
    "barco.truncated-body-closes": "a PRODUCE body ending inside timestamp, key or topic: ERROR(0), then a close",
    "barco.unknown-op-silent": "frames with an unknown opcode are dropped without an answer",
    "barco.unknown-policy-accepted": "registration with an unknown onNewGroup value is taken as startFromLatest",
    "barco.unregistered-204": "polls of unregistered consumers are answered 204 instead of 409",
    "barco.zstd-no-checksum": "chunks are compressed without the zstd content checksum",
}


#: Other readings the spec permits (``--variant``): the whole suite must pass against each.
VARIANTS: dict[str, str] = {
    "barco.oversize-error-discard": "a frame body above the limit gets ERROR(0), then the announced body is read "
                                    "and discarded unbuffered and the connection kept (notes §11)",
    "barco.topic-any-bytes": "topics that are not UTF-8 or hold control characters are taken (the notes' rule names "
                             "empty, '/', '\\', NUL, '..' and over 255 bytes only)",
    "barco.router-decodes-path": "the HTTP producer routes on the decoded path: an encoded '/' in a topic makes a "
                                 "path no route matches, 404 (as a Go router does)",
    "barco.register-any-topic": "registration takes any topic name, as upstream does (notes §5.1)",
}
