"""A target that died while several mutants were in flight is asked which one killed it: restarted (as
``--target-restart`` does), sent half of the suspects, probed, and so on by bisection."""

from __future__ import annotations

import socket
import struct
import threading

from tests.unit.test_fuzz_engine import ANSWERED, CATALOGUE, SPEC, ToyAdapter, frame
from wirecheck.reports.model import Divergence
from wirecheck.reports.transcript import Transcript
from wirecheck.strategies.engine import Mutant, numbered
from wirecheck.targets.fuzzing import pin_killer
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
