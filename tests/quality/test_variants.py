"""Variants, the dual of faults: each takes another reading the spec permits, and the whole suite passes against
it as users run it (0 FAILED, 0 ERROR; a SHOULD clause read the other way is NON-STRICT). A fault stays caught
with every variant that does not take its clause's other reading."""

from __future__ import annotations

import pytest

from tests.quality.expected import EXPECTED
from tests.quality.harness import run_suite
from wirecheck.protocols.registry import all_specs
from wirecheck.targets.reference.personality import discover

SPECS = all_specs()
VARIANTS = sorted((name, variant) for name, spec in SPECS.items() for variant in spec.variants)


@pytest.mark.parametrize("protocol", sorted(SPECS))
def test_the_broker_and_the_spec_list_the_same_variants(protocol):
    info = discover().get(protocol)
    assert set(info.variants if info else ()) == set(SPECS[protocol].variants)
    for variant, clause in SPECS[protocol].variants.items():
        assert clause in SPECS[protocol].catalogue, variant


@pytest.mark.parametrize(("protocol", "variant"), VARIANTS, ids=[v for _, v in VARIANTS])
def test_the_whole_suite_passes_against_a_variant(tmp_path, protocol, variant):
    run = run_suite(protocol, tmp_path, extra=["--reference-variant", variant], strict=False)
    failed = [f"{r['nodeid']}: {r['message'][:300]}" for r in run.records if r["verdict"] in ("FAILED", "ERROR")]
    assert not failed and run.returncode == 0, failed or run.output


#: a fault and a variant that meet: the fault's own case stays able to catch it on the variant's broker
SAMPLE = [("barco.topic-unvalidated", "barco.oversize-error-discard"),
          ("rustlog.next-offset-off-by-one", "rustlog.deep-nesting-closes"),
          ("kafka.hw-off-by-one", "kafka.fetch-immediate-empty")]


@pytest.mark.parametrize(("fault", "variant"), SAMPLE, ids=[f"{f}+{v}" for f, v in SAMPLE])
def test_a_fault_is_caught_beside_a_variant(tmp_path, fault, variant):
    protocol = fault.split(".")[0]
    clause = EXPECTED[protocol][fault]
    run = run_suite(protocol, tmp_path, faults=[fault], expect=clause, extra=["--reference-variant", variant])
    assert clause in run.clauses_with("FAILED"), run.by_verdict()
