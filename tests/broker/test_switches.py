"""The typed faults and variants every personality declares (broker/switches.py)."""

from __future__ import annotations

import pytest

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.switches import Switch, Switches


class GroupFaults(Switches):
    epoch_unchecked = Switch("a stale epoch is accepted")


class ToyFaults(GroupFaults):
    personality = "toy"
    crc_ieee = Switch("CRC-32 instead of CRC-32C")


def test_each_switch_reads_as_whether_it_is_on():
    faults = ToyFaults({"crc-ieee"})
    assert faults.crc_ieee is True and faults.epoch_unchecked is False
    assert ToyFaults.crc_ieee.name == "crc-ieee" and ToyFaults.crc_ieee.says == "CRC-32 instead of CRC-32C"


def test_the_catalogue_is_namespaced_mixins_first():
    assert list(ToyFaults.catalogue().items()) == [("toy.epoch-unchecked", "a stale epoch is accepted"),
                                                   ("toy.crc-ieee", "CRC-32 instead of CRC-32C")]


def test_a_switch_nobody_declared_is_refused():
    with pytest.raises(ValueError, match="no such switch: crc-wrong"):
        ToyFaults({"crc-wrong"})


def test_a_catalogue_needs_its_personality():
    with pytest.raises(TypeError):
        GroupFaults.catalogue()


def test_the_broker_config_gives_a_personality_its_own_switches_only():
    config = BrokerConfig(faults=frozenset({"toy.epoch-unchecked", "kafka.crc-ieee"}))
    faults = config.faults_as(ToyFaults)
    assert faults.on == {"epoch-unchecked"} and faults.epoch_unchecked and not faults.crc_ieee
    with pytest.raises(ValueError):
        BrokerConfig(faults=frozenset({"toy.no-such"})).faults_as(ToyFaults)
