"""Fluvio bulk mutants: valid Produce requests traced by their codec (``protocols.fluvio.messages``), one shared
operator applied to each (``strategies.rules``), and the reaction the spec permits (notes §7, §12).

Implementation-defined reactions (clauses at SHOULD level) prefer one outcome: the other is NON-STRICT, never
FAILED. Operators, each aimed at one check: frame size (negative, oversize), truncate, batch-len-short,
recordset-trailing, compression-bits, bad-crc, isolation, smartmodules-trailer, wide-varints, hostile-count,
option-tag, unknown-key, trailing-bytes.
"""

from __future__ import annotations

import functools
import random
import struct
from typing import NamedTuple

from hypothesis import strategies as st

from wirecheck.protocols import reactions
from wirecheck.protocols.fluvio import messages, records
from wirecheck.protocols.fluvio.clauses import MAX_FRAME
from wirecheck.protocols.reactions import ANSWER, CLOSE, ERROR, SILENCE
from wirecheck.strategies import operators
from wirecheck.strategies.binary import Span, overlong_uvarint, set_int
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.rules import AS_IS, CHECKSUM, Rule, RuleMutator
from wirecheck.strategies.traced import TracedSeed, sized, spans_from_trace

NO_HANG = "fluvio.robustness.no-hang"
CLOSE_WAIT = 0.3  # seconds we wait for a preferred close before calling the target's choice "waits"
RECORDS = "body.topics[0].partitions[0].records"  # the one RecordSet of a seed


class Request(NamedTuple):
    """What an answer to a mutant must match (the classifier's context)."""

    api_key: int = messages.PRODUCE
    version: int = messages.COMMON_VERSION
    correlation_id: int = 0


# -- what the spec permits (notes §7, §12) ---------------------------------------------------------------------


@functools.cache
def answered(clause: str, error_code: int | None = 0) -> reactions.Reaction:
    """A well-formed answer whose partition error is ``error_code`` (None: any), the connection staying open."""
    options = dict(clauses={"silence": NO_HANG})
    if error_code is None:
        return reactions.any_answer(clause, **options)
    if error_code == 0:
        return reactions.answer(clause, **options)
    return reactions.error_answer(clause, {error_code}, **options)


@functools.cache
def closes(clause: str) -> reactions.Reaction:
    """The connection closes without a response: a connection left open breaks ``clause`` itself."""
    return reactions.close(clause)


@functools.cache
def close_preferred(clause: str, answer_clause: str | None = None) -> reactions.Reaction:
    """The connection closes (preferred) or the target waits (NON-STRICT); an answer is NON-STRICT too, unless
    ``answer_clause`` names the clause an answer breaks outright (a frame that can never complete)."""
    if answer_clause is None:
        return reactions.Reaction(frozenset({CLOSE, SILENCE, ANSWER, ERROR}), clause, prefer=frozenset({CLOSE}),
                                  patience=CLOSE_WAIT)
    return reactions.silence_allowed(clause, prefer={CLOSE}, patience=CLOSE_WAIT,
                                     clauses={"answer": answer_clause, "error": answer_clause})


@functools.cache
def answer_preferred(clause: str, error_code: int = 0) -> reactions.Reaction:
    """A well-formed answer (preferred); closing the connection is NON-STRICT."""
    outcomes = {ANSWER, CLOSE} if error_code == 0 else {ERROR, CLOSE}
    prefer = {ANSWER} if error_code == 0 else {ERROR}
    return reactions.Reaction(frozenset(outcomes), clause, codes=frozenset({error_code}) if error_code else None,
                              prefer=frozenset(prefer), clauses={"silence": NO_HANG})


def _truncated(seed: TracedSeed, span: Span, frame: bytes) -> reactions.Reaction:
    """Where the cut fell decides which check refuses the request."""
    end = len(frame)
    if end == span.start:  # nothing after the size: a frame of size 0
        return closes("fluvio.framing.zero-size")
    if end == seed.field("body.smartmodules").start:  # exactly the trailer gone: A5's permitted shape
        return answer_preferred("fluvio.produce.smartmodules-trailer")
    recordset = seed.field(RECORDS, "recordset")
    if recordset.start <= end < recordset.end:  # the RecordSet's length claims more than the request holds
        return closes("fluvio.produce.recordset-overrun")
    return closes("fluvio.header.truncated")


def _trailer(seed: TracedSeed, span: Span, frame: bytes) -> reactions.Reaction:
    if len(frame) < len(seed.frame):  # absent: the v7 fixture's shape (A5)
        return answer_preferred("fluvio.produce.smartmodules-trailer")
    return answered("fluvio.versions.every-version")


# -- the operators only Fluvio needs ------------------------------------------------------------------------------


def _trailer_present_or_absent(rng, frame, span, choices=()):
    """The smartmodules trailer dropped half the time, kept the other half."""
    return frame[: span.start] + frame[span.end :] if rng.random() < 0.5 else frame


def _wide_varints(rng, frame, span, choices=()):
    """The RecordSet replaced by one batch whose record varints lie outside i32 (upstream's storage takes them,
    A11), or whose record length is padded with continuation bytes (a non-canonical varint)."""
    record = records.Record(rng.randbytes(4), timestamp_delta=rng.choice([2**31, -(2**31) - 1, 2**62, -(2**62)]),
                            offset_delta=0)
    if rng.random() < 0.5:
        raw = struct.pack(">i", 1) + overlong_uvarint(6, 3) + records.encode_record(record)[1:]
        batch = records.encode_batch(records.Batch(raw_records=raw, last_offset_delta=0))
    else:
        batch = records.encode_batch(records.Batch(records=[record]))
    return operators.replace_sized(rng, frame, span, (batch,))


def _append_inside(rng, frame, span, choices):
    """Garbage after the last batch, inside the RecordSet: its length grows to cover it."""
    extra = rng.randbytes(operators.pick(rng, choices))
    length = int.from_bytes(frame[span.start : span.start + span.value], "big") + len(extra)
    return frame[: span.start] + length.to_bytes(span.value, "big") + frame[span.start + span.value : span.end] \
        + extra + frame[span.end :]


for _name, _family, _doc, _apply in (
        ("batch-len-short", "length-lie", "a record batch whose length field claims too little", operators.set_field),
        ("recordset-trailing", "concatenation", "bytes after the last batch of a RecordSet", _append_inside),
        ("compression-bits", "unknown-enum", "compression attribute bits naming no codec", operators.set_field),
        ("isolation", "unknown-enum", "an isolation value other than the two defined", operators.set_field),
        ("smartmodules-trailer", "drop-field", "the Produce smartmodules trailer present or absent",
         _trailer_present_or_absent),
        ("wide-varints", "overlong-varint", "record varints outside i32, or padded with continuation bytes",
         _wide_varints),
        ("option-tag", "unknown-enum", "an Option tag other than 0 or 1", operators.set_field),
        ("unknown-key", "unknown-enum", "an API key the SPU does not serve", operators.set_field)):
    operators.register(_name, _family, _doc, apply=_apply)


# -- seeds traced by the codec --------------------------------------------------------------------------------

#: the batch header's fields, in the order of ``records.HEADER`` (whose format gives each one's width)
BATCH_FIELDS = ("base_offset", "batch_length", "partition_leader_epoch", "magic", "crc", "attributes",
                "last_offset_delta", "first_timestamp", "max_time_stamp", "producer_id", "producer_epoch",
                "first_sequence")


def batch_spans(at: int) -> list[Span]:
    """The header fields of the batch starting at ``at``, laid out as ``records.HEADER`` packs them."""
    spans = []
    for name, code in zip(BATCH_FIELDS, records.HEADER.format.lstrip(">")):
        width = struct.calcsize(">" + code)
        spans.append(Span(f"records.{name}", "crc" if name == "crc" else "fixed", at, at + width))
        at += width
    return spans


def traced_produce(topic: str, record_set: bytes, version: int) -> TracedSeed:
    """A Produce of ``record_set`` (one batch) on partition 0, and its spans: each field as the codec wrote it,
    ``frame``, ``request`` (all after the size), ``records`` (the RecordSet with its length) and the batch header."""
    body = {"transactional_id": None, "isolation": messages.READ_UNCOMMITTED, "timeout_ms": 1500,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "records": record_set}]}],
            "smartmodules": []}
    trace: list = []
    frame = messages.encode_request(messages.PRODUCE, version, 0, body, trace=trace)
    spans = spans_from_trace(trace)
    seed = TracedSeed("Produce", frame, spans)
    size, length, recordset = seed.field("frame.size"), seed.field(RECORDS, "length"), seed.field(RECORDS, "recordset")
    wholes = (Span("frame", "frame", 0, len(frame)), Span("request", "data", size.end, len(frame)),
              sized(length, recordset))
    return TracedSeed("Produce", frame, spans + wholes + tuple(batch_spans(recordset.start)),
                      Request(messages.PRODUCE, version, 0))


def _record_set(seed: TracedSeed, rng: random.Random) -> Span:
    return seed.field(RECORDS, "sized")


def _any_count(seed: TracedSeed, rng: random.Random) -> Span:
    return rng.choice(seed.of_kind("count"))


# -- the rules: operator -> seeds, field, choices, re-framing, permitted reaction --------------------------------

_UNSERVED_KEYS = (2, 3, 17, 1001, 1004, 1009, 0x8000, range(2001, 0x10000))
# any int16 but the two defined values, 1 and -1 (produce.isolation)
_OTHER_ISOLATION = (0, 2, -2, 2**15 - 1, -(2**15), range(2, 2**15), range(-(2**15), -1))

RULES = {
    "valid": Rule("any-version", "frame", answered(NO_HANG), reframe=AS_IS),
    "negative-size": Rule("unmatched", "frame.size", close_preferred(
        "fluvio.framing.negative-size", "fluvio.framing.negative-size-unanswered"),
        (-1, -2, -4, -5, -(2**31), range(-(2**31), 0)), AS_IS),
    "oversize": Rule("unmatched", "frame.size", close_preferred("fluvio.framing.oversize", NO_HANG),
                     (MAX_FRAME + 1, 2**31 - 1, range(MAX_FRAME + 1, 2**31)), AS_IS),
    # matched: a cut exactly before the smartmodules trailer leaves a request that may be answered (A5)
    "truncate": Rule("produce", "request", _truncated),
    "batch-len-short": Rule("produce", "records.batch_length", close_preferred("fluvio.produce.batch-len-short"),
                            (0, 1, 44, -1, -(2**31)), AS_IS),  # an answer is permitted (NON-STRICT): with this id
    "recordset-trailing": Rule("produce", _record_set, close_preferred("fluvio.produce.recordset-trailing"),
                               (range(1, records.HEADER.size),)),
    "compression-bits": Rule("produce", "records.attributes", answered("fluvio.produce.compression-invalid", 9000),
                             (5, 6, 7), CHECKSUM),
    "bad-crc": Rule("produce", "records.crc", answered("fluvio.produce.bad-crc", None), reframe=AS_IS),
    "isolation": Rule("produce", "body.isolation", answer_preferred("fluvio.produce.isolation-other"),
                      _OTHER_ISOLATION, AS_IS),
    "smartmodules-trailer": Rule("any-version", "body.smartmodules", _trailer),
    "wide-varints": Rule("produce", _record_set, answered("fluvio.produce.records-opaque")),
    "hostile-count": Rule("unmatched", _any_count, closes("fluvio.header.truncated"),
                          (2**31 - 1, 2**31 - 2, 1_000_000), AS_IS),
    "option-tag": Rule("unmatched", "body.transactional_id?", closes("fluvio.header.truncated"),
                       (range(2, 256),), AS_IS),
    "unknown-key": Rule("unmatched", "header.api_key", closes("fluvio.header.unknown-api-key"), _UNSERVED_KEYS,
                        AS_IS),
    "trailing-bytes": Rule("produce", "request", answer_preferred("fluvio.header.trailing-bytes"),
                           (range(1, 17),)),
}


class BulkMutator(RuleMutator):
    """Seeded mutants of valid Produce requests on ``topic`` (partition 0): an endless iterator of
    :class:`Mutant`."""

    RULES = RULES
    OPERATORS = ("negative-size", "oversize", "truncate", "batch-len-short", "recordset-trailing",
                 "compression-bits", "bad-crc", "isolation", "smartmodules-trailer", "wide-varints", "hostile-count",
                 "option-tag", "unknown-key", "trailing-bytes", "valid")

    POOL = 256  # valid batches kept and reused: encoding one costs more than mutating it

    def __init__(self, rng: random.Random, topic: str, operators=OPERATORS):
        super().__init__(rng, operators)
        self.topic = topic
        self.correlation = 0
        self._pool: list[bytes] = []
        self._seeds: dict[tuple[int, int], TracedSeed] = {}  # (pool index, version) -> a traced Produce

    def _batch(self) -> bytes:
        rng = self.rng
        return records.build_batch([rng.randbytes(rng.randint(0, 24)) for _ in range(rng.randint(1, 3))])

    def _pooled(self) -> int:
        """Index of a valid batch from the pool (grown by one batch in four draws until it is full)."""
        if len(self._pool) < self.POOL and (not self._pool or self.rng.random() < 0.25):
            self._pool.append(self._batch())
        return self.rng.randrange(len(self._pool))

    def seed(self, group: str) -> TracedSeed:
        """A pooled Produce (v25, or v7 or v25 for "any-version") with a fresh correlation id; its answer is
        matched to that id, except in the "unmatched" group (a conforming target does not answer those)."""
        version = self.rng.choice([7, 25]) if group == "any-version" else 25
        key = (self._pooled(), version)
        seed = self._seeds.get(key)
        if seed is None:
            seed = self._seeds[key] = traced_produce(self.topic, self._pool[key[0]], version)
        self.correlation = (self.correlation + 1) & 0x7FFFFFFF
        frame = set_int(seed.frame, seed.field("header.correlation_id"), self.correlation)
        matched = 0 if group == "unmatched" else self.correlation
        return seed.with_frame(frame, Request(messages.PRODUCE, version, matched))

    def reframe(self, seed: TracedSeed, frame: bytes, mode: str) -> bytes:
        """WHOLE: the frame size made true again; CHECKSUM: the batch CRC recomputed over its edited bytes."""
        if mode == CHECKSUM:
            recordset = seed.field(RECORDS, "recordset")
            return frame[: recordset.start] + records.recompute_crc(frame[recordset.start : recordset.end]) \
                + frame[recordset.end :]
        size = seed.field("frame.size")
        return set_int(frame, size, len(frame) - size.end)


@st.composite
def hostile_frames(draw, topic: str, operators=BulkMutator.OPERATORS) -> Mutant:
    """One mutant, for property-based cases: the operator and the seed are drawn, so failures shrink."""
    seed = draw(st.integers(0, 2**32 - 1))
    operator = draw(st.sampled_from(operators))
    return BulkMutator(random.Random(seed), topic).mutant(operator)
