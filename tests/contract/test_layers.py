"""Every message layer of every registered protocol round-trips: built from Hypothesis-generated values,
dissected from its own bytes and rebuilt, byte-identical, with nothing left over.

The layers are the executable spec: a layer that cannot read back what it writes describes a different wire
format than the one it shows. Scapy is slow, so each layer gets a few examples (the protocols' own unit tests
run more on the struct codecs the hot paths use).
"""

from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.packet import NoPayload, Packet, Padding, Raw

from tests.contract.conftest import SPECS

EXAMPLES = 3  # per layer: every layer is built at least this often
MIXED_EXAMPLES = 300  # per protocol, over layers drawn at random: richer values than the few per layer


def _layers(spec) -> dict:
    module = importlib.import_module(spec.layers)
    return module.message_layers() if hasattr(module, "message_layers") else {}


def _examples(spec) -> dict:
    module = importlib.import_module(spec.strategies)
    return module.layer_examples() if hasattr(module, "layer_examples") else {}


def test_every_message_layer_has_a_strategy(spec):
    layers, examples = _layers(spec), _examples(spec)
    assert layers, f"{spec.name}: {spec.layers} has no message_layers() naming its layers"
    assert examples, f"{spec.name}: {spec.strategies} has no layer_examples() with a strategy per layer"
    assert sorted(set(layers) - set(examples)) == [], "layers without a strategy"
    assert sorted(set(examples) - set(layers)) == [], "strategies for layers that do not exist"


def _layer_params() -> list:
    params = []
    for name in sorted(SPECS):
        examples = _examples(SPECS[name])
        params += [pytest.param(cls, examples[layer], id=f"{name}-{layer}")
                   for layer, cls in sorted(_layers(SPECS[name]).items()) if layer in examples]
    return params


def _forget_wire(packet: Packet) -> Packet:
    """Drop the bytes scapy keeps from dissection (bytes() would return them unchanged), nested layers too,
    so that building the packet again really encodes the dissected values."""
    packet.raw_packet_cache = None
    for value in packet.fields.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, Packet):
                _forget_wire(item)
    if not isinstance(packet.payload, NoPayload):
        _forget_wire(packet.payload)
    return packet


def _assert_round_trip(cls, packet) -> None:
    assert isinstance(packet, cls)
    wire = bytes(packet)
    again = cls(wire)
    leftover = again.getlayer(Padding) or again.getlayer(Raw)
    assert leftover is None, f"{cls.__name__} left {bytes(leftover)[:32].hex()} unread of {wire.hex()}"
    rebuilt = bytes(_forget_wire(again))
    assert rebuilt == wire, f"{cls.__name__} rebuilt {rebuilt.hex()} from {wire.hex()}"


SLOW = settings(database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("cls,strategy", _layer_params())
def test_a_layer_rebuilds_its_own_bytes(cls, strategy):
    @settings(SLOW, max_examples=EXAMPLES)
    @given(strategy)
    def round_trip(packet):
        _assert_round_trip(cls, packet)

    round_trip()


def test_layers_drawn_at_random_rebuild_their_own_bytes(spec):
    layers, examples = _layers(spec), _examples(spec)
    names = sorted(set(layers) & set(examples))
    if not names:
        pytest.fail(f"{spec.name}: no layer has a strategy (see test_every_message_layer_has_a_strategy)")

    @settings(SLOW, max_examples=MIXED_EXAMPLES)
    @given(st.sampled_from(names).flatmap(lambda name: st.tuples(st.just(name), examples[name])))
    def round_trip(drawn):
        name, packet = drawn
        _assert_round_trip(layers[name], packet)

    round_trip()
