"""The log cleaner for topics whose cleanup.policy includes compact (Kafka's LogCleaner, 3.x).

Run with retention, every ``--kafka-retention-check-ms``. For each partition it reads the closed segments (those
before the active one, rolled as storage.Partition.segment_starts describes), keeps for each key only the record
with the highest offset there, and rewrites the batches that lost records. Offsets never change: the survivors
keep theirs, so a compacted log has holes, and a batch keeps its lastOffsetDelta. Batches are read one at a time
(with --data-dir through the bounded cache; the partition file is then rewritten, durable.PartitionLog); only the
newest offset of each key is held. Decisions:
- a rewritten batch is stored uncompressed (Kafka recompresses with the topic's codec; consumers read either);
- a batch left empty is dropped; transactional batches and markers are left as they are (Kafka removes aborted
  records and old markers too, which needs the transaction index this broker does not keep per segment);
- tombstones (null values) stay (Kafka drops them after delete.retention.ms).
"""

from __future__ import annotations

from wirecheck.broker.kafka import records


def compact(partition) -> int:
    """Clean the closed segments of ``partition``; the number of records removed.

    Two passes over the closed batches, one at a time (a durable partition reads them through its bounded cache):
    the first finds each key's newest offset, the second, only if something goes, yields the cleaned batches."""
    closed = partition.segment_starts()[-1]
    log = partition.log
    latest: dict[bytes | None, int] = {}
    total = 0
    for index in range(closed):
        entries = _cleanable(log.batch(index))
        base = log.bases[index]
        for delta, key, _ in entries or ():
            latest[key] = base + delta
            total += 1
    removed = total - len(latest)  # each key keeps exactly one record
    if removed:
        partition.replace_front(closed, _cleaned(log, closed, latest))
    return removed


def _cleanable(stored: bytes) -> list | None:
    """The records of a batch the cleaner may rewrite, or None (transactional, or undecodable: left alone)."""
    if records.parse_header(stored).is_transactional:
        return None
    try:
        return records.split_records(stored)
    except Exception:
        return None


def _cleaned(log, closed: int, latest: dict[bytes | None, int]):
    for index in range(closed):
        stored = log.batch(index)
        entries = _cleanable(stored)
        if entries is None:
            yield stored
            continue
        base = records.parse_header(stored).base_offset
        kept = [raw for delta, key, raw in entries if latest[key] == base + delta]
        if len(kept) == len(entries):
            yield stored
        elif kept:
            yield records.with_records(stored, kept)
