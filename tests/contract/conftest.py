"""Contract tests: parametrized over the protocol registry, so a protocol is checked the moment it registers
(also one registered through WIRECHECK_PROTOCOLS, as tests/integration/test_new_protocol.py shows)."""

from __future__ import annotations

import pytest

from wirecheck.protocols.registry import all_specs

SPECS = all_specs()


def pytest_generate_tests(metafunc):
    if "spec" in metafunc.fixturenames:
        metafunc.parametrize("spec", [SPECS[name] for name in sorted(SPECS)], ids=sorted(SPECS))


@pytest.fixture(scope="session")
def reference_broker(tmp_path_factory):
    """The reference broker with every personality it has, on ephemeral ports."""
    from wirecheck.targets.launcher import launch

    broker = launch(workdir=tmp_path_factory.mktemp("broker"))
    yield broker
    broker.stop()
