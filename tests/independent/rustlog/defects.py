"""Deliberate defects: each one, when switched on, breaks ONE requirement of the
RustLog protocol document (docs/PROTOCOL.md, as quoted in
seeds/rustlog-protocol-specification.md).

The table maps a defect name to (the requirement it breaks, the section it
comes from).  The server checks ``defects.on("name")`` at the exact point where
the requirement is implemented; grep for the name to find it.
"""

from __future__ import annotations

DEFECTS: dict[str, tuple[str, str]] = {
    # --- Produce -------------------------------------------------------------
    "produce-base-offset-plus-one": (
        (
            "base_offset is the logical offset assigned to the first record "
            "(the server reports high_watermark + 1 instead)"
        ),
        "Produce Response / Field specifications",
    ),
    "produce-drops-last-record": (
        (
            "record_count is the number of successfully appended records and every "
            "record gets a consecutive offset (the last record of a batch is "
            "silently not stored, yet counted)"
        ),
        "Produce Response / Offset assignment",
    ),
    "produce-non-atomic-batch": (
        (
            "records get consecutive offsets starting from base_offset; a rejected "
            "batch appends nothing (records are appended one by one, yielding in "
            "between, and a bad record mid-batch leaves the earlier ones stored)"
        ),
        "Produce Response / Offset assignment; Produce Request / Validation rules",
    ),
    "produce-unknown-topic-400": (
        "Topic must exist: TopicNotFound = 404 (the server answers 400)",
        "Produce Request / Validation rules; Error Codes",
    ),
    "produce-missing-partition-404": (
        "Partition must exist: PartitionNotFound = 405 (the server answers 404)",
        "Produce Request / Validation rules; Error Codes",
    ),
    "produce-ignores-batch-limit": (
        "Records array <= 1000 elements per batch (larger batches are accepted)",
        "Produce Request / Validation rules",
    ),
    # --- Fetch ---------------------------------------------------------------
    "fetch-next-offset-is-last": (
        (
            "next_offset = last record offset + 1 (the server returns the last "
            "record's offset)"
        ),
        "Fetch Response / Response guarantees",
    ),
    "fetch-skips-requested-offset": (
        (
            "Returns records starting from `offset` (inclusive) (the server starts "
            "at offset + 1)"
        ),
        "Fetch Request / Fetch semantics",
    ),
    "fetch-reverse-order": (
        ("Records in offset order (monotonic) (the server returns them newest first)"),
        "Fetch Response / Response guarantees",
    ),
    "fetch-beyond-hw-416": (
        (
            "Empty response if offset beyond high watermark (the server answers "
            "Error 416)"
        ),
        "Fetch Request / Fetch semantics",
    ),
    "fetch-max-bytes-ignored": (
        (
            "Fetch stops when the max_bytes limit is approached (soft limit) (the "
            "server returns every record up to the frame limit)"
        ),
        "Fetch Request / Fetch semantics",
    ),
    "fetch-exceeds-frame-limit": (
        (
            "Every message is one frame of at most MAX_FRAME_SIZE bytes (a "
            "FetchResponse is not capped and may exceed it)"
        ),
        "Frame Structure / Protocol constants",
    ),
    "fetch-payload-urlsafe": (
        (
            "payload: Base64-encoded record data, the standard alphabet of the "
            "document's examples (the server sends the URL-safe alphabet, - and _)"
        ),
        "Fetch Response / Field specifications; JSON Payload Format",
    ),
    "fetch-timestamp-millis": (
        ("timestamp: Microseconds since UNIX epoch (the server sends milliseconds)"),
        "Fetch Response / Field specifications",
    ),
    # --- Offsets -------------------------------------------------------------
    "commit-not-stored": (
        (
            "OffsetCommit stores the group's committed offset; OffsetFetch returns "
            "it (the server answers success:true but stores nothing)"
        ),
        "Offset Commit Request / Purpose; Offset Fetch Response",
    ),
    "commit-groups-shared": (
        (
            "Commits are per-group, per-topic, per-partition; groups are isolated "
            "(the server ignores the group in the commit key)"
        ),
        "Offset Commit Request / Commit semantics",
    ),
    "commit-unknown-topic-succeeds": (
        ("success: false if topic/partition doesn't exist (the server answers true)"),
        "Offset Commit Response / Response semantics",
    ),
    "offset-fetch-zero-not-null": (
        "offset: null when no commit was found (the server answers 0)",
        "Offset Fetch Response / Response semantics",
    ),
    # --- Admin ---------------------------------------------------------------
    "describe-stale-high-watermark": (
        (
            "high_watermark: next offset that would be assigned (the server always "
            "reports 0, as the real RustLog does)"
        ),
        "Describe Topic Response / Field specifications",
    ),
    "create-accepts-bad-partition-count": (
        (
            "Partition count: 1-1000 partitions (0 and >1000 are accepted; 0 makes "
            "an empty topic, >1000 is clamped to 1001)"
        ),
        "Create Topic Request / Validation rules",
    ),
    "create-duplicate-resets-topic": (
        (
            "Topic must not already exist (a second CreateTopic succeeds and "
            "replaces the topic, losing its records)"
        ),
        "Create Topic Request / Validation rules",
    ),
    "create-accepts-any-name": (
        (
            "Topic name: 1-255 characters, alphanumeric plus underscore/hyphen "
            "(any non-empty string is accepted)"
        ),
        "Create Topic Request / Validation rules",
    ),
    # --- Framing / connection ------------------------------------------------
    "ignore-frame-limit": (
        (
            "Frame length exceeding MAX_FRAME_SIZE (10,485,760) is a protocol "
            "violation that terminates the connection (the server reads and "
            "processes frames up to 64 MiB)"
        ),
        "Frame Structure / Protocol constants; Connection Error Handling",
    ),
    "malformed-json-keeps-open": (
        (
            "Malformed JSON structure terminates the connection (the server "
            "answers Error 400 and keeps the connection open)"
        ),
        "Connection Error Handling",
    ),
    "zero-length-frame-keeps-open": (
        (
            "MIN_FRAME_SIZE is 1; a zero length is a frame error (EmptyFrame) "
            "(the server answers Error 400 and keeps reading)"
        ),
        "Frame Structure / Frame parsing algorithm; Protocol constants",
    ),
    "pipelined-out-of-order": (
        (
            "Synchronous request processing, one at a time: responses come in "
            "request order (the server answers Ping at once and delays the rest, "
            "so pipelined responses can overtake each other)"
        ),
        "Flow Control; Connection Lifecycle",
    ),
    "invalid-utf8-accepted": (
        (
            "Invalid UTF-8 in payload terminates the connection (the server "
            "replaces bad bytes and carries on)"
        ),
        "Connection Error Handling; JSON Payload Format",
    ),
    "unknown-type-closes": (
        (
            "Unknown request type is recoverable: return Error response, keep the "
            "connection alive (the server closes without answering)"
        ),
        "Connection Error Handling",
    ),
    "error-without-details": (
        (
            "Error response carries code, message and details (object|null) (the "
            "server omits `details`)"
        ),
        "Error Response Format",
    ),
    "topic-not-found-no-details": (
        (
            "Error 404 for a topic carries details.available_topics, as the "
            "document's example shows (the server sends details null)"
        ),
        "Error Handling / Error response examples",
    ),
    "pong-wrong-type": (
        "Ping is answered with Pong (the server answers type PingResponse)",
        "Message Type Enumeration",
    ),
}


class Defects:
    """The set of defects switched on for one server run."""

    def __init__(self, names=()):
        unknown = [n for n in names if n not in DEFECTS]
        if unknown:
            raise ValueError(f"unknown defect(s): {', '.join(unknown)}")
        self._on = frozenset(names)

    def on(self, name: str) -> bool:
        assert name in DEFECTS, name  # guards against typos at the check sites
        return name in self._on

    def __iter__(self):
        return iter(sorted(self._on))

    def __bool__(self):
        return bool(self._on)
