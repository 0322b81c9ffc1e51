"""Hostile input: bulk structure-aware mutants and a property over hostile frames, each followed by the
plugin's liveness probe (notes §8)."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.strategies.pravega import BulkMutator, PravegaFuzz
from wirecheck.suites.pravega.client import new_segment, new_table, server_range
from wirecheck.targets.fuzzing import fuzz_case, judge_example

case = pytest.mark.case


def prepared(target, stem: str) -> PravegaFuzz:
    """A segment holding one 13-byte event and a table holding key ``k``, as the bench's setup_frames make them,
    through the client's helpers: each step judged under the clause it relies on (the mutants assume both)."""
    client, segment = new_segment(target, stem, [b"hello"])
    tables, table = new_table(target, stem + "t")
    with target.precondition(f"key k written to {table}"):
        tables.put(table, [(b"k", cmd.NO_VERSION, b"v")])
    client.close()
    tables.close()
    high = min(server_range(target)[0], cmd.WIRE_VERSION)  # no seed newer than the server's wire version
    return PravegaFuzz(segment, table, token=client.token, wire_version=high)


@case("pravega.robustness.no-hang", hostile=True)
def test_bulk_mutants(target, fuzz):
    """Seeded mutants of harmless requests; each reaction judged against what the spec permits."""
    adapter = prepared(target, "fuzz")
    fuzz_case(target, adapter, fuzz.rng(f"pravega-bulk/{adapter.segment}"), fuzz.mutants)


@case("pravega.robustness.no-hang", hostile=True)
@given(seed=st.integers(0, 2**32 - 1), operator=st.sampled_from(BulkMutator.OPERATORS))
def test_hostile_frames_property(target, seed, operator):
    """Property: every hostile frame gets a permitted reaction; a failure shrinks to one operator and seed."""
    target.transcript.clear()
    adapter = prepared(target, "hostile")
    session = target.connect()
    mutant = BulkMutator(random.Random(seed), adapter.segment, adapter.table, token=adapter.token,
                         wire_version=adapter.wire_version).mutant(operator)
    judge_example(target, session, adapter, mutant)
