"""The bulk fuzz engine against a toy protocol served from a thread: pipelining, reconnecting only on a close,
bisection to the culprit, seed reproducibility; and that the span operators apply to traced frames. (That every
registered protocol's mutants are sendable and carry a reaction is a contract test: tests/contract/test_mutants.py.)"""

from __future__ import annotations

import random
import socket
import struct
import threading

import pytest

from wirecheck.protocols import reactions
from wirecheck.protocols.clauses import Catalogue, Clause, Level
from wirecheck.protocols.framing import U32_PREFIX
from wirecheck.protocols.reactions import ANSWER, ERROR, Observation
from wirecheck.protocols.registry import Endpoint, ProtocolSpec
from wirecheck.protocols.transcript import Transcript
from wirecheck.strategies import engine, operators
from wirecheck.strategies.engine import Mutant, bisect, plan_batches
from wirecheck.protocols.verdicts import TargetDied
from wirecheck.targets.fuzzing import MutantFailed, judge_example, judge_one, run
from wirecheck.targets.session import Session

# -- a toy protocol: u32-length frames; "ok" is answered "ok", "err" with "E400", "bye" closes, "ping" -> "pong";
# -- "bad" is (wrongly) answered "ok"; "stall" ends the connection when another request (not a ping) follows it in
# -- the same write.

CATALOGUE = Catalogue("toy", [
    Clause("toy.answer", "answer", "toy"), Clause("toy.error", "error", "toy"), Clause("toy.close", "close", "toy"),
    Clause("toy.pipelining", "in order", "toy"), Clause("toy.frame", "frames", "toy"),
    Clause("toy.odd", "odd", "toy", Level.SHOULD),
])


def frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


SPEC = ProtocolSpec("toy", CATALOGUE, (Endpoint("server", default_port=1, framing=U32_PREFIX, max_body=1 << 20,
                                                hello=lambda: frame(b"ping"), is_hello_answer=lambda f: f[4:] == b"pong",
                                                describe=lambda f: f[4:].decode(errors="replace")),))

ANSWERED = reactions.answer("toy.answer")
REJECTED = reactions.error_answer("toy.error", {400})
CLOSES = reactions.close("toy.close")


class ToyServer:
    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    @staticmethod
    def _handle(conn):
        buffer = b""
        with conn:
            while True:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                buffer += chunk
                out = b""
                while len(buffer) >= 4 and len(buffer) >= 4 + struct.unpack(">I", buffer[:4])[0]:
                    size = struct.unpack(">I", buffer[:4])[0]
                    body, buffer = buffer[4:4 + size], buffer[4 + size:]
                    if body == b"bye":
                        conn.sendall(out)
                        return
                    if body == b"stall" and buffer and not buffer.startswith(frame(b"ping")):
                        conn.sendall(out)
                        return
                    rid, _, command = body.rpartition(b":")  # "<id>:<command>": answers carry the id back
                    if command == b"quiet":
                        continue
                    answer = {b"ping": b"pong", b"err": b"E400", b"stall": b"ok"}.get(command, b"ok")
                    out += frame(rid + b":" + answer if rid else answer)
                conn.sendall(out)

    def stop(self):
        self.sock.close()


class ToyAdapter:
    name = "toy"
    catalogue = CATALOGUE
    keepalive = frame(b"ping")
    pipelining_clause = "toy.pipelining"
    response_frame_clause = "toy.frame"

    def __init__(self, script):
        self.script = script  # (body, reaction) pairs, cycled through

    def mutants(self, rng):
        while True:
            for body, reaction in self.script:
                yield Mutant(frame(body), "valid", body.decode(), reaction)

    def is_keepalive_answer(self, f):
        return f[4:] == b"pong"

    def classify(self, mutant, f):
        return Observation(ERROR, code=400) if f[4:] == b"E400" else Observation(ANSWER, detail=f[4:].decode())

    def seeds(self):
        return [frame(b"ok")]


@pytest.fixture
def server():
    srv = ToyServer()
    yield srv
    srv.stop()


def connector(server):
    transcript = Transcript("toy", SPEC.describe)
    return lambda: Session(("127.0.0.1", server.port), SPEC, transcript, deadline=2.0)


def test_open_keeping_mutants_share_one_connection(server):
    adapter = ToyAdapter([(b"ok", ANSWERED), (b"err", REJECTED)])
    progress = run(connector(server), adapter, adapter.mutants(None), 300, window=1)
    assert progress.cases == 300 and progress.connections == 1
    assert progress.batches == 300 // engine.BATCH + 1
    assert server.connections == 1


def test_reconnects_only_when_the_target_closes(server):
    adapter = ToyAdapter([(b"ok", ANSWERED), (b"ok", ANSWERED), (b"bye", CLOSES)])
    progress = run(connector(server), adapter, adapter.mutants(None), 30, window=4)
    assert progress.cases == 30
    assert progress.connections == 10  # one per closing mutant: the two answered ones ride along before it


def test_a_failing_batch_is_bisected_to_its_culprit(server):
    script = [(b"ok", ANSWERED)] * 40 + [(b"bad", REJECTED)] + [(b"ok", ANSWERED)] * 30
    adapter = ToyAdapter(script)
    with pytest.raises(MutantFailed) as failed:
        run(connector(server), adapter, adapter.mutants(None), 200)
    assert failed.value.mutant.index == 40 and failed.value.mutant.field == "bad"
    assert failed.value.divergence.clause.id == "toy.error"
    label = failed.value.mutant.label()
    assert label.startswith("mutant #40 valid at bad: ") and frame(b"bad").hex() in label


def test_a_batch_that_fails_only_when_pipelined_is_reported_as_such(server):
    # "stall" is answered alone, but ends the connection when more requests follow it in the same write
    adapter = ToyAdapter([(b"ok", ANSWERED), (b"stall", ANSWERED), (b"ok", ANSWERED)])
    with pytest.raises(MutantFailed) as failed:
        run(connector(server), adapter, adapter.mutants(None), 3)
    assert failed.value.divergence.clause.id == "toy.pipelining"
    assert failed.value.mutant.index == 1 and "#1-#2 were sent back to back" in failed.value.divergence.actual


class CorrelatedAdapter(ToyAdapter):
    """Requests "<id>:<command>", answers "<id>:<answer>": answers are matched to their requests by the id."""

    keepalive = frame(b"9999:ping")
    keepalive_id = 9999

    def mutants(self, rng):
        for n, (body, reaction) in enumerate(self.script * 1000):
            yield Mutant(frame(b"%d:" % n + body), "valid", body.decode(), reaction, context=n)

    @staticmethod
    def answer_id(f):
        rid = f[4:].partition(b":")[0]
        return int(rid) if rid.isdigit() else None

    @staticmethod
    def request_id(mutant):
        return mutant.context

    def is_keepalive_answer(self, f):
        return f[4:] == b"9999:pong"

    def classify(self, mutant, f):
        rid, _, answer = f[4:].partition(b":")
        if int(rid) != mutant.context:
            return Observation(reactions.MALFORMED, detail=f"id {int(rid)}", clause="toy.pipelining",
                               expected=f"id {mutant.context}")
        return Observation(ERROR, code=400) if answer == b"E400" else Observation(ANSWER, detail=answer.decode())


def test_a_mutant_left_unanswered_is_judged_itself_not_the_next_answer(server):
    """"quiet" gets no answer where the model wants an error: that mutant fails under the error clause, never the
    next mutant for an answer that is not its own (the answers name their requests)."""
    adapter = CorrelatedAdapter([(b"ok", ANSWERED)] * 3 + [(b"quiet", REJECTED)] + [(b"ok", ANSWERED)] * 3)
    with pytest.raises(MutantFailed) as failed:
        run(connector(server), adapter, adapter.mutants(None), 7, window=1)
    assert failed.value.mutant.index == 3 and failed.value.mutant.field == "quiet"
    assert failed.value.divergence.clause.id == "toy.error"
    assert "no answer to it" in failed.value.divergence.actual


def test_an_unanswered_mutant_that_may_go_unanswered_passes_and_the_rest_is_judged(server):
    quiet_ok = reactions.Reaction(frozenset({reactions.ANSWER, reactions.SILENCE}), "toy.answer", patience=0.1)
    adapter = CorrelatedAdapter([(b"ok", ANSWERED), (b"quiet", quiet_ok), (b"ok", ANSWERED), (b"err", REJECTED)])
    progress = run(connector(server), adapter, adapter.mutants(None), 40, window=2)
    assert progress.cases == 40


class UnansweredAdapter(CorrelatedAdapter):
    """Its "quiet" and "ok" requests are marked ``unanswered`` (a stream opened at the log end, say): pipelined,
    judged silent without a wait; an answer that comes for one is judged as its own."""

    def mutants(self, rng):
        for mutant in super().mutants(rng):
            mutant.unanswered = mutant.field in ("quiet", "ok") and mutant.reaction is WAITS
            yield mutant


WAITS = reactions.silence_allowed("toy.answer", "no answer is due", also=())


def test_unanswered_mutants_are_pipelined_and_judged_silent_without_a_wait(server):
    adapter = UnansweredAdapter([(b"ok", ANSWERED), (b"quiet", WAITS), (b"ok", ANSWERED), (b"quiet", WAITS)])
    progress = run(connector(server), adapter, adapter.mutants(None), 200, window=1)
    assert progress.cases == 200 and progress.connections == 1  # nothing ended a batch, nothing was waited out
    assert progress.batches == 200 // engine.BATCH + 1


def test_an_answer_to_an_unanswered_mutant_is_judged_as_its_own(server):
    adapter = UnansweredAdapter([(b"ok", ANSWERED)] * 3 + [(b"ok", WAITS)] + [(b"ok", ANSWERED)] * 3)
    with pytest.raises(MutantFailed) as failed:
        run(connector(server), adapter, adapter.mutants(None), 7, window=1)
    assert failed.value.mutant.index == 3 and failed.value.divergence.clause.id == "toy.answer"


class ExampleTarget:
    """What a hostile property's ``target`` gives judge_example: whether the target still answers."""

    survives_clause = Clause("toy.survives", "still answers", "toy")
    dead = False

    def stopped_answering(self):
        return "cannot connect: refused" if self.dead else None


def test_a_property_example_that_kills_the_target_is_named_by_that_example(server):
    target = ExampleTarget()
    judge_example(target, connector(server)(), ToyAdapter([]), Mutant(frame(b"ok"), "valid", "ok", ANSWERED))
    target.dead = True  # this example's request kills the target
    with pytest.raises(TargetDied) as died:
        judge_example(target, connector(server)(), ToyAdapter([]), Mutant(frame(b"kill"), "valid", "kill", ANSWERED))
    assert "mutant #-1 valid at kill" in str(died.value) and died.value.clause.id == "toy.survives"


def test_judge_one_raises_any_level(server):
    session = connector(server)()
    with pytest.raises(AssertionError) as raised:
        judge_one(session, ToyAdapter([]), Mutant(frame(b"ok"), "valid", "ok",
                                                  reactions.error_or_close("toy.odd", prefer={ERROR})))
    assert raised.value.clause.id == "toy.odd"
    session.close()


def test_plan_batches_and_bisect_are_pure():
    make = lambda r: Mutant(b"x", "valid", "f", r)  # noqa: E731
    batches = list(plan_batches([make(ANSWERED)] * 5 + [make(CLOSES)] + [make(ANSWERED)] * 3, size=4))
    assert [len(b) for b in batches] == [4, 2, 3]
    batch = [make(ANSWERED) for _ in range(8)]
    search = bisect(batch, "failure")
    probes = [next(search)]
    try:
        while True:  # the culprit is batch[5]: a probe fails when it contains it
            probes.append(search.send("fails" if batch[5] in probes[-1] else None))
    except StopIteration as done:
        suspects, failure = done.value
    assert suspects == [batch[5]] and failure == "fails" and len(probes) <= 6


def test_every_span_operator_gives_bytes_on_a_traced_frame():
    from wirecheck.strategies import kafka

    seeds = [kafka.random_seed(random.Random(n)) for n in range(60)]
    for op in operators.REGISTRY.values():
        if op.apply is None:
            continue
        applied = 0
        for seed in seeds:
            for span in op.applicable(seed.body)[:3]:
                if op.name == "invalid-utf8" and (span.prefix != "text" or span.size < 2):
                    continue
                if op.name == "overlong-varint" and not span.prefix.startswith("uvarint"):
                    continue
                out = operators.apply(op.name, random.Random(0), seed.frame, span)
                assert isinstance(out, bytes) and out != seed.frame or op.name in ("boundary-int", "swap-fields")
                applied += 1
        # kinds () (a protocol's rule names the span) and ("crc",) find no span in these frames
        assert applied or op.kinds in ((), ("crc",)), op.name


def test_a_step_made_from_an_earlier_answer_is_sent_after_that_answer_was_read(server):
    """An answer-dependent step (``Mutant.build``): the requests before it are sent and answered first, it is made
    from their answers, and the rest of its batch is pipelined after it; a batch begins at a step that ``leads``."""
    made_from = []

    def build(earlier):
        made_from.append([(mutant.field, answer) for mutant, answer in earlier])
        token = earlier[-1][1][4:].split(b":")[0] if earlier and earlier[-1][1] else b"nothing"
        return Mutant(frame(b"from-" + token + b":ok"), "valid", "made", ANSWERED)

    def mutants():
        for n in range(3):
            yield Mutant(frame(b"ok"), "valid", "before", ANSWERED)
            yield Mutant(frame(b"s%d:ok" % n), "valid", "first", ANSWERED, leads=True)
            yield Mutant(frame(b"placeholder:ok"), "valid", "made", ANSWERED, build=build)
            yield Mutant(frame(b"ok"), "valid", "after", ANSWERED)

    batches = list(plan_batches(mutants()))
    assert [[m.field for m in batch] for batch in batches][:2] == [["before"], ["first", "made", "after", "before"]]
    adapter = ToyAdapter([])
    transcript = Transcript("toy", SPEC.describe)
    progress = run(lambda: Session(("127.0.0.1", server.port), SPEC, transcript, deadline=2.0), adapter, mutants(),
                   12, window=2)
    assert progress.cases == 12
    assert made_from == [[("first", frame(b"s%d:ok" % n))] for n in range(3)]
    sent = [event.data for event in transcript.events if event.kind == "send"]
    assert frame(b"s0:ok") in sent and any(data.startswith(frame(b"from-s0:ok")) for data in sent)
