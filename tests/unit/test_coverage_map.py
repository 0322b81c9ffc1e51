"""The state-coverage map (strategies/coverage.py) and what a guided run learns from it (strategies/guided.py),
without a target: observations fed by hand, as targets/fuzzing.py feeds them."""

from __future__ import annotations

import random

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.pravega.states import FRESH, STATES, WRITER
from wirecheck.protocols.reactions import ANSWER, CLOSE, ERROR, SILENCE, Observation
from wirecheck.reports.coverage_maps import merged
from wirecheck.strategies.coverage import CLOSE_OR_WAIT, CoverageMap
from wirecheck.strategies.guided import Guided
from wirecheck.strategies.pravega import offline_adapter
from wirecheck.strategies.pravega.mutants import OVERSIZE_MAY_WAIT
from wirecheck.strategies.engine import Mutant

NO_SUCH_SEGMENT = cmd.CODE["NoSuchSegment"]


def mutant(request: str, reaction=None) -> Mutant:
    from wirecheck.strategies.pravega.mutants import answered

    return Mutant(b"", "valid", "frame", reaction or answered("pravega.request-id.echo"), request=request)


def test_session_state_moves_as_declared_and_ends_with_the_connection():
    coverage = CoverageMap(STATES)
    coverage.opened(1)
    coverage.record(1, mutant("ReadSegment"), Observation(ANSWER, detail="SegmentRead"))
    coverage.record(1, mutant("SetupAppend"), Observation(ANSWER, detail="AppendSetup"))
    coverage.record(1, mutant("ReadSegment"), Observation(ANSWER, detail="SegmentRead"))
    coverage.record(1, mutant("ReadSegment"), Observation(CLOSE))
    coverage.record(1, mutant("ReadSegment"), Observation(ERROR, code=NO_SUCH_SEGMENT))  # a late answer
    report = coverage.to_dict()
    cells = {(c["state"], c["request"], c["reaction"]): c["count"] for c in report["cells"]}
    assert cells == {(FRESH, "ReadSegment", "answer:SegmentRead"): 1, (FRESH, "SetupAppend", "answer:AppendSetup"): 1,
                     (WRITER, "ReadSegment", "answer:SegmentRead"): 1, (WRITER, "ReadSegment", "close"): 1,
                     (FRESH, "ReadSegment", "error:NoSuchSegment"): 1}
    assert report["transitions"] == [{"from": FRESH, "request": "SetupAppend", "reaction": "answer:AppendSetup",
                                      "to": WRITER, "count": 1}]
    assert report["states"] == {FRESH: 3, WRITER: 2}
    assert report["distinct"]["transitions"] == 5
    reached = {(c["clause"], c["reaction"]) for c in report["catalogue"] if c["reached"]}
    assert ("pravega.read.no-such-segment", "error:NoSuchSegment") in reached
    assert ("pravega.segment.seal", "error:SegmentIsSealed") not in reached


def test_a_close_told_from_a_wait_by_a_short_patience_is_one_cell():
    coverage = CoverageMap(STATES)
    coverage.record(1, mutant("Hello", OVERSIZE_MAY_WAIT), Observation(CLOSE))
    coverage.record(2, mutant("Hello", OVERSIZE_MAY_WAIT), Observation(SILENCE))
    assert [c["reaction"] for c in coverage.to_dict()["cells"]] == [CLOSE_OR_WAIT]


def test_maps_of_several_cases_merge():
    one, two = CoverageMap(STATES), CoverageMap(STATES)
    one.record(1, mutant("ReadSegment"), Observation(ANSWER, detail="SegmentRead"))
    two.record(1, mutant("ReadSegment"), Observation(ANSWER, detail="SegmentRead"))
    two.record(1, mutant("GetStreamSegmentInfo"), Observation(ERROR, code=NO_SUCH_SEGMENT))
    both = merged([one.to_dict(), two.to_dict()])
    assert both["mutants"] == 3 and both["distinct"]["cells"] == 2
    assert both["distinct"]["catalogue_reached"] == 2  # info's and no-such-segment's NoSuchSegment cells


def answer_all(guided: Guided, coverage: CoverageMap, count: int, react) -> list[Mutant]:
    """Draw ``count`` mutants in sequences, each judged (by ``react``) before the next sequence is planned."""
    sent = []
    coverage.opened(0)
    for _ in range(count):
        one = next(guided)
        coverage.record(0, one, react(one))
        sent.append(one)
    return sent


def test_guidance_keeps_what_reached_something_new_and_tries_the_steps():
    adapter = offline_adapter()
    coverage = CoverageMap(STATES)
    steered = Guided(adapter.mutants(random.Random(3)), coverage, random.Random(3), adapter.step)
    sent = answer_all(steered, coverage, 400, lambda m: Observation(ANSWER, detail="AppendSetup")
                      if m.request == "SetupAppend" else Observation(CLOSE))
    assert sent[0].request == "SetupAppend"  # an untried step prefix comes first
    assert steered.corpus and steered.prefixes == {FRESH: (), WRITER: ("SetupAppend",)}
    assert all(m.origin for m in sent)


def test_without_feedback_the_map_changes_nothing():
    def drawn(react) -> list[bytes]:
        adapter, coverage = offline_adapter(), CoverageMap(STATES)
        blind = Guided(adapter.mutants(random.Random(5)), coverage, random.Random(5), adapter.step, feedback=False)
        return [m.frame for m in answer_all(blind, coverage, 300, react)]

    assert drawn(lambda m: Observation(CLOSE)) == drawn(lambda m: Observation(ANSWER, detail="x"))


def test_guidance_aims_at_a_transition_not_seen_yet_from_where_the_next_batch_goes_on():
    adapter = offline_adapter()
    coverage = CoverageMap(STATES)
    steered = Guided(adapter.mutants(random.Random(11)), coverage, random.Random(11), adapter.step)

    def by_kind(one: Mutant) -> Observation:  # each request kind draws its own reaction, and keeps it open
        return Observation(ANSWER, detail=one.request)

    answer_all(steered, coverage, 600, by_kind)
    kinds = sorted({entry.recipe[2] for entry in steered.corpus if entry.recipe[1] != "step"})
    assert len(kinds) >= 3
    aimed = kinds[len(kinds) // 2]
    coverage.opened(5)
    coverage.record(5, mutant("ReadSegment"), Observation(ERROR, code=NO_SUCH_SEGMENT))
    after = (FRESH, "ReadSegment", "error:NoSuchSegment")
    for cell in list(coverage.cells):  # from there, every transition but those to ``aimed`` is worn out
        if cell[1] != aimed:
            coverage.pairs[(after, cell)] += 1000
    sent = []
    for _ in range(80):
        coverage.following(5)  # each mutant begins a batch on connection 5, which stays where it was
        sent.append(next(steered).request)
    # drawn as they come, each kind would be about one in len(kinds) (11 here); the fresh share (EXPLORE), the
    # steps and recipes not judged yet are not aimed
    assert sent.count(aimed) >= 3 * len(sent) // len(kinds), sent
    coverage.following(None)  # a new connection: from its start
    assert coverage.ahead == (FRESH, "start")
