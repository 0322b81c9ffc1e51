"""The runner's pieces for dead targets and verdicts, without a network: what counts as a death, which step is
named, the down board every worker shares, and the verdicts of a blocked, dead or flaky case."""

from __future__ import annotations

from wirecheck.protocols.verdicts import Blocked, Divergence, TargetDied, Verdict
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.runner.health import DownBoard, last_step, stopped_answering
from wirecheck.targets.runner.verdicts import classify, flaky
from tests.verdicts.spec import CATALOGUE, frame


def test_only_no_answer_at_all_is_a_death():
    assert stopped_answering("cannot connect: [Errno 111] Connection refused")
    assert stopped_answering("the connection closed") and stopped_answering("the connection reset")
    assert stopped_answering("silence until the deadline")
    assert not stopped_answering("silence until the deadline after 3 bytes of an incomplete frame")
    assert not stopped_answering("wrong answer to the liveness request: PONK")
    assert not stopped_answering("an unframeable header (length 99999999)")


def test_the_step_is_the_mutant_named_by_the_case_else_the_last_frame_sent():
    transcript = Transcript("vtoy", lambda data: data[2:].decode())
    assert last_step(transcript) == "connecting (nothing was sent)"
    transcript.add(1, "send", frame("MAKE a"))
    transcript.add(1, "recv", frame("MADE a"))
    transcript.add(1, "send", frame("READ a"))
    assert last_step(transcript) == "frame (8 bytes) READ a"
    transcript.add(1, "send", b"\xff\xfe", decode=False)
    assert last_step(transcript) == "frame (2 bytes) fffe"
    note = "mutant #7 deep-nesting:1000 at x: 00000a7b; --fuzz-seed=0"
    assert last_step(transcript, note) == "mutant #7 deep-nesting:1000 at x: 00000a7b"


def test_the_down_board_is_shared_through_files_and_cleared_by_a_restart(tmp_path):
    one, other = DownBoard(tmp_path / "down"), DownBoard(tmp_path / "down")
    assert one.reason("vtoy") is None
    one.mark("vtoy", "target died at case vtoy.read.data after frame (8 bytes) READ a")
    assert other.reason("vtoy") == "target died at case vtoy.read.data after frame (8 bytes) READ a"
    other.clear("vtoy")
    assert one.reason("vtoy") is None
    one.mark("vtoy", "127.0.0.1:1: connection refused", shared=False)
    assert one.reason("vtoy") and other.reason("vtoy") is None


def test_verdicts_of_dead_blocked_and_flaky_cases():
    survives, made = CATALOGUE["vtoy.robustness.survives"], CATALOGUE["vtoy.make.made"]
    died = classify(TargetDied(survives, "frame (8 bytes) READ a", "cannot connect"), "call", None, False)
    assert (died.verdict, died.message) == (Verdict.FAILED, "target stopped answering after frame (8 bytes) READ a")
    down = classify(None, "setup", "TARGET-DOWN: target died at case x after y", False)
    assert (down.verdict, down.message) == (Verdict.TARGET_DOWN, "target died at case x after y")
    blocked = classify(Blocked("a made", Divergence(made, "MADE a", "FAIL")), "call", None, False)
    assert blocked.verdict is Verdict.BLOCKED and blocked.verdict.pytest_outcome(strict=False) == "skipped"
    assert blocked.message == "precondition failed: a made (vtoy.make.made: expected MADE a; got FAIL)"
    first = classify(Divergence(made, "MADE a", "FAIL"), "call", None, False)
    assert flaky(first, 2).verdict is Verdict.FLAKY
    assert flaky(first, 2).verdict.pytest_outcome(strict=False) == "passed"
    assert flaky(first, 2).verdict.pytest_outcome(strict=True) == "failed"
