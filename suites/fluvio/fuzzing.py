"""The bulk fuzz loop: send mutants to a target and judge each reaction against what the spec permits.

A mutant that must be answered reuses the connection (the answer is decoded strictly and its correlation id
and partition error checked); a mutant that must end the connection gets a fresh one. The loop stops at the
first MUST-level divergence; SHOULD-level ones (implementation-defined stances) are counted and the first is
reported (NON-STRICT).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from protocols.fields import DecodeError
from protocols.fluvio import messages
from reports.model import Divergence
from strategies.fluvio import Expect, Mutant
from suites.fluvio.client import C
from targets.session import Outcome, Reply, Session

NEVER_ANSWERED = {"negative-size": "fluvio.framing.negative-size-unanswered", "oversize": "fluvio.robustness.no-hang"}
CLOSE_WAIT = 0.3  # seconds we wait for a preferred close before calling the target's choice "waits"


@dataclass
class FuzzStats:
    cases: int = 0
    connections: int = 0
    seconds: float = 0.0
    operators: Counter = field(default_factory=Counter)
    non_strict: list[Divergence] = field(default_factory=list)


class MutantFailed(Exception):
    def __init__(self, index: int, mutant: Mutant, divergence: Divergence):
        self.index, self.mutant, self.divergence = index, mutant, divergence


def run_mutants(connect, mutants: Iterable[Mutant], count: int) -> FuzzStats:
    stats = FuzzStats()
    started = time.perf_counter()
    session: Session | None = None
    source = iter(mutants)
    try:
        for index in range(count):
            mutant = next(source)
            stats.operators[mutant.operator] += 1
            stats.cases += 1
            if session is None or mutant.expect not in (Expect.ANSWER, Expect.ANSWER_PREFERRED):
                if session is not None:
                    session.close()
                session = connect()
                stats.connections += 1
            try:
                open_after = judge(session, mutant)
            except Divergence as div:
                if div.verdict.value == "FAILED":
                    raise MutantFailed(index, mutant, div) from None
                stats.non_strict.append(div)
                open_after = False
            if not open_after:
                session.close()
                session = None
    finally:
        if session is not None:
            session.close()
        stats.seconds = time.perf_counter() - started
    return stats


def judge(session: Session, mutant: Mutant) -> bool:
    """Send one mutant and check the reaction; True when the connection is still usable."""
    session.send(mutant.frame, decode=False)
    if mutant.expect in (Expect.CLOSE, Expect.CLOSE_PREFERRED):
        preferred = mutant.expect is Expect.CLOSE_PREFERRED
        reply = session.recv(CLOSE_WAIT if preferred else None)
        if reply.ended:
            return False
        if reply.is_frame:
            # a frame that can never complete (negative or oversize size) must never be answered: MUST level
            clause = NEVER_ANSWERED.get(mutant.operator, mutant.clause)
            raise Divergence(C[clause], mutant.expect.value, f"an answer ({len(reply.frame)} bytes)",
                             note=mutant.operator)
        clause = mutant.clause if preferred else "fluvio.robustness.no-hang"
        raise Divergence(C[clause], mutant.expect.value, f"{reply}: the connection stayed open", note=mutant.operator)
    reply = session.recv()
    if reply.ended and mutant.expect is Expect.ANSWER_PREFERRED:
        raise Divergence(C[mutant.clause], mutant.expect.value, str(reply), note=mutant.operator)
    _check_answer(reply, mutant)
    return True


def _check_answer(reply: Reply, mutant: Mutant) -> None:
    if not reply.is_frame:
        clause = "fluvio.robustness.no-hang" if reply.outcome is Outcome.SILENT else mutant.clause
        raise Divergence(C[clause], mutant.expect.value, str(reply), note=mutant.operator)
    try:
        decoded = messages.decode_response(mutant.api_key, mutant.version, reply.frame)
    except DecodeError as exc:
        raise Divergence(C["fluvio.framing.response-frame"], "a response that decodes exactly", str(exc),
                         note=mutant.operator) from None
    if decoded["correlation_id"] != mutant.correlation_id:
        raise Divergence(C["fluvio.framing.correlation-id"], f"correlation id {mutant.correlation_id}",
                         str(decoded["correlation_id"]), note=mutant.operator)
    if mutant.error_code is not None:
        codes = [p["error_code"].code for t in decoded["body"]["responses"] for p in t["partitions"]]
        if codes != [mutant.error_code]:
            raise Divergence(C[mutant.clause], f"partition error {mutant.error_code}", str(codes),
                             note=mutant.operator)
