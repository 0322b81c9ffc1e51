"""RustLog clause catalogue.

Source: the seed document "RustLog Protocol Specification" (cited as "seed §<section>"). The upstream RustLog
code speaks a different, binary protocol (research notes, part 1), so the seed is the only oracle for the JSON
protocol; where it is silent or contradicts itself we decide, and say so in ``decision``. Decisions that pick
one of several defensible behaviours are SHOULD: a target that takes another permitted path is NON-STRICT.
"""

from wirecheck.protocols.clauses import Catalogue, Clause, Level

MUST, SHOULD = Level.MUST, Level.SHOULD

MAX_FRAME = 10_485_760
MAX_RECORDS = 1000
MAX_PARTITIONS = 1000
MAX_TOPIC_NAME = 255
# Decision D5: the seed's "record <= 10MB after decoding" can never be reached (its base64 is over MAX_FRAME).
# We cap decoded records so that any stored record is also fetchable inside one MAX_FRAME response.
MAX_RECORD = 7_864_000

_C = [
    # -- framing -------------------------------------------------------------------------------------------
    Clause("rustlog.framing.max-size-accepted",
           "A frame whose length is exactly MAX_FRAME_SIZE (10,485,760) is accepted and processed.",
           "seed §Frame Structure (read_frame rejects only length > MAX_FRAME_SIZE)"),
    Clause("rustlog.framing.oversize",
           "A length above MAX_FRAME_SIZE terminates the connection; an Error frame before the close is optional.",
           "seed §Connection Error Handling; §Frame Structure",
           decision="D1: we send Error 413 best effort, then close without reading the body. A target may "
                    "close at once (the RST race makes the Error frame unreliable), so both outcomes are OK."),
    Clause("rustlog.framing.zero-length",
           "A zero length is a framing error (MIN_FRAME_SIZE is 1): the connection is terminated.",
           "seed §Frame Structure (FrameError::EmptyFrame), §Protocol constants",
           decision="D1: an Error 400 before the close is optional; staying open with an Error is NON-STRICT "
                    "(the seed lists framing errors among violations that terminate the connection)."),
    Clause("rustlog.framing.invalid-utf8",
           "A payload that is not valid UTF-8 terminates the connection.",
           "seed §Connection Error Handling"),
    Clause("rustlog.framing.malformed-json",
           "A payload that is not syntactically valid JSON terminates the connection.",
           "seed §Connection Error Handling"),
    Clause("rustlog.framing.partial-header",
           "Bytes of one frame may arrive in several TCP segments (header split too); the frame is processed "
           "once complete.",
           "seed §Frame Structure (read_exact)"),
    Clause("rustlog.framing.pipelining",
           "Frames on one connection are answered one at a time, in request order.",
           "seed §Flow Control (synchronous request processing)"),
    Clause("rustlog.framing.response-frame",
           "Every response is a u32 big-endian length of the payload only, then a UTF-8 JSON object with a "
           "string \"type\".",
           "seed §Frame Structure, §JSON Payload Format"),
    # -- request envelope ----------------------------------------------------------------------------------
    Clause("rustlog.request.not-object",
           "Valid JSON that is not an object, has no \"type\" or a non-string \"type\" gets Error 400 and the "
           "connection stays open.",
           "seed §JSON Payload Format items 3-4",
           SHOULD,
           decision="D2: the seed lists 'malformed JSON structure' as terminating but also requires an object "
                    "root; we treat well-formed JSON of the wrong shape as an invalid request (400, stay open). "
                    "Closing instead is NON-STRICT."),
    Clause("rustlog.request.unknown-type",
           "An unknown request type gets an Error response and the connection stays open.",
           "seed §Connection Error Handling (recoverable errors)"),
    Clause("rustlog.request.invalid-fields",
           "Missing fields, wrong JSON types, negative numbers, non-integers and out-of-range u32/u64 values get "
           "an Error response and the connection stays open.",
           "seed §Connection Error Handling (recoverable errors); schemas' u32/u64 types",
           decision="A request that only looks a topic up (all but CreateTopic and Produce) naming an invalid topic "
                    "may get Error 400 or 404: the seed states the naming rule for CreateTopic and Produce alone and "
                    "does not say that validation comes before the lookup, which finds nothing (variant "
                    "lookup-invalid-name-404)."),
    Clause("rustlog.request.invalid-code",
           "An invalid request (unknown type, invalid field) is answered with code 400 InvalidRequest.",
           "seed §Error Codes",
           SHOULD,
           decision="The seed names no code for these; 400 InvalidRequest is the only one that fits.",
           sole_reading="seed §Error Codes has one code for a request the broker cannot accept, 400 InvalidRequest; "
                        "the others name a missing topic or partition, an offset range, a size or a server failure, "
                        "and notes §1.9 D2 also give 400."),
    Clause("rustlog.request.extra-fields",
           "Unknown extra fields in a request are ignored.",
           "seed §Wire Format Evolution (adding optional fields is backward compatible)",
           SHOULD,
           decision=(
           "SHOULD: the seed promises backward-compatible optional fields but states no rule for "
           "unknown ones; ignoring them is the reading that keeps that promise."),
           sole_reading="seed §Wire Format Evolution makes adding optional fields backward compatible, which holds "
                        "only if a broker ignores fields it does not know; refusing them (serde's "
                        "deny_unknown_fields, notes §1.8) would break that promise."),
    Clause("rustlog.request.u64-range",
           "u64 fields accept every integer up to 18446744073709551615 exactly (no float rounding).",
           "seed §Fetch Request (offset: u64)"),
    Clause("rustlog.request.stays-open",
           "After a recoverable Error response the same connection answers the next request.",
           "seed §Connection Error Handling"),
    # -- errors -------------------------------------------------------------------------------------------
    Clause("rustlog.errors.shape",
           "An Error response has an integer \"code\" and a string \"message\".",
           "seed §Error Response Format"),
    Clause("rustlog.errors.details",
           "An Error response carries \"details\": an object or null.",
           "seed §Error Response Format",
           SHOULD,
           decision="D11: the schema lists details as 'object | null'; we require the key to be present."),
    Clause("rustlog.errors.topic-not-found-details",
           "Error 404 for a topic lists the available topics in details.available_topics.",
           "seed §Error Codes (example)",
           SHOULD,
           decision=(
           "SHOULD: the seed shows available_topics in an example, not in the error table; an "
           "Error 404 without it is non-strict.")),
    # -- produce ------------------------------------------------------------------------------------------
    Clause("rustlog.produce.offsets",
           "ProduceResponse.base_offset is the offset of the first record, records get consecutive offsets, "
           "and record_count is the number appended.",
           "seed §Produce Response"),
    Clause("rustlog.produce.unknown-topic",
           "Produce to a topic that does not exist gets Error 404.",
           "seed §Produce Request (validation rules), §Error Codes"),
    Clause("rustlog.produce.unknown-partition",
           "Produce to a partition that does not exist gets Error 405.",
           "seed §Produce Request (validation rules), §Error Codes"),
    Clause("rustlog.produce.record-limit",
           "A batch of at most 1000 records is accepted; a larger one gets Error 400.",
           "seed §Produce Request (records array <= 1000 elements)"),
    Clause("rustlog.produce.invalid-base64",
           "A record that is not valid standard base64 gets Error 400.",
           "seed §Produce Request (record encoding)",
           decision="D3: standard alphabet with padding only, as in the seed's examples. An empty string is a "
                    "zero-length record in the reference, but notes §1.9 D3 leave it open, so Error 400 for it is "
                    "accepted too (test_fetch_returns_what_was_produced, the stateful model)."),
    Clause("rustlog.produce.record-too-large",
           f"A record larger than {MAX_RECORD:,} bytes after decoding gets Error 413.",
           "seed §Produce Request (each record <= 10MB after decoding), §Error Codes",
           SHOULD,
           decision="D5: the seed's 10 MB limit is unreachable inside a 10 MiB frame; we lower it so that every "
                    "accepted record is fetchable. Accepting the record is NON-STRICT."),
    Clause("rustlog.produce.empty-batch",
           "An empty records array appends nothing: record_count 0 and base_offset the high watermark.",
           "seed §Produce Response (silent on empty batches)",
           SHOULD,
           decision="D4: the older RustLog doc made it a no-op; rejecting it with 400 is NON-STRICT."),
    Clause("rustlog.produce.batch-atomic",
           "A batch occupies consecutive offsets even while other connections produce to the same partition.",
           "seed §Produce Response (offset assignment); research notes H4"),
    Clause("rustlog.produce.topic-name",
           "A Produce naming an invalid topic (bad characters, empty, over 255 characters) gets Error 400.",
           "seed §Produce Request (topic: 1-255 characters, alphanumeric + underscore/hyphen)",
           SHOULD,
           decision="D4: an invalid name can never exist, so 404 is also defensible: NON-STRICT."),
    # -- fetch --------------------------------------------------------------------------------------------
    Clause("rustlog.fetch.records",
           "Fetch returns the stored records from the requested offset inclusive, in offset order, with their "
           "payloads intact.",
           "seed §Fetch Request (fetch semantics), §Fetch Response (response guarantees)"),
    Clause("rustlog.fetch.next-offset",
           "FetchResponse.next_offset is the last returned record's offset + 1.",
           "seed §Fetch Response (response guarantees)"),
    Clause("rustlog.fetch.at-hw",
           "Fetch at the high watermark returns no records and next_offset equal to the high watermark.",
           "seed §Fetch Response (empty records array if no data available)"),
    Clause("rustlog.fetch.beyond-hw",
           "Fetch beyond the high watermark returns an empty response, not an error.",
           "seed §Fetch Request (empty response if offset beyond high watermark)",
           SHOULD,
           decision="D7: the seed says empty; RustLog's FAILURE_MODES doc says 416. next_offset may be the "
                    "requested offset or the high watermark. Error 416 is NON-STRICT."),
    Clause("rustlog.fetch.below-log-start",
           "Fetch below the log start offset gets Error 416 with details.valid_range and high_watermark.",
           "seed §Fetch Request (error if offset before log start offset), §Error Codes (example)"),
    Clause("rustlog.fetch.max-bytes",
           "Fetch returns at least one record when one is available and max_bytes > 0, and stops adding records "
           "once max_bytes (decoded payload bytes) is reached.",
           "seed §Fetch Request (max_bytes: soft limit, may slightly exceed)",
           SHOULD,
           decision="D6: max_bytes counts decoded payload bytes; the first record may exceed it alone. A budget "
                    "that also counts a per-record overhead (upstream counts 12 + payload, notes §1.4) is another "
                    "soft-limit reading, which the case accepts."),
    Clause("rustlog.fetch.max-bytes-zero",
           "Fetch with max_bytes 0 returns no records and next_offset equal to the requested offset.",
           "seed §Fetch Request (silent)",
           SHOULD,
           decision="D6: zero budget means nothing to return."),
    Clause("rustlog.fetch.response-size",
           "A FetchResponse frame never exceeds MAX_FRAME_SIZE, whatever max_bytes asks for.",
           "seed §Frame Structure (MAX_FRAME_SIZE applies to every frame); research notes H2"),
    Clause("rustlog.fetch.unknown-topic", "Fetch from a topic that does not exist gets Error 404.",
           "seed §Error Codes"),
    Clause("rustlog.fetch.unknown-partition", "Fetch from a partition that does not exist gets Error 405.",
           "seed §Error Codes"),
    Clause("rustlog.fetch.group-id-ignored",
           "Fetch.group_id never changes which offset is read: a commit by that group does not move the fetch.",
           "seed §Fetch Request (group_id: for metrics, not isolation)",
           decision="D8: the current seed; RustLog's code replaces the offset with the commit (a deviation).",
           sole_reading="seed §Fetch Request makes group_id 'for metrics, not isolation', so it cannot change what "
                        "is read; the other readings (the first doc's max(committed, requested), the code's "
                        "replacement, notes §1.4/§1.7) are superseded texts, and the code's is fault "
                        "rustlog.fetch-uses-group-offset."),
    Clause("rustlog.fetch.timestamp",
           "Record timestamps are microseconds since the UNIX epoch.",
           "seed §Fetch Response (timestamp)"),
    # -- commits ------------------------------------------------------------------------------------------
    Clause("rustlog.commit.round-trip",
           "OffsetFetch returns the offset last committed by the same group for the same topic and partition.",
           "seed §Offset Commit Request (commit semantics), §Offset Fetch Response"),
    Clause("rustlog.commit.group-isolation",
           "Commits are per group: one group's commit does not change another's.",
           "seed §Offset Commit Request (groups are isolated)"),
    Clause("rustlog.commit.no-commit-null",
           "OffsetFetch with nothing committed returns offset null.",
           "seed §Offset Fetch Response"),
    Clause("rustlog.commit.unknown-topic",
           "OffsetCommit to a topic or partition that does not exist answers success false.",
           "seed §Offset Commit Response"),
    # -- admin --------------------------------------------------------------------------------------------
    Clause("rustlog.admin.create",
           "CreateTopic answers success true and partitions_created equal to the requested count, and the topic "
           "then exists with that many partitions.",
           "seed §Create Topic Request/Response"),
    Clause("rustlog.admin.create-duplicate",
           "CreateTopic for an existing topic does not report success and leaves the topic unchanged.",
           "seed §Create Topic Request (topic must not already exist)",
           decision="The seed gives no code: an Error (we send 400) or success false are both accepted."),
    Clause("rustlog.admin.topic-name",
           "Topic names of 1-255 characters from [A-Za-z0-9_-] are accepted; others get Error 400.",
           "seed §Create Topic Request (validation rules)"),
    Clause("rustlog.admin.partition-count",
           "partition_count 1-1000 is accepted; 0 or more than 1000 gets Error 400.",
           "seed §Create Topic Request (validation rules)"),
    Clause("rustlog.admin.list",
           "ListTopics lists every topic with its partition count.",
           "seed §List Topics Request/Response"),
    Clause("rustlog.admin.list-sorted",
           "ListTopics lists topics sorted by name.",
           "seed §List Topics (silent on order)",
           SHOULD,
           decision="D12: sorted by name, as RustLog's code does; any stable order is defensible."),
    Clause("rustlog.admin.describe-topic",
           "DescribeTopic lists every partition in ascending order with high_watermark (the next offset to be "
           "assigned), log_start_offset <= high_watermark and segment_count >= 1.",
           "seed §Describe Topic Response"),
    Clause("rustlog.admin.describe-unknown", "DescribeTopic for a topic that does not exist gets Error 404.",
           "seed §Error Codes"),
    Clause("rustlog.admin.describe-partition",
           "DescribePartition answers DescribePartitionResponse with topic, partition, high_watermark, "
           "log_start_offset and segment_count; unknown topic 404, unknown partition 405.",
           "seed §Message Types (DescribePartition, 0x08; no schema given)",
           SHOULD,
           decision="D10: the seed names the message but gives no schema; we use DescribeTopic's partition entry."),
    Clause("rustlog.admin.metrics",
           "MetricsFetch answers MetricsFetchResponse with a metrics object of integer counters, and "
           "messages_produced_total grows by the number of records produced.",
           "seed §Message Types (MetricsFetch, 0x09; no schema given)",
           SHOULD,
           decision="D10: counters messages_produced_total, messages_fetched_total, bytes_in_total, "
                    "bytes_out_total, active_connections, topics, partitions."),
    Clause("rustlog.ping.pong", "Ping is answered with {\"type\": \"Pong\"}.", "seed §Message Types"),
    # -- robustness -----------------------------------------------------------------------------------------
    Clause("rustlog.robustness.survives",
           "After any hostile input the broker still answers a Ping on a new connection within the deadline.",
           "seed §Security Considerations (DoS protection); wirecheck liveness rule"),
    Clause("rustlog.robustness.no-hang",
           "A request the spec answers with an Error is answered (or the connection closed, where permitted) "
           "within the deadline, never met with silence.",
           "seed §Connection Error Handling"),
    # -- checked on captured traffic by the pipeline (reports/pipeline/captures), not by live cases ---------
    Clause("rustlog.capture.request-frame",
           "Every request is a u32 length then a UTF-8 JSON object with a string \"type\" naming a request.",
           "seed §JSON Payload Format, §Message Type Enumeration",
           unbreakable="It judges the frames a client sent (in captures), which no server can change."),
    Clause("rustlog.robustness.slow-peer",
           "A connection holding a partial frame does not delay other connections.",
           "seed §Flow Control (per-connection processing); research notes H6"),
]

CATALOGUE = Catalogue("rustlog", _C)
