"""The bulk fuzz loop: replay mutants against a target and judge each reaction against what the spec permits.

Mutants whose expectation keeps the connection open are sent together with a Ping in one write, so each
case proves in a single round trip both the reaction and that the connection survived. The loop stops at the
first MUST-level divergence; SHOULD-level ones are counted and the first is reported (NON-STRICT).
"""

from __future__ import annotations

import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from protocols.rustlog.layers import FrameDecodeError, decode_frame, encode_frame
from reports.model import Divergence
from strategies.rustlog import Expect, Mutant
from suites.rustlog.client import C, short
from targets.session import Reply, Session

PING = encode_frame({"type": "Ping"})
SILENT_WAIT = 0.25  # seconds we give a target to (wrongly) answer a frame that never completed


@dataclass
class FuzzStats:
    cases: int = 0
    reconnects: int = 0
    generate_s: float = 0.0
    io_s: float = 0.0
    operators: Counter = field(default_factory=Counter)
    non_strict: list[Divergence] = field(default_factory=list)

    @property
    def total_s(self) -> float:
        return self.generate_s + self.io_s


class MutantFailed(Exception):
    def __init__(self, index: int, mutant: Mutant, divergence: Divergence):
        self.index, self.mutant, self.divergence = index, mutant, divergence


BATCH = 32  # mutants pipelined in one write while the connection is expected to stay open
_STAYS_OPEN = (Expect.ERROR_OPEN, Expect.ANSWER_OPEN)


def run_mutants(connect, mutants: Iterable[Mutant], count: int, stats: FuzzStats | None = None) -> FuzzStats:
    """Send ``count`` mutants through connections from ``connect()``; raise MutantFailed on a MUST divergence.

    Mutants that keep the connection open are pipelined, up to BATCH in one write and each answer judged in
    order (answers come in request order: rustlog.framing.pipelining); a mutant that ends the connection closes
    its batch. When a batch goes wrong, its mutants are replayed one at a time, each followed by a Ping, so the
    divergence is pinned on the mutant that causes it.
    """
    stats = stats or FuzzStats()
    source: Iterator[Mutant] = iter(mutants)
    session: Session | None = None
    index = 0
    try:
        while index < count:
            t0 = time.perf_counter()
            batch = _next_batch(source, count - index)
            t1 = time.perf_counter()
            stats.generate_s += t1 - t0
            if session is None:
                session = connect()
                stats.reconnects += 1
            try:
                keep_open = _judge_batch(session, batch)
            except Divergence:
                session.close()
                session = None
                keep_open = _replay(connect, batch, index, stats)
            finally:
                stats.io_s += time.perf_counter() - t1
            index += len(batch)
            stats.cases += len(batch)
            for mutant in batch:
                stats.operators[mutant.operator.split(":")[0]] += 1
            if not keep_open and session is not None:
                session.close()
                session = None
    finally:
        if session is not None:
            session.close()
    return stats


def _next_batch(source: Iterator[Mutant], room: int) -> list[Mutant]:
    batch = []
    while len(batch) < min(BATCH, room):
        mutant = next(source)
        batch.append(mutant)
        if mutant.expect not in _STAYS_OPEN:
            break
    return batch


def _judge_batch(session: Session, batch: list[Mutant]) -> bool:
    """Pipeline a batch; every open-keeping mutant must be answered in order. True if the connection is usable."""
    *opening, last = batch
    if len(batch) == 1 or last.expect not in _STAYS_OPEN:
        if opening:
            session.send(b"".join(m.frame for m in opening), decode=False)
            for mutant in opening:
                _check_answer(session.recv(), mutant)
        return _judge(session, last)
    session.send(b"".join(m.frame for m in batch) + PING, decode=False)
    for mutant in batch:
        _check_answer(session.recv(), mutant)
    _expect_pong(session.recv(), batch[-1])
    return True


def _check_answer(reply: Reply, mutant: Mutant) -> None:
    answer = _decode(reply, mutant)
    if mutant.expect is Expect.ERROR_OPEN:
        if answer["type"] != "Error":
            raise Divergence(C[mutant.clause], "an Error (400)", short(answer))
        if answer["code"] != 400:
            raise Divergence(C["rustlog.request.invalid-code"], "Error code 400", f"Error code {answer['code']}")


def _replay(connect, batch: list[Mutant], first_index: int, stats: FuzzStats) -> bool:
    """One mutant per connection turn, each with a Ping: the first that diverges is the culprit."""
    for offset, mutant in enumerate(batch):
        session = connect()
        stats.reconnects += 1
        try:
            _judge(session, mutant)
        except Divergence as div:
            if div.verdict.value == "FAILED":
                raise MutantFailed(first_index + offset, mutant, div) from None
            stats.non_strict.append(div)
        finally:
            session.close()
    # Each mutant alone behaves; only the pipelined batch diverged.
    raise MutantFailed(first_index, batch[0], Divergence(
        C["rustlog.framing.pipelining"], "the same reactions when these mutants are pipelined on one connection",
        f"a divergence only when {len(batch)} mutants were sent back to back"))


def _judge(session: Session, mutant: Mutant) -> bool:
    """Send one mutant and check the reaction; True when the connection is still usable."""
    expect = mutant.expect
    if expect is Expect.CLOSE_SILENTLY:
        session.send(mutant.frame, decode=False)
        session.sock.shutdown(socket.SHUT_WR)
        reply = session.recv(SILENT_WAIT)
        if reply.is_frame:
            raise Divergence(C["rustlog.framing.partial-header"], "no answer to a frame that never completed",
                             _show(reply))
        return False
    if expect is Expect.CLOSE:
        session.send(mutant.frame, decode=False)
        _expect_close(session, mutant)
        return False
    session.send(mutant.frame + PING, decode=False)
    first = session.recv()
    if expect is Expect.ERROR_OPEN_OR_CLOSE and (first.ended or _is_error(first)):
        if first.ended:
            raise Divergence(C[mutant.clause], Expect.ERROR_OPEN.value, f"{first} without an Error")
        second = session.recv()
        if second.ended:
            raise Divergence(C[mutant.clause], Expect.ERROR_OPEN.value, f"an Error, then {second}")
        _expect_pong(second, mutant)
        return True
    answer = _decode(first, mutant)
    if expect in (Expect.ERROR_OPEN, Expect.ERROR_OPEN_OR_CLOSE):
        if answer["type"] != "Error":
            raise Divergence(C[mutant.clause], "an Error (400)", short(answer))
        if answer["code"] != 400:
            _expect_pong(session.recv(), mutant)
            raise Divergence(C["rustlog.request.invalid-code"], "Error code 400", f"Error code {answer['code']}")
    _expect_pong(session.recv(), mutant)
    return True


def _is_error(reply: Reply) -> bool:
    try:
        return reply.is_frame and decode_frame(reply.frame)["type"] == "Error"
    except FrameDecodeError:
        return False


def _decode(reply: Reply, mutant: Mutant) -> dict:
    if not reply.is_frame:
        clause = "rustlog.robustness.no-hang" if reply.outcome.value == "silent" else mutant.clause
        raise Divergence(C[clause], mutant.expect.value, str(reply))
    try:
        return decode_frame(reply.frame)
    except FrameDecodeError as exc:
        raise Divergence(C["rustlog.framing.response-frame"], "a well-formed response frame", str(exc)) from None


def _expect_pong(reply: Reply, mutant: Mutant) -> None:
    if not reply.is_frame:
        raise Divergence(C["rustlog.request.stays-open"], "the connection stays open and answers the next Ping",
                         str(reply), note=f"after {mutant.operator}")
    answer = _decode(reply, mutant)
    if answer != {"type": "Pong"}:
        raise Divergence(C["rustlog.framing.pipelining"], "the Ping after it answered with Pong", short(answer))


def _expect_close(session: Session, mutant: Mutant) -> None:
    while True:
        reply = session.recv()
        if reply.ended:
            return
        if not reply.is_frame:
            raise Divergence(C[mutant.clause], Expect.CLOSE.value, f"{reply}: the connection stayed open")
        answer = _decode(reply, mutant)
        if answer["type"] != "Error":
            raise Divergence(C[mutant.clause], Expect.CLOSE.value, short(answer))


def _show(reply: Reply) -> str:
    try:
        return short(decode_frame(reply.frame))
    except FrameDecodeError:
        return reply.frame[:64].hex()
