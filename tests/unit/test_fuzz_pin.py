"""A target that died while several mutants were in flight is asked which one killed it: restarted (as
``--target-restart`` does), sent half of the suspects, probed, and so on by bisection."""

from __future__ import annotations

import socket
import struct
import threading

import pytest

from tests.unit.test_fuzz_engine import ANSWERED, CATALOGUE, SPEC, ToyAdapter, frame
from wirecheck.protocols import reactions
from wirecheck.protocols.verdicts import Divergence
from wirecheck.protocols.transcript import Transcript
from wirecheck.strategies.engine import Mutant, Progress, numbered
from wirecheck.targets.fuzzing import TargetLost, _Judge, _pin, pin_killer, run
from wirecheck.targets.session import Session


class MortalServer:
    """u32-framed: answers every frame "ok", and on "die" stops listening and drops the connection."""

    def __init__(self, port: int = 0):
        self.sock = socket.create_server(("127.0.0.1", port))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        buffer = b""
        with conn:
            while chunk := conn.recv(65536):
                buffer += chunk
                out = b""
                while len(buffer) >= 4 and len(buffer) >= 4 + struct.unpack(">I", buffer[:4])[0]:
                    size = struct.unpack(">I", buffer[:4])[0]
                    body, buffer = buffer[4:4 + size], buffer[4 + size:]
                    if body == b"die":
                        self.stop()
                        return
                    out += frame(b"pong" if body == b"ping" else b"ok")
                conn.sendall(out)

    def stop(self):
        """Stop listening now: a plain close() leaves the socket listening while accept() blocks on it."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class RestartableTarget:
    """What the bulk engine sees of a case's target: connect, answers, and revive (``--target-restart``)."""

    def __init__(self, restartable: bool = True):
        self.server = MortalServer()
        self.transcript = Transcript("toy", SPEC.describe)
        self.restarts = 0
        if not restartable:
            self.revive = None

    def connect(self) -> Session:
        try:
            return Session(("127.0.0.1", self.server.port), SPEC, self.transcript, deadline=2.0)
        except OSError as exc:
            raise Divergence(CATALOGUE["toy.answer"], "a connection", f"connect failed: {exc}") from None

    def answers(self) -> bool:
        try:
            with self.connect() as session:
                return session.request(frame(b"ping")).frame == frame(b"pong")
        except (Divergence, OSError):
            return False

    def revive(self) -> bool:
        self.server = MortalServer(self.server.port)
        self.restarts += 1
        return True

    def stop(self):
        self.server.stop()


def suspects(killer_at: int | None, count: int = 40) -> list[Mutant]:
    mutants = (Mutant(frame(b"die" if i == killer_at else b"ok"), "valid", "frame", ANSWERED) for i in range(count))
    return list(numbered(mutants, count))


def test_the_killer_is_found_by_bisection():
    target = RestartableTarget()
    target.server.stop()  # it died on one of the suspects
    try:
        killer = pin_killer(target, ToyAdapter([]), suspects(killer_at=23))
        assert killer is not None and killer.index == 23
        assert target.restarts <= 7  # log2(40) rounded up, plus the confirmation
    finally:
        target.stop()


def test_no_single_killer_means_no_name():
    target = RestartableTarget()
    try:
        assert pin_killer(target, ToyAdapter([]), suspects(killer_at=None)) is None
    finally:
        target.stop()


def test_a_target_that_cannot_be_restarted_is_not_asked():
    target = RestartableTarget(restartable=False)
    target.server.stop()
    try:
        assert pin_killer(target, ToyAdapter([]), suspects(killer_at=5)) is None
    finally:
        target.stop()


def test_a_batch_that_only_saw_the_target_die_is_not_blamed():
    """Under load the target may die of a mutant on another connection while the first batch judged is an innocent
    one whose connection was reset: every mutant in flight is a suspect, and the restarted target names the killer
    among them (the innocent batch's reset alone named nobody, or the wrong mutant)."""
    target = RestartableTarget()
    innocent, *others = suspects(killer_at=6, count=8)
    target.server.stop()  # the killer, on another connection, has already done its work
    try:
        judge = _Judge(ToyAdapter([]), [])
        reset = Divergence(CATALOGUE["toy.answer"], "an answer", "connection reset")
        with pytest.raises(TargetLost) as lost:
            _pin(target.connect, judge, [innocent], (innocent, reset), Progress(), [*reversed(others), innocent])
        assert [m.index for m in lost.value.suspects] == list(range(8)) and lost.value.divergence is reset
        killer = pin_killer(target, ToyAdapter([]), lost.value.suspects)
        assert killer is not None and killer.index == 6
    finally:
        target.stop()


def test_a_permitted_close_that_was_the_death_keeps_its_mutant_a_suspect():
    """A mutant the spec lets the target answer or close on is judged as soon as its connection ends; when that
    end was the target dying, the death shows only on the next batch's connection. The killer stays a suspect until
    a later keepalive proves the target outlived it, so the death is pinned on it, not on the next batch."""
    target = RestartableTarget()
    may_close = reactions.answer_or_close("toy.answer")
    mutants = [Mutant(frame(b"die"), "valid", "frame", may_close), *(
        Mutant(frame(b"ok"), "valid", "frame", ANSWERED) for _ in range(3))]
    try:
        with pytest.raises(TargetLost) as lost:
            run(target.connect, ToyAdapter([]), mutants, len(mutants), window=1)
        assert [m.index for m in lost.value.suspects] == [0]
    finally:
        target.stop()
