"""Hostile input: bulk structure-aware mutants and a property over hostile frames, each followed by the
plugin's liveness probe (notes §8)."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.strategies.pravega import BulkMutator, PravegaFuzz, setup_frames
from wirecheck.suites.pravega.client import Pravega, segment_name
from wirecheck.targets.fuzzing import fuzz_case, judge_example

case = pytest.mark.case


def prepared(target, stem: str) -> PravegaFuzz:
    """A segment holding one 13-byte event and a table holding key ``k``, created as the bench does."""
    segment, table = segment_name(target, stem), segment_name(target, stem + "t")
    client = Pravega(target)
    with target.precondition(f"segment {segment} and table {table} created"):
        for frame in setup_frames(segment, table, token=client.token):
            client.send_frame(frame)
            reply = client.receive("pravega.robustness.no-hang")
            if reply.code in cmd.ERROR_REPLIES:  # e.g. AuthTokenCheckFailed: the mutants would miss their mark
                raise client.diverge("pravega.segment.create", "the segment and the table ready", reply.name)
    client.close()
    return PravegaFuzz(segment, table, token=client.token)


@case("pravega.robustness.no-hang", hostile=True)
def test_bulk_mutants(target, fuzz):
    """Seeded mutants of harmless requests; each reaction judged against what the spec permits."""
    adapter = prepared(target, "fuzz")
    fuzz_case(target, adapter, adapter.mutants(fuzz.rng(f"pravega-bulk/{adapter.segment}")), fuzz.mutants)


@case("pravega.robustness.no-hang", hostile=True)
@given(seed=st.integers(0, 2**32 - 1), operator=st.sampled_from(BulkMutator.OPERATORS))
def test_hostile_frames_property(target, seed, operator):
    """Property: every hostile frame gets a permitted reaction; a failure shrinks to one operator and seed."""
    target.transcript.clear()
    adapter = prepared(target, "hostile")
    session = target.connect()
    mutant = BulkMutator(random.Random(seed), adapter.segment, adapter.table, token=adapter.token).mutant(operator)
    judge_example(target, session, adapter, mutant)
