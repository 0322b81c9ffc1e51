"""The log cleaner for topics whose cleanup.policy includes compact (Kafka's LogCleaner, 3.x).

Run with retention, every ``--kafka-retention-check-ms``. For each partition it reads the closed segments (those
before the active one, rolled as storage.Partition.segment_starts describes), keeps for each key only the record
with the highest offset there, and rewrites the batches that lost records. Offsets never change: the survivors
keep theirs, so a compacted log has holes, and a batch keeps its lastOffsetDelta. Decisions:
- a rewritten batch is stored uncompressed (Kafka recompresses with the topic's codec; consumers read either);
- a batch left empty is dropped; transactional batches and markers are left as they are (Kafka removes aborted
  records and old markers too, which needs the transaction index this broker does not keep per segment);
- tombstones (null values) stay (Kafka drops them after delete.retention.ms).
"""

from __future__ import annotations

from wirecheck.targets.reference.kafka import records


def compact(partition) -> int:
    """Clean the closed segments of ``partition``; the number of records removed."""
    closed = partition.segment_starts()[-1]
    parsed: list[list | None] = []
    latest: dict[bytes | None, int] = {}
    for stored in partition.batches[:closed]:
        batch = records.parse_header(stored)
        entries = None
        if not batch.is_transactional:
            try:
                entries = records.split_records(stored)
            except Exception:  # an undecodable body is left alone
                entries = None
        parsed.append(entries)
        for delta, key, _ in entries or ():
            latest[key] = batch.base_offset + delta
    cleaned, removed = [], 0
    for stored, entries in zip(partition.batches[:closed], parsed):
        if entries is None:
            cleaned.append(stored)
            continue
        base = records.parse_header(stored).base_offset
        kept = [raw for delta, key, raw in entries if latest[key] == base + delta]
        removed += len(entries) - len(kept)
        if len(kept) == len(entries):
            cleaned.append(stored)
        elif kept:
            cleaned.append(records.with_records(stored, kept))
    if removed:
        partition.replace_front(closed, cleaned)
    return removed
