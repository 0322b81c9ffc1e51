"""Record batch mutations, inside an otherwise valid Produce request: the shared operators applied to the fields of
a batch header (``batch_spans``: laid out as ``protocols.kafka.records.BATCH_HEADER`` packs them), each with what a
conforming broker may answer."""

from __future__ import annotations

import random
import struct
import uuid
from dataclasses import dataclass

from hypothesis import strategies as st

from wirecheck.protocols import compression
from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.reactions import Reaction
from wirecheck.strategies import operators
from wirecheck.strategies.binary import Span, flip_bit, set_int
from wirecheck.strategies.kafka.mutants import expect
from wirecheck.strategies.kafka.values import record_batches

#: the batch header's fields, in the order of ``records.BATCH_HEADER`` (whose format gives each one's width)
BATCH_FIELDS = ("baseOffset", "batchLength", "partitionLeaderEpoch", "magic", "crc", "attributes", "lastOffsetDelta",
                "baseTimestamp", "maxTimestamp", "producerId", "producerEpoch", "baseSequence", "recordCount")


def batch_spans(at: int = 0) -> dict[str, Span]:
    """The header fields of the batch starting at ``at``, by name."""
    spans = {}
    for name, code in zip(BATCH_FIELDS, records.BATCH_HEADER.format.lstrip(">")):
        width = struct.calcsize(">" + code)
        spans[name] = Span(f"batch.{name}", "crc" if name == "crc" else "fixed", at, at + width)
        at += width
    return spans


HEADER = batch_spans()


def produce_body(version: int, topic: str, partition: int, batch: bytes, acks: int = -1,
                 timeout_ms: int = 5000, topic_id: uuid.UUID | None = None) -> dict:
    """A Produce body for one partition (topic by name, or by id from v13)."""
    topic_entry = {"Name": topic, "PartitionData": [{"Index": partition, "Records": batch}]}
    if topic_id is not None:
        topic_entry["TopicId"] = topic_id
    return {"TransactionalId": None, "Acks": acks, "TimeoutMs": timeout_ms, "TopicData": [topic_entry]}


@dataclass(frozen=True)
class BatchMutation:
    batch: bytes
    operator: str
    reaction: Reaction


def corrupt_crc(batch: bytes) -> BatchMutation:
    """One bit of the CRC flipped."""
    bad = operators.apply("bad-crc", random.Random(len(batch)), batch, HEADER["crc"])
    return BatchMutation(bad, "crc-mismatch", expect("kafka.produce.crc-mismatch", "batch CRC off by one bit",
                                                     f"error:{errors.CORRUPT_MESSAGE}"))


def corrupt_payload(batch: bytes) -> BatchMutation:
    """Flip a bit after the CRC without fixing it: the CRC check must catch it."""
    return BatchMutation(flip_bit(batch, len(batch) - 1), "payload-bit-flip", expect(
        "kafka.produce.crc-mismatch", "a record byte changed after the CRC was computed",
        f"error:{errors.CORRUPT_MESSAGE}"))


def wrong_magic(batch: bytes, magic: int = 1) -> BatchMutation:
    bad = set_int(batch, HEADER["magic"], magic)
    return BatchMutation(bad, "wrong-magic", expect(
        "kafka.produce.invalid-record", f"magic {magic} in Produce v3+",
        f"error:{errors.INVALID_RECORD}", f"error:{errors.CORRUPT_MESSAGE}"))


def lying_batch_length(batch: bytes, delta: int) -> BatchMutation:
    """batchLength off by ``delta`` from the bytes that follow it."""
    bad = operators.misstate(random.Random(0), batch, HEADER["batchLength"], (lambda n: n + delta,))
    length = len(batch) - HEADER["batchLength"].end
    return BatchMutation(bad, "lying-batch-length", expect(
        "kafka.produce.batch-length", f"batchLength {length + delta} for {length} bytes",
        f"error:{errors.CORRUPT_MESSAGE}", f"error:{errors.INVALID_RECORD}", "close"))


def lying_record_count(batch: bytes, count: int) -> BatchMutation:
    """recordCount set to ``count``, the CRC made valid again."""
    bad = records.recompute_crc(set_int(batch, HEADER["recordCount"], count))
    return BatchMutation(bad, "lying-record-count", expect(
        "kafka.produce.batch-length", f"record count {count} with a valid CRC",
        f"error:{errors.CORRUPT_MESSAGE}", f"error:{errors.INVALID_RECORD}"))


@st.composite
def mutated_batches(draw, max_records: int = 3) -> BatchMutation:
    batch = records.encode_batch(draw(record_batches(max_records, codecs=(compression.NONE,))))
    choice = draw(st.sampled_from(["crc", "payload", "magic", "length", "count"]))
    if choice == "crc":
        return corrupt_crc(batch)
    if choice == "payload":
        return corrupt_payload(batch)
    if choice == "magic":
        return wrong_magic(batch, draw(st.sampled_from([0, 1, 3, -1])))
    if choice == "length":
        return lying_batch_length(batch, draw(st.sampled_from([1, 100, -1, -40, 2**30])))
    return lying_record_count(batch, draw(st.sampled_from([0, 2**31 - 1, -1, 1000])))
