"""Every registered protocol's bulk mutants can be sent and say what the spec permits: each names a registered
operator and carries a reaction whose clauses exist; the seeds and the keepalive are whole valid frames; a seed
gives the same mutants again. Built offline (``offline_adapter()`` of the protocol's strategies), no target."""

from __future__ import annotations

import importlib
import random

import pytest

from wirecheck.protocols import reactions
from wirecheck.protocols.clauses import Level
from wirecheck.strategies import operators

MUTANTS = 1500
OUTCOME_KINDS = ("answer", "error", "code", "close", "silence", "malformed", "keepalive")


@pytest.fixture
def adapter(spec):
    module = importlib.import_module(spec.strategies)
    if not hasattr(module, "offline_adapter"):
        pytest.fail(f"{spec.strategies} has no offline_adapter(): the protocol has no bulk mutation")
    return module.offline_adapter()


def _whole_frames(spec, frames: list[bytes]) -> bool:
    """Each frame is exactly one frame of the protocol's (first) framed endpoint, the one bulk mutation targets."""
    endpoint = next(e for e in spec.endpoints if e.framing is not None)
    return all(endpoint.framing.split(frame, endpoint.max_body)[:2] == ([frame], len(frame)) for frame in frames)


def test_every_mutant_is_sendable_and_has_a_reaction(spec, adapter):
    mutants = adapter.mutants(random.Random(1))
    families = set()
    for _ in range(MUTANTS):
        mutant = next(mutants)
        assert isinstance(mutant.frame, bytes) and mutant.frame, mutant
        assert operators.get(mutant.operator).name == mutant.family, mutant.operator  # registered
        reaction = mutant.reaction
        assert isinstance(reaction, reactions.Reaction) and reaction.clause in adapter.catalogue, mutant.label()
        for kind in OUTCOME_KINDS:
            assert reaction.clause_for(kind) in adapter.catalogue, (mutant.label(), kind)
        if reaction.prefer is not None:  # a permitted but not preferred outcome may only be NON-STRICT
            for outcome in reaction.outcomes - reaction.prefer:
                assert adapter.catalogue[reaction.clause_for(outcome)].level is Level.SHOULD, (mutant.label(), outcome)
        families.add(mutant.family)
    assert len(families) >= 8, f"only {sorted(families)}: the mutants should break fields in many ways"


def test_seeds_and_keepalive_are_whole_valid_frames(spec, adapter):
    seeds = adapter.seeds()
    assert seeds and all(isinstance(frame, bytes) for frame in seeds)
    assert _whole_frames(spec, seeds + [adapter.keepalive])
    assert adapter.is_keepalive_answer(b"\x00\x00\x00\x00") is False


def test_the_same_seed_gives_the_same_mutants(spec, adapter):
    def frames(seed: int) -> list[bytes]:
        return [m.frame for m, _ in zip(adapter.mutants(random.Random(seed)), range(300))]

    first = frames(7)
    assert first == frames(7) and first != frames(8)
