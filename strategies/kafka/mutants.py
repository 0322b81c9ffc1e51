"""Kafka mutants: requests traced by their codec (``strategies.kafka.seeds``), one shared operator applied to one
of their fields (``strategies.rules``), and what a conforming broker may do with the result. Kafka's seeds are
random requests of many APIs and versions, so a mutant's seed is drawn first and its operator among those that
apply to it; the rule table says, per operator, which fields it breaks and what the spec permits.

Two operators are Kafka's own (tagged fields): ``unknown-tag`` and ``truncated-tag``.
"""

from __future__ import annotations

import dataclasses
import functools
import random

from hypothesis import reject
from hypothesis import strategies as st

from wirecheck.protocols import fields as f
from wirecheck.protocols import reactions
from wirecheck.protocols.kafka import errors, messages, misread
from wirecheck.protocols.reactions import ERROR, SILENCE, Reaction
from wirecheck.strategies import operators
from wirecheck.strategies.binary import Span, set_int
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.kafka.seeds import (LENGTH, KafkaRequest, Seed, field_nullable, random_seed,
                                              traced_seed)
from wirecheck.strategies.kafka.values import any_message, correlation_ids
from wirecheck.strategies.rules import AS_IS, Rule, RuleMutator

# -- what a conforming broker may do ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=8192)  # mutants of one corpus repeat their reactions; a Reaction is immutable
def expect(clause: str, why: str, *outcomes: str) -> Reaction:
    """A reaction from Kafka's outcome names: ``answer`` (a response that decodes at the request's version; it may
    carry ordinary per-topic errors), ``close``, ``silent`` (no answer before the deadline, e.g. the broker waits
    for bytes a lying length promised), ``error:N`` (a response carrying error code N)."""
    kinds, codes = set(), set()
    for outcome in outcomes:
        if outcome.startswith("error:"):
            kinds.add(ERROR)
            codes.add(int(outcome.split(":", 1)[1]))
        else:
            kinds.add(SILENCE if outcome == "silent" else outcome)
    # A refusal with another code than 42 (UNKNOWN_SERVER_ERROR, say) is an answer: the target survived, so it
    # breaks the clause that says how a request is refused, not the survival clause.
    routed = {"code": misread.REFUSAL_CLAUSE} if clause == SURVIVAL_CLAUSE else {}
    return Reaction(frozenset(kinds), clause, why, codes=frozenset(codes) if codes else None, keeps_open=False,
                    clauses=routed)


SURVIVAL_CLAUSE = "kafka.robustness.survives"


MALFORMED = ("close", f"error:{errors.INVALID_REQUEST}")
SURVIVES = ("answer", "close", f"error:{errors.INVALID_REQUEST}")


@functools.lru_cache(maxsize=8192)
def _survives(why: str) -> Reaction:
    """Any answer, any error, or a close: only survival is required."""
    return reactions.answer_or_close("kafka.robustness.survives", why, keeps_open=False)


# -- the operators only Kafka needs (tagged fields) -------------------------------------------------------------

UNKNOWN_TAG, UNKNOWN_TAG_DATA = 9_999, b"\x01\x02\x03"
RUNAWAY_TAG, RUNAWAY_SIZE, RUNAWAY_SENT = 10_000, 200, 2


def _unknown_tag(rng, frame, span, choices=()):
    """An unknown tag added to a tagged-field section (kept in tag order): a conforming broker skips it."""
    entries, _ = f.read_tagged_section(frame[span.start : span.end], 0)
    items = sorted([(tag, data) for tag, data, _ in entries] + [(UNKNOWN_TAG, UNKNOWN_TAG_DATA)],
                   key=lambda item: item[0])
    section = bytearray()
    f.write_tagged_section(section, items)
    return frame[: span.start] + bytes(section) + frame[span.end :]


def _truncated_tag(rng, frame, span, choices=()):
    """A last tagged field whose size claims more bytes than the frame has left: the section is rewritten with one
    more entry, and everything after it dropped."""
    entries, _ = f.read_tagged_section(frame[span.start : span.end], 0)
    section = bytearray()
    f.write_uvarint(section, len(entries) + 1)
    for tag, data, _ in entries:
        f.write_uvarint(section, tag)
        f.write_uvarint(section, len(data))
        section += data
    f.write_uvarint(section, RUNAWAY_TAG)
    f.write_uvarint(section, RUNAWAY_SIZE)
    section += bytes(RUNAWAY_SENT)
    return frame[: span.start] + bytes(section)


operators.register("unknown-tag", "unknown-enum", "an unknown tag added to a tagged-field section", apply=_unknown_tag)
operators.register("truncated-tag", "truncation", "a tagged field whose size runs past the end of the frame",
                   apply=_truncated_tag)


# -- reactions, from what the operator wrote --------------------------------------------------------------------


def _claimed(span: Span, frame: bytes) -> int:
    """The count or length the (mutated) field states."""
    if span.prefix.startswith("uvarint"):
        value = f.read_uvarint(frame, span.start)[0]
        return value - 1 if span.prefix == "uvarint+1" else value
    return int.from_bytes(frame[span.start : span.end], "big", signed=True)


def _as_java_int(span: Span, claimed: int) -> int:
    """The count or length as Apache Kafka's generated readers hold it: an int (INT16 lengths widened), and for a
    compact field ``readUnsignedVarint() - 1`` in 32-bit arithmetic, so a varint of 2**31 or more is negative
    (MessageDataGenerator.java, generateVariableLengthReader: ``_readable.readUnsignedVarint() - 1``)."""
    if span.prefix.startswith("uvarint"):
        return ((claimed + 2**31) % 2**32) - 2**31
    return claimed


def _read_as_null(seed: Seed, span: Span, frame: bytes) -> bool:
    """Whether a reader like Apache Kafka's takes this mutated count or length for null: it is negative and its
    field is nullable at the seed's version. Kafka's generated readers test ``if (length < 0)``, not ``== -1``
    (MessageDataGenerator.java, generateVariableLengthReader: "if (%s < 0)", then null where the field is
    nullable, else "non-nullable field ... was serialized as null"), a reading kafka.encoding.hostile-count
    accepts beside the refusal."""
    return _as_java_int(span, _claimed(span, frame)) < 0 and field_nullable(seed.api_key, seed.version, span.path)


@functools.lru_cache(maxsize=8192)
def _null_or_refused(why: str) -> Reaction:
    """Read as null, the request is another one, with a null where the sender put a value: what the API answers
    to that (an error of its own, even Apache Kafka's UNKNOWN_SERVER_ERROR to a Metadata v12+ topic with neither
    name nor id) is no encoding question, so any answer is permitted, as is the refusal."""
    return reactions.answer_or_close("kafka.encoding.hostile-count", why, keeps_open=False)


def _hostile_count(seed: Seed, span: Span, frame: bytes) -> Reaction:
    why = f"{span.kind} {span.path} claims {_claimed(span, frame)}"
    if _read_as_null(seed, span, frame):
        return _null_or_refused(f"{why}: negative in a nullable field, read as null or refused")
    return expect("kafka.encoding.hostile-count", why, *MALFORMED)


def _negative_length(seed: Seed, span: Span, frame: bytes) -> Reaction:
    if _read_as_null(seed, span, frame):
        return _null_or_refused(f"length -2 in nullable {span.path}: read as null or refused")
    return expect("kafka.encoding.malformed-body", f"length -2 in {span.path}", *MALFORMED)


def _truncated(seed: Seed, span: Span, frame: bytes) -> Reaction:
    return expect("kafka.encoding.malformed-body", f"body cut at byte {len(frame)} inside {span.path}", *MALFORMED)


def _overlong(seed: Seed, span: Span, frame: bytes) -> Reaction:
    return expect("kafka.encoding.malformed-body", f"6-byte varint in {span.path} (at most 5 allowed)", *MALFORMED)


def _unknown_tag_skipped(seed: Seed, span: Span, frame: bytes) -> Reaction:
    return expect("kafka.encoding.unknown-tags", f"unknown tag {UNKNOWN_TAG} in {span.path} must be skipped", "answer")


def _runaway_tag(seed: Seed, span: Span, frame: bytes) -> Reaction:
    return expect("kafka.encoding.malformed-body",
                  f"tag in {span.path} claims {RUNAWAY_SIZE} bytes, {RUNAWAY_SENT} present", *MALFORMED)


def _invalid_utf8(seed: Seed, span: Span, frame: bytes) -> Reaction:
    """Kafka's readers decode strings with Java's ``new String(bytes, UTF_8)``, which substitutes U+FFFD instead of
    failing, so a broker may process the request; rejecting it is permitted too. Only survival is required."""
    return expect("kafka.robustness.survives", f"invalid UTF-8 in {span.path}", "answer", *MALFORMED)


def _frame_length(seed: Seed, span: Span, frame: bytes) -> Reaction:
    """The outer length lies: larger (the broker waits or closes), negative (closes)."""
    lie = _claimed(span, frame)
    if lie < 0:
        return expect("kafka.framing.negative-size", f"frame length {lie}", "close")
    return expect("kafka.framing.size-prefix", f"frame length {lie} for {len(frame) - span.end} bytes", "silent",
                  "close")


def _trailing(seed: Seed, span: Span, frame: bytes) -> Reaction:
    """Kafka's parsers stop at the body's end; whether a broker rejects the rest is not specified, so only liveness
    is required (any outcome but a hang or crash)."""
    return expect("kafka.robustness.survives", f"{len(frame) - len(seed.frame)} bytes after the body", *SURVIVES)


@functools.cache
def _rearranged(operator: str):
    def reaction(seed: Seed, span: Span, frame: bytes) -> Reaction:
        return _survives(f"{operator} of {span.path}: the body may still parse, as something else")

    return reaction


CONCATENATED = expect("kafka.robustness.survives", "a second request body after the first, under one length",
                      *SURVIVES)


# -- the rules: operator -> seeds, field, choices, re-framing, permitted reaction --------------------------------


@functools.cache
def _target(operator: str):
    """A chooser of one of the spans ``operator`` can break in the seed (``Seed.targets``)."""
    def choose(seed: Seed, rng: random.Random) -> Span:
        return rng.choice(seed.targets[operator])

    return choose


def _second_request(mutator: RuleMutator, seed: Seed) -> tuple[bytes]:
    """Another seed's request (header and body, without its size prefix)."""
    return (mutator.seed("any").frame[LENGTH.end :],)


#: the outer length's lies: one more, a thousand more than the body holds; negative
_LIES = (lambda n: n + 1, lambda n: n + 1000, lambda n: -1, lambda n: -(2**31))

#: Operators that rearrange whole fields: the result may still parse (as something else), so only survival is
#: required. Not on Fetch or Metadata, where a shifted byte could start a long poll or create a topic.
REARRANGING = ("duplicate-field", "drop-field", "swap-fields")
REARRANGE_EXCLUDED = (1, 3)

RULES = {
    "hostile-count": Rule("hostile-count", _target("hostile-count"), _hostile_count),
    "negative-length": Rule("negative-length", _target("negative-length"), _negative_length),
    "truncate": Rule("truncate", _target("truncate"), _truncated),
    "overlong-varint": Rule("overlong-varint", _target("overlong-varint"), _overlong),
    "unknown-tag": Rule("unknown-tag", _target("unknown-tag"), _unknown_tag_skipped),
    "truncated-tag": Rule("truncated-tag", _target("truncated-tag"), _runaway_tag),
    "invalid-utf8": Rule("invalid-utf8", _target("invalid-utf8"), _invalid_utf8),
    "frame-length": Rule("any", "length", _frame_length, _LIES, AS_IS),
    "trailing-bytes": Rule("any", "body", _trailing),
    "concatenated": Rule("any", "body", CONCATENATED, _second_request),
    **{name: Rule(name, _target(name), _rearranged(name)) for name in REARRANGING},
}

#: the operators of :func:`mutated_requests` and :func:`random_mutant`
OPERATORS = ("hostile-count", "negative-length", "truncate", "overlong-varint", "unknown-tag", "truncated-tag",
             "invalid-utf8", "frame-length", "trailing-bytes")
# frame-length lies make a conforming broker wait (a case of their own); overlong varints have their own case so
# that a broker accepting them fails one clearly named case instead of the bulk one.
BULK_OPERATORS = tuple(op for op in OPERATORS if op not in ("frame-length", "overlong-varint")) + (
    "concatenated", *REARRANGING)
CORPUS = 512  # valid seed requests kept for the bulk mutants; generating one costs more than mutating it


def fits(seed: Seed, group: str) -> bool:
    """Whether ``seed`` belongs to a rule's seed group: "any", or an operator's (it has a span that operator
    breaks; the rearranging ones not on Fetch or Metadata)."""
    if group == "any":
        return True
    return bool(seed.targets[group]) and not (group in REARRANGING and seed.api_key in REARRANGE_EXCLUDED)


class BulkMutator(RuleMutator):
    """Seeded mutants of a growing corpus of valid requests (a new seed for one mutant in four, up to ``CORPUS``),
    of the APIs ``api_keys`` at ``version_ranges``; ``fixup(api_key, body)`` may adjust each seed's body first.
    Each mutant's seed is drawn first, then an operator among those that apply to it."""

    RULES = RULES
    OPERATORS = BULK_OPERATORS

    def __init__(self, rng: random.Random, api_keys=None, version_ranges=None, operators=BULK_OPERATORS,
                 fixup=None):
        super().__init__(rng, operators)
        self.api_keys, self.version_ranges, self.fixup = api_keys, version_ranges, fixup
        self.corpus: list[Seed] = []
        self._entries: list[tuple[Seed, list[str]]] = []  # each corpus seed and the operators that apply to it
        self._by_kind: dict[tuple[str, str], list[Seed]] = {}  # (API name, operator) -> corpus seeds it applies to

    def _fresh(self) -> Seed:
        return random_seed(self.rng, self.api_keys, self.version_ranges, self.fixup)

    def _keep(self, seed: Seed) -> None:
        self.corpus.append(seed)
        applicable = self.applicable(seed)
        self._entries.append((seed, applicable))
        for operator in applicable:
            self._by_kind.setdefault((seed.name, operator), []).append(seed)

    def mutant_like(self, operator: str, request: str) -> Mutant:
        """A corpus seed of that API the operator applies to, mutated by it (a fresh draw when there is none)."""
        seeds = self._by_kind.get((request, operator))
        if not seeds:
            return next(self)
        return self.build(operator, self.RULES[operator], self.rng.choice(seeds))

    def __next__(self) -> Mutant:
        rng, corpus = self.rng, self.corpus
        while True:
            if len(corpus) < CORPUS and (len(corpus) < 2 or rng.random() < 0.25):
                self._keep(self._fresh())
            seed, applicable = rng.choice(self._entries)
            if applicable:
                operator = rng.choice(applicable)
                return self.build(operator, self.RULES[operator], seed)

    def applicable(self, seed: Seed) -> list[str]:
        """The enabled operators that apply to ``seed``."""
        return [op for op in self.operators if fits(seed, self.RULES[op].seeds)]

    def mutant_of(self, seed: Seed) -> Mutant | None:
        """A mutant of ``seed`` by one of the enabled operators that apply to it (None when none does)."""
        applicable = self.applicable(seed)
        if not applicable:
            return None
        operator = self.rng.choice(applicable)
        return self.build(operator, self.RULES[operator], seed)

    def seed(self, group: str) -> Seed:
        """A corpus seed of the group (fresh seeds are drawn, and kept while the corpus has room, until one fits)."""
        if group == "any" and self.corpus:
            return self.rng.choice(self.corpus)
        fitting = [s for s in self.corpus if fits(s, group)]
        for _ in range(200):
            if fitting:
                return self.rng.choice(fitting)
            fresh = self._fresh()
            if len(self.corpus) < CORPUS:
                self._keep(fresh)
            fitting = [fresh] if fits(fresh, group) else []
        raise LookupError(f"no request of these APIs and versions has a field {group!r} breaks")

    def reframe(self, seed: Seed, frame: bytes, mode: str) -> bytes:
        """The size prefix made true again (Kafka requests carry no checksum)."""
        return set_int(frame, LENGTH, len(frame) - LENGTH.end)


def random_mutant(rng, api_keys=None, version_ranges=None, operators=OPERATORS, fixup=None) -> Mutant:
    """One valid random request with one structural defect (the operators of :func:`mutated_requests`)."""
    mutator = BulkMutator(rng, api_keys, version_ranges, operators, fixup)
    while True:
        mutant = mutator.mutant_of(random_seed(rng, api_keys, version_ranges, fixup))
        if mutant is not None:
            return mutant


@st.composite
def mutated_requests(draw, api_keys=None, operators=OPERATORS, version_ranges=None, fixup=None,
                     **options) -> Mutant:
    """A valid request with exactly one structural defect, and what a conforming broker may do with it: the request
    and the operator are drawn (so a failure shrinks to a small request), the operator applied as in bulk.

    ``fixup(api_key, body)`` may adjust the valid body first (on a copy), e.g. to keep it harmless.
    """
    message = draw(any_message(api_keys, "request", version_ranges=version_ranges, **options))
    body = dict(message.body)
    if fixup is not None:
        fixup(message.api_key, body)
    seed = traced_seed(message.api_key, message.version, draw(correlation_ids), "wirecheck", body)
    applicable = [op for op in operators if fits(seed, RULES[op].seeds)]
    if not applicable:
        reject()
    operator = draw(st.sampled_from(applicable))
    mutator = BulkMutator(random.Random(draw(st.integers(0, 2**32 - 1))), api_keys, version_ranges, operators, fixup)
    return mutator.build(operator, RULES[operator], seed)


def mutate(operator: str, frame: bytes, span: Span, api_key: int, version: int, seed: int = 0) -> Mutant:
    """``operator`` applied to ``span`` of a valid request frame (``traced_request``'s), as in bulk."""
    correlation = messages.decode_request(frame)["header"]["CorrelationId"]
    traced = Seed(messages.api_name(api_key), frame, (LENGTH, span), KafkaRequest(api_key, version, correlation, frame))
    rule = dataclasses.replace(RULES[operator], field=lambda _seed, _rng: span)
    return BulkMutator(random.Random(seed), [api_key]).build(operator, rule, traced)


def mutate_overlong_varint(frame: bytes, span: Span, api_key: int, version: int) -> Mutant:
    """A 6-byte varint in ``span`` (at most 5 are legal)."""
    return mutate("overlong-varint", frame, span, api_key, version)
