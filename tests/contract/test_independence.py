"""The reference broker is a second, independent implementation of each spec (ARCHITECTURE.md "Layout"): no
module under targets/reference/ imports the suite's codecs, strategies or cases, so the two check each other
instead of sharing one misreading."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("wirecheck.protocols", "wirecheck.strategies", "wirecheck.suites", "protocols", "strategies", "suites")


def _imported(tree: ast.Module) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def test_the_reference_broker_imports_nothing_of_the_suite():
    offending = [f"{path.relative_to(ROOT)}: {name}"
                 for path in sorted((ROOT / "targets" / "reference").rglob("*.py"))
                 for name in _imported(ast.parse(path.read_text(encoding="utf-8")))
                 if any(name == prefix or name.startswith(prefix + ".") for prefix in FORBIDDEN)]
    assert offending == []
