"""The suites against independent servers: second readings of each spec, written without the suite's code
(``tests/independent/<protocol>/``, see their README.md and DISPUTES.md).

- Clean, each server passes its protocol's whole suite, run as users run it (``--target``), with fixed fuzz seeds.
  Not --strict: where a SHOULD clause has another permitted reading the server took on purpose (its DISPUTES.md),
  that is NON-STRICT. What the fuzzer finds with other seeds only is pinned in ``FUZZ_FINDINGS``.
- With each deliberate defect (``defects.py``), the suite FAILs the clause the defect breaks
  (``independent_expected.EXPECTED``; the run scoped to the clause's suite module and stopped at its first FAILED
  record), or the defect is listed as missed (``MISSED``), with why.
"""

from __future__ import annotations

import pytest

from tests.quality import independent
from tests.quality.harness import run_suite
from tests.quality.independent_expected import (
    CLEAN_DISPUTES,
    CLEAN_SEED,
    EXPECTED,
    FUZZ_FINDINGS,
    MIN_OK,
    MISSED,
    PENDING,
    SCOPED_MODULES,
    SCOPES,
)

PROTOCOLS = sorted(EXPECTED)
DEFECTS = [(protocol, defect) for protocol in PROTOCOLS for defect in sorted(EXPECTED[protocol])]


def _suite_against(tmp_path, protocol: str, defects: list[str] = (), suite: str | None = None,
                   extra: list[str] = (), **kwargs):
    server = independent.start(protocol, tmp_path / "server", defects)
    try:
        run = run_suite(suite or protocol, tmp_path / "reports", extra=["--target", server.target, *extra], **kwargs)
    finally:
        server.stop()
    return run, server


CLEAN = [pytest.param(protocol, id=protocol, marks=[pytest.mark.xfail(strict=True, reason=CLEAN_DISPUTES[protocol])]
                      if protocol in CLEAN_DISPUTES else []) for protocol in PROTOCOLS]


@pytest.mark.parametrize("protocol", CLEAN)
def test_clean_independent_server_passes_the_suite(tmp_path, protocol):
    seeds = ["--fuzz-seed", str(CLEAN_SEED), "--hypothesis-seed", str(CLEAN_SEED)]
    run, server = _suite_against(tmp_path, protocol, strict=False, extra=seeds, clients=True)  # real clients too
    verdicts = run.by_verdict()
    assert not verdicts.get("FAILED") and not verdicts.get("ERROR"), (verdicts.get("FAILED"), verdicts.get("ERROR"),
                                                                      run.tail(), server.stderr_tail())
    assert run.returncode == 0, run.tail()
    assert len(verdicts.get("OK", [])) >= MIN_OK[protocol], {v: len(cases) for v, cases in verdicts.items()}


FINDINGS = [pytest.param(protocol, id=protocol, marks=pytest.mark.xfail(strict=True, reason=FUZZ_FINDINGS[protocol][3]))
            for protocol in sorted(FUZZ_FINDINGS)]


@pytest.mark.parametrize("protocol", FINDINGS)
def test_clean_independent_server_survives_the_seeded_fuzz_finding(tmp_path, protocol):
    module, seed, clause, _ = FUZZ_FINDINGS[protocol]
    run, _ = _suite_against(tmp_path, protocol, suite=f"{protocol}/{module}.py", strict=False,
                            extra=["--fuzz-seed", str(seed)])
    assert not run.clauses_with("ERROR"), run.by_verdict().get("ERROR")
    assert clause not in run.clauses_with("FAILED"), run.tail()


@pytest.mark.parametrize(("protocol", "defect"), DEFECTS, ids=[f"{p}.{d}" for p, d in DEFECTS])
def test_independent_defect_is_caught(tmp_path, protocol, defect):
    clause, scope = EXPECTED[protocol][defect], SCOPES.get((protocol, defect))
    run, server = _suite_against(tmp_path, protocol, [defect], suite=f"{protocol}/{scope}.py" if scope else None,
                                 expect=clause)
    errors = [r for r in run.records if r["verdict"] == "ERROR"]
    failed = run.clauses_with("FAILED")
    assert clause in failed, (f"{protocol} --defect {defect}: expected {clause} among the FAILED clauses "
                              f"{sorted(failed)}\n{run.tail()}\n{server.stderr_tail()}")
    assert not errors, [f"{r['nodeid']}: {r['message'][:300]}" for r in errors]
    assert run.returncode == 1, run.tail()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_listed_defect_is_expected_or_missed(protocol):
    listed = independent.list_defects(protocol)
    assert listed, f"{protocol} --list-defects printed no defect"
    untested = set(listed) - set(EXPECTED[protocol]) - set(MISSED.get(protocol, {}))
    assert not untested, f"{protocol}: defects in neither EXPECTED nor MISSED: {sorted(untested)}"
    unknown = (set(EXPECTED[protocol]) | set(MISSED.get(protocol, {}))) - set(listed)
    assert not unknown, f"{protocol}: defects the server does not list: {sorted(unknown)}"
    assert not set(EXPECTED[protocol]) & set(MISSED.get(protocol, {}))


def test_every_independent_server_is_covered_or_pending():
    servers = set(independent.available())
    assert servers == set(EXPECTED) | set(PENDING), (f"not covered: {sorted(servers - set(EXPECTED) - set(PENDING))}; "
                                                     f"no server: {sorted(set(EXPECTED) | set(PENDING) - servers)}")
    assert not set(EXPECTED) & set(PENDING)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_expected_clause_is_in_the_catalogue(protocol):
    from wirecheck.protocols.registry import spec_for

    catalogue = spec_for(protocol).catalogue
    for defect, clause in EXPECTED[protocol].items():
        assert catalogue[clause].id == clause, defect


def test_every_scope_names_an_expected_defect_and_a_suite_module():
    assert len(SCOPES) == sum(len(defects) for modules in SCOPED_MODULES.values() for defects in modules.values()), \
        "a defect is scoped to two modules"
    for (protocol, defect), module in SCOPES.items():
        assert defect in EXPECTED[protocol], (protocol, defect)
        assert (independent.ROOT / "suites" / protocol / f"{module}.py").exists(), (protocol, defect)
    for protocol, (module, _, _clause, _) in FUZZ_FINDINGS.items():
        assert (independent.ROOT / "suites" / protocol / f"{module}.py").exists(), protocol
