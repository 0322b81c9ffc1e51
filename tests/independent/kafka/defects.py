"""Deliberate defects, each breaking exactly one requirement.

Turn one on with `--defect NAME` (repeatable).  The code checks them with
`defect("name")` at the point where the requirement is implemented, so a grep
for the name finds the single place it changes behaviour.

"source" names where the requirement comes from: K = specs/kafka.md
(section), P = Apache Kafka's protocol guide (kafka.apache.org/protocol), KIP-n.
"""
from __future__ import annotations

DEFECTS: dict[str, tuple[str, str]] = {
    # --- framing / headers -------------------------------------------------
    "wrong-correlation-id": (
        "The response header echoes the request's correlation id.",
        "P: Headers / 'correlation_id ... the server will pass it back'",
    ),
    "flexible-response-header-v0": (
        "Responses to flexible API versions use response header v1 (ends with a tagged-field section).",
        "K §3 'Response header version'; KIP-482",
    ),
    "apiversions-header-v1": (
        "ApiVersions responses use response header v0 at every version.",
        "K §3 'always v0 for ApiVersions'; KIP-511",
    ),
    "apiversions-no-fallback": (
        "ApiVersions with an unsupported version is answered with a v0 body, error 35 and the ApiVersions range.",
        "K §5 'ApiVersions with an unsupported (higher) version'; KIP-511",
    ),
    "unknown-api-answered": (
        "A request with an unknown api key gets no response; the connection is closed.",
        "K §5 'Unknown api key'",
    ),
    # --- produce -----------------------------------------------------------
    "crc-unchecked": (
        "A record batch whose CRC-32C does not match is rejected with CORRUPT_MESSAGE (2).",
        "K §5 'Bad RecordBatch CRC'; P: Record Batch",
    ),
    "base-offset-wrong": (
        "Produce returns as base_offset the offset assigned to the first record of the batch.",
        "P: ProduceResponse base_offset",
    ),
    "client-base-offset-kept": (
        "The broker assigns offsets: the stored batch's baseOffset is the log end offset, not the client's value.",
        "P: Record Batch 'baseOffset'; K §3 records",
    ),
    "acks0-responds": (
        "A Produce with acks=0 gets no response.",
        "K §5 'Produce with acks=0'; P: ProduceRequest acks",
    ),
    "invalid-acks-accepted": (
        "acks outside {-1, 0, 1} is rejected with INVALID_REQUIRED_ACKS (21).",
        "K §5 error table (21)",
    ),
    "multi-batch-accepted": (
        "Produce v3+ with more than one batch in a partition is rejected with INVALID_RECORD (87).",
        "K §5 'Produce v3+ with 0 batches, >1 batch, or magic != 2'",
    ),
    "unknown-topic-wrong-error": (
        "Produce/Fetch/ListOffsets on a missing topic answer UNKNOWN_TOPIC_OR_PARTITION (3).",
        "K §5 error table (3), 'Produce to an unknown topic'",
    ),
    # --- fetch / list offsets --------------------------------------------
    "hw-off-by-one": (
        "Fetch reports the high watermark (= log end offset on a single broker).",
        "P: FetchResponse high_watermark",
    ),
    "fetch-no-wait": (
        "Fetch waits up to MaxWaitMs for MinBytes of data before answering.",
        "P: FetchRequest max_wait_ms / min_bytes",
    ),
    "fetch-out-of-range-silent": (
        "Fetch outside [log start, high watermark] answers OFFSET_OUT_OF_RANGE (1).",
        "K §5 error table (1)",
    ),
    "log-start-offset-missing": (
        "Fetch v5+ and Produce v5+ report the partition's log start offset.",
        "P: FetchResponse/ProduceResponse log_start_offset",
    ),
    "listoffsets-latest-off-by-one": (
        "ListOffsets with timestamp -1 (latest) returns the high watermark.",
        "P: ListOffsetsRequest timestamp; K §5",
    ),
    # --- metadata / topics ------------------------------------------------
    "metadata-wrong-port": (
        "Metadata advertises the broker's real listening host/port.",
        "P: MetadataResponse brokers",
    ),
    "createtopics-rf-unchecked": (
        "CreateTopics with a replication factor above the number of brokers fails with INVALID_REPLICATION_FACTOR (38).",
        "K §5 error table (38)",
    ),
    "createtopics-duplicate-accepted": (
        "CreateTopics on an existing topic fails with TOPIC_ALREADY_EXISTS (36).",
        "K §5 error table (36)",
    ),
    # --- groups -----------------------------------------------------------
    "join-generation-not-bumped": (
        "Each completed rebalance starts a new generation (generation id + 1).",
        "P: JoinGroupResponse generation_id; Kafka group protocol",
    ),
    "heartbeat-ignores-rebalance": (
        "Heartbeat during a rebalance answers REBALANCE_IN_PROGRESS (27).",
        "K §5 error table (27)",
    ),
    "sync-ignores-generation": (
        "SyncGroup with a stale generation answers ILLEGAL_GENERATION (22).",
        "K §5 error table (22)",
    ),
    "commit-not-stored": (
        "A successful OffsetCommit is returned by a later OffsetFetch.",
        "P: OffsetCommit / OffsetFetch",
    ),
    "offsetfetch-missing-zero": (
        "OffsetFetch for a partition without a committed offset returns offset -1.",
        "P: OffsetFetchResponse committed_offset",
    ),
}

_active: set[str] = set()


def enable(names: list[str]) -> None:
    unknown = [n for n in names if n not in DEFECTS]
    if unknown:
        raise SystemExit(f"unknown defect(s): {', '.join(unknown)}; see --list-defects")
    _active.update(names)


def defect(name: str) -> bool:
    assert name in DEFECTS, name
    return name in _active


def active() -> list[str]:
    return sorted(_active)
