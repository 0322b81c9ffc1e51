"""Hostile input on the binary producer: bulk structure-aware mutants through the shared engine and a property
over single hostile frames, each followed by the plugin's liveness probe of every endpoint."""

import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from wirecheck.strategies.barco import BarcoFuzz, BulkMutator
from wirecheck.suites.barco.client import resolve
from wirecheck.targets.fuzzing import fuzz_case, greeted, judge_example

case = pytest.mark.case


@case("barco.robustness.no-hang", hostile=True)
def test_bulk_mutants(target, fuzz):
    resolve(target, "producer")
    topic = target.unique("fuzz")
    adapter = BarcoFuzz(topic)
    fuzz_case(target, adapter, fuzz.rng(f"barco-bulk/{topic.rsplit('-', 2)[-2]}"), fuzz.mutants,
              connect=lambda: target.connect(endpoint="producer"))


@case("barco.robustness.no-hang", hostile=True)
@given(seed=st.integers(0, 2**32 - 1), operator=st.sampled_from(BulkMutator.OPERATORS))
# always, whatever the budget: a body length promising more than is sent must not be answered before the rest
# arrives (notes §2.6 step 2: the server reads exactly bodyLength bytes; §2.7: it waits, or closes at EOF)
@example(seed=0, operator="barco-body-long")
def test_hostile_frames_property(target, seed, operator):
    target.transcript.clear()
    resolve(target, "producer")
    adapter = BarcoFuzz(target.unique("hostile"))
    session = greeted(lambda: target.connect(endpoint="producer"), adapter)()
    judge_example(target, session, adapter, BulkMutator(random.Random(seed), adapter.topic).mutant(operator))
