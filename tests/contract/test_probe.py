"""The probe recognises each protocol's reference personality, and no other protocol claims it."""

from __future__ import annotations

import pytest

from wirecheck.targets import probe
from tests.contract.conftest import SPECS


def test_probe_recognises_its_own_personality_only(spec, reference_broker):
    address = reference_broker.address(spec.name)
    if address is None:
        pytest.skip(f"the reference broker has no {spec.name} personality")
    assert probe.detect(address, SPECS, deadline=2.0) == [spec.name]


def test_every_endpoint_has_a_probe(spec):
    """Liveness after hostile cases needs a harmless request and a check of its answer on every endpoint."""
    assert [e.name for e in spec.endpoints if e.hello is None] == []


def test_every_hello_names_the_clause_a_wrong_answer_breaks(spec):
    """A target that answers its hello wrongly is alive: the wrong answer is reported under the hello's own clause
    (never the survives clause), so every endpoint's hello names a clause of the catalogue."""
    for endpoint in spec.endpoints:
        assert endpoint.hello_clause in spec.catalogue, endpoint.name
