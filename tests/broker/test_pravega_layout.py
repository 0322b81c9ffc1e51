"""The Pravega personality's shape beyond what every personality keeps (tests/contract/test_personality_shape.py):
its typed faults and variants, and the one dispatch table, keyed by wire command type code, through which every
request reaches its family's handler."""

from __future__ import annotations

import pytest

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.pravega import codes
from wirecheck.broker.pravega.faults import FAULTS, VARIANTS, PravegaFaults, PravegaVariants
from wirecheck.broker.pravega.options import PravegaOptions
from wirecheck.broker.pravega.server import PravegaPersonality

def test_the_catalogues_are_the_typed_objects_namespaced():
    assert FAULTS == {f"pravega.{name}": says for name, says in PravegaFaults.declared().items()}
    assert VARIANTS == {f"pravega.{name}": says for name, says in PravegaVariants.declared().items()}
    assert "pravega.crash-on-huge-count" in FAULTS and "pravega.short-reads" in VARIANTS


def test_the_personality_holds_its_switches_typed():
    config = BrokerConfig(faults=frozenset({"pravega.keepalive-ignored", "kafka.crc-ieee"}),
                          variants=frozenset({"pravega.short-reads"}))
    personality = PravegaPersonality(config, PravegaOptions())
    assert isinstance(personality.faults, PravegaFaults) and isinstance(personality.variants, PravegaVariants)
    assert personality.faults.keepalive_ignored and not personality.faults.hello_required
    assert personality.variants.short_reads and not personality.variants.beyond_sealed_closes
    with pytest.raises(ValueError):
        PravegaPersonality(BrokerConfig(faults=frozenset({"pravega.no-such-fault"})), PravegaOptions())


def test_the_dispatch_table_serves_requests_only():
    personality = PravegaPersonality(BrokerConfig(), PravegaOptions())
    assert not set(personality.handlers) & codes.NOT_REQUESTS
    assert codes.APPEND_DECODER <= set(personality.handlers)
    assert {codes.HELLO, codes.KEEP_ALIVE, codes.READ_SEGMENT, codes.READ_DELTA} <= set(personality.handlers)
