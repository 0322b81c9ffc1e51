"""The protocol-neutral bulk fuzz engine, its pure half: mutants, the per-protocol adapter, batch planning and
bisection. No I/O: targets/fuzzing.py sends the batches this module plans and feeds back what happened.

A protocol plugs in with a small :class:`Adapter` (in ``strategies/<name>/adapter.py``): seeded mutants of its seed
frames, each carrying the :class:`~protocols.reactions.Reaction` the spec permits; a cheap known-good
*keepalive* request and its answer check; a classifier from a received frame to an
:class:`~protocols.reactions.Observation`; and valid seed requests for the raw-replay baseline.

Planning: mutants whose reaction keeps the connection open whatever a conforming target does are pipelined,
up to ``BATCH`` in one write with the keepalive after them, so one round trip proves every reaction and that the
connection survived. A mutant that may end the connection ends its batch. A batch that fails is bisected
(:func:`bisect`) to the single mutant that diverges on its own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Generator, Iterable, Iterator, Protocol

from wirecheck.protocols.clauses import Catalogue
from wirecheck.protocols.reactions import Observation, Reaction

if TYPE_CHECKING:  # the coverage map is filled by the I/O half; the pure half only carries it
    from wirecheck.strategies.coverage import CoverageMap

BATCH = 64  # mutants pipelined in one write while the connection is expected to stay open
HEX_SHOWN = 256  # bytes of a mutant's frame shown in a failure (the full frame is in the transcript)
#: mutants drawn from one generator when a run is split over worker processes (:func:`segmented`): each segment
#: has its own seeded generator, so the run's mutants are the same whatever the number of workers
SEGMENT = 4096


@dataclass
class Mutant:
    """One request to send and what the spec permits the target to do with it."""

    frame: bytes
    operator: str  # a name from strategies.operators.REGISTRY, optionally ":detail"
    field: str  # the field path the operator broke ("frame" for the whole frame)
    reaction: Reaction
    context: object = None  # what the protocol's classifier needs to read the answer (api key, correlation id...)
    incomplete: bool = False  # the frame never completes: we shut our write side so the target sees the end
    index: int = -1  # its place in the run, set by the engine
    request: str = ""  # the request kind it was made from, with its version where requests have one ("Fetch v12")
    origin: tuple = ()  # guided runs: the recipe it came from (session-state prefix, operator), to keep in the corpus
    #: a request a conforming target does not answer while the connection stays open (a stream opened at the log
    #: end): it is pipelined, judged silent without waiting, and an answer to it later is judged as its own
    unanswered: bool = False
    #: an answer-dependent step (a guided run's session-state prefix): its request is made from the answers to the
    #: requests before it on its connection (``Adapter.step``: a transactional producer id, a member id). The I/O
    #: half sends those first, reads their answers, and sends ``build(earlier)`` in its place, where ``earlier`` is
    #: each earlier request of the batch with its answer frame (None: no frame came); ``frame`` is what is sent
    #: without them (a replay that begins with it)
    build: Callable[[list[tuple[Mutant, bytes | None]]], Mutant] | None = None
    leads: bool = False  # a batch begins with it: the first step of a prefix whose later steps read its answers

    @property
    def family(self) -> str:
        return self.operator.split(":", 1)[0]

    def label(self) -> str:
        """Mutant index, operator, field path and hex: enough to find and replay it."""
        shown = self.frame[:HEX_SHOWN].hex()
        more = f"... ({len(self.frame)} bytes)" if len(self.frame) > HEX_SHOWN else ""
        after = f" (sent after {', '.join(self.origin[0])})" if self.origin and self.origin[0] else ""
        return f"mutant #{self.index} {self.operator} at {self.field}{after}: {shown}{more}"


class Adapter(Protocol):
    """What a protocol supplies to the engine (one small object per protocol, in strategies/<name>/adapter.py)."""

    name: str
    catalogue: Catalogue
    keepalive: bytes  # a cheap, always-valid request
    pipelining_clause: str  # violated when answers come out of order or the keepalive gets a wrong answer
    response_frame_clause: str | None  # violated by an answer that cannot even be framed (None: the reaction's)

    def mutants(self, rng: random.Random) -> Iterator[Mutant]: ...

    def is_keepalive_answer(self, frame: bytes) -> bool: ...

    def classify(self, mutant: Mutant, frame: bytes) -> Observation: ...

    def seeds(self) -> list[bytes]: ...

    # Optional, where the protocol has a correlation field: answers are matched to their requests by it
    # (targets.fuzzing.Owners), so no mutant is blamed for another request's answer.
    # def answer_id(self, frame: bytes) -> int | None: ...   the id an answer frame names (None: unreadable)
    # def request_id(self, mutant: Mutant) -> int | None: ...   the id the mutant's request carries
    # keepalive_id: int | None   the id of the keepalive request
    # keepalive_clause: str   the clause a wrong answer to the keepalive breaks (else: the pipelining clause)
    # answers_any_order: bool   with answer_id: an asynchronous server's answers may come in any order, the
    #                           keepalive's before a mutant's (targets.fuzzing reads on past it)
    # Optional, where the protocol has session-state steps (strategies/guided.py): def step(kind, rng) -> Mutant,
    # step_kinds: tuple[str, ...] (those this target takes), and def for_worker(worker) -> Adapter (a copy whose
    # steps meet no other worker's, targets/fuzz_workers.py)


def numbered(mutants: Iterable[Mutant], count: int) -> Iterator[Mutant]:
    """The first ``count`` mutants, each with its index set."""
    for index, mutant in zip(range(count), mutants):
        mutant.index = index
        yield mutant


def segment_rng(seed: int, segment: int) -> random.Random:
    """The generator of one segment of a run's mutants (:func:`segmented`)."""
    return random.Random(f"{seed}/segment/{segment}")


def segmented(make: Callable[[random.Random], Iterator[Mutant]], seed: int, count: int, worker: int = 0,
              workers: int = 1) -> Iterator[Mutant]:
    """One worker's share of a run's ``count`` mutants, their indexes set: segments ``worker``,
    ``worker + workers``, ... of :data:`SEGMENT` mutants each, a segment drawn by the protocol's mutator
    (``make``: ``Adapter.mutants``) from its own generator. The union over the workers is the same mutants
    whatever their number, so a seed names the same run on one core or on many."""
    for segment in range(worker, -(-count // SEGMENT), workers):
        start = segment * SEGMENT
        for index, mutant in zip(range(start, min(count, start + SEGMENT)), make(segment_rng(seed, segment))):
            mutant.index = index
            yield mutant


def segment_ends(mutant: Mutant) -> bool:
    """Is ``mutant`` the last of its segment? A batch never spans two segments: each segment's mutator numbers
    its own requests (correlation ids), which must not repeat within a pipelined batch."""
    return (mutant.index + 1) % SEGMENT == 0


def strided(mutants: Iterable[Mutant], count: int, worker: int, workers: int) -> Iterator[Mutant]:
    """One worker's own stream (a guided run, steered by that worker's answers) numbered into the run's indexes:
    its j-th mutant is the run's ``j * workers + worker``, up to ``count``."""
    for index, mutant in zip(range(worker, count, workers), mutants):
        mutant.index = index
        yield mutant


def plan_batches(mutants: Iterable[Mutant], size: int = BATCH,
                 cut: Callable[[Mutant], bool] | None = None) -> Iterator[list[Mutant]]:
    """Group mutants into pipelined batches: open-keeping mutants accumulate; one that may end it closes a batch,
    and so does one after which ``cut`` says a batch must end; one that ``leads`` begins a batch."""
    batch: list[Mutant] = []
    for mutant in mutants:
        if mutant.leads and batch:  # its answers are read before the rest of its batch is sent
            yield batch
            batch = []
        batch.append(mutant)
        if len(batch) >= size or not (mutant.reaction.pipelines or mutant.unanswered) or (
                cut is not None and cut(mutant)):
            yield batch
            batch = []
    if batch:
        yield batch


def wants_keepalive(batch: list[Mutant]) -> bool:
    """Send the keepalive after this batch? Yes unless its last mutant may leave the target waiting for bytes,
    or permits nothing but a close (a keepalive then proves nothing and races the close)."""
    if batch[-1].unanswered:  # the keepalive's answer is what proves it stayed silent and the connection open
        return True
    last = batch[-1].reaction
    return not batch[-1].incomplete and "silence" not in last.outcomes and last.may_answer


Probe = list[Mutant]


def bisect(batch: list[Mutant], failure) -> Generator[Probe, object, tuple[list[Mutant], object]]:
    """Narrow a failing batch to one culprit.

    A generator: it yields probes (sub-batches to replay on a fresh connection) and is sent back each probe's
    failure (None if the probe behaved). It returns (suspects, failure): one mutant and its own failure, or the
    smallest batch that fails only when pipelined whole (failure None: each half behaves alone).
    """
    suspects = batch
    while len(suspects) > 1:
        half = len(suspects) // 2
        for part in (suspects[:half], suspects[half:]):
            result = yield part
            if result is not None:
                suspects, failure = part, result
                break
        else:
            return suspects, None
    return suspects, failure


@dataclass
class Progress:
    """Counters for one run (filled by the I/O loop)."""

    cases: int = 0
    connections: int = 0
    batches: int = 0
    bisections: int = 0
    generate_s: float = 0.0
    seconds: float = 0.0
    cpu_s: float = 0.0  # the fuzzer's own CPU time, over all its processes (filled by a run over workers)
    workers: int = 1  # fuzzer processes
    operators: dict = field(default_factory=dict)
    non_strict: list = field(default_factory=list)  # (mutant, divergence) pairs at SHOULD level
    coverage: CoverageMap | None = None  # a strategies.coverage.CoverageMap: every judged mutant's reaction state, when kept

    def count(self, batch: list[Mutant]) -> None:
        self.cases += len(batch)
        for mutant in batch:
            self.operators[mutant.family] = self.operators.get(mutant.family, 0) + 1

    def summary(self) -> str:
        rate = self.cases / self.seconds if self.seconds else 0.0
        reached = (f"; {len(self.coverage.cells)} reaction states, {len(self.coverage.pairs)} transitions"
                   if self.coverage is not None else "")
        return (f"{self.cases} mutants, {self.connections} connections, {self.batches} batches, "
                f"{self.bisections} bisections in {self.seconds:.2f}s ({rate:,.0f}/s); operators "
                f"{dict(sorted(self.operators.items()))}{reached}")
