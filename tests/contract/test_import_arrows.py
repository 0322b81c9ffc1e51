"""The layers import one way (ARCHITECTURE.md, "The layout"): protocols/ imports no other layer (the verdict model
and transcripts live there, so every layer may import them); strategies/ imports only protocols/; reports/ only
protocols/ (and targets' types, for checking only); targets/ the three below it; suites/ anything but the
reference broker. The reference broker is a second, independent implementation of each spec: nothing under
broker/ imports the suite's codecs, strategies or cases, so the two check each other instead of
sharing one misreading."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = "broker"

#: layer -> the layers it may import (itself always); the reference broker is its own layer
MAY_IMPORT = {
    "protocols": set(),
    "strategies": {"protocols"},
    "reports": {"protocols"},
    "targets": {"protocols", "strategies", "reports", REFERENCE},  # the launcher starts the reference broker
    "suites": {"protocols", "strategies", "reports", "targets"},
    REFERENCE: set(),
}


def layer_of(dotted: str) -> str | None:
    """The layer of a module named ``wirecheck.<layer>...`` (or of a file's dotted path under the root)."""
    parts = dotted.removeprefix("wirecheck.").split(".")
    return parts[0] if parts[0] in MAY_IMPORT else None


def imports(tree: ast.Module) -> list[str]:
    """The modules a file imports at run time (what only a type checker reads, under TYPE_CHECKING, is left out)."""
    checking_only = {id(node) for branch in ast.walk(tree) if isinstance(branch, ast.If)
                     and ast.unparse(branch.test).endswith("TYPE_CHECKING") for stmt in branch.body
                     for node in ast.walk(stmt)}
    names = []
    for node in ast.walk(tree):
        if id(node) in checking_only:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def crossings(layer: str) -> list[str]:
    folder = ROOT.joinpath(*layer.split("."))
    found = []
    for path in sorted(folder.rglob("*.py")):
        if "node_modules" in path.parts:
            continue
        for name in imports(ast.parse(path.read_text(encoding="utf-8"))):
            if name.split(".")[0] in MAY_IMPORT and not name.startswith("wirecheck."):
                found.append(f"{path.relative_to(ROOT)}: {name} (import it as wirecheck.{name})")
                continue
            other = layer_of(name) if name.startswith("wirecheck.") else None
            if other is not None and other != layer and other not in MAY_IMPORT[layer]:
                found.append(f"{path.relative_to(ROOT)}: {name}")
    return found


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_each_layer_imports_only_the_layers_below_it(layer):
    assert crossings(layer) == []


def test_no_module_is_imported_under_two_names():
    """pytest imports a test module by its path from the root (``suites.kafka.test_x``, ``tests.unit.test_x``); an
    import of it as ``wirecheck.suites.kafka.test_x`` would load the same file a second time, as a second module with
    globals of its own. Steps several suite modules share live in a module of their own (suites/kafka/
    topics_groups.py, ...), which every importer names one way."""
    found = []
    for folder in ("suites", "tests", "targets", "bench", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            for name in imports(ast.parse(path.read_text(encoding="utf-8"))):
                if name.startswith("wirecheck.") and name.rsplit(".", 1)[-1].startswith("test_"):
                    found.append(f"{path.relative_to(ROOT)}: {name}")
    assert found == []
