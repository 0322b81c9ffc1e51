"""The reaction model: each shape permits what it says, names the right clause, and sets the verdict through the
clause's level (a permitted but not preferred outcome is NON-STRICT)."""

from __future__ import annotations

import pytest

from wirecheck.protocols import reactions
from wirecheck.protocols.clauses import Catalogue, Clause, Level
from wirecheck.protocols.reactions import ANSWER, CLOSE, ERROR, MALFORMED, RESET, SILENCE, Observation, Reaction
from wirecheck.protocols.verdicts import Verdict

CAT = Catalogue("toy", [
    Clause("toy.must", "must", "here"), Clause("toy.should", "should", "here", Level.SHOULD),
    Clause("toy.code", "code", "here", Level.SHOULD), Clause("toy.frame", "frame", "here"),
    Clause("toy.hang", "hang", "here"), Clause("toy.open", "open", "here"),
])


def verdict(reaction: Reaction, obs: Observation):
    divergence = reaction.judge(obs, CAT)
    return None if divergence is None else (divergence.clause.id, divergence.verdict)


def test_error_answer_with_allowed_codes():
    r = reactions.error_answer("toy.must", {400}, clauses={"code": "toy.code", "silence": "toy.hang"})
    assert r.pipelines
    assert verdict(r, Observation(ERROR, 400)) is None
    assert verdict(r, Observation(ERROR, 404)) == ("toy.code", Verdict.NON_STRICT)
    assert verdict(r, Observation(ANSWER)) == ("toy.must", Verdict.FAILED)
    assert verdict(r, Observation(CLOSE)) == ("toy.must", Verdict.FAILED)
    assert verdict(r, Observation(SILENCE)) == ("toy.hang", Verdict.FAILED)
    assert verdict(r, Observation(MALFORMED, clause="toy.frame")) == ("toy.frame", Verdict.FAILED)


def test_answer_accepts_ordinary_errors_but_not_rejections():
    r = reactions.answer("toy.must")
    assert verdict(r, Observation(ANSWER)) is None
    assert verdict(r, Observation(ERROR, 3, rejects=False)) is None
    assert verdict(r, Observation(ERROR, 42, rejects=True)) == ("toy.must", Verdict.FAILED)


def test_close_with_errors_first_and_a_reset_counts_as_a_close():
    r = reactions.close("toy.must", errors_first=True)
    assert not r.pipelines and r.errors_before_close and not r.may_answer
    assert verdict(r, Observation(CLOSE)) is None and verdict(r, Observation(RESET)) is None
    assert verdict(r, Observation(SILENCE)) == ("toy.must", Verdict.FAILED)
    # an error answer may come first, so a frame that does not decode may be one: its malformation is its own
    # clause's defect (the isolation rule), not the close's
    assert verdict(r, Observation(MALFORMED, clause="toy.frame")) == ("toy.frame", Verdict.FAILED)
    # where no answer at all is permitted, an answer, even one that does not decode, is the divergence
    assert verdict(reactions.close("toy.must"), Observation(MALFORMED, clause="toy.frame")) == ("toy.must",
                                                                                               Verdict.FAILED)


def test_preferred_outcome_makes_the_other_non_strict():
    r = reactions.error_or_close("toy.should", prefer={ERROR}, keeps_open=True)
    assert verdict(r, Observation(ERROR, 400)) is None
    assert verdict(r, Observation(CLOSE)) == ("toy.should", Verdict.NON_STRICT)
    assert verdict(r, Observation(ANSWER)) == ("toy.should", Verdict.NON_STRICT)
    lost = r.judge_keepalive_lost("the connection closed", CAT)
    assert lost.clause.id == "toy.should"


def test_silence_allowed_with_an_answer_clause_of_its_own():
    r = reactions.silence_allowed("toy.should", prefer={CLOSE}, patience=0.3,
                                  clauses={"answer": "toy.must", "error": "toy.must"})
    assert r.patience == 0.3 and not r.pipelines
    assert verdict(r, Observation(CLOSE)) is None
    assert verdict(r, Observation(SILENCE)) == ("toy.should", Verdict.NON_STRICT)
    assert verdict(r, Observation(ANSWER)) == ("toy.must", Verdict.FAILED)


def test_expected_renders_one_readable_line():
    assert reactions.error_answer("toy.must", {400}).expected == (
        "an error answer with code 400, the connection staying open after an answer")
    text = str(reactions.error_or_close("toy.should", prefer={ERROR}, why="not an object"))
    assert "an error answer or the connection closes" in text and "preferred: error" in text
    assert text.endswith("(toy.should: not an object)")
    assert "error answers first allowed" in reactions.close("toy.must", errors_first=True).expected


def test_invalid_reactions_are_refused():
    with pytest.raises(ValueError):
        Reaction(frozenset({"explode"}), "toy.must")
    with pytest.raises(ValueError):
        reactions.answer("toy.must", prefer={CLOSE})
