"""The Fluvio personality's shape: one typed faults object and one typed variants object shared by every
component, the API families routed through one dispatch table, and no module over 400 lines."""

import re
from pathlib import Path

import pytest

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.fluvio import FAULTS, VARIANTS, FluvioOptions, create
from wirecheck.broker.fluvio import api, sc
from wirecheck.broker.fluvio.faults import FluvioFaults, FluvioVariants
from wirecheck.broker.switches import Switch

PACKAGE = Path(__file__).resolve().parents[2] / "broker" / "fluvio"


def personality(faults=(), variants=()):
    return create(BrokerConfig(faults=frozenset(faults), variants=frozenset(variants)), FluvioOptions())


def test_catalogues_come_from_the_typed_objects():
    assert FAULTS == FluvioFaults.catalogue() and VARIANTS == FluvioVariants.catalogue()
    assert all(name.startswith("fluvio.") for name in [*FAULTS, *VARIANTS])
    assert isinstance(FluvioFaults.crc_unchecked, Switch) and FluvioFaults.crc_unchecked.name == "crc-unchecked"
    assert not set(FluvioFaults.declared()) & set(FluvioVariants.declared())


def test_every_component_shares_the_personality_objects():
    p = personality(["fluvio.crc-unchecked", "fluvio.sc-status-name-wrong"], ["fluvio.no-auto-create"])
    assert p.faults.crc_unchecked and p.faults.sc_status_name_wrong and not p.faults.fetch_hw_off_by_one
    assert p.variants.no_auto_create and not p.variants.crc_recomputed
    assert p.produce.faults is p.faults and p.produce.variants is p.variants
    assert p.sc.faults is p.faults and p.sc.plane.faults is p.faults
    assert not p.storage.auto_create  # the variant no-auto-create reaches the store


def test_an_unknown_switch_is_refused():
    with pytest.raises(ValueError):
        personality(["fluvio.no-such-fault"])
    with pytest.raises(ValueError):
        FluvioFaults(["no-such-fault"])


def test_one_dispatch_table_and_what_apiversions_lists():
    p = personality()
    assert set(p.routes) == {api.PRODUCE, api.FETCH, api.API_VERSIONS, api.FETCH_OFFSETS, api.STREAM_FETCH,
                             api.UPDATE_OFFSETS, api.UPDATE_CONSUMER_OFFSET, api.DELETE_CONSUMER_OFFSET,
                             api.FETCH_CONSUMER_OFFSETS}
    assert p.routes[api.API_VERSIONS].versions is None
    listed = [(r.key, *r.versions) for r in p.routes.values() if r.listed and r.versions]
    assert listed == [(0, 0, 25), (1, 0, 25), (1002, 23, 25), (1003, 0, 25), (1005, 0, 0)]  # the SPU's order
    assert personality(["fluvio.apiversions-overadvertise"]).routes[api.PRODUCE].versions == (0, 25)
    assert set(p.sc.routes) == {sc.API_VERSIONS, sc.CREATE, sc.DELETE, sc.LIST, sc.WATCH}
    assert [k for k, *_ in personality(["fluvio.sc-watch-not-advertised"]).sc.advertised] == \
        [sc.CREATE, sc.DELETE, sc.LIST]


def test_modules_are_small_and_check_switches_only_through_their_objects():
    membership = re.compile(r'"[a-z0-9-]+" (not )?in ')
    for path in PACKAGE.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 400, path.name
        if path.name != "faults.py":
            assert not membership.search(text), path.name
            assert "self.active" not in text and "faults_of" not in text and "variants_of" not in text, path.name
