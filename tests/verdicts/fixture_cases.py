"""A vtoy case whose fixture meets a SHOULD-level divergence: the case body must not run (it would find its
fixture's value missing), and the verdict is the divergence's. Run by tests/integration/test_verdicts.py."""

import pytest

from wirecheck.protocols.clauses import Clause, Level
from wirecheck.protocols.verdicts import Divergence

POLITE = Clause("vtoy.echo.same", "ECHO is answered politely.", "tests/verdicts/fixture_cases.py", Level.SHOULD)


@pytest.fixture
def impolite(target):
    raise Divergence(POLITE, "a polite answer", "a curt one")


@pytest.mark.case("vtoy.echo.same")
def test_needs_a_fixture_that_diverges(target, impolite):
    raise AssertionError("the body ran without its fixture")
