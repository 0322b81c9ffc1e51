"""Every protocol's reaction-state declaration (protocols/<name>/states.py) against its clause catalogue: each
error a clause names is a declared cell, each cell names a request the protocol has and a clause that exists."""

from __future__ import annotations

import pytest

from wirecheck.protocols.reactions import ANSWER, ERROR, SILENCE, Observation
from wirecheck.protocols.registry import all_specs
from wirecheck.protocols.states import ANY, ENDED, KINDS, named_errors

SPECS = all_specs()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_protocol_declares_its_reaction_states(name):
    assert SPECS[name].states is not None, f"{name}: no StateModel in its spec (protocols/{name}/states.py)"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_each_error_a_clause_names_is_a_declared_cell(name):
    spec = SPECS[name]
    model = spec.states
    named = set(named_errors(model, spec.catalogue))
    declared = {(cell.clause, cell.reaction) for cell in model.cells}
    assert named - declared == set(), f"errors the catalogue names that no cell declares: {sorted(named - declared)}"
    assert declared - named == set(), f"cells no clause names: {sorted(declared - named)}"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_each_cell_is_reachable_by_a_request_of_the_protocol(name):
    spec = SPECS[name]
    model = spec.states
    for cell in model.cells:
        assert cell.clause in {c.id for c in spec.catalogue}
        assert cell.request == ANY or cell.request in model.requests, f"{cell}: no such request"
        kind, _, error = cell.reaction.partition(":")
        assert kind in KINDS and (kind != ERROR or error in set(model.error_vocabulary.values())), cell


@pytest.mark.parametrize("name", sorted(SPECS))
def test_transitions_name_known_requests_and_states(name):
    model = SPECS[name].states
    assert model.initial in model.states and ENDED not in model.states
    for move in model.transitions:
        assert move.request in model.requests, move
        # an answered request moves a session, or one whose silence is its taking effect (Fluvio: a StreamFetch
        # at the log end opens its stream and waits for data)
        assert move.reaction.split(":", 1)[0] in (ANSWER, SILENCE), f"{move}: only an answer or a silence moves it"
    for step in model.steps:
        assert any(move.request == step for move in model.transitions), f"step {step} moves no state"


def test_kafka_names_every_api_it_has_definitions_for():
    from wirecheck.protocols.kafka import messages

    assert set(SPECS["kafka"].states.requests) == {messages.api_name(key) for key in messages.api_keys()}


def test_a_catalogue_error_without_a_cell_is_found():
    """The check above can fail: a vocabulary entry a clause uses, with its cell removed, is reported."""
    model = SPECS["pravega"].states
    named = set(named_errors(model, SPECS["pravega"].catalogue))
    assert ("pravega.segment.seal", "error:SegmentIsSealed") in named


def test_reactions_are_normalised_by_the_declaration():
    model = SPECS["pravega"].states
    assert model.reaction(Observation(ERROR, code=58)) == f"error:{model.error_name(58)}"
    assert model.reaction(Observation(ANSWER, detail="AppendSetup")) == "answer:AppendSetup"
    assert model.after("fresh", "SetupAppend", "answer:AppendSetup") == "writer-set-up"
    assert model.after("writer-set-up", "ReadSegment", "close") == ENDED
    kafka = SPECS["kafka"].states
    assert kafka.reaction(Observation(ERROR, code=3)) == "error:UNKNOWN_TOPIC_OR_PARTITION"
    assert kafka.reaction(Observation(ANSWER, detail="whatever")) == "answer"
