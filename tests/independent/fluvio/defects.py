"""Deliberate defects, each breaking ONE requirement of the Fluvio SPU notes.

``DEFECTS`` maps a defect name to (requirement broken, spec section).  The
server checks ``defects.on(NAME)`` at exactly one named point per defect; grep
for the name in server.py / storage.py to find it.
"""

from __future__ import annotations

DEFECTS: dict[str, tuple[str, str]] = {
    "base-offset-plus-one": (
        "Produce base_offset must be the LEO before the write (offset of the first record); "
        "this reports LEO+1",
        "§4.4 step 8",
    ),
    "wrong-correlation-id": (
        "The response header must echo the request's correlation_id; this sends correlation_id+1",
        "§2.2, §2.3",
    ),
    "hw-off-by-one": (
        "Fetch/StreamFetch high_watermark must be the HW; this reports HW+1",
        "§5.2",
    ),
    "unknown-partition-topic-not-found": (
        "Produce/Fetch/StreamFetch to an unknown topic or partition must answer "
        "NotLeaderForPartition (6); this answers TopicNotFound (2001)",
        "§4.4 step 1, §5.2, §6 (table), A8",
    ),
    "fetch-offsets-unknown-code-6": (
        "FetchOffsets on an unknown partition must answer PartitionNotLeader (3001); this answers 6",
        "§5.3, A8",
    ),
    "stream-id-zero": (
        "A successful StreamFetch stream gets a stream_id starting at 1 per connection; this sends 0",
        "§5.4",
    ),
    "crc-not-recomputed": (
        "Stored batches are re-encoded with a recomputed CRC-32C; this keeps the producer's CRC",
        "§4.4 step 7, §5.2, §12",
    ),
    "base-offset-not-assigned": (
        "Stored/fetched batches carry the server-assigned base_offset; this keeps the producer's value",
        "§4.2, §4.4 step 7, §5.2",
    ),
    "leo-per-batch": (
        "The LEO advances by last_offset_delta+1 per batch; this advances it by 1 per batch",
        "§4.4 step 7, A14",
    ),
    "error-payload-dropped": (
        "An ErrorCode is the i16 tag followed by the variant's payload; this omits the payload "
        "(Other, OffsetEvicted, ...)",
        "§6, A9",
    ),
    "fetch-offsets-field-order": (
        "FetchOffsets partition entries put error_code before partition_index; this swaps them",
        "§5.3",
    ),
    "produce-response-ignores-version": (
        "Produce response fields are version gated (log_append_time_ms v>=2, log_start_offset v>=5, "
        "throttle_time_ms v>=1); this always writes all of them",
        "§4.5, §1 (version gating)",
    ),
    "platform-version-not-semver": (
        "ApiVersions platform_version must be valid semver (the SPU sends \"0.0.0\"); this sends \"spu\"",
        "§3.2",
    ),
    "fetch-offsets-range-wide": (
        "ApiVersions advertises FetchOffsets as (25, 25); this advertises (0, 25)",
        "§3.1, §3.2",
    ),
    "fetch-past-leo-silent": (
        "Fetch with fetch_offset > LEO answers Other(\"start offset: X is greater than leo: Y\"); "
        "this answers success with empty records",
        "§5.2, §6 (table)",
    ),
    "unknown-api-key-answered": (
        "An unknown api_key closes the connection without a response; this sends a header-only response",
        "§7, A16",
    ),
    "update-offsets-unknown-session-ok": (
        "UpdateOffsets for an unknown session answers FetchSessionNotFoud (3002); this answers 0",
        "§5.5",
    ),
    "compression-code-unchecked": (
        "Compression bits 5..7 must be rejected with CompressionError (9000); this stores the batch",
        "§4.4 step 6, §8",
    ),
    "negative-timeout-accepted": (
        "A negative Produce timeout is a decode error that closes the connection; this answers it",
        "§4.1, A13, §7",
    ),
    "fetch-skips-containing-batch": (
        "A fetch slice starts at the batch that CONTAINS fetch_offset; this starts at the next batch",
        "§5.2",
    ),
    "fetch-max-bytes-ignored": (
        "The request-level Fetch max_bytes limits the returned slice; this ignores it",
        "§5.1, §5.2",
    ),
    "stream-no-flow-control": (
        "After each StreamFetch data response the server waits for UpdateOffsets before sending more; "
        "this pushes new data at once",
        "§5.4",
    ),
    "fetch-isolation-lenient": (
        "Fetch isolation is a u8 enum 0/1; any other value is a decode error that closes the "
        "connection; this accepts it",
        "§5.1, A4, §7",
    ),
    "produce-merges-duplicates": (
        "Produce returns exactly one response entry per request partition entry, in order; this "
        "merges entries that repeat a partition_index",
        "§4.1",
    ),
}


class Defects:
    def __init__(self, names: list[str] | None = None) -> None:
        names = list(names or [])
        unknown = [n for n in names if n not in DEFECTS]
        if unknown:
            raise ValueError(f"unknown defect(s): {', '.join(unknown)}")
        self.active = frozenset(names)

    def on(self, name: str) -> bool:
        assert name in DEFECTS, name
        return name in self.active


def format_table() -> str:
    width = max(len(n) for n in DEFECTS)
    lines = []
    for name, (req, sec) in DEFECTS.items():
        lines.append(f"{name:<{width}}  [{sec}]  {req}")
    return "\n".join(lines)
