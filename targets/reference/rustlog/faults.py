"""The named faults of the RustLog personality: each breaks exactly one clause of the spec on purpose.

The suite's quality tests start the broker with ``--fault rustlog.NAME`` and check that the suite notices.
Every fault must therefore change what a client can observe on the wire.
"""

FAULTS: dict[str, str] = {
    "rustlog.zero-length-ignored": "framing: a zero-length frame is silently skipped (no Error, connection stays open)",
    "rustlog.oversize-kept-open":
        "framing: a frame above MAX_FRAME gets Error 413 but the body is drained and the connection stays open",
    "rustlog.max-frame-rejected": "framing: a frame of exactly MAX_FRAME is rejected as too large",
    "rustlog.malformed-json-kept-open": "framing: malformed JSON gets Error 400 but the connection stays open",
    "rustlog.invalid-utf8-accepted": "framing: invalid UTF-8 is decoded with replacement characters and processed",
    "rustlog.unknown-type-closes": "request: an unknown type closes the connection without an Error",
    "rustlog.partition-error-404": "produce: a missing partition is answered 404 instead of 405",
    "rustlog.record-limit-1001": "produce: a batch of 1001 records is accepted (limit is 1000)",
    "rustlog.partition-count-unbounded": "admin: CreateTopic accepts partition_count above 1000",
    "rustlog.topic-name-unchecked": "admin: CreateTopic accepts topic names with bad characters or over 255 characters",
    "rustlog.next-offset-off-by-one": "fetch: next_offset is the last returned offset instead of last + 1",
    "rustlog.beyond-hw-416": "fetch: an offset beyond the high watermark gets Error 416 instead of an empty response",
    "rustlog.commit-groups-shared": "commit: commits ignore the group (one offset per topic/partition)",
    "rustlog.commit-unknown-topic-succeeds": "commit: OffsetCommit to an unknown topic answers success true",
    "rustlog.offset-fetch-zero": "commit: OffsetFetch with nothing committed answers 0 instead of null",
    "rustlog.fetch-uses-group-offset": "fetch: a committed offset of group_id replaces the requested offset",
    "rustlog.batch-not-atomic":
        "produce: records of one batch interleave with concurrent batches (yields between records)",
    "rustlog.crash-on-deep-json": "robustness: JSON nested deeper than 64 kills the whole broker process (exit 70)",
    "rustlog.fetch-exceeds-frame": "fetch: the response ignores the frame cap and may exceed MAX_FRAME",
    "rustlog.pong-wrong-type": "ping: Ping is answered with type PingResponse instead of Pong",
    "rustlog.error-details-missing": "errors: Error frames omit the details key",
    "rustlog.length-counts-header": "framing: the response length prefix counts its own 4 bytes",
    "rustlog.produce-base-offset-off-by-one":
        "produce: base_offset is reported as HW + 1 while records are stored from HW",
    "rustlog.float-accepted": "request: integral floats such as 1.0 are accepted where integers are required",
    "rustlog.partitions-created-counts-topics":
        "admin: CreateTopicResponse.partitions_created counts the topics created (1), not the partitions",
    "rustlog.create-existing-succeeds": "admin: CreateTopic for an existing topic answers success true (topic kept)",
    "rustlog.segment-count-zero-when-empty":
        "admin: DescribeTopic counts only segments holding records: an empty partition reports segment_count 0",
    "rustlog.describe-unknown-400": "admin: DescribeTopic for an unknown topic answers Error 400 instead of 404",
    "rustlog.list-skips-empty-topics": "admin: ListTopics lists only topics that ever held records",
    "rustlog.commit-ignores-partition": "commit: offsets are kept per group and topic (the partition is ignored)",
    "rustlog.error-message-key-wrong": "errors: Error frames carry their text under \"error\" instead of \"message\"",
    "rustlog.at-hw-next-offset-zero":
        "fetch: at the high watermark the empty answer's next_offset is 0 (an unset default), not the HW",
    "rustlog.below-log-start-served": "fetch: an offset below the log start is read from the log start, no 416",
    "rustlog.payload-base64url": "fetch: payloads are encoded with the URL-safe base64 alphabet (-_ for +/)",
    "rustlog.timestamp-millis": "fetch: record timestamps are milliseconds since the epoch, not microseconds",
    "rustlog.fetch-missing-partition-empty":
        "fetch: a partition that does not exist reads as an empty FetchResponse instead of Error 405",
    "rustlog.fetch-unknown-topic-405":
        "fetch: an unknown topic answers Error 405 (one lookup by topic and partition) instead of 404",
    "rustlog.split-header-misread":
        "framing: the length prefix is whatever one read returns: a header split across TCP segments is misread",
    "rustlog.pipeline-queue-drops":
        "framing: frames wait for the handler in a queue of 16; a frame read while it is full is dropped",
    "rustlog.base64-whitespace-trimmed":
        "produce: records are trimmed of surrounding whitespace before decoding (\"SGVsbG8=\\n\" accepted)",
    "rustlog.produce-auto-creates-topic": "produce: a Produce to an unknown topic creates it (1 partition), no 404",
    "rustlog.not-found-closes": "request: an Error 404 ends the connection (treated as fatal)",
    "rustlog.u64-via-double":
        "request: integers go through a double, so u64 values above 2^53 are rounded (2^64-1 becomes 2^64: 400)",
    "rustlog.deep-json-silent": "robustness: JSON nested deeper than 64 is dropped without an answer, left open",
    "rustlog.header-read-global-lock":
        "robustness: length prefixes are read under one lock all connections share: a peer that stops inside a "
        "header stalls every other connection",
}


#: Other readings the spec permits (``--variant``): the whole suite must pass against each.
VARIANTS: dict[str, str] = {
    "rustlog.deep-nesting-closes": "JSON nested deeper than the broker's limit gets Error 400 and a close (the "
                                   "depth is implementation-defined; the reference stays open)",
    "rustlog.oversize-close-silent": "framing: a length above MAX_FRAME closes the connection with no Error first",
    "rustlog.zero-length-close-silent": "framing: a zero length closes the connection with no Error first",
    "rustlog.not-object-closes": "request: valid JSON that is not a request object gets Error 400, then a close "
                                 "(the seed's 'malformed JSON structure' terminates)",
    "rustlog.details-empty-object": "errors: an Error with nothing to add carries details {} instead of null",
    "rustlog.not-found-details-null": "errors: Error 404 for a topic carries details null (no available_topics)",
    "rustlog.record-limit-10mb": "produce: records up to the seed's 10 MiB after decoding are accepted (no 413 for "
                                 "any record that fits in a frame)",
    "rustlog.empty-batch-rejected": "produce: an empty records array gets Error 400",
    "rustlog.invalid-topic-404": "produce: a Produce naming an invalid topic gets Error 404 (it cannot exist)",
    "rustlog.beyond-hw-next-offset-hw": "fetch: beyond the high watermark the empty answer's next_offset is the HW",
    "rustlog.max-bytes-with-header": "fetch: the max_bytes budget counts 12 + payload bytes per record (the "
                                     "upstream on-disk header)",
    "rustlog.max-bytes-zero-one-record": "fetch: max_bytes 0 still returns the first record (the first record is "
                                         "always returned)",
    "rustlog.create-existing-false": "admin: CreateTopic for an existing topic answers success false, "
                                     "partitions_created 0",
    "rustlog.list-creation-order": "admin: ListTopics lists topics in creation order",
    "rustlog.describe-partition-minimal": "admin: DescribePartitionResponse carries topic, partition and "
                                          "high_watermark only (the upstream code's fields)",
    "rustlog.empty-record-rejected": "produce: an empty string record (a zero-length record) gets Error 400",
    "rustlog.metrics-other-counters": "admin: MetricsFetch counters have other names (records_produced, ...)",
}
