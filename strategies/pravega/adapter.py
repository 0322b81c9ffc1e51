"""Pravega for the bulk engine (``strategies/engine.py``): the adapter, and the requests that prepare a target
for it (a segment with data and a table)."""

from __future__ import annotations

import random
import uuid

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.pravega.clauses import CATALOGUE
from wirecheck.protocols.reactions import ANSWER, ERROR, MALFORMED, Observation
from wirecheck.strategies.engine import Mutant
from wirecheck.strategies.pravega.mutants import BulkMutator, Expect, answered

HELLO = cmd.encode("Hello", high_version=cmd.WIRE_VERSION, low_version=cmd.OLDEST_COMPATIBLE_VERSION)
#: Hello carries no requestId; its answers (the keepalive's, a Hello mutant's) are matched by this id instead, never
#: a mutant's (their requestIds count up from 1)
HELLO_ID = -(2**63)


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
    # answers are matched to requests by their requestId (targets.fuzzing.Owners), in any order: the server is
    # asynchronous, and replies to different requests may come in any order (pravega.framing.pipelined; Pravega
    # 0.13.0 answers a Hello at once, on the connection's thread, and a table read when its table store is done)
    keepalive_id = HELLO_ID
    answers_any_order = True

    def __init__(self, segment: str, table: str, length: int = 13, operators=BulkMutator.OPERATORS, token: str = "",
                 wire_version: int = cmd.WIRE_VERSION):
        self.segment, self.table, self.length = segment, table, length
        self.operators = operators
        self.token = token  # the delegation token of a target with auth on
        self.wire_version = wire_version  # the server's (its Hello's highVersion): no seed newer than it
        self._steps = 0  # step requests made (their requestIds)

    def mutants(self, rng: random.Random) -> BulkMutator:
        return BulkMutator(rng, self.segment, self.table, self.length, self.operators, self.token, self.wire_version)

    @staticmethod
    def answer_id(frame: bytes) -> int | None:
        try:
            decoded = cmd.decode(frame)
        except DecodeError:
            return None
        return HELLO_ID if decoded.name == "Hello" else decoded.get("request_id")

    @staticmethod
    def request_id(mutant: Mutant) -> int | None:
        expect: Expect | None = mutant.context
        if expect is None:
            return None
        return HELLO_ID if cmd.CODE["Hello"] in expect.replies else expect.request_id

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

    #: step requests' requestIds, apart from the mutants' (which count up from 1)
    STEP_IDS = 1 << 62

    def step(self, kind: str, rng: random.Random) -> Mutant:
        """A valid request of a step kind (``protocols/pravega/states.py``): a SetupAppend of a new writer on the
        fuzzed segment, which moves the connection to ``writer-set-up``."""
        if kind != "SetupAppend":
            raise ValueError(f"pravega has no step {kind!r}")
        self._steps += 1
        rid = self.STEP_IDS + self._steps
        frame = cmd.encode("SetupAppend", request_id=rid, writer_id=uuid.UUID(bytes=rng.randbytes(16)),
                           segment=self.segment, delegation_token=self.token)
        return Mutant(frame, "valid", "frame", answered("pravega.append.setup"),
                      Expect(rid, frozenset({cmd.CODE["AppendSetup"]})), request="SetupAppend")

    def seeds(self) -> list[bytes]:
        """Valid harmless requests, each answered by one reply, for the raw-replay baseline."""
        mutator = BulkMutator(random.Random(0), self.segment, self.table, self.length, ("valid",), self.token,
                              self.wire_version)
        return [mutator.mutant("valid").frame for _ in range(16)]


SETUP_WRITER = uuid.UUID(int=0xFEED)


def setup_frames(segment: str, table: str, writer: uuid.UUID = SETUP_WRITER, token: str = "") -> list[bytes]:
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
