"""Fluvio SPU requests, valid and mutated, built from ``protocols.fluvio``.

Two engines share the same knowledge:

* Hypothesis strategies (``records_``, ``batches``, ``record_sets``, ``produce_bodies``, ``fetch_bodies``,
  ``request_frames``, ``hostile_frames``) for property-based cases, which shrink a failure to one frame;
* :class:`BulkMutator`, a seeded ``random.Random`` generator of plain bytes for the bulk fuzz case and the
  benchmark (Hypothesis and scapy are too slow for thousands of mutants per second).

Every mutant carries a :class:`~protocols.reactions.Reaction` (what the spec lets the target do with it, and the
clause a wrong reaction violates). Implementation-defined reactions (notes §12, clauses at SHOULD level) prefer
one outcome: the other is NON-STRICT, never FAILED. :class:`FluvioFuzz` is the adapter for the bulk engine.
"""

from __future__ import annotations

import functools
import random
import struct
from typing import NamedTuple

from hypothesis import strategies as st

from wirecheck.protocols import reactions
from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import HELLO_CORRELATION_ID, SPEC, errors, hello, messages, records, sc, wire
from wirecheck.protocols.framing import leading_correlation_id
from wirecheck.protocols.fluvio.clauses import CATALOGUE, MAX_FRAME, undecodable_response_clause
from wirecheck.protocols.reactions import ANSWER, CLOSE, ERROR, MALFORMED, SILENCE, Observation
from wirecheck.strategies import operators
from wirecheck.strategies.binary import Span, overlong_uvarint
from wirecheck.strategies.engine import Mutant

NO_HANG = "fluvio.robustness.no-hang"
CLOSE_WAIT = 0.3  # seconds we wait for a preferred close before calling the target's choice "waits"


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


for _name, _family, _doc in (
        ("batch-len-short", "length-lie", "a record batch whose length field claims too little"),
        ("recordset-trailing", "concatenation", "bytes after the last batch of a RecordSet"),
        ("compression-bits", "unknown-enum", "compression attribute bits naming no codec"),
        ("isolation", "unknown-enum", "an isolation value other than the two defined"),
        ("smartmodules-trailer", "drop-field", "the Produce smartmodules trailer present or absent"),
        ("wide-varints", "overlong-varint", "record varints outside i32, or padded with continuation bytes"),
        ("option-tag", "unknown-enum", "an Option tag other than 0 or 1"),
        ("unknown-key", "unknown-enum", "an API key the SPU does not serve")):
    operators.register(_name, _family, _doc)


# -- valid values ------------------------------------------------------------------------------------------------


def _sized_binary(max_size: int):
    # Hypothesis' st.binary is tiny on average (stack notes): draw the size first.
    return st.integers(0, max_size).flatmap(lambda n: st.binary(min_size=n, max_size=n))


@st.composite
def records_(draw, max_records: int = 4, max_value: int = 48, wide_varints: bool = False) -> list[records.Record]:
    """Records with offset deltas 0..n-1; ``wide_varints`` draws timestamp deltas outside the i32 range (which
    upstream's encoder cannot write, A11, but its decoder and the SPU's storage take)."""
    count = draw(st.integers(1, max_records))
    deltas = st.integers(-(2**62), 2**62) if wide_varints else st.integers(0, 10_000)
    return [records.Record(value=draw(_sized_binary(max_value)), key=draw(st.none() | _sized_binary(12)),
                           timestamp_delta=draw(deltas), offset_delta=i, headers=draw(st.sampled_from([0, 0, 1])))
            for i in range(count)]


@st.composite
def batches(draw, codecs=tuple(records.CODECS), schema: bool | None = None, wide_varints: bool = False) -> bytes:
    recs = draw(records_(wide_varints=wide_varints))
    with_schema = draw(st.booleans()) if schema is None else schema
    return records.encode_batch(records.Batch(
        records=recs, compression=draw(st.sampled_from(codecs)),
        schema_id=draw(st.integers(0, 2**32 - 1)) if with_schema else None,
        first_timestamp=draw(st.sampled_from([-1, 0, 1_700_000_000_000])),
        max_time_stamp=draw(st.sampled_from([-1, 1_700_000_000_000])),
        partition_leader_epoch=draw(st.sampled_from([-1, 0]))))


def record_sets(max_batches: int = 3, **options):
    return st.lists(batches(**options), min_size=0, max_size=max_batches).map(b"".join)


def codec_values(codec, version: int, max_items: int = 3):
    """Values the codec writes at ``version`` and reads back unchanged (one per codec kind of protocols.fluvio)."""
    if isinstance(codec, wire.Plain):
        return st.integers(codec.codec.low, codec.codec.high)
    if codec is wire.BOOL:
        return st.booleans()
    if codec is wire.STRING:
        return st.text(max_size=24)
    if codec in (wire.BYTES, errors.RECORD_DATA):
        return _sized_binary(32)
    if codec is wire.RECORD_SET:
        return record_sets(max_batches=2)
    if codec is errors.ERROR_CODE:
        return st.sampled_from(sorted(errors.VARIANTS)).flatmap(lambda code: st.fixed_dictionaries(
            {name: codec_values(inner, version) for name, inner in errors.VARIANTS[code][1]}
        ).map(lambda payload: errors.ErrorValue(code, payload)))
    if isinstance(codec, wire.FluvioVec):
        return st.lists(codec_values(codec.item, version, max(1, max_items - 1)), max_size=max_items)
    if isinstance(codec, wire.FluvioOption):
        return st.none() | codec_values(codec.item, version, max_items)
    if isinstance(codec, wire.StringMap):
        return st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=max_items)
    if isinstance(codec, wire.Struct):
        return st.fixed_dictionaries({fl.name: codec_values(fl.codec, version, max_items)
                                      for fl in codec.fields if fl.present(version)})
    if isinstance(codec, sc.SizedBody):
        return _sized_binary(32)
    if isinstance(codec, sc.IdMap):
        return st.dictionaries(st.integers(0, 2**32 - 1), codec_values(codec.item, version, max(1, max_items - 1)),
                               max_size=max_items)
    if isinstance(codec, wire.Union):
        return st.one_of([st.tuples(st.just(name), st.none() if inner is None else codec_values(inner, version))
                          for name, inner in codec.variants.values()])
    raise TypeError(f"no strategy for codec {codec!r}")


def layer_examples() -> dict:
    """Every message layer (protocols.fluvio.layers.message_layers) -> a strategy of built body layers."""
    from wirecheck.protocols.fluvio import layers, sc_layers

    def built(cls, codec, version):
        return codec_values(codec, version).map(lambda value: cls(**value))

    spu = {cls.__name__: built(cls, (messages.REQUESTS if kind == "request" else messages.RESPONSES)[key], version)
           for (kind, key, version), cls in layers.LAYERS.items()}
    sc_classes = sc_layers.message_layers()
    return spu | {name: built(sc_classes[name], codec, version)
                  for name, (codec, version) in sc_layers.layer_codecs().items()}


@st.composite
def produce_bodies(draw, topic: str, partitions: int = 1) -> dict:
    parts = draw(st.lists(st.tuples(st.integers(0, partitions - 1), record_sets(max_batches=2)), min_size=1,
                          max_size=3))
    return {"transactional_id": draw(st.none() | st.just("wirecheck-tx")),
            "isolation": draw(st.sampled_from([messages.READ_UNCOMMITTED, messages.READ_COMMITTED])),
            "timeout_ms": draw(st.integers(0, 5_000)),
            "topics": [{"name": topic, "partitions": [{"partition_index": p, "records": r} for p, r in parts]}],
            "smartmodules": []}


@st.composite
def fetch_bodies(draw, topic: str, partitions: int = 1) -> dict:
    max_bytes = draw(st.integers(0, 1 << 20))
    return {"max_wait": draw(st.integers(0, 100)), "min_bytes": draw(st.integers(0, 10)), "max_bytes": max_bytes,
            "isolation": draw(st.sampled_from(messages.FETCH_ISOLATIONS)),
            "topics": [{"name": topic, "fetch_partitions": [{
                "partition_index": draw(st.integers(0, partitions - 1)), "current_leader_epoch": 0,
                "fetch_offset": draw(st.integers(0, 3)), "log_start_offset": 0, "max_bytes": max_bytes}]}],
            "forgotten": []}


@st.composite
def request_frames(draw, topic: str, correlation_id: int = 1) -> tuple[int, int, bytes]:
    """(api key, version, frame) of a valid Produce / Fetch / FetchOffsets / ApiVersions request."""
    api = draw(st.sampled_from([messages.PRODUCE, messages.FETCH, messages.FETCH_OFFSETS, messages.API_VERSIONS]))
    if api == messages.PRODUCE:
        version, body = draw(st.integers(0, 25)), draw(produce_bodies(topic))
    elif api == messages.FETCH:
        version, body = draw(st.integers(0, 25)), draw(fetch_bodies(topic))
    elif api == messages.FETCH_OFFSETS:
        version = 25
        body = {"topics": [{"name": topic, "partitions": [{"partition_index": 0}]}], "consumer_id": None}
    else:
        version = draw(st.integers(0, 2))
        body = {"client_version": "0.18.2", "client_os": "linux", "client_arch": "x86_64"}
    return api, version, messages.encode_request(api, version, correlation_id, body)


# -- mutations ------------------------------------------------------------------------------------------------------


def traced(api_key: int, version: int, correlation_id: int, body: dict) -> tuple[bytes, list[Span]]:
    """A frame and the spans of its fields (``strategies.binary.Span``) for structure-aware mutation."""
    trace: list = []
    frame = messages.encode_request(api_key, version, correlation_id, body, trace=trace)
    return frame, [Span(path, kind, start, end, prefix) for path, kind, start, end, prefix in trace]


def _reframe(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def produce_frame(topic: str, record_set: bytes, correlation_id: int, version: int = 25, **body_options) -> bytes:
    body = {"transactional_id": None, "isolation": messages.READ_UNCOMMITTED, "timeout_ms": 1500,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "records": record_set}]}],
            "smartmodules": [], **body_options}
    return messages.encode_request(messages.PRODUCE, version, correlation_id, body)


def _set_in_batch(batch: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(batch)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


class BulkMutator:
    """Seeded mutants of valid requests on ``topic`` (partition 0): an endless iterator of :class:`Mutant`.

    Operators, each aimed at one check (the issue's list and notes §7):
    frame-size (negative, zero, oversize, short), truncate, batch-len-short, recordset-trailing,
    compression-bits, bad-crc, isolation, smartmodules-trailer, wide-varints, hostile-count, option-tag,
    unknown-key, trailing-bytes.
    """

    OPERATORS = ("negative-size", "oversize", "truncate", "batch-len-short", "recordset-trailing",
                 "compression-bits", "bad-crc", "isolation", "smartmodules-trailer", "wide-varints", "hostile-count",
                 "option-tag", "unknown-key", "trailing-bytes", "valid")

    POOL = 256  # valid batches kept and reused: encoding one costs more than mutating it

    def __init__(self, rng: random.Random, topic: str, operators=OPERATORS):
        self.rng = rng
        self.topic = topic
        self.operators = tuple(operators)
        self.correlation = 0
        self._pool: list[bytes] = []
        self._frames: dict[tuple[int, int], bytes] = {}  # (pool index, version) -> an encoded Produce frame

    def __iter__(self):
        return self

    def __next__(self) -> Mutant:
        return self.mutant(self.rng.choice(self.operators))

    # -- pieces

    def _batch(self, **options) -> bytes:
        rng = self.rng
        values = [rng.randbytes(rng.randint(0, 24)) for _ in range(rng.randint(1, 3))]
        return records.build_batch(values, **options)

    def _pooled(self) -> int:
        """Index of a valid batch from the pool (grown by one batch in four draws until it is full)."""
        if len(self._pool) < self.POOL and (not self._pool or self.rng.random() < 0.25):
            self._pool.append(self._batch())
        return self.rng.randrange(len(self._pool))

    def _frame(self, record_set: bytes | None = None, version: int | None = None, **options) -> tuple[bytes, int]:
        self.correlation = (self.correlation + 1) & 0x7FFFFFFF
        version = 25 if version is None else version
        if record_set is not None or options:
            data = self._pool[self._pooled()] if record_set is None else record_set
            return produce_frame(self.topic, data, self.correlation, version, **options), self.correlation
        key = (self._pooled(), version)
        frame = self._frames.get(key)
        if frame is None:
            frame = self._frames[key] = produce_frame(self.topic, self._pool[key[0]], 0, version)
        # size (4), api key (2), version (2), then the correlation id
        return frame[:8] + struct.pack(">i", self.correlation) + frame[12:], self.correlation

    def _records_span(self, frame: bytes) -> tuple[int, int]:
        """Where the bytes of the one RecordSet of a ``_frame`` lie (after its i32 length): size, header with
        client id, transactional_id None, isolation, timeout, topics count, name, partitions count, index."""
        at = 4 + 8 + 2 + len("wirecheck") + 1 + 2 + 4 + 4 + 2 + len(self.topic.encode()) + 4 + 4
        return at + 4, at + 4 + struct.unpack_from(">i", frame, at)[0]

    def mutant(self, operator: str) -> Mutant:
        rng = self.rng

        def make(frame, field, reaction, corr=0, version=25):
            return Mutant(frame, operator, field, reaction, Request(messages.PRODUCE, version, corr))

        if operator == "valid":
            frame, corr = self._frame(version=rng.choice([7, 25]))
            return make(frame, "body", answered(NO_HANG), corr, int.from_bytes(frame[6:8], "big"))
        if operator == "negative-size":
            size = rng.choice([-1, -2, -4, -5, -(2**31), rng.randint(-(2**31), -1)])
            frame, _ = self._frame()
            return make(struct.pack(">i", size) + frame[4:], "size", close_preferred(
                "fluvio.framing.negative-size", "fluvio.framing.negative-size-unanswered"))
        if operator == "oversize":
            size = rng.choice([MAX_FRAME + 1, 2**31 - 1, rng.randint(MAX_FRAME + 1, 2**31 - 1)])
            frame, _ = self._frame()
            return make(struct.pack(">i", size) + frame[4:], "size", close_preferred("fluvio.framing.oversize",
                                                                                     NO_HANG))
        if operator == "truncate":
            frame, _ = self._frame()
            cut = rng.randint(1, len(frame) - 5)  # body cut, size prefix honest: a short body
            if cut == len(frame) - 8:  # exactly the smartmodules trailer: A5's permitted shape, not a truncation
                cut -= 1
            start, end = self._records_span(frame)
            # a cut inside the RecordSet leaves its whole length field claiming more than the request holds
            clause = "fluvio.produce.recordset-overrun" if start <= 4 + cut < end else "fluvio.header.truncated"
            return make(_reframe(frame[4 : 4 + cut]), f"body[{cut}:]", closes(clause))
        if operator == "batch-len-short":
            batch = _set_in_batch(self._batch(), records.LENGTH_OFFSET, ">i", rng.choice([0, 1, 44, -1, -(2**31)]))
            frame, corr = self._frame(batch)  # an answer is permitted (NON-STRICT): it must carry this id
            return make(frame, "records.batch_length", close_preferred("fluvio.produce.batch-len-short"), corr)
        if operator == "recordset-trailing":
            garbage = rng.randbytes(rng.randint(1, records.HEADER.size - 1))
            frame, corr = self._frame(self._batch() + garbage)
            return make(frame, "records", close_preferred("fluvio.produce.recordset-trailing"), corr)
        if operator == "compression-bits":
            frame, corr = self._frame(self._batch(extra_attributes=rng.choice([5, 6, 7])))
            return make(frame, "records.attributes", answered("fluvio.produce.compression-invalid", 9000), corr)
        if operator == "bad-crc":
            batch = self._batch()
            crc = struct.unpack_from(">I", batch, records.CRC_OFFSET)[0] ^ (1 << rng.randrange(32))
            frame, corr = self._frame(_set_in_batch(batch, records.CRC_OFFSET, ">I", crc))
            return make(frame, "records.crc", answered("fluvio.produce.bad-crc", None), corr)
        if operator == "isolation":
            value = rng.choice([0, 2, -2, 2**15 - 1, -(2**15), rng.randint(-(2**15), 2**15 - 1)])
            value = 2 if value in (1, -1) else value  # the two defined values are not "other" (produce.isolation)
            frame, corr = self._frame(isolation=value)
            return make(frame, "isolation", answer_preferred("fluvio.produce.isolation-other"), corr)
        if operator == "smartmodules-trailer":
            frame, corr = self._frame(version=rng.choice([7, 25]))
            version = int.from_bytes(frame[6:8], "big")
            if rng.random() < 0.5:  # absent: the v7 fixture's shape (A5)
                return make(_reframe(frame[4:-4]), "smartmodules",
                            answer_preferred("fluvio.produce.smartmodules-trailer"), corr, version)
            return make(frame, "smartmodules", answered("fluvio.versions.every-version"), corr, version)
        if operator == "wide-varints":
            recs = [records.Record(rng.randbytes(4), timestamp_delta=rng.choice([2**31, -(2**31) - 1, 2**62, -(2**62)]),
                                   offset_delta=0)]
            if rng.random() < 0.5:  # a record length with padding continuation bytes (a non-canonical varint)
                raw = struct.pack(">i", 1) + overlong_uvarint(6, 3) + records.encode_record(recs[0])[1:]
                batch = records.encode_batch(records.Batch(raw_records=raw, last_offset_delta=0))
            else:
                batch = records.encode_batch(records.Batch(records=recs))
            frame, corr = self._frame(batch)
            return make(frame, "records[0]", answered("fluvio.produce.records-opaque"), corr)
        if operator == "hostile-count":
            frame, spans = traced(messages.PRODUCE, 25, 1, {
                "transactional_id": None, "isolation": 1, "timeout_ms": 1500,
                "topics": [{"name": self.topic, "partitions": [{"partition_index": 0, "records": self._batch()}]}],
                "smartmodules": []})
            span = rng.choice([s for s in spans if s.kind == "count"])
            value = rng.choice([2**31 - 1, 2**31 - 2, 1_000_000])
            data = frame[: span.start] + struct.pack(">i", value) + frame[span.end :]
            return make(data, span.path, closes("fluvio.header.truncated"))
        if operator == "option-tag":
            frame, _ = self._frame()
            at = 4 + 8 + 2 + len("wirecheck")  # transactional_id's option tag
            return make(frame[:at] + bytes([rng.randint(2, 255)]) + frame[at + 1 :], "transactional_id",
                        closes("fluvio.header.truncated"))
        if operator == "unknown-key":
            key = rng.choice([2, 3, 17, 1001, 1004, 1009, 0x8000, rng.randint(2000, 0xFFFF)])
            if key in messages.NAMES or key in (1006, 1007, 1008, 2000):
                key = 1001
            frame, _ = self._frame()
            return make(frame[:4] + struct.pack(">H", key) + frame[6:], "header.api_key",
                        closes("fluvio.header.unknown-api-key"))
        if operator == "trailing-bytes":
            frame, corr = self._frame()
            return make(_reframe(frame[4:] + rng.randbytes(rng.randint(1, 16))), "body",
                        answer_preferred("fluvio.header.trailing-bytes"), corr)
        raise ValueError(f"unknown operator {operator!r}")


@st.composite
def hostile_frames(draw, topic: str, operators=BulkMutator.OPERATORS) -> Mutant:
    """One mutant, for property-based cases: the operator and the seed are drawn, so failures shrink."""
    seed = draw(st.integers(0, 2**32 - 1))
    operator = draw(st.sampled_from(operators))
    return BulkMutator(random.Random(seed), topic).mutant(operator)


# -- the adapter for the bulk engine ---------------------------------------------------------------------------


class FluvioFuzz:
    """Fluvio SPU for strategies/engine.py: Produce mutants on ``topic``, ApiVersions as the keepalive."""

    name = "fluvio"
    catalogue = CATALOGUE
    pipelining_clause = "fluvio.framing.correlation-id"
    response_frame_clause = "fluvio.framing.response-frame"

    def __init__(self, topic: str, operators=BulkMutator.OPERATORS):
        self.topic = topic
        self.operators = operators
        self.keepalive = hello()

    def mutants(self, rng: random.Random) -> BulkMutator:
        return BulkMutator(rng, self.topic, self.operators)

    answer_id = staticmethod(leading_correlation_id)
    keepalive_id = HELLO_CORRELATION_ID
    keepalive_clause = "fluvio.versions.advertised"

    @staticmethod
    def request_id(mutant: Mutant) -> int:
        return mutant.context.correlation_id

    def is_keepalive_answer(self, frame: bytes) -> bool:
        return SPEC.is_hello_answer(frame)

    def classify(self, mutant: Mutant, frame: bytes) -> Observation:
        request: Request = mutant.context
        try:
            decoded = messages.decode_response(request.api_key, request.version, frame)
        except DecodeError as exc:
            return Observation(MALFORMED, detail=str(exc), clause=undecodable_response_clause(request.api_key, exc),
                               expected="a response that decodes exactly")
        if decoded["correlation_id"] != request.correlation_id:
            return Observation(MALFORMED, detail=f"correlation id {decoded['correlation_id']}",
                               clause="fluvio.framing.correlation-id",
                               expected=f"correlation id {request.correlation_id}")
        codes = [p["error_code"].code for t in decoded["body"].get("responses", ()) for p in t["partitions"]]
        if codes == [0]:
            return Observation(ANSWER, detail="partition error 0")
        wrong = [c for c in codes if c] or [None]
        return Observation(ERROR, code=wrong[0], detail=f"partition errors {codes}")

    def seeds(self) -> list[bytes]:
        """Valid Produce requests (v7 and v25) and ApiVersions, for the raw-replay baseline."""
        rng = random.Random(0)
        mutator = BulkMutator(rng, self.topic, ("valid",))
        return [mutator.mutant("valid").frame for _ in range(8)] + [self.keepalive]


def fuzz_setup(topic: str) -> list[bytes]:
    """Requests that prepare a target for :func:`fuzz_adapter`: an empty Produce creates the topic."""
    return [produce_frame(topic, b"", 1)]


def fuzz_adapter(topic: str, answers: list[bytes]) -> FluvioFuzz:
    return FluvioFuzz(topic)


def offline_adapter() -> FluvioFuzz:
    """An adapter built without a target (for checks of the mutants themselves)."""
    return FluvioFuzz("wirecheck-offline")
