"""A protocol that declares a login step (``ProtocolSpec.login``) has one its runner can call: ``login(target,
session)`` in its suite's ``login`` module."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from tests.contract.conftest import SPECS
from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.runner.target import login_step

DECLARING = sorted(name for name, spec in SPECS.items() if spec.login)


@pytest.mark.parametrize("name", DECLARING)
def test_a_declared_login_step_is_login_of_the_suites_login_module(name):
    step = login_step(SPECS[name])
    assert len(inspect.signature(step).parameters) == 2, f"{name}: login{inspect.signature(step)}"


def test_a_login_step_the_suite_lacks_is_a_harness_error():
    without = dataclasses.replace(SPECS["rustlog"], login=True)
    with pytest.raises(HarnessError, match="wirecheck.suites.rustlog.login defines no login"):
        login_step(without)
