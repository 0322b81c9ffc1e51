"""Hostile input: bulk structure-aware mutants and a property over hostile frames, each followed by the
plugin's liveness probe (notes §7, §12)."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reports.model import Divergence
from strategies.fluvio import BulkMutator
from suites.fluvio.client import new_topic
from suites.fluvio.fuzzing import MutantFailed, judge, run_mutants

case = pytest.mark.case
BULK_CAP = 1500  # mutants per CI run: each close needs a new connection; nightly raises it with --fuzz


def _count(fuzz) -> int:
    return fuzz.mutants if fuzz.name == "nightly" else min(fuzz.mutants, BULK_CAP)


@case("fluvio.robustness.no-hang", hostile=True)
def test_bulk_mutants(target, fuzz):
    """Seeded mutants of valid Produce requests; each reaction judged against what the spec permits."""
    _, topic = new_topic(target, stem="fuzz")
    mutants = BulkMutator(fuzz.rng(f"fluvio-bulk/{topic.rsplit('-', 2)[-2]}"), topic)
    try:
        stats = run_mutants(target.connect, mutants, _count(fuzz))
    except MutantFailed as failed:
        div = failed.divergence
        raise Divergence(div.clause, div.expected, div.actual,
                         note=f"mutant #{failed.index} ({failed.mutant.operator}) of --fuzz-seed={fuzz.seed}: "
                              f"{failed.mutant.frame[:200].hex()}") from None
    target.transcript.note(f"{stats.cases} mutants, {stats.connections} connections in {stats.seconds:.2f}s, "
                           f"operators {dict(stats.operators)}")
    if stats.non_strict:
        first = stats.non_strict[0]
        raise Divergence(first.clause, first.expected, first.actual,
                         note=f"{len(stats.non_strict)} SHOULD-level divergences; the first shown")


@case("fluvio.robustness.no-hang", hostile=True)
@given(seed=st.integers(0, 2**32 - 1), operator=st.sampled_from(BulkMutator.OPERATORS))
def test_hostile_frames_property(target, seed, operator):
    """Property: every hostile frame gets a permitted reaction; a failure shrinks to one operator and seed."""
    target.transcript.clear()
    client, topic = new_topic(target, stem="hostile")
    client.close()
    session = target.connect()
    try:
        judge(session, BulkMutator(random.Random(seed), topic).mutant(operator))
    finally:
        session.close()
