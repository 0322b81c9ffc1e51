"""The Barco personality's faults: each breaks one clause on purpose (protocols/barco/faults.py names the clause
the suite must report for each)."""

FAULTS: dict[str, str] = {
    "barco.commit-ignored": "a manual commit answers 204 but stores nothing",
    "barco.crc-unchecked": "requests with a wrong head crc are processed",
    "barco.discovery-binary-port-missing": "GET /v1/brokers leaves out producerBinaryPort",
    "barco.empty-200": "a poll with nothing to read is answered 200 with an empty body instead of 204",
    "barco.heartbeat-wrong-op": "HEARTBEAT is answered with PRODUCE_RESPONSE instead of READY",
    "barco.http-get-allowed": "GET on /v1/topic/:topic/messages is answered 200",
    "barco.json-start-offset-missing": "JSON poll items have no startOffset",
    "barco.message-lengths-unchecked": "trailing bytes after the last message of a PRODUCE are ignored",
    "barco.ndjson-one-record": "an x-ndjson body is stored as one record",
    "barco.no-rewind": "a poll of another consumer does not rewind to the last committed offset",
    "barco.poll-offset-gap": "every chunk after a reader's first is announced one offset too far",
    "barco.reregister-different-accepted": "re-registering an id with other topics is answered 200",
    "barco.response-crc-wrong": "response headers carry a CRC over 8 bytes instead of 9",
    "barco.retry-after-missing": "204 poll answers carry no Retry-After",
    "barco.startup-not-required": "PRODUCE is served before STARTUP",
    "barco.stream-id-wrong": "responses carry the request's stream id + 1",
    "barco.timestamp-ignored": "the PRODUCE timestamp flag is ignored: records get the server's time",
    "barco.topic-unvalidated": "the binary producer accepts any topic name ('..' included)",
    "barco.unknown-op-silent": "frames with an unknown opcode are dropped without an answer",
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
