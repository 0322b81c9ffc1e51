"""The bulk fuzz loop, its I/O half: send the batches strategies/engine.py plans, judge every reaction, reconnect
only when the target ends a connection, and bisect a failing batch to its culprit.

Several batches are in flight at once (``WINDOW``), each on its own connection: the target works on the next
batch while we judge the previous one, which matters most for mutants that end their connection. Answers on
one connection come back in request order, so each is paired with its mutant. The run stops at the first
MUST-level divergence (:class:`MutantFailed`, naming the mutant); SHOULD-level ones are collected.
"""

from __future__ import annotations

import random
import time
from collections import deque
from typing import Callable, Iterable

from wirecheck.protocols.reactions import CLOSE, ERROR, MALFORMED, RESET, SILENCE, Observation
from wirecheck.protocols.verdicts import Divergence, TargetDied, Verdict
from wirecheck.protocols.registry import spec_for
from wirecheck.protocols.states import StateModel
from wirecheck.strategies.coverage import CoverageMap
from wirecheck.strategies.engine import Adapter, Mutant, Progress, bisect, numbered, plan_batches, wants_keepalive
from wirecheck.strategies.guided import STEP, guided
from wirecheck.targets.session import FramedSession
from wirecheck.targets.transport.outcome import Outcome, Reply

WINDOW = 16  # batches in flight at once, each on its own connection
SUSPECTS_KEPT = 4096  # mutants of ended connections kept as suspects until the target proves it outlived them
#: --differential: why the mutants' answers are counted apart (a hostile request may be parsed otherwise by each
#: correct server; the reaction model judges each answer, equality with another server says nothing of it)
HOSTILE_APART = "answers to hostile mutants, judged by the reaction model"
KNOWN_ANSWERS = 64  # keepalive answers remembered byte for byte (the check decodes only the first of each)

Connect = Callable[[], FramedSession]


class TargetLost(Exception):
    """The target stopped accepting connections while a failing batch was replayed: one of ``suspects`` killed it."""

    def __init__(self, divergence: Divergence, suspects: list[Mutant], progress: Progress | None = None):
        super().__init__(str(divergence))
        self.divergence, self.suspects = divergence, suspects
        self.progress = progress  # the run's statistics and map up to here (a split run's, merged)


class MutantFailed(Exception):
    """A mutant drew a MUST-level divergence (bisected to that mutant when it was pipelined)."""

    def __init__(self, mutant: Mutant, divergence: Divergence, progress: Progress | None = None):
        super().__init__(f"{mutant.label()}: {divergence}")
        self.mutant, self.divergence = mutant, divergence
        self.progress = progress  # the run's statistics and map up to here (a split run's, merged)


def observe(adapter: Adapter, mutant: Mutant, reply: Reply) -> Observation:
    """A reply, classified protocol-neutrally (frames by the protocol's own classifier)."""
    if reply.is_frame:
        return adapter.classify(mutant, reply.frame)
    if reply.outcome is Outcome.UNFRAMEABLE:
        return Observation(MALFORMED, detail=str(reply), clause=adapter.response_frame_clause,
                           expected="a frame whose length the protocol allows")
    if reply.partial:  # an answer began and never completed: a broken frame, not the mutant's silence
        return Observation(MALFORMED, detail=str(reply), clause=adapter.response_frame_clause,
                           expected="a complete frame")
    kind = {Outcome.CLOSED: CLOSE, Outcome.RESET: RESET, Outcome.SILENT: SILENCE}[reply.outcome]
    return Observation(kind)


class _Judge:
    """Judges batches for one run: remembers keepalive answers and collects SHOULD-level divergences."""

    def __init__(self, adapter: Adapter, non_strict: list, coverage: CoverageMap | None = None):
        self.adapter = adapter
        self.catalogue = adapter.catalogue
        self.non_strict = non_strict
        self._known: set[bytes] = set()
        self.coverage = coverage  # each judged mutant's reaction state is recorded here
        self._connection = 0  # the connection being judged (its id(): the coverage map's key)
        self._observed: list[tuple[Mutant, Observation]] = []  # this batch's, recorded in request order
        self._ahead: dict[int, deque[Reply]] = {}  # connection -> replies read by an exchange, not yet judged

    def send(self, session: FramedSession, batch: list[Mutant]) -> None:
        sent = self._exchange(session, batch)
        data = b"".join(m.frame for m in batch[sent:])
        if wants_keepalive(batch):
            data += self.adapter.keepalive
        session.send(data, decode=False)
        if batch[-1].incomplete:  # the target must see the end of a frame that will never complete
            session.end_writing()

    def _exchange(self, session: FramedSession, batch: list[Mutant]) -> int:
        """Answer-dependent steps (``Mutant.build``). Those leading the batch (right after its first request) are
        made one at a time: the requests before each are sent and their answers read (kept for :meth:`receive`,
        which judges them in order), and it is made from those answers and put in the batch in its place. One
        later in the batch (a step that ends a sequence) is made from the same answers, none read for it. How
        many requests were sent."""
        leading = 1
        while leading < len(batch) and batch[leading].build is not None:
            leading += 1
        earlier: list[tuple[Mutant, bytes | None]] = []
        for position, mutant in enumerate(batch):
            if mutant.build is not None:
                built = mutant.build(earlier)
                built.index, built.origin, built.build = mutant.index, mutant.origin, mutant.build
                batch[position] = mutant = built
            if position < leading - 1:
                session.send(mutant.frame, decode=False)
                reply = session.recv(mutant.reaction.patience if SILENCE in mutant.reaction.outcomes else None)
                self._ahead.setdefault(id(session), deque()).append(reply)
                earlier.append((mutant, reply.frame if reply.is_frame else None))
        return leading - 1

    def _recv(self, session: FramedSession, patience: float | None = None) -> Reply:
        """The session's next reply: one :meth:`_exchange` read already, else from the wire."""
        ahead = self._ahead.get(id(session))
        return ahead.popleft() if ahead else session.recv(patience)

    def receive(self, session: FramedSession, batch: list[Mutant]) -> tuple[tuple[Mutant, Divergence] | None, bool,
                                                                        list[Mutant]]:
        """Judge a sent batch: (first MUST-level failure, connection still usable, mutants left unjudged).

        Where the protocol has a correlation field (``Adapter.answer_id``), each answer is judged as the answer
        to the request it names: a mutant skipped over drew no answer (judged as silence, never blamed for the
        next request's answer), and a late answer to an earlier mutant is judged as that mutant's."""
        owners = Owners(self.adapter, batch)
        self._connection = id(session)
        pending: Reply | None = None  # an answer read ahead: it names a later request of the batch
        # --differential against another implementation: the mutants' answers are counted apart, not compared
        apart = None if getattr(session, "same_implementation", True) else getattr(session, "answers_apart", None)
        if apart is not None:
            apart(HOSTILE_APART)
        try:
            return self._receive(session, batch, owners, pending, apart)
        finally:
            if apart is not None:
                apart(None)
            self._ahead.pop(id(session), None)  # what a batch cut short left unread goes with its connection
            self._record()

    def _record(self) -> None:
        """The batch's reaction states into the coverage map in request order, however the answers came in (an
        asynchronous server's may overtake each other): the map, and a guided run, do not depend on timing."""
        if self.coverage is not None:
            for mutant, obs in sorted(self._observed, key=lambda seen: seen[0].index):
                self.coverage.record(self._connection, mutant, obs)
        self._observed.clear()

    def _receive(self, session: FramedSession, batch: list[Mutant], owners: "Owners", pending: Reply | None,
                 apart) -> tuple[tuple[Mutant, Divergence] | None, bool, list[Mutant]]:
        keepalive_answer: Reply | None = None  # read early: an asynchronous server answered the keepalive first
        for position, mutant in enumerate(batch):
            reaction = mutant.reaction
            if mutant.unanswered:  # nothing is due: an answer to it, if one comes, is read as a late one
                failure = self._judged(mutant, Observation(SILENCE, detail="no answer due while the connection "
                                                                           "stays open"))
                if failure is not None:
                    return failure, False, []
                continue
            patience = reaction.patience if SILENCE in reaction.outcomes else None
            reply, pending = pending or self._recv(session, patience), None
            while (owner := owners.of(reply, position)) < position or (
                    owner == len(batch) and keepalive_answer is None and owners.any_order):
                if owner == len(batch):  # Adapter.answers_any_order: the keepalive's answer may overtake the rest
                    keepalive_answer = reply
                else:  # late: the answer of an earlier mutant
                    failure = self._judged(batch[owner], observe(self.adapter, batch[owner], reply))
                    if failure is not None:
                        return failure, False, []
                reply = self._recv(session, patience)
            if owner > position:
                late = self._overtaken(session, owners, position, reaction)
                if late is not None:
                    return (mutant, late), False, []
                pending = reply
                obs = Observation(SILENCE, detail=f"no answer to it: the next answer names {owners.name(owner)}")
            else:
                obs = observe(self.adapter, mutant, reply)
            while obs.kind == ERROR and reaction.errors_before_close and ERROR not in reaction.outcomes:
                obs = observe(self.adapter, mutant, self._recv(session, patience))
            if obs.kind in (CLOSE, RESET) and owners.any_order and \
                    any(not later.reaction.pipelines for later in batch[position + 1:]):
                # an asynchronous server may close for a later mutant before it answers this one: judged alone
                return None, False, batch[position:]
            failure = self._judged(mutant, obs)
            if failure is not None:
                return failure, False, []
            if not obs.answered and pending is None:  # the connection is over (or stuck): the rest was never judged
                return None, False, batch[position + 1:]
        if not wants_keepalive(batch):
            return None, False, []
        if apart is not None:  # the keepalive is an ordinary request: its answer is compared
            apart(None)
        answer = keepalive_answer or pending
        if any(m.unanswered for m in batch):  # an answer to one of them may come before the keepalive's
            answer = answer or self._recv(session)
            while (owner := owners.among(answer)) is not None:
                failure = self._judged(batch[owner], observe(self.adapter, batch[owner], answer))
                if failure is not None:
                    return failure, False, []
                answer = self._recv(session)
        failure, usable = self._keepalive(session, batch[-1], answer)
        return failure, usable, []

    def _overtaken(self, session: FramedSession, owners: "Owners", position: int, reaction) -> Divergence | None:
        """Where answers must come in request order (``Adapter.answers_in_order``) and silence is no permitted
        reaction, an answer naming a later request may only have overtaken this one: the next frame tells. If it
        answers this request, the order is the defect (the pipelining clause), not a silence."""
        if not getattr(self.adapter, "answers_in_order", False) or SILENCE in reaction.outcomes:
            return None
        reply = self._recv(session)
        if owners.names(reply, position):
            return Divergence(self.catalogue[self.adapter.pipelining_clause], "answers in request order",
                              f"the answer to the request at {position} in the batch after a later one's")
        return None

    def _keepalive_clause(self, frame: bytes) -> str:
        """A wrong answer to the keepalive request is the keepalive's own defect (``keepalive_clause``), an answer
        to another request in its place is out of order (the pipelining clause). With a correlation field the
        answer's id tells which; without one, answers come in request order and every mutant's was judged, so the
        frame after them is the keepalive's."""
        clause = getattr(self.adapter, "keepalive_clause", None)
        answer_id = getattr(self.adapter, "answer_id", None)
        if clause and (answer_id is None or answer_id(frame) == getattr(self.adapter, "keepalive_id", None)):
            return clause
        return self.adapter.pipelining_clause

    def _judged(self, mutant: Mutant, obs: Observation) -> tuple[Mutant, Divergence] | None:
        """The mutant's MUST-level failure, if ``obs`` is one; a SHOULD-level divergence is collected."""
        if self.coverage is not None:
            self._observed.append((mutant, obs))
        divergence = mutant.reaction.judge(obs, self.catalogue)
        if divergence is None:
            return None
        if divergence.verdict is Verdict.FAILED:
            return mutant, divergence
        self.non_strict.append((mutant, divergence))
        return None

    def _keepalive(self, session: FramedSession, last: Mutant, pending: Reply | None = None):
        """The keepalive after a batch: (failure, connection usable)."""
        reply = pending or self._recv(session)
        if reply.is_frame:
            if reply.frame in self._known or self.adapter.is_keepalive_answer(reply.frame):
                if len(self._known) < KNOWN_ANSWERS:
                    self._known.add(reply.frame)
                return None, True
            return (last, Divergence(self.catalogue[self._keepalive_clause(reply.frame)],
                                     "the keepalive request after the batch answered in order",
                                     f"another answer ({len(reply.frame)} bytes): {reply.frame[:64].hex()}")), False
        reaction = last.reaction
        if reply.partial:  # the keepalive's answer began and never completed
            # a protocol without a response-frame clause (None: the reaction's) blames the keepalive's own clause
            clause = self.adapter.response_frame_clause or getattr(self.adapter, "keepalive_clause", None) \
                or self.adapter.pipelining_clause
            return (last, Divergence(self.catalogue[clause], "a complete frame", str(reply))), False
        if reaction.pipelines or reaction.keeps_open:
            divergence = reaction.judge_keepalive_lost(str(reply), self.catalogue)
            if divergence.verdict is Verdict.FAILED:
                return (last, divergence), False
            self.non_strict.append((last, divergence))
        return None, False


class Owners:
    """Whose answer a frame is, by the protocol's correlation field (Kafka and Fluvio correlation ids, Barco
    stream ids): ``Adapter.answer_id(frame)`` and ``Adapter.request_id(mutant)``, with ``keepalive_id`` for the
    keepalive. A protocol without them (answers in order only) makes every answer the current request's."""

    def __init__(self, adapter: Adapter, batch: list[Mutant]):
        # optional Adapter members (strategies/engine.py): a protocol with answer_id has request_id too
        self._answer_id: Callable[[bytes], int | None] | None = getattr(adapter, "answer_id", None)
        request_id: Callable[[Mutant], int | None] | None = getattr(adapter, "request_id", None)
        if self._answer_id and request_id is None:
            raise TypeError(f"the {adapter.name} adapter has answer_id but no request_id")
        self._ids = [request_id(m) for m in batch] if self._answer_id and request_id else []
        self._keepalive_id = getattr(adapter, "keepalive_id", None) if wants_keepalive(batch) else None
        # an asynchronous server's answers to different requests may come in any order, the keepalive's first
        self.any_order = bool(self._answer_id) and getattr(adapter, "answers_any_order", False)

    def of(self, reply: Reply, position: int) -> int:
        """The batch position ``reply`` answers: ``position`` unless the frame names another request of the batch
        (a later mutant, ``len(batch)`` for the keepalive, or an earlier mutant)."""
        if not self._answer_id or not reply.is_frame:
            return position
        got = self._answer_id(reply.frame)
        if got is None or got == self._ids[position]:
            return position
        later = [i for i in range(position + 1, len(self._ids)) if self._ids[i] == got]
        if later:
            return later[0]
        if got == self._keepalive_id:
            return len(self._ids)
        earlier = [i for i in range(position) if self._ids[i] == got]
        return earlier[-1] if earlier else position

    def among(self, reply: Reply) -> int | None:
        """The batch position of the mutant ``reply`` answers (the last with that id), None when it names none."""
        if not self._answer_id or not reply.is_frame:
            return None
        got = self._answer_id(reply.frame)
        named = [i for i, rid in enumerate(self._ids) if rid == got]
        return named[-1] if named and got != self._keepalive_id else None

    def name(self, position: int) -> str:
        return "the keepalive" if position == len(self._ids) else f"the request at {position} in the batch"

    def names(self, reply: Reply, position: int) -> bool:
        """Does ``reply`` carry the correlation field of the request at ``position``?"""
        return bool(self._answer_id) and reply.is_frame and self._answer_id(reply.frame) == self._ids[position]


def _close(sessions: Iterable[FramedSession]) -> None:
    for session in sessions:
        session.close()


def greeted(connect: Connect, adapter: Adapter) -> Connect:
    """``connect``, plus the adapter's ``greeting`` (a request every connection must open with, e.g. a STARTUP
    frame) sent and its answer read on each new connection; ``connect`` itself when the adapter has none."""
    greeting = getattr(adapter, "greeting", None)
    if not greeting:
        return connect

    def opened() -> FramedSession:
        session = connect()
        session.request(greeting)
        return session

    return opened


def state_model(adapter: Adapter) -> StateModel | None:
    """The reaction states of the adapter's protocol (its spec's ``states``), None for a protocol without."""
    try:
        return spec_for(adapter.name).states
    except KeyError:
        return None


def tracked(connect: Connect, coverage: CoverageMap | None) -> Connect:
    """``connect``, each new connection's session state started in the coverage map (``connect`` itself
    without one)."""
    if coverage is None:
        return connect

    def opened() -> FramedSession:
        session = connect()
        coverage.opened(id(session))
        return session

    return opened


def run(connect: Connect, adapter: Adapter, mutants: Iterable[Mutant], count: int,
        progress: Progress | None = None, window: int = WINDOW, indexed: bool = False,
        cut: Callable[[Mutant], bool] | None = None) -> Progress:
    """Send ``count`` mutants; raise :class:`MutantFailed` at the first MUST-level divergence.

    ``indexed``: the mutants carry their run's indexes already (a worker's share, targets/fuzz_workers.py), and
    all of them are sent; ``cut`` ends a batch after a mutant (strategies.engine.plan_batches).

    A sliding window: up to ``window`` batches are sent before the oldest is judged, each on a connection of its
    own (an open one from an earlier batch when there is one, else a new one).

    A target that dies raises :class:`TargetLost` with every mutant that may have killed it: those in flight, and
    those of batches whose connection ended (a close the spec permits looks the same as a death) before any later
    batch's keepalive proved the target outlived them.
    """
    progress = progress or Progress()
    connect = tracked(greeted(connect, adapter), progress.coverage)
    judge = _Judge(adapter, progress.non_strict, progress.coverage)
    planned = plan_batches(mutants if indexed else numbered(mutants, count), cut=cut)
    idle: list[FramedSession] = []
    flights: deque[tuple[FramedSession, list[Mutant], int]] = deque()  # (session, batch, batches sent until it)
    sends = 0
    unproven: deque[tuple[int, Mutant]] = deque(maxlen=SUSPECTS_KEPT)  # (batches sent when its close was seen, mutant)

    def suspects(*batches: list[Mutant]) -> list[Mutant]:
        found = {m.index: m for _, m in unproven} | {m.index: m for b in batches for m in b}
        found.update((m.index, m) for _, other, _ in flights for m in other)
        return [found[index] for index in sorted(found)]

    started = time.perf_counter()
    try:
        while True:
            while len(flights) < window:
                t0 = time.perf_counter()
                if progress.coverage is not None:  # a guided run aims at a transition from where it goes on
                    progress.coverage.following(id(idle[-1]) if idle else None)
                batch = next(planned, None)
                progress.generate_s += time.perf_counter() - t0
                if batch is None:
                    break
                if idle:
                    session = idle.pop()
                else:
                    session = connect()
                    progress.connections += 1
                judge.send(session, batch)
                sends += 1
                flights.append((session, batch, sends))
            if not flights:
                break
            session, batch, sent_at = flights.popleft()
            failure, usable, unjudged = judge.receive(session, batch)
            progress.batches += 1
            if failure is not None:
                in_flight = suspects(batch)
                session.close()
                _close(s for s, _, _ in flights)
                flights.clear()
                raise MutantFailed(*_pin(connect, judge, batch, failure, progress, in_flight))
            if usable:  # its keepalive answered: the target outlived every close seen before this batch was sent
                while unproven and unproven[0][0] < sent_at:
                    unproven.popleft()
                if getattr(session, "comparing", True):
                    idle.append(session)
                else:  # --differential: the oracle's side of it ended or differed; a new one compares again
                    session.close()
            else:
                session.close()
                unproven.extend((sends, mutant) for mutant in batch)
            for mutant in unjudged:  # the connection ended early without a MUST-level divergence
                _replay_alone(connect, judge, mutant, progress)
            progress.count(batch)
    except Divergence as lost:  # no new connection: the target died with these in flight or unproven
        raise TargetLost(lost, suspects()) from None
    finally:
        _close(idle)
        _close(s for s, _, _ in flights)
        progress.seconds += time.perf_counter() - started
    return progress


def _replay_alone(connect: Connect, judge: _Judge, mutant: Mutant, progress: Progress) -> None:
    progress.connections += 1
    failure = _probe(connect, judge, [mutant])
    if failure is not None:
        raise MutantFailed(*failure)


def _probe(connect: Connect, judge: _Judge, batch: list[Mutant]) -> tuple[Mutant, Divergence] | None:
    """Replay a batch on a fresh connection (after the session-state steps it was planned after, in a guided run):
    its first MUST-level failure, or None."""
    batch = with_prefix(judge.adapter, batch)
    session = connect()
    try:
        judge.send(session, batch)
        failure, _, _ = judge.receive(session, batch)
        return failure
    finally:
        session.close()


def with_prefix(adapter: Adapter, batch: list[Mutant]) -> list[Mutant]:
    """``batch`` led by fresh step requests (``Adapter.step``) for the session-state prefix its first mutant was
    planned after (a guided run's ``Mutant.origin``), so that a replay on a new connection meets the state the
    mutant met; where it begins with a step, by the steps of its prefix before that one (a step made from their
    answers needs them); ``batch`` itself when there is none or it begins with its steps."""
    origin, step = batch[0].origin, getattr(adapter, "step", None)
    if not origin or not origin[0] or step is None:
        return batch
    prefix = origin[0]
    if origin[1] == STEP:  # a step: those of its prefix before it (a bisection split the prefix)
        prefix = prefix[:prefix.index(origin[2])] if origin[2] in prefix else ()
    rng = random.Random(batch[0].index)  # the steps' own values (a writer id): any valid ones will do
    return [step(kind, rng) for kind in prefix] + batch


def _alive(connect: Connect, judge: _Judge) -> bool:
    """Does the target answer the keepalive on a new connection?"""
    try:
        session = connect()
    except Divergence:
        return False
    try:
        session.send(judge.adapter.keepalive, decode=False)
        reply = session.recv()
        return reply.is_frame and judge.adapter.is_keepalive_answer(reply.frame)
    finally:
        session.close()


def _pin(connect: Connect, judge: _Judge, batch: list[Mutant], failure: tuple[Mutant, Divergence],
         progress: Progress, in_flight: list[Mutant]) -> tuple[Mutant, Divergence]:
    """The culprit of a failing batch: bisect it on fresh connections. A target that died is :class:`TargetLost`
    with every mutant that was in flight as a suspect: the batches on other connections were being processed too,
    and the failing batch may only have seen its connection go down with the target."""
    if not _alive(connect, judge):
        raise TargetLost(failure[1], sorted(in_flight, key=lambda m: m.index))
    if len(batch) == 1:
        return failure
    progress.bisections += 1
    search = bisect(batch, failure)
    probe = next(search)
    try:
        while True:
            try:
                result = _probe(connect, judge, probe)
            except Divergence as lost:  # the target stopped accepting connections while we bisected
                raise TargetLost(lost, sorted(in_flight, key=lambda m: m.index)) from None
            probe = search.send(result)
    except StopIteration as done:
        suspects, found = done.value
    if found is not None:
        return found
    first = suspects[0]
    return first, Divergence(
        judge.catalogue[judge.adapter.pipelining_clause],
        "the same reactions when these mutants are pipelined on one connection",
        f"a divergence only when mutants #{first.index}-#{suspects[-1].index} were sent back to back: "
        f"{failure[1].actual}")


def judge_one(session: FramedSession, adapter: Adapter, mutant: Mutant) -> None:
    """Send one mutant on ``session`` and raise the divergence of its reaction, whatever its level (property
    cases: the plugin maps a SHOULD-level divergence to NON-STRICT)."""
    non_strict: list = []
    judge = _Judge(adapter, non_strict)
    judge.send(session, [mutant])
    failure, _, _ = judge.receive(session, [mutant])
    if failure is not None:
        raise failure[1]
    if non_strict:
        raise non_strict[0][1]


def judge_example(target, session: FramedSession, adapter: Adapter, mutant: Mutant) -> None:
    """One example of a hostile property: the mutant's reaction judged on ``session`` (closed afterwards), then
    whether the target still answers at all, so that Hypothesis shrinks a death to the example that caused it
    and the failure names that example (the liveness probe after the case would name only the last one)."""
    try:
        judge_one(session, adapter, mutant)
    finally:  # a death outranks the reaction's divergence: it is raised in its place
        session.close()
        _raise_if_dead(target, mutant)


def _raise_if_dead(target, mutant: Mutant) -> None:
    what = target.stopped_answering()
    if what is not None:
        raise TargetDied(target.survives_clause, mutant.label(), what, note=mutant.label())


def fuzz_case(target, adapter: Adapter, rng: random.Random, count: int, connect: Connect | None = None,
              window: int = WINDOW) -> Progress:
    """A bulk case: run ``count`` mutants drawn from ``rng`` (the budget's generator for the case), turn the first
    failure into the case's divergence (naming the mutant and the seed), note the statistics in the transcript, and
    report SHOULD-level divergences as NON-STRICT. Under ``--fuzz-workers`` the run is split over that many
    processes (targets/fuzz_workers.py), its segments seeded from ``rng``."""
    budget = getattr(target, "fuzz", None)
    reproduce = getattr(budget, "reproduce", "")
    model = state_model(adapter)
    steered = model is not None and getattr(budget, "guided", False)
    workers = getattr(budget, "workers", None)
    if getattr(target, "differential", False):  # one batch at a time: both servers see the same order
        window, workers = 1, None
    progress = Progress(coverage=CoverageMap(model) if model is not None else None)  # a split run returns its own
    try:
        if workers:
            from wirecheck.targets.fuzz_workers import Share, run_workers

            progress = run_workers([Share(connect or target.connect, adapter)], rng.getrandbits(63), count, workers,
                                   model, steered, window)
        else:
            mutants = adapter.mutants(rng)
            if steered:
                assert progress.coverage is not None
                mutants = guided(adapter, mutants, progress.coverage)
            run(connect or target.connect, adapter, mutants, count, progress=progress, window=window)
    except MutantFailed as failed:
        progress = failed.progress or progress
        div = failed.divergence
        note = f"{failed.mutant.label()}; {reproduce}" + (f"; {div.note}" if div.note else "")
        raise div.with_note(note[:2000]) from None
    except TargetLost as lost:
        progress = lost.progress or progress
        if not lost.suspects:  # no mutant had been sent: the target was gone before the case began
            raise lost.divergence from None
        raise _died(target, adapter, lost.divergence, lost.suspects, reproduce, connect) from None
    finally:
        if progress.coverage is not None and hasattr(target, "state_coverage"):
            target.state_coverage(adapter.name, progress.coverage.to_dict())
    target.transcript.note(progress.summary())
    if progress.non_strict:
        mutant, first = progress.non_strict[0]
        raise Divergence(first.clause, first.expected, first.actual,
                         note=f"{len(progress.non_strict)} SHOULD-level divergences; the first shown, "
                              f"{mutant.label()}; {reproduce}"[:2000])
    return progress


def _died(target, adapter: Adapter, lost: Divergence, suspects: list[Mutant], reproduce: str,
          connect: Connect | None = None) -> Divergence:
    """The failure of a run cut short while ``suspects`` were unproven: naming the killer when a restartable target
    can be asked which one it is, else their range and the first of them. When a replay proved the death, or the
    target does not answer now, it is the survives clause's failure (``TargetDied``), whichever batch saw it; else
    it stays the divergence that ended the run (a wrong answer to a greeting is not a death)."""
    killer = pin_killer(target, adapter, suspects, connect) if len(suspects) > 1 else None
    if killer is not None:
        step = killer.label()
        note = (f"{step}; pinned by replaying the {len(suspects)} suspect mutant(s) on the restarted "
                f"target; {reproduce}")
    elif len(suspects) == 1:
        step = suspects[0].label()
        note = f"{step}; {reproduce}"
    else:
        step = f"mutants #{suspects[0].index}-#{suspects[-1].index} were in flight, the first {suspects[0].label()}"
        note = (f"no single mutant was shown to kill it (--target-restart lets the engine replay them one by one); "
                f"{step}; {reproduce}")
    target.transcript.note(f"the target died: {note}"[:2000])
    if killer is not None or target.stopped_answering() is not None:
        return TargetDied(target.survives_clause, step[:300], lost.actual, note=note[:2000])
    return Divergence(lost.clause, lost.expected, lost.actual, note=note[:2000])


def pin_killer(target, adapter: Adapter, suspects: list[Mutant], connect: Connect | None = None) -> Mutant | None:
    """The one mutant among ``suspects`` after which the target stops answering: restart it (``target.revive``,
    i.e. ``--target-restart``), replay half of them on a new connection, see whether it still answers, and
    bisect. None when the target cannot be restarted, or when no single mutant kills it on its own."""
    revive = getattr(target, "revive", None)
    if revive is None:
        return None
    connect = greeted(connect or target.connect, adapter)

    def kills(mutants: list[Mutant]) -> bool:
        if not target.answers() and not revive():
            raise _CannotPin
        for batch in plan_batches(mutants):  # as the run sent them: a mutant that may end its connection ends a batch
            try:
                session = connect()
            except Divergence:
                return True  # an earlier batch of these killed it
            try:
                judge = _Judge(adapter, [])
                batch = with_prefix(adapter, batch)  # a guided run's mutant meets the session state it met
                judge.send(session, batch)
                judge.receive(session, batch)
            except (Divergence, OSError):
                pass  # whatever the reactions were: the question is whether the target is still there
            finally:
                session.close()
        return not target.answers()

    candidates = suspects
    try:
        while len(candidates) > 1:
            half = candidates[:len(candidates) // 2]
            candidates = half if kills(half) else candidates[len(half):]
        return candidates[0] if kills(candidates) else None
    except _CannotPin:
        return None


class _CannotPin(Exception):
    """The target could not be brought back to replay on."""
