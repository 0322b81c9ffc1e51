"""What a target may do with one request, and the verdict on what it did. Pure: no I/O.

A :class:`Reaction` lists the outcomes the spec permits for a request (usually a hostile one): a well-formed
answer, an error answer with allowed codes, the connection closing (error answers first optionally allowed),
silence (the target waits for bytes a lying length promised). It may prefer some of them: the others are then
permitted only at SHOULD level (NON-STRICT). It names the clause a wrong reaction violates and why.

What the target did is an :class:`Observation`, classified protocol-neutrally by the protocol's own decoder
(answer, error with code, close, reset, silence, malformed). :meth:`Reaction.judge` turns the pair into a
:class:`protocols.verdicts.Divergence` (which carries the verdict through its clause's level) or None.

The bulk engine (strategies/engine.py, targets/fuzzing.py), the property cases and the reports all use this one
model; a reaction renders as one readable "expected" string.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wirecheck.protocols.clauses import Catalogue
from wirecheck.protocols.verdicts import Divergence

ANSWER, ERROR, CLOSE, RESET, SILENCE, MALFORMED = "answer", "error", "close", "reset", "silence", "malformed"
OUTCOMES = (ANSWER, ERROR, CLOSE, SILENCE)  # what a reaction may permit (a reset counts as a close)


class Lazy:
    """Text rendered only when shown: classifiers describe every answer, reports read few of them."""

    __slots__ = ("render", "value")

    def __init__(self, render, value):
        self.render, self.value = render, value

    def __str__(self) -> str:
        return self.render(self.value)


@dataclass(frozen=True)
class Observation:
    """What the target did with one request.

    ``rejects``: for an error, whether the code rejects the request itself (Kafka's INVALID_REQUEST) rather than
    being an ordinary answer (an unknown topic); a reaction that permits an answer accepts the latter.
    ``clause``/``expected``: for a malformed answer, the clause the malformation breaks, when the decoder knows.
    """

    kind: str
    code: int | None = None
    detail: str | Lazy = ""
    rejects: bool = True
    clause: str | None = None
    expected: str = ""

    @property
    def outcome(self) -> str:
        """The outcome a reaction is asked about: a reset is a close."""
        return CLOSE if self.kind == RESET else self.kind

    @property
    def answered(self) -> bool:
        return self.kind in (ANSWER, ERROR)

    def __str__(self) -> str:
        head = {ANSWER: "an answer", ERROR: f"an error answer (code {self.code})", CLOSE: "the connection closed",
                RESET: "the connection reset", SILENCE: "silence until the deadline",
                MALFORMED: "a malformed answer"}[self.kind]
        return f"{head}: {self.detail}" if self.detail else head


@dataclass(frozen=True)
class Reaction:
    """The outcomes the spec permits for one request.

    ``outcomes``: a subset of answer / error / close / silence. ``codes``: the error codes permitted (None: any).
    ``errors_before_close``: error answers may precede a required close. ``prefer``: when set, permitted outcomes
    outside it are NON-STRICT (the reaction's clause for them must be SHOULD level). ``keeps_open``: after an
    answer the connection must still serve the next request. ``clauses``: the clause per observed kind when it is
    not ``clause`` (kinds: answer, error, code, close, silence, malformed, keepalive; ``code:N`` for one
    unpermitted code N, when that code means something other than a wrong code). ``patience``: seconds to
    wait before calling it silence, when silence is permitted (None: the session's deadline).
    """

    outcomes: frozenset[str]
    clause: str
    why: str = ""
    codes: frozenset[int] | None = None
    errors_before_close: bool = False
    prefer: frozenset[str] | None = None
    keeps_open: bool = True
    clauses: dict = field(default_factory=dict, compare=False, hash=False)
    patience: float | None = None

    def __post_init__(self):
        unknown = set(self.outcomes) - set(OUTCOMES)
        if unknown or not self.outcomes:
            raise ValueError(f"outcomes must be a non-empty subset of {OUTCOMES}, not {sorted(self.outcomes)}")
        if self.prefer is not None and not self.prefer <= self.outcomes:
            raise ValueError("preferred outcomes must be permitted outcomes")

    # -- what the engine needs to know ---------------------------------------------------------------------

    @property
    def pipelines(self) -> bool:
        """The connection stays open whatever a conforming target does: the next request may follow at once."""
        return CLOSE not in self.outcomes and SILENCE not in self.outcomes

    @property
    def may_answer(self) -> bool:
        return ANSWER in self.outcomes or ERROR in self.outcomes

    def clause_for(self, kind: str) -> str:
        return self.clauses.get(kind, self.clause)

    # -- the verdict --------------------------------------------------------------------------------------

    def permits(self, obs: Observation) -> bool:
        outcome = obs.outcome
        if outcome == ERROR:
            if ERROR in self.outcomes and (self.codes is None or obs.code in self.codes):
                return True
            return ANSWER in self.outcomes and not obs.rejects
        return outcome in self.outcomes

    def judge(self, obs: Observation, catalogue: Catalogue) -> Divergence | None:
        """None when ``obs`` is a permitted, preferred outcome; else the divergence (its clause sets the verdict)."""
        if obs.kind == MALFORMED:
            if not self.may_answer and not self.errors_before_close:  # an answer where none is permitted
                return Divergence(catalogue[self.clause_for(ANSWER)], self.expected, str(obs), note=self.why)
            return Divergence(catalogue[obs.clause or self.clause_for(MALFORMED)],
                              obs.expected or "a well-formed answer", str(obs.detail) or str(obs))
        if not self.permits(obs):
            if obs.kind == ERROR and ERROR in self.outcomes:  # an error, but with a code the spec does not allow
                clause = self.clauses.get(f"code:{obs.code}") or self.clause_for("code")
                return Divergence(catalogue[clause], self.code_text(), str(obs), note=self.why)
            return Divergence(catalogue[self.clause_for(obs.outcome)], self.expected, str(obs), note=self.why)
        if self.prefer is not None and obs.outcome not in self.prefer and not (
                obs.kind == ERROR and ANSWER in self.prefer and not obs.rejects):
            return Divergence(catalogue[self.clause_for(obs.outcome)], self.expected,
                              f"{obs} (permitted, but not the preferred reaction)", note=self.why)
        return None

    def judge_keepalive_lost(self, lost: str, catalogue: Catalogue) -> Divergence:
        """The target answered but then did not serve the next request on the same connection."""
        return Divergence(catalogue[self.clause_for("keepalive")],
                          "the connection stays open and answers the next request", lost, note=self.why)

    # -- rendering ----------------------------------------------------------------------------------------

    def code_text(self) -> str:
        if self.codes is None:
            return "an error answer"
        return "an error answer with code " + " or ".join(str(c) for c in sorted(self.codes))

    @property
    def expected(self) -> str:
        """One readable line: what the spec permits, and which outcome it prefers."""
        parts = []
        for outcome in OUTCOMES:
            if outcome not in self.outcomes:
                continue
            if outcome == ANSWER:
                parts.append("a well-formed answer")
            elif outcome == ERROR:
                parts.append(self.code_text())
            elif outcome == CLOSE:
                parts.append("the connection closes" + (" (error answers first allowed)"
                                                       if self.errors_before_close else ""))
            else:
                parts.append("no answer (the target may wait)")
        text = " or ".join(parts)
        if self.pipelines or (self.keeps_open and self.may_answer and CLOSE in self.outcomes):
            text += ", the connection staying open after an answer"
        if self.prefer is not None and self.prefer != self.outcomes:
            text += f"; preferred: {' or '.join(o for o in OUTCOMES if o in self.prefer)} (the others NON-STRICT)"
        return text

    def __str__(self) -> str:
        return f"{self.expected} ({self.clause}{': ' + self.why if self.why else ''})"


# -- constructors for the shapes the protocols use -------------------------------------------------------------


def _make(outcomes, clause, why="", **options) -> Reaction:
    prefer = options.pop("prefer", None)
    return Reaction(frozenset(outcomes), clause, why,
                    prefer=frozenset(prefer) if prefer is not None else None, **options)


def answer(clause: str, why: str = "", **options) -> Reaction:
    """A well-formed answer (ordinary errors included), the connection staying open."""
    return _make({ANSWER}, clause, why, **options)


def error_answer(clause: str, codes=None, why: str = "", **options) -> Reaction:
    """An error answer with one of ``codes`` (None: any), the connection staying open."""
    return _make({ERROR}, clause, why, codes=frozenset(codes) if codes is not None else None, **options)


def close(clause: str, why: str = "", errors_first: bool = False, **options) -> Reaction:
    """The connection closes; with ``errors_first``, error answers may come before the close."""
    return _make({CLOSE}, clause, why, errors_before_close=errors_first, **options)


def any_answer(clause: str, why: str = "", **options) -> Reaction:
    """Any well-formed answer, an error answer included, the connection staying open."""
    return _make({ANSWER, ERROR}, clause, why, **options)


def answer_or_close(clause: str, why: str = "", **options) -> Reaction:
    return _make({ANSWER, ERROR, CLOSE}, clause, why, **options)


def error_or_close(clause: str, codes=None, why: str = "", **options) -> Reaction:
    return _make({ERROR, CLOSE}, clause, why, codes=frozenset(codes) if codes is not None else None, **options)


def silence_allowed(clause: str, why: str = "", also=(CLOSE,), **options) -> Reaction:
    """No answer is permitted (the target may wait for bytes a length promised), as are ``also``."""
    return _make({SILENCE, *also}, clause, why, **options)
