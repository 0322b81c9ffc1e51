"""The RustLog personality's faults and variants, as typed objects (switches.py): a handler asks
``self.faults.<name>`` or ``self.variants.<name>`` at the point where the clause is kept or broken.

A fault breaks exactly one clause of the spec on purpose. The suite's quality tests start the broker with
``--fault rustlog.NAME`` and check that the suite notices; every fault must therefore change what a client can
observe on the wire. A variant takes another reading the spec permits (``--variant``): the whole suite must pass
against each.
"""

from wirecheck.broker.rustlog.faults_safety import SafetyFaults
from wirecheck.broker.switches import Switch, Switches


class RustLogFaults(SafetyFaults, Switches):
    personality = "rustlog"

    zero_length_ignored = Switch("framing: a zero-length frame is silently skipped (no Error, connection stays open)")
    oversize_kept_open = Switch("framing: a frame above MAX_FRAME gets Error 413 but the body is drained and the "
                                "connection stays open")
    max_frame_rejected = Switch("framing: a frame of exactly MAX_FRAME is rejected as too large")
    malformed_json_kept_open = Switch("framing: malformed JSON gets Error 400 but the connection stays open")
    invalid_utf8_accepted = Switch("framing: invalid UTF-8 is decoded with replacement characters and processed")
    unknown_type_closes = Switch("request: an unknown type closes the connection without an Error")
    partition_error_404 = Switch("produce: a missing partition is answered 404 instead of 405")
    record_limit_1001 = Switch("produce: a batch of 1001 records is accepted (limit is 1000)")
    partition_count_unbounded = Switch("admin: CreateTopic accepts partition_count above 1000")
    topic_name_unchecked = Switch("admin: CreateTopic accepts topic names with bad characters or over 255 characters")
    next_offset_off_by_one = Switch("fetch: next_offset is the last returned offset instead of last + 1")
    beyond_hw_416 = Switch("fetch: an offset beyond the high watermark gets Error 416 instead of an empty response")
    commit_groups_shared = Switch("commit: commits ignore the group (one offset per topic/partition)")
    commit_unknown_topic_succeeds = Switch("commit: OffsetCommit to an unknown topic answers success true")
    offset_fetch_zero = Switch("commit: OffsetFetch with nothing committed answers 0 instead of null")
    fetch_uses_group_offset = Switch("fetch: a committed offset of group_id replaces the requested offset")
    batch_not_atomic = Switch(
        "produce: records of one batch interleave with concurrent batches (yields between records)")
    crash_on_deep_json = Switch("robustness: JSON nested deeper than 64 kills the whole broker process (exit 70)")
    fetch_exceeds_frame = Switch("fetch: the response ignores the frame cap and may exceed MAX_FRAME")
    pong_wrong_type = Switch("ping: Ping is answered with type PingResponse instead of Pong")
    error_details_missing = Switch("errors: Error frames omit the details key")
    length_counts_header = Switch("framing: the response length prefix counts its own 4 bytes")
    produce_base_offset_off_by_one = Switch(
        "produce: base_offset is reported as HW + 1 while records are stored from HW")
    float_accepted = Switch("request: integral floats such as 1.0 are accepted where integers are required")
    partitions_created_counts_topics = Switch("admin: CreateTopicResponse.partitions_created counts the topics "
                                              "created (1), not the partitions")
    create_existing_succeeds = Switch("admin: CreateTopic for an existing topic answers success true (topic kept)")
    segment_count_zero_when_empty = Switch("admin: DescribeTopic counts only segments holding records: an empty "
                                           "partition reports segment_count 0")
    describe_unknown_400 = Switch("admin: DescribeTopic for an unknown topic answers Error 400 instead of 404")
    list_skips_empty_topics = Switch("admin: ListTopics lists only topics that ever held records")
    commit_ignores_partition = Switch("commit: offsets are kept per group and topic (the partition is ignored)")
    error_message_key_wrong = Switch('errors: Error frames carry their text under "error" instead of "message"')
    at_hw_next_offset_zero = Switch("fetch: at the high watermark the empty answer's next_offset is 0 (an unset "
                                    "default), not the HW")
    below_log_start_served = Switch("fetch: an offset below the log start is read from the log start, no 416")
    payload_base64url = Switch("fetch: payloads are encoded with the URL-safe base64 alphabet (-_ for +/)")
    timestamp_millis = Switch("fetch: record timestamps are milliseconds since the epoch, not microseconds")
    fetch_missing_partition_empty = Switch("fetch: a partition that does not exist reads as an empty FetchResponse "
                                           "instead of Error 405")
    fetch_unknown_topic_405 = Switch("fetch: an unknown topic answers Error 405 (one lookup by topic and partition) "
                                     "instead of 404")
    split_header_misread = Switch("framing: the length prefix is whatever one read returns: a header split across TCP "
                                  "segments is misread")
    pipeline_queue_drops = Switch("framing: frames wait for the handler in a queue of 16; a frame read while it is "
                                  "full is dropped")
    base64_whitespace_trimmed = Switch('produce: records are trimmed of surrounding whitespace before decoding '
                                       '("SGVsbG8=\\n" accepted)')
    produce_auto_creates_topic = Switch("produce: a Produce to an unknown topic creates it (1 partition), no 404")
    not_found_closes = Switch("request: an Error 404 ends the connection (treated as fatal)")
    u64_via_double = Switch("request: integers go through a double, so u64 values above 2^53 are rounded (2^64-1 "
                            "becomes 2^64: 400)")
    deep_json_silent = Switch("robustness: JSON nested deeper than 64 is dropped without an answer, left open")
    header_read_global_lock = Switch("robustness: length prefixes are read under one lock all connections share: a "
                                     "peer that stops inside a header stalls every other connection")


class RustLogVariants(Switches):
    personality = "rustlog"

    deep_nesting_closes = Switch("JSON nested deeper than the broker's limit gets Error 400 and a close (the depth is "
                                 "implementation-defined; the reference stays open)")
    oversize_close_silent = Switch("framing: a length above MAX_FRAME closes the connection with no Error first")
    zero_length_close_silent = Switch("framing: a zero length closes the connection with no Error first")
    not_object_closes = Switch("request: valid JSON that is not a request object gets Error 400, then a close (the "
                               "seed's 'malformed JSON structure' terminates)")
    details_empty_object = Switch("errors: an Error with nothing to add carries details {} instead of null")
    not_found_details_null = Switch("errors: Error 404 for a topic carries details null (no available_topics)")
    record_limit_10mb = Switch("produce: records up to the seed's 10 MiB after decoding are accepted (no 413 for any "
                               "record that fits in a frame)")
    empty_batch_rejected = Switch("produce: an empty records array gets Error 400")
    invalid_topic_404 = Switch("produce: a Produce naming an invalid topic gets Error 404 (it cannot exist)")
    lookup_invalid_name_404 = Switch("requests that look a topic up (all but CreateTopic and Produce) naming an "
                                     "invalid topic get Error 404: the lookup finds nothing, no name check first")
    beyond_hw_next_offset_hw = Switch("fetch: beyond the high watermark the empty answer's next_offset is the HW")
    max_bytes_with_header = Switch("fetch: the max_bytes budget counts 12 + payload bytes per record (the upstream "
                                   "on-disk header)")
    max_bytes_zero_one_record = Switch("fetch: max_bytes 0 still returns the first record (the first record is always "
                                       "returned)")
    create_existing_false = Switch("admin: CreateTopic for an existing topic answers success false, "
                                   "partitions_created 0")
    list_creation_order = Switch("admin: ListTopics lists topics in creation order")
    describe_partition_minimal = Switch("admin: DescribePartitionResponse carries topic, partition and high_watermark "
                                        "only (the upstream code's fields)")
    empty_record_rejected = Switch("produce: an empty string record (a zero-length record) gets Error 400")
    metrics_other_counters = Switch("admin: MetricsFetch counters have other names (records_produced, ...)")


FAULTS: dict[str, str] = RustLogFaults.catalogue()
VARIANTS: dict[str, str] = RustLogVariants.catalogue()
