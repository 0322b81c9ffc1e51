"""The Pravega personality's shape: its faults and variants are typed objects, each switch consulted by name at
the point it breaks (never a string tested for membership), and every request reaches its family's handler
through the one dispatch table, keyed by wire command type code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wirecheck.targets.reference import pravega
from wirecheck.targets.reference.core import BrokerConfig
from wirecheck.targets.reference.pravega import codes
from wirecheck.targets.reference.pravega.faults import FAULTS, VARIANTS, PravegaFaults, PravegaVariants
from wirecheck.targets.reference.pravega.options import PravegaOptions
from wirecheck.targets.reference.pravega.server import PravegaPersonality

PACKAGE = Path(pravega.__file__).parent
SOURCES = {str(path.relative_to(PACKAGE)): path.read_text(encoding="utf-8") for path in PACKAGE.rglob("*.py")
           if "_pb2" not in path.name}  # the generated gRPC modules are not ours


@pytest.mark.parametrize("switches, kind", [(PravegaFaults, "faults"), (PravegaVariants, "variants")])
def test_every_switch_is_consulted_and_every_consulted_switch_is_declared(switches, kind):
    declared = {name.replace("-", "_") for name in switches.declared()}
    consulted = {name for text in SOURCES.values() for name in re.findall(rf"\.{kind}\.([a-z0-9_]+)", text)}
    assert consulted == declared


def test_no_switch_is_a_string_tested_for_membership():
    names = set(PravegaFaults.declared()) | set(PravegaVariants.declared())
    found = [(file, name) for file, text in SOURCES.items()
             for name in re.findall(r'"([a-z0-9-]+)" (?:not )?in ', text) if name in names]
    assert found == []


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


def test_no_module_is_over_400_lines():
    long = {name: text.count("\n") for name, text in SOURCES.items() if text.count("\n") > 400}
    assert long == {}
