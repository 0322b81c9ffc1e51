"""Variants, the dual of faults: each takes another reading the spec permits, and the whole suite passes against
it as users run it (0 FAILED, 0 ERROR; a SHOULD clause read the other way is NON-STRICT), also with
--differential against the clean reference broker. A fault stays caught with every variant that does not take its
clause's other reading."""

from __future__ import annotations

import os

import pytest

from tests.quality.expected import EXPECTED, EXTRA_ARGS, SCOPES, VARIANT_ARGS
from tests.quality.harness import run_suite
from wirecheck.protocols.registry import all_specs
from wirecheck.broker.personality import discover

SPECS = all_specs()
ALL_VARIANTS = sorted((name, variant) for name, spec in SPECS.items() for variant in spec.variants)
#: every variant alone is the full quality profile (WIRECHECK_QUALITY=full: about 4 minutes on 2 cores); CI runs
#: all of a protocol's variants at once (below), which passes only if each of them does, to stay within its budget
VARIANTS = ALL_VARIANTS if os.environ.get("WIRECHECK_QUALITY") == "full" else []


@pytest.mark.parametrize("protocol", sorted(SPECS))
def test_the_broker_and_the_spec_list_the_same_variants(protocol):
    info = discover().get(protocol)
    assert set(info.variants if info else ()) == set(SPECS[protocol].variants)
    for variant, clause in SPECS[protocol].variants.items():
        assert clause in SPECS[protocol].catalogue, variant


@pytest.mark.parametrize(("protocol", "variant"), VARIANTS, ids=[v for _, v in VARIANTS])
def test_the_whole_suite_passes_against_a_variant(tmp_path, protocol, variant):
    run = run_suite(protocol, tmp_path, extra=["--reference-variant", variant, *VARIANT_ARGS.get(variant, [])],
                    strict=False)
    failed = [f"{r['nodeid']}: {r['message'][:300]}" for r in run.records if r["verdict"] in ("FAILED", "ERROR")]
    assert not failed and run.returncode == 0, failed or run.tail()


def variant_args(variants, also: list[str] = ()) -> list[str]:
    """``--reference-variant`` for each, then the arguments the variants (and ``also``, a fault's) need to be
    reachable, each set once."""
    args = [arg for variant in variants for arg in ("--reference-variant", variant)]
    for extra in dict.fromkeys([*(tuple(VARIANT_ARGS[v]) for v in variants if v in VARIANT_ARGS), tuple(also)]):
        args += extra
    return args


@pytest.mark.parametrize("protocol", sorted(SPECS))
def test_the_whole_suite_passes_against_every_variant_at_once(tmp_path, protocol):
    """No variant takes a reading that another one forbids: a server reading every decision the other permitted
    way at once is still correct, and passes, with --differential too: where it answers otherwise than the clean
    reference broker, that is noted beside the verdict, never a failure of a correct server."""
    # the real clients must accept every permitted reading too: Kafka's nine clients take minutes, one after another
    run = run_suite(protocol, tmp_path, extra=[*variant_args(SPECS[protocol].variants), "--differential"],
                    strict=False, clients=True, timeout=1200)
    failed = [f"{r['nodeid']}: {r['message'][:300]}" for r in run.records
              if r["verdict"] in ("FAILED", "ERROR", "DIVERGENT")]
    assert not failed and run.returncode == 0, failed or run.tail()


#: faults whose own case must still catch them on a broker taking every other permitted reading at once (every
#: variant but those on the fault's own clause); the whole table was measured so (BENCHMARKS.md "Variants")
SAMPLE = ["barco.crc-unchecked", "rustlog.zero-length-ignored", "kafka.base-offset-echoed", "fluvio.crc-unchecked",
          "pravega.auth-failure-closes"]


@pytest.mark.parametrize("fault", SAMPLE)
def test_a_fault_is_caught_beside_every_other_variant(tmp_path, fault):
    protocol = fault.split(".")[0]
    clause, scope = EXPECTED[protocol][fault], SCOPES.get(fault)
    variants = [v for v, on in SPECS[protocol].variants.items() if on != clause]
    run = run_suite(f"{protocol}/{scope}.py" if scope else protocol, tmp_path, faults=[fault], expect=clause,
                    extra=variant_args(variants, EXTRA_ARGS.get(fault, [])))
    assert clause in run.clauses_with("FAILED"), run.by_verdict()
