"""Pravega bulk mutants: harmless requests traced by their codec (``protocols.pravega.commands``), one shared
operator applied to each (``strategies.rules``), and the reaction the spec permits (notes §8).

Each mutant carries a :class:`~protocols.reactions.Reaction` (what the spec lets the target do with it, and the
clause a wrong reaction violates). Seeds whose answer the classifier checks get a fresh requestId.
"""

from __future__ import annotations

import functools
import random
import uuid
from typing import NamedTuple

from hypothesis import strategies as st

from wirecheck.protocols import reactions
from wirecheck.protocols.pravega import commands as cmd
from wirecheck.strategies import operators
from wirecheck.strategies.binary import Span, set_int
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.rules import AS_IS, Rule, RuleMutator
from wirecheck.strategies.traced import TracedSeed, spans_from_trace

NO_HANG = "pravega.robustness.no-hang"

for _name, _family, _doc, _apply in (
        ("unknown-type", "unknown-enum", "a type code that names no wire command (unassigned or retired)",
         operators.set_field),
        ("not-a-request", "wrong-type", "a reply-only, embedded-only or admin-port command sent to the server",
         operators.set_field),
        ("string-length-lie", "length-lie", "a u16 string length that runs past the payload", operators.overrun),
        ("padding-prefix", "concatenation", "a top-level Padding frame before a valid request", operators.insert),
        ("suggested-length", "boundary-int", "ReadSegment's suggestedLength at a boundary (0, -1, huge)",
         operators.set_field),
        ("negative-offset", "boundary-int", "a ReadSegment offset below zero", operators.set_field),
        ("unknown-segment", "unknown-enum", "a request naming a segment that does not exist", operators.as_is),
        ("append-without-setup", "drop-field", "an append for a writer with no SetupAppend on the connection",
         operators.set_field)):
    operators.register(_name, _family, _doc, apply=_apply)


class Expect(NamedTuple):
    """What an answer to a mutant must match (the classifier's context)."""

    request_id: int | None  # None: the reply carries no requestId (Hello, KeepAlive)
    replies: frozenset  # the reply type codes a success may have


# -- what the spec permits (notes §8) -------------------------------------------------------------------------


@functools.cache
def answered(clause: str) -> reactions.Reaction:
    """A well-formed reply (an ordinary error reply such as NoSuchSegment included), the connection open."""
    return reactions.any_answer(clause, clauses={"silence": NO_HANG, "keepalive": NO_HANG})


@functools.cache
def closes(clause: str) -> reactions.Reaction:
    """The connection closes without a reply."""
    return reactions.close(clause, clauses={"silence": clause})


#: a length the protocol doc allows and upstream refuses (A3): closing or waiting for the payload both conform
OVERSIZE_MAY_WAIT = reactions.silence_allowed("pravega.framing.oversize", "A3: the doc allows payloads below 2^24",
                                              patience=0.05)


@functools.cache
def error_or_close(clause: str, codes: tuple = ()) -> reactions.Reaction:
    return reactions.error_or_close(clause, set(codes) or None, clauses={"silence": NO_HANG})


def _length_told(span: Span, frame: bytes) -> int:
    return int.from_bytes(frame[span.start : span.end], "big", signed=True)


def _may_wait(seed, span: Span, frame: bytes) -> bool:
    """A3: a length below 2^24 is within the doc's count; a server may wait for the payload."""
    return 0 < _length_told(span, frame) <= 0xFFFFFF


def _outer_length_lie(seed, span: Span, frame: bytes) -> reactions.Reaction:
    return OVERSIZE_MAY_WAIT if _may_wait(seed, span, frame) else closes("pravega.framing.oversize")


# -- seeds traced by the codec --------------------------------------------------------------------------------

#: reply types a success of each seed request may have (errors are classified apart)
SUCCESS = {
    "GetStreamSegmentInfo": "StreamSegmentInfo", "ReadSegment": "SegmentRead", "GetSegmentAttribute":
    "SegmentAttribute", "ReadTable": "TableRead", "GetTableSegmentInfo": "TableSegmentInfo", "Hello": "Hello",
    "KeepAlive": "KeepAlive", "LocateOffset": "OffsetLocated", "ReadTableKeys": "TableKeysRead",
    "ReadTableEntries": "TableEntriesRead", "ReadTableEntriesDelta": "TableEntriesDeltaRead",
}


def _required_end(name: str, spans, payload_start: int) -> int:
    """Where the fields a reader must find end: optional trailing fields, and TableIteratorArgs (whose parts
    are read only when present), may be missing."""
    required = {f.name for f in cmd.BY_NAME[name].fields if not f.optional and f.codec is not cmd.ITERATOR_ARGS}
    return max((s.end for s in spans if s.path in required), default=payload_start)


def traced(name: str, values: dict) -> TracedSeed:
    """A command's frame and its spans: the header's ``type`` and ``length``, each field, and three wholes:
    ``frame``, ``payload`` and ``required`` (the payload up to the end of its required fields)."""
    trace: list = []
    frame = cmd.encode(name, values, trace=trace)
    spans = spans_from_trace(trace)
    payload = Span("payload", "data", cmd.HEADER_SIZE, len(frame))
    required = Span("required", "data", payload.start, _required_end(name, spans, payload.start))
    success = frozenset({cmd.CODE[SUCCESS[name]]}) if name in SUCCESS else frozenset()
    return TracedSeed(name, frame, spans + (Span("frame", "frame", 0, len(frame)), payload, required),
                      Expect(None, success))


def seed_requests(segment: str, table: str, length: int, token: str = "",
                  wire_version: int = cmd.WIRE_VERSION) -> list[TracedSeed]:
    """Harmless valid requests about a segment holding ``length`` bytes and a table holding a key ``k``, each
    carrying the delegation ``token``; only the commands of the server's ``wire_version`` (LocateOffset is 17's:
    Pravega 0.13.0 speaks 16 and closes the connection on it)."""
    token = {"delegation_token": token}
    seeds = [
        traced("GetStreamSegmentInfo", {"request_id": 0, "segment": segment, **token}),
        traced("ReadSegment", {"segment": segment, "offset": 0, "suggested_length": 64, **token, "request_id": 0}),
        traced("GetSegmentAttribute", {"request_id": 0, "segment": segment, "attribute_id": uuid.UUID(int=7),
                                       **token}),
        traced("ReadTable", {"request_id": 0, "segment": table, **token,
                             "keys": [(b"k", cmd.NO_VERSION), (b"absent", cmd.NO_VERSION)]}),
        traced("GetTableSegmentInfo", {"request_id": 0, "segment": table, **token}),
        *([traced("LocateOffset", {"request_id": 0, "segment": segment, "target_offset": 0, **token})]
          if wire_version >= 17 else []),
        traced("ReadTableKeys", {"request_id": 0, "segment": table, **token, "suggested_key_count": 10,
                                 "args": {}}),
        traced("ReadTableEntriesDelta", {"request_id": 0, "segment": table, **token, "from_position": 0,
                                         "suggested_entry_count": 10}),
        traced("Hello", {"high_version": cmd.WIRE_VERSION, "low_version": cmd.OLDEST_COMPATIBLE_VERSION}),
    ]
    if length > 0:
        seeds.append(traced("ReadSegment", {"segment": segment, "offset": length - 1, "suggested_length": 8,
                                            **token, "request_id": 0}))
    return seeds


# -- the rules: operator -> seeds, field, choices, re-framing, permitted reaction --------------------------------

_NOT_REQUESTS = tuple(sorted(c.code for c in cmd.COMMANDS.values() if c.direction in ("reply", "embedded")
                             or c.admin))
_UNKNOWN = tuple(sorted(set(range(-10, 120)) - set(cmd.COMMANDS)) + [2**31 - 1, -(2**31), 0x7F00, 1000]
                 + list(cmd.RETIRED))
_PADDING = tuple(cmd.frame(cmd.CODE["Padding"], bytes(size)) for size in range(41))
_INVALID_UTF8 = (b"\xf0\x9f\x98\x80", b"\x80", b"\xbf", b"\xf8\x88\x80\x80\x80", b"\xc3", b"\xe2\x82")

RULES = {
    "valid": Rule("fresh", "frame", answered("pravega.request-id.echo"), reframe=AS_IS),
    "trailing-bytes": Rule("fresh-no-tail-fields", "payload", answered("pravega.framing.trailing-bytes"),
                           choices=(range(1, 25),)),
    "padding-prefix": Rule("fresh", "frame", answered("pravega.framing.padding"), _PADDING, reframe=AS_IS),
    "suggested-length": Rule("read", "suggested_length", answered("pravega.read.suggested-length"),
                             (0, -1, 1, 7, -(2**31), 2**31 - 1, 10 << 20), reframe=AS_IS),
    "unknown-segment": Rule("no-such-segment", "segment", answered("pravega.segment.no-such-segment"),
                            reframe=AS_IS),
    "truncate": Rule("with-request-id", "required", closes("pravega.framing.truncated")),
    "unknown-type": Rule("any", "type", closes("pravega.framing.unknown-type"), _UNKNOWN, reframe=AS_IS),
    "not-a-request": Rule("any", "type", closes("pravega.framing.not-a-request"), _NOT_REQUESTS, reframe=AS_IS),
    "oversize": Rule("any", "length", _outer_length_lie,
                     (cmd.MAX_PAYLOAD + 1, 2**31 - 1, range(cmd.MAX_PAYLOAD + 1, 2**31)), AS_IS, _may_wait),
    "negative-size": Rule("any", "length", _outer_length_lie, (-1, -8, -(2**31), range(-(2**31), 0)), AS_IS),
    "invalid-utf8": Rule("with-request-id", lambda seed, rng: seed.field("segment", "data"),
                         closes("pravega.strings.invalid"), _INVALID_UTF8),
    "string-length-lie": Rule("with-request-id", "segment", closes("pravega.framing.truncated"), reframe=AS_IS),
    "hostile-count": Rule("with-count", lambda seed, rng: seed.of_kind("count")[0], closes("pravega.framing.truncated"),
                          (2**31 - 1, 1_000_000, 0x10000), reframe=AS_IS),
    "negative-offset": Rule("read", "offset", error_or_close("pravega.read.beyond-sealed", (cmd.CODE["ErrorMessage"],)),
                            (-1, -(2**63), range(-(2**63), 0)), reframe=AS_IS),
    "append-without-setup": Rule("append", "type", closes("pravega.append.without-setup"),
                                 (cmd.CODE["AppendBlockEnd"], cmd.CODE["AppendBlock"]), reframe=AS_IS),
}


class BulkMutator(RuleMutator):
    """Seeded mutants of the harmless seed requests: an endless iterator of :class:`Mutant`."""

    RULES = RULES
    # Operators whose reaction keeps the connection open are listed twice: they pipeline (64 to a round trip),
    # while each closing one costs a connection, so the mix stays about half and half in connections' terms.
    OPERATORS = ("valid", "valid", "trailing-bytes", "trailing-bytes", "padding-prefix", "padding-prefix",
                 "suggested-length", "suggested-length", "unknown-segment", "unknown-segment",
                 "truncate", "unknown-type", "not-a-request", "oversize", "negative-size", "invalid-utf8",
                 "string-length-lie", "hostile-count", "negative-offset", "append-without-setup")

    def __init__(self, rng: random.Random, segment: str, table: str, length: int = 13, operators=OPERATORS,
                 token: str = "", wire_version: int = cmd.WIRE_VERSION):
        super().__init__(rng, operators)
        self.rid = 0
        self.appends: list[TracedSeed] = []
        seeds = seed_requests(segment, table, length, token, wire_version)
        unchecked = [_unchecked(s) for s in seeds]
        table_update = traced("UpdateTableEntries", {"request_id": 0, "segment": table, "delegation_token": token,
                                                     "entries": [(b"k", cmd.NO_VERSION, b"v")]})
        # groups sent with a fresh requestId (their answers are checked), and groups sent as they are
        self.fresh_groups = {
            "fresh": seeds,
            # extra bytes after ReadSegment's or Hello's fields would be read as their optional fields
            "fresh-no-tail-fields": [s for s in seeds if s.name not in ("ReadSegment", "Hello")],
            "read": [traced("ReadSegment", {"segment": segment, "offset": 0, "suggested_length": 0,
                                            "delegation_token": token, "request_id": 0})],
            "no-such-segment": [traced("GetStreamSegmentInfo", {"request_id": 0, "segment": segment + "-absent",
                                                                "delegation_token": token})],
        }
        self.groups = {
            "any": unchecked, "with-request-id": [s for s in unchecked if s.has("request_id")],
            "with-count": [s for s in unchecked if s.name == "ReadTable"] + [_unchecked(table_update)],
        }

    def seed(self, group: str) -> TracedSeed:
        if group == "append":
            return self._append()
        if group in self.groups:
            return self.rng.choice(self.groups[group])
        return self._fresh(self.rng.choice(self.fresh_groups[group]))

    def _fresh(self, seed: TracedSeed) -> TracedSeed:
        """The seed with a new requestId, which its answer must echo."""
        if not seed.has("request_id"):
            return seed
        self.rid = (self.rid + 1) & 0x3FFFFFFFFFFFFFFF
        frame = set_int(seed.frame, seed.field("request_id"), self.rid)
        return seed.with_frame(frame, Expect(self.rid, seed.context.replies))

    APPENDS = 32  # append seeds kept and reused: tracing one costs more than the mutant

    def _append(self) -> TracedSeed:
        """An AppendBlockEnd for a random writer that never sent SetupAppend (from a pool built on first use)."""
        rng = self.rng
        if len(self.appends) < self.APPENDS:
            data = cmd.event(rng.randbytes(rng.randint(0, 16)))
            self.appends.append(_unchecked(traced("AppendBlockEnd", {
                "writer_id": uuid.UUID(bytes=rng.randbytes(16)), "size_of_whole_events": len(data), "data": data,
                "num_events": 1, "last_event_number": 1, "request_id": 1})))
            return self.appends[-1]
        return rng.choice(self.appends)

    def reframe(self, seed: TracedSeed, frame: bytes, mode: str) -> bytes:
        """The header's length made true again (a mutation inside the payload is the only defect)."""
        code = cmd.HEADER.unpack_from(frame)[0]
        return cmd.frame(code, frame[cmd.HEADER_SIZE :])


def _unchecked(seed: TracedSeed) -> TracedSeed:
    """A seed sent as it is (requestId 0): a conforming target does not answer it, so nothing is matched."""
    return TracedSeed(seed.name, seed.frame, seed.spans, None)


@st.composite
def hostile_frames(draw, segment: str, table: str, length: int = 13, operators=BulkMutator.OPERATORS) -> Mutant:
    """One mutant, for property-based cases: the operator and the seed are drawn, so failures shrink."""
    seed = draw(st.integers(0, 2**32 - 1))
    operator = draw(st.sampled_from(operators))
    return BulkMutator(random.Random(seed), segment, table, length).mutant(operator)
