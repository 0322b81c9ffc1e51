"""Pravega segment-store commands, valid and mutated, built from ``protocols.pravega.commands``.

Two engines share the same knowledge:

* Hypothesis strategies (``command_values``, ``request_frames``, ``event_payloads``, ``table_entries``,
  ``hostile_frames``) for property-based and stateful cases, which shrink a failure to one frame;
* :class:`BulkMutator`, a seeded ``random.Random`` generator of plain bytes for the bulk engine and the benchmark:
  it patches pre-encoded seed frames (a fresh requestId, a cut, a lying length) instead of encoding each mutant.

Every mutant carries a :class:`~protocols.reactions.Reaction` (what the spec lets the target do with it, and the
clause a wrong reaction violates). :class:`PravegaFuzz` is the adapter for the bulk engine: Hello is the
keepalive (any Hello answers it), a reply is classified by decoding it and checking its requestId.
"""

from __future__ import annotations

import functools
import random
import struct
import uuid
from typing import NamedTuple

from hypothesis import strategies as st

from wirecheck.protocols import reactions
from wirecheck.protocols.fields import BOOL, UUID, DecodeError
from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.pravega.clauses import CATALOGUE
from wirecheck.protocols.reactions import ANSWER, ERROR, MALFORMED, Observation
from wirecheck.strategies import operators
from wirecheck.strategies.engine import Mutant

NO_HANG = "pravega.robustness.no-hang"
KEEPALIVE = cmd.encode("KeepAlive")
HELLO = cmd.encode("Hello", high_version=cmd.WIRE_VERSION, low_version=cmd.OLDEST_COMPATIBLE_VERSION)
_RID = struct.Struct(">q")
_HEADER = struct.Struct(">ii")

for _name, _family, _doc in (
        ("unknown-type", "unknown-enum", "a type code that names no wire command (unassigned or retired)"),
        ("not-a-request", "wrong-type", "a reply-only, embedded-only or admin-port command sent to the server"),
        ("string-length-lie", "length-lie", "a u16 string length that runs past the payload"),
        ("padding-prefix", "concatenation", "a top-level Padding frame before a valid request"),
        ("suggested-length", "boundary-int", "ReadSegment's suggestedLength at a boundary (0, -1, huge)"),
        ("negative-offset", "boundary-int", "a ReadSegment offset below zero"),
        ("unknown-segment", "unknown-enum", "a request naming a segment that does not exist"),
        ("append-without-setup", "drop-field", "an append for a writer with no SetupAppend on the connection")):
    operators.register(_name, _family, _doc)


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


# -- Hypothesis: every command's fields from its codec ------------------------------------------------------------


def _sized_binary(max_size: int):
    return st.integers(0, max_size).flatmap(lambda n: st.binary(min_size=n, max_size=n))


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=24)
uuids = st.builds(lambda n: uuid.UUID(int=n), st.integers(0, 2**128 - 1))
longs = st.integers(-(2**63), 2**63 - 1)
ints = st.integers(-(2**31), 2**31 - 1)
table_keys = st.tuples(_sized_binary(16).filter(bool), st.sampled_from([cmd.NO_VERSION, cmd.NOT_EXISTS, 0, 31]))
table_entries = st.lists(st.tuples(_sized_binary(16).filter(bool), st.sampled_from([cmd.NO_VERSION, cmd.NOT_EXISTS]),
                                   _sized_binary(32)), max_size=4)


def event_payloads(max_size: int = 64):
    return _sized_binary(max_size)


def _codec_strategy(codec):
    if codec is cmd.STR:
        return names
    if codec is UUID:
        return uuids
    if codec is BOOL:
        return st.booleans()
    if codec is cmd.I8:
        return st.integers(-128, 127)
    if codec is cmd.I32:
        return ints
    if codec is cmd.I64:
        return longs
    if codec in (cmd.BLOB, cmd.LENIENT_BLOB, cmd.REST, cmd.EVENT):
        return _sized_binary(48)
    if codec is cmd.TABLE_ENTRIES:
        return table_entries
    if codec is cmd.TABLE_KEYS:
        return st.lists(table_keys, max_size=4)
    if codec is cmd.VERSIONS:
        return st.lists(longs, max_size=4)
    if codec is cmd.STRINGS:
        return st.lists(names, max_size=3)
    if codec is cmd.ITERATOR_ARGS:
        return st.fixed_dictionaries({p: _sized_binary(8) for p in cmd.IteratorArgs.PARTS})
    if codec is cmd.ATTRIBUTE_UPDATES:
        return st.lists(st.fixed_dictionaries({"attribute_id": uuids, "update_type": st.sampled_from([1, 4]),
                                               "new_value": longs, "old_value": longs}), max_size=2)
    if codec is cmd.MERGED_SOURCES:
        return st.lists(st.fixed_dictionaries({"source": names, "new_target_write_offset": longs}), max_size=2)
    if codec is cmd.CHUNKS:
        return st.lists(st.fixed_dictionaries({"length_in_metadata": longs, "length_in_storage": longs,
                                               "start_offset": longs, "chunk_name": names,
                                               "exists_in_storage": st.booleans()}), max_size=2)
    raise ValueError(f"no strategy for codec {codec!r}")


def command_values(name: str):
    """A dict of valid field values for the named command (any command: requests, replies, embedded)."""
    command = cmd.BY_NAME[name]
    return st.fixed_dictionaries({f.name: _codec_strategy(f.codec) for f in command.fields})


def layer_examples() -> dict:
    """Every message layer (protocols.pravega.layers.message_layers) -> a strategy of built payload layers."""
    from wirecheck.protocols.pravega import layers

    return {name: command_values(name).map(lambda values, cls=cls: cls(**values))
            for name, cls in layers.message_layers().items()}


@st.composite
def request_frames(draw, segment: str, table: str) -> tuple[str, bytes]:
    """(command name, frame) of a harmless valid request about ``segment`` / ``table`` (no state changes)."""
    rid = draw(st.integers(1, 2**62))
    choice = draw(st.sampled_from(["info", "read", "attribute", "table-read", "table-info", "keepalive"]))
    if choice == "info":
        return "GetStreamSegmentInfo", cmd.encode("GetStreamSegmentInfo", request_id=rid, segment=segment,
                                                  delegation_token="")
    if choice == "read":
        return "ReadSegment", cmd.encode("ReadSegment", segment=segment, offset=0,
                                         suggested_length=draw(ints), delegation_token="", request_id=rid)
    if choice == "attribute":
        return "GetSegmentAttribute", cmd.encode("GetSegmentAttribute", request_id=rid, segment=segment,
                                                 attribute_id=draw(uuids), delegation_token="")
    if choice == "table-read":
        return "ReadTable", cmd.encode("ReadTable", request_id=rid, segment=table, delegation_token="",
                                       keys=draw(st.lists(table_keys, max_size=3)))
    if choice == "table-info":
        return "GetTableSegmentInfo", cmd.encode("GetTableSegmentInfo", request_id=rid, segment=table,
                                                 delegation_token="")
    return "KeepAlive", KEEPALIVE


# -- bulk mutation ------------------------------------------------------------------------------------------------

#: reply types a success of each seed request may have (errors are classified apart)
_SUCCESS = {
    "GetStreamSegmentInfo": "StreamSegmentInfo", "ReadSegment": "SegmentRead", "GetSegmentAttribute":
    "SegmentAttribute", "ReadTable": "TableRead", "GetTableSegmentInfo": "TableSegmentInfo", "Hello": "Hello",
    "KeepAlive": "KeepAlive", "LocateOffset": "OffsetLocated", "ReadTableKeys": "TableKeysRead",
    "ReadTableEntries": "TableEntriesRead", "ReadTableEntriesDelta": "TableEntriesDeltaRead",
}


class Seed(NamedTuple):
    name: str
    frame: bytes  # requestId 0 where it has one
    rid_at: int | None  # byte offset of the requestId in the frame
    required: int  # frame bytes up to the end of the required fields
    string_at: int | None  # offset of the first string's u16 length
    count_at: int | None  # offset of the first list count


def _seed(name: str, values: dict) -> Seed:
    trace: list = []
    frame = cmd.encode(name, values, trace=trace)
    rid_at = next((start for path, kind, start, end, _ in trace if path == "request_id"), None)
    required = len(cmd.frame(cmd.CODE[name], cmd.encode_payload(cmd.CODE[name], values, omit_optional=True)))
    if name in ("ReadTableKeys", "ReadTableEntries"):
        required -= 16  # TableIteratorArgs: four blobs, each read only when present
    string_at = next((start for path, kind, start, end, prefix in trace if prefix == "uint16"), None)
    count_at = next((start for path, kind, start, end, prefix in trace if kind == "count"), None)
    return Seed(name, frame, rid_at, required, string_at, count_at)


def seed_requests(segment: str, table: str, length: int, token: str = "") -> list[Seed]:
    """Harmless valid requests about a segment holding ``length`` bytes and a table holding a key ``k``, each
    carrying the delegation ``token``."""
    token = {"delegation_token": token}
    seeds = [
        _seed("GetStreamSegmentInfo", {"request_id": 0, "segment": segment, **token}),
        _seed("ReadSegment", {"segment": segment, "offset": 0, "suggested_length": 64, **token, "request_id": 0}),
        _seed("GetSegmentAttribute", {"request_id": 0, "segment": segment, "attribute_id": uuid.UUID(int=7),
                                      **token}),
        _seed("ReadTable", {"request_id": 0, "segment": table, **token,
                            "keys": [(b"k", cmd.NO_VERSION), (b"absent", cmd.NO_VERSION)]}),
        _seed("GetTableSegmentInfo", {"request_id": 0, "segment": table, **token}),
        _seed("LocateOffset", {"request_id": 0, "segment": segment, "target_offset": 0, **token}),
        _seed("ReadTableKeys", {"request_id": 0, "segment": table, **token, "suggested_key_count": 10,
                                "args": {}}),
        _seed("ReadTableEntriesDelta", {"request_id": 0, "segment": table, **token, "from_position": 0,
                                        "suggested_entry_count": 10}),
        _seed("Hello", {"high_version": cmd.WIRE_VERSION, "low_version": cmd.OLDEST_COMPATIBLE_VERSION}),
    ]
    if length > 0:
        seeds.append(_seed("ReadSegment", {"segment": segment, "offset": length - 1, "suggested_length": 8,
                                           **token, "request_id": 0}))
    return seeds


def _reframe(code: int, payload: bytes) -> bytes:
    return _HEADER.pack(code, len(payload)) + payload


class BulkMutator:
    """Seeded mutants of the harmless seed requests: an endless iterator of :class:`Mutant`."""

    # Operators whose reaction keeps the connection open are listed twice: they pipeline (64 to a round trip),
    # while each closing one costs a connection, so the mix stays about half and half in connections' terms.
    OPERATORS = ("valid", "valid", "trailing-bytes", "trailing-bytes", "padding-prefix", "padding-prefix",
                 "suggested-length", "suggested-length", "unknown-segment", "unknown-segment",
                 "truncate", "unknown-type", "not-a-request", "oversize", "negative-size", "invalid-utf8",
                 "string-length-lie", "hostile-count", "negative-offset", "append-without-setup")
    _NOT_REQUESTS = sorted(c.code for c in cmd.COMMANDS.values() if c.direction in ("reply", "embedded")
                           or c.admin)
    _UNKNOWN = sorted(set(range(-10, 120)) - set(cmd.COMMANDS)) + [2**31 - 1, -(2**31), 0x7F00, 1000]

    def __init__(self, rng: random.Random, segment: str, table: str, length: int = 13, operators=OPERATORS,
                 token: str = ""):
        self.rng = rng
        self.segment, self.table, self.length = segment, table, length
        self.operators = tuple(operators)
        self.seeds = seed_requests(segment, table, length, token)
        self.with_rid = [s for s in self.seeds if s.rid_at is not None]
        self.rid = 0
        self._read = _seed("ReadSegment", {"segment": segment, "offset": 0, "suggested_length": 0,
                                           "delegation_token": token, "request_id": 0})
        self._no_such = _seed("GetStreamSegmentInfo", {"request_id": 0, "segment": segment + "-absent",
                                                       "delegation_token": token})
        self._table_update = _seed("UpdateTableEntries", {"request_id": 0, "segment": table, "delegation_token": token,
                                                          "entries": [(b"k", cmd.NO_VERSION, b"v")]})

    def __iter__(self):
        return self

    def __next__(self) -> Mutant:
        return self.mutant(self.rng.choice(self.operators))

    def _fresh(self, seed: Seed) -> tuple[bytes, Expect]:
        success = frozenset({cmd.CODE[_SUCCESS[seed.name]]})
        if seed.rid_at is None:
            return seed.frame, Expect(None, success)
        self.rid = (self.rid + 1) & 0x3FFFFFFFFFFFFFFF
        at = seed.rid_at
        return seed.frame[:at] + _RID.pack(self.rid) + seed.frame[at + 8 :], Expect(self.rid, success)

    def mutant(self, operator: str) -> Mutant:
        rng = self.rng

        def make(frame, field, reaction, expect=None):
            return Mutant(frame, operator, field, reaction, expect)

        if operator == "valid":
            frame, expect = self._fresh(rng.choice(self.seeds))
            return make(frame, "frame", answered("pravega.request-id.echo"), expect)
        if operator == "trailing-bytes":
            frame, expect = self._fresh(rng.choice(self.seeds))
            code = _HEADER.unpack_from(frame)[0]
            if code == cmd.CODE["ReadSegment"] or code == cmd.CODE["Hello"]:  # extra bytes there are fields
                frame, expect = self._fresh(self.seeds[0])
                code = cmd.CODE["GetStreamSegmentInfo"]
            return make(_reframe(code, frame[8:] + rng.randbytes(rng.randint(1, 24))), "payload",
                        answered("pravega.framing.trailing-bytes"), expect)
        if operator == "truncate":
            seed = rng.choice(self.with_rid)
            cut = rng.randint(8, seed.required - 1)
            code = _HEADER.unpack_from(seed.frame)[0]
            return make(_reframe(code, seed.frame[8:cut]), f"payload[{cut - 8}:]", closes("pravega.framing.truncated"))
        if operator == "unknown-type":
            code = rng.choice(self._UNKNOWN + list(cmd.RETIRED))
            return make(_reframe(code, rng.choice(self.seeds).frame[8:]), "type",
                        closes("pravega.framing.unknown-type"))
        if operator == "not-a-request":
            code = rng.choice(self._NOT_REQUESTS)
            return make(_reframe(code, rng.choice(self.seeds).frame[8:]), "type",
                        closes("pravega.framing.not-a-request"))
        if operator in ("oversize", "negative-size"):
            length = (rng.choice([cmd.MAX_PAYLOAD + 1, 2**31 - 1, rng.randint(cmd.MAX_PAYLOAD + 1, 2**31 - 1)])
                      if operator == "oversize" else rng.choice([-1, -8, -(2**31), rng.randint(-(2**31), -1)]))
            frame = rng.choice(self.seeds).frame
            if 0 < length <= 0xFFFFFF:  # A3: below 2^24 by the doc's count; a server may wait for the payload
                return Mutant(frame[:4] + struct.pack(">i", length) + frame[8:], operator, "length",
                              OVERSIZE_MAY_WAIT, incomplete=True)
            return make(frame[:4] + struct.pack(">i", length) + frame[8:], "length",
                        closes("pravega.framing.oversize"))
        if operator == "invalid-utf8":
            seed = rng.choice([s for s in self.with_rid if s.string_at is not None])
            at = seed.string_at
            size = int.from_bytes(seed.frame[at : at + 2], "big")
            bad = rng.choice([b"\xf0\x9f\x98\x80", b"\x80", b"\xbf", b"\xf8\x88\x80\x80\x80", b"\xc3", b"\xe2\x82"])
            pos = at + 2 + rng.randint(0, max(0, size - len(bad)))
            body = bytearray(seed.frame[:pos] + bad + seed.frame[pos + len(bad):] if size >= len(bad)
                             else seed.frame[: at] + struct.pack(">H", len(bad)) + bad + seed.frame[at + 2 + size:])
            return make(_reframe(_HEADER.unpack_from(body)[0], bytes(body[8:])), "segment",
                        closes("pravega.strings.invalid"))
        if operator == "string-length-lie":
            seed = rng.choice([s for s in self.with_rid if s.string_at is not None])
            at = seed.string_at
            lie = len(seed.frame) - at - 2 + rng.randint(1, 0xFFFF - len(seed.frame))
            frame = seed.frame[:at] + struct.pack(">H", min(lie, 0xFFFF)) + seed.frame[at + 2:]
            return make(frame, "segment.length", closes("pravega.framing.truncated"))
        if operator == "hostile-count":
            seed = rng.choice([self.seeds[3], self._table_update])
            frame, at = seed.frame, seed.count_at
            value = rng.choice([2**31 - 1, 1_000_000, 0x10000])
            return make(frame[:at] + struct.pack(">i", value) + frame[at + 4:], "count",
                        closes("pravega.framing.truncated"))
        if operator == "padding-prefix":
            frame, expect = self._fresh(rng.choice(self.seeds))
            size = rng.randint(0, 40)
            return make(_HEADER.pack(-1, size) + bytes(size) + frame, "padding", answered("pravega.framing.padding"),
                        expect)
        if operator == "suggested-length":
            frame, expect = self._fresh(self._read)
            value = rng.choice([0, -1, 1, 7, -(2**31), 2**31 - 1, 10 << 20])
            at = 8 + 2 + len(self.segment.encode()) + 8
            return make(frame[:at] + struct.pack(">i", value) + frame[at + 4:], "suggested_length",
                        answered("pravega.read.suggested-length"), expect)
        if operator == "negative-offset":
            frame, expect = self._fresh(self._read)
            at = 8 + 2 + len(self.segment.encode())
            value = rng.choice([-1, -(2**63), rng.randint(-(2**63), -1)])
            return make(frame[:at] + struct.pack(">q", value) + frame[at + 8:], "offset",
                        error_or_close("pravega.read.beyond-sealed", (cmd.CODE["ErrorMessage"],)), expect)
        if operator == "unknown-segment":
            frame, expect = self._fresh(self._no_such)
            return make(frame, "segment", answered("pravega.segment.no-such-segment"), expect)
        if operator == "append-without-setup":
            writer = rng.randbytes(16)
            data = cmd.event(rng.randbytes(rng.randint(0, 16)))
            payload = writer + struct.pack(">ii", len(data), len(data)) + data + struct.pack(">iqq", 1, 1, 1)
            code = rng.choice([cmd.CODE["AppendBlockEnd"], cmd.CODE["AppendBlock"]])
            return make(_reframe(code, payload), "writer_id", closes("pravega.append.without-setup"))
        raise ValueError(f"unknown operator {operator!r}")


@st.composite
def hostile_frames(draw, segment: str, table: str, length: int = 13, operators=BulkMutator.OPERATORS) -> Mutant:
    """One mutant, for property-based cases: the operator and the seed are drawn, so failures shrink."""
    seed = draw(st.integers(0, 2**32 - 1))
    operator = draw(st.sampled_from(operators))
    return BulkMutator(random.Random(seed), segment, table, length).mutant(operator)


# -- the adapter for the bulk engine ---------------------------------------------------------------------------


class PravegaFuzz:
    """Pravega for strategies/engine.py: mutants of harmless requests on one segment and one table; Hello as the
    keepalive (as Kafka's adapter uses ApiVersions): the engine blames an unanswered keepalive on the mutant before
    it, and KeepAlive's own defects belong to the keepalive cases, the Hello's range to the hello cases."""

    name = "pravega"
    catalogue = CATALOGUE
    pipelining_clause = "pravega.framing.pipelined"
    response_frame_clause = "pravega.framing.reply"
    keepalive = HELLO
    keepalive_clause = "pravega.hello.reply"

    def __init__(self, segment: str, table: str, length: int = 13, operators=BulkMutator.OPERATORS, token: str = ""):
        self.segment, self.table, self.length = segment, table, length
        self.operators = operators
        self.token = token  # the delegation token of a target with auth on

    def mutants(self, rng: random.Random) -> BulkMutator:
        return BulkMutator(rng, self.segment, self.table, self.length, self.operators, self.token)

    def is_keepalive_answer(self, frame: bytes) -> bool:
        try:
            return cmd.decode(frame).name == "Hello"
        except DecodeError:
            return False

    def classify(self, mutant: Mutant, frame: bytes) -> Observation:
        expect: Expect | None = mutant.context
        try:
            decoded = cmd.decode(frame)
        except DecodeError as exc:
            return Observation(MALFORMED, detail=str(exc), clause=self.response_frame_clause,
                               expected="a reply that decodes as the command its type names")
        if expect is not None and expect.request_id is not None:
            rid = decoded.get("request_id")
            if rid is not None and rid != expect.request_id:
                return Observation(MALFORMED, detail=f"{decoded.name} with requestId {rid}",
                                   clause="pravega.request-id.echo", expected=f"requestId {expect.request_id}")
        if decoded.code in cmd.ERROR_REPLIES:
            return Observation(ERROR, code=decoded.code, detail=decoded.name,
                               rejects=decoded.name in ("ErrorMessage", "AuthTokenCheckFailed"))
        if expect is not None and decoded.code not in expect.replies:
            return Observation(MALFORMED, detail=f"a {decoded.name} reply", clause="pravega.request-id.echo",
                               expected=" or ".join(cmd.name_of(c) for c in expect.replies))
        return Observation(ANSWER, detail=decoded.name)

    def seeds(self) -> list[bytes]:
        """Valid harmless requests, each answered by one reply, for the raw-replay baseline."""
        mutator = BulkMutator(random.Random(0), self.segment, self.table, self.length, ("valid",), self.token)
        return [mutator.mutant("valid").frame for _ in range(16)]


def setup_frames(segment: str, table: str, writer: uuid.UUID = uuid.UUID(int=0xFEED), token: str = "") -> list[bytes]:
    """Create ``segment`` with one event (13 bytes) and ``table`` with a key ``k``; one reply each."""
    data = cmd.event(b"hello")
    return [cmd.encode("CreateSegment", request_id=1, segment=segment, target_rate=0, scale_type=0,
                       delegation_token=token),
            cmd.encode("SetupAppend", request_id=2, writer_id=writer, segment=segment, delegation_token=token),
            cmd.encode("AppendBlockEnd", writer_id=writer, size_of_whole_events=len(data), data=data, num_events=1,
                       last_event_number=1, request_id=3),
            cmd.encode("CreateTableSegment", request_id=4, segment=table, delegation_token=token),
            cmd.encode("UpdateTableEntries", request_id=5, segment=table, delegation_token=token,
                       entries=[(b"k", cmd.NO_VERSION, b"v")])]


def fuzz_setup(name: str) -> list[bytes]:
    """Requests that prepare a target for :func:`fuzz_adapter`: a segment with data and a table."""
    return setup_frames(f"wirecheck/{name}/0", f"wirecheck/{name}/table")


def fuzz_adapter(name: str, answers: list[bytes]) -> PravegaFuzz:
    return PravegaFuzz(f"wirecheck/{name}/0", f"wirecheck/{name}/table")


def offline_adapter() -> PravegaFuzz:
    """An adapter built without a target (for checks of the mutants themselves)."""
    return PravegaFuzz("wirecheck/offline/0", "wirecheck/offline/table")
