"""Every reference-broker personality keeps the shape ARCHITECTURE.md gives it: its faults and variants are typed
objects (broker/switches.py), each switch read by name at the point it breaks or takes its reading,
never a string tested for membership; every declared switch is read somewhere and every switch read is declared;
no module is over 400 lines. Parametrized over the personalities the broker discovers, so a new one is checked
the moment it exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from wirecheck.broker.personality import discover

PERSONALITIES = discover()
MAX_LINES = 400


def sources(name: str) -> dict[str, str]:
    package = Path(importlib.import_module(f"wirecheck.broker.{name}").__file__).parent
    return {path.relative_to(package).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(package.rglob("*.py")) if "_pb2" not in path.name}  # generated gRPC modules


def short_names(catalogue: dict[str, str]) -> set[str]:
    return {name.split(".", 1)[1] for name in catalogue}


@pytest.mark.parametrize("name", sorted(PERSONALITIES))
@pytest.mark.parametrize("kind", ["faults", "variants"])
def test_every_switch_is_read_by_name_and_every_name_read_is_declared(name, kind):
    catalogue = getattr(PERSONALITIES[name], kind)
    declared = {short.replace("-", "_") for short in short_names(catalogue)}
    read = {attribute for text in sources(name).values()
            for attribute in re.findall(rf"\b{kind}\.([a-z][a-z0-9_]*)\b", text)}
    read -= {"on", "declared", "catalogue", "personality", "py"}  # the object's own members; faults.py in a comment
    assert read - declared == set(), "switches read but not declared"
    assert declared - read == set(), "switches declared but never read"


@pytest.mark.parametrize("name", sorted(PERSONALITIES))
def test_no_switch_is_a_string_tested_for_membership(name):
    info = PERSONALITIES[name]
    names = short_names(info.faults) | short_names(info.variants)
    found = [(file, switch) for file, text in sources(name).items()
             for switch in re.findall(r'"([a-z0-9-]+)" (?:not )?in ', text) if switch in names]
    assert found == []


@pytest.mark.parametrize("name", sorted(PERSONALITIES))
def test_no_module_is_over_400_lines(name):
    long = {file: text.count("\n") for file, text in sources(name).items() if text.count("\n") > MAX_LINES}
    assert long == {}
