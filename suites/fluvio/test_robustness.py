"""Hostile input: bulk structure-aware mutants and a property over hostile frames, each followed by the
plugin's liveness probe (notes §7, §12)."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirecheck.strategies.fluvio import BulkMutator, FluvioFuzz
from wirecheck.suites.fluvio.client import new_topic
from wirecheck.targets.fuzzing import fuzz_case, judge_example

case = pytest.mark.case


@case("fluvio.robustness.no-hang", hostile=True)
def test_bulk_mutants(target, fuzz):
    """Seeded mutants of valid Produce requests; each reaction judged against what the spec permits."""
    _, topic = new_topic(target, stem="fuzz")
    adapter = FluvioFuzz(topic)
    fuzz_case(target, adapter, adapter.mutants(fuzz.rng("fluvio-bulk")), fuzz.mutants)


@case("fluvio.robustness.no-hang", hostile=True)
@given(seed=st.integers(0, 2**32 - 1), operator=st.sampled_from(BulkMutator.OPERATORS))
def test_hostile_frames_property(target, seed, operator):
    """Property: every hostile frame gets a permitted reaction; a failure shrinks to one operator and seed."""
    target.transcript.clear()
    client, topic = new_topic(target, stem="hostile")
    client.close()
    session = target.connect()
    judge_example(target, session, FluvioFuzz(topic), BulkMutator(random.Random(seed), topic).mutant(operator))
