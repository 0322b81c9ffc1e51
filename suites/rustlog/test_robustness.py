"""Hostile input: bulk mutation, property-based hostile frames, slow peers (seed §Connection Error Handling,
§Security Considerations)."""

import time

import pytest
from hypothesis import given

from wirecheck.protocols.rustlog.layers import encode_frame
from wirecheck.protocols.verdicts import Divergence
from wirecheck.strategies.rustlog import RustLogFuzz, hostile_frame
from wirecheck.suites.rustlog.client import C, RustLog, new_topic, short
from wirecheck.targets.fuzzing import fuzz_case, judge_example

case = pytest.mark.case


@case("rustlog.robustness.no-hang", hostile=True)
def test_bulk_mutants(target, fuzz):
    """Thousands of seeded mutants of valid requests; each reaction judged against what the spec permits."""
    _, topic = new_topic(target, partitions=2, stem="fuzz", shared=True)
    adapter = RustLogFuzz(topic, partitions=2)
    fuzz_case(target, adapter, fuzz.rng(f"rustlog-bulk/{topic.split('-')[-1]}"), fuzz.mutants)


@case("rustlog.robustness.no-hang", hostile=True)
@given(mutant=hostile_frame(topic="wirecheck-hostile"))
def test_hostile_frames_property(target, mutant):
    """Property: every hostile frame gets a reaction the spec permits; failures shrink to one frame."""
    target.transcript.clear()
    session = target.connect()
    judge_example(target, session, RustLogFuzz("wirecheck-hostile"), mutant)


@case("rustlog.robustness.no-hang", hostile=True)
@pytest.mark.parametrize("depth", [65, 100_000])
def test_deep_nesting_is_not_met_with_silence(target, depth):
    # The depth a target accepts is implementation-defined (a Pong, an Error or a close all conform); silence
    # is not. Whether the target survived is robustness.survives' (the liveness probe after the case).
    _send_deep(target, depth)


def _send_deep(target, depth: int) -> None:
    """Send a Ping nested ``depth`` deep: an answer, an Error or a close conform; silence breaks no-hang (and an
    answer that never completes the response framing)."""
    client = RustLog(target)
    client.send(encode_frame(b'{"type":"Ping","x":' + b"[" * depth + b"]" * depth + b"}"))
    reply = client.session.recv()
    if not reply.ended:
        client.decode(reply, "rustlog.robustness.no-hang", "an answer or a close")


@case("rustlog.robustness.slow-peer", hostile=True)
def test_partial_frame_does_not_block_other_connections(target):
    stalled = [RustLog(target) for _ in range(3)]
    try:
        for i, client in enumerate(stalled):
            # A frame promising 100 bytes cut short, the first inside its header: the broker must keep serving
            # others.
            client.send(encode_frame(b'{"type":"Ping","pad":"' + b"x" * 80 + b'"}')[: 2 + i * 5])
        time.sleep(0.1)
        other = RustLog(target)
        started = time.monotonic()
        answer = other.call({"type": "Ping"}, "rustlog.robustness.slow-peer")
        if answer != {"type": "Pong"}:  # answered: what the answer says is the Ping's clause
            raise Divergence(C["rustlog.ping.pong"], '{"type":"Pong"}', short(answer))
        elapsed = time.monotonic() - started
        if elapsed > target.deadline:
            raise Divergence(C["rustlog.robustness.slow-peer"], f"an answer within {target.deadline}s",
                             f"{elapsed:.2f}s")
    finally:
        for client in stalled:  # before the liveness probe: a stall they cause must not outlive the case
            client.close()


@case("rustlog.robustness.survives", hostile=True)
@pytest.mark.parametrize("depth", [64, 65, 1000, 100_000])
def test_deeply_nested_json(target, depth):
    # Valid JSON, absurdly nested: a recursive parser may overflow its stack. Any answer is fine (a Pong or an
    # Error), so is closing; the liveness probe after the case is what this checks.
    _send_deep(target, depth)


@case("rustlog.robustness.survives", hostile=True)
def test_many_connections_opened_and_dropped(target):
    # Connections dropped mid-frame and mid-request must not leak into later behaviour.
    frame = encode_frame({"type": "ListTopics"})
    for i in range(50):
        client = RustLog(target)
        client.send(frame[: 1 + i % (len(frame) - 1)])
        client.close()
    RustLog(target).still_open("rustlog.robustness.survives")
