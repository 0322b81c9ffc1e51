"""The layers import one way (ARCHITECTURE.md, "The layout"): protocols/ imports no other layer (the verdict model
and transcripts live there, so every layer may import them); strategies/ imports only protocols/; reports/ only
protocols/ (nothing from targets/ at run time); targets/ the three below it; suites/ anything but the
reference broker. The reference broker is a second, independent implementation of each spec: nothing under
broker/ imports the suite's codecs, strategies or cases, so the two check each other instead of
sharing one misreading.

The imports as they are, not only as the table permits: no cycle between the top-level areas; none between the
modules of the corridor a verdict flows through (the runner, its events and the outputs), counting what only a
type checker reads too; and nothing imports the pytest plugin (pytest loads it; the runner and the corpus know
nothing of it)."""

from __future__ import annotations

import ast
import functools
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


def imports(tree: ast.Module, typing: bool = False) -> list[str]:
    """The modules a file imports at run time (what only a type checker reads, under TYPE_CHECKING, is left out
    unless ``typing``)."""
    checking_only = set() if typing else {
        id(node) for branch in ast.walk(tree) if isinstance(branch, ast.If)
        and ast.unparse(branch.test).endswith("TYPE_CHECKING") for stmt in branch.body for node in ast.walk(stmt)}
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
        for name in file_imports(path):
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


def file_imports(path: Path, typing: bool = False) -> tuple[str, ...]:
    """``imports`` of one file, parsed once for every test here."""
    return _parsed(path)[typing]


@functools.cache
def _parsed(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return tuple(imports(tree)), tuple(imports(tree, typing=True))


@functools.cache
def modules(folders: tuple[str, ...]) -> dict[str, Path]:
    """``wirecheck.<dotted name>`` -> file, for every module under ``folders`` (paths under the root)."""
    found = {}
    for folder in folders:
        base = ROOT.joinpath(*folder.split("/"))
        for path in [base.with_suffix(".py")] if base.with_suffix(".py").is_file() else sorted(base.rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            found[".".join(["wirecheck", *(parts[:-1] if parts[-1] == "__init__" else parts)])] = path
    return found


def import_graph(found: dict[str, Path], typing: bool = False) -> dict[str, set[str]]:
    """module -> the modules of ``found`` it imports (a name imported from a package counts as the package)."""
    graph: dict[str, set[str]] = {}
    for module, path in found.items():
        graph[module] = set()
        for name in file_imports(path, typing):
            while name and name not in found:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].add(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            edge = next(edges, None)
            if edge is not None:
                if edge not in index:
                    index[edge] = low[edge] = len(index)
                    stack.append(edge)
                    on_stack.add(edge)
                    work.append((edge, iter(sorted(graph.get(edge, ())))))
                elif edge in on_stack:
                    low[node] = min(low[node], index[edge])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_between_the_top_level_areas():
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph(modules(tuple(MAY_IMPORT))).items():
        area = layer_of(module)
        assert area is not None
        graph.setdefault(area, set()).update(other for name in targets
                                             if (other := layer_of(name)) is not None and other != area)
    assert cycles(graph) == []


def test_reports_import_nothing_from_targets_at_run_time():
    found = modules(("reports",))
    assert {(module, name) for module, names in import_graph(modules(tuple(MAY_IMPORT))).items() if module in found
            for name in names if layer_of(name) == "targets"} == set()


#: the corridor from a case to every output: the runner, the plugin that adapts pytest to it, and the reports
CORRIDOR = ("targets/runner", "targets/plugin", "targets/rejudged", "targets/corpus", "reports")


def test_no_import_cycle_in_the_corridor_from_a_case_to_its_outputs():
    assert cycles(import_graph(modules(CORRIDOR), typing=True)) == []


def test_nothing_imports_the_plugin():
    everything = modules(tuple(MAY_IMPORT))
    assert sorted(module for module, names in import_graph(everything, typing=True).items()
                  if "wirecheck.targets.plugin" in names) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
