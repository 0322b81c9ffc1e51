"""The clause audit: one table per protocol joining its catalogue, its faults and its conformance cases.

Why: a clause catalogue says what the suite checks, ``ProtocolSpec.faults`` says which of those checks are
proven able to fail (a reference-broker fault makes the suite report the clause), and the suite's
``@case("<id>")`` decorators say how many cases name each clause. Reviewers need the three side by side to see
which MUST clauses are never proven failing, which clauses rest on a decision, and where cases are thin. The
tables are committed under ``docs/clauses/`` and a contract test regenerates them, so they cannot drift.

The module writes and prints nothing (``wirecheck clauses`` does); the one thing it reads is the source text of
a protocol's suite, parsed with :mod:`ast` so that no test module is imported. Output is deterministic: rows
sorted by clause id, lists sorted, fixed formatting, so a regenerated table diffs cleanly.
"""

from __future__ import annotations

import ast
import importlib.util
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeGuard

from wirecheck.protocols.clauses import Level
from wirecheck.protocols.clients import scenario_clauses

COLUMNS = ("id", "level", "requirement", "source", "decision", "faults", "variants", "cases", "unbreakable",
           "sole reading")
#: the engine's own differential clause carries a decision about the engine, not about the protocol: no variant
ENGINE_DECISION = ".differential.same-answer"
REGENERATE = "wirecheck clauses --format md --output docs/clauses"


@dataclass(frozen=True)
class ClauseRow:
    id: str
    level: str
    requirement: str
    source: str
    decision: str
    faults: tuple[str, ...]
    variants: tuple[str, ...]
    cases: int
    unbreakable: str = ""  # why no server-side fault can break it
    sole_reading: str = ""  # why the decision admits no other reading (so it has no variant)


@dataclass(frozen=True)
class Summary:
    clauses: int
    must: int
    should: int
    must_with_fault: int
    must_unbreakable: int = 0  # MUST clauses no server-side fault can break (each says why)
    decisions: int = 0  # clauses that carry a decision
    decisions_with_variant: int = 0  # ... and a reference-broker variant taking another reading
    decisions_sole: int = 0  # ... and no variant because the spec permits no other reading (each says why)

    @property
    def must_with_fault_percent(self) -> float | None:
        breakable = self.must - self.must_unbreakable
        return round(100 * self.must_with_fault / breakable, 1) if breakable else None


@dataclass(frozen=True)
class KnownDivergence:
    """A divergence of an upstream server from the protocol it defines (targets/upstream/expectations/)."""
    server: str  # e.g. "Apache Kafka 3.9.2"
    case: str
    clause: str
    reason: str
    source: str


@dataclass(frozen=True)
class ProtocolAudit:
    protocol: str
    rows: tuple[ClauseRow, ...]
    divergences: tuple[KnownDivergence, ...] = ()

    @property
    def summary(self) -> Summary:
        must = [row for row in self.rows if row.level == Level.MUST.value]
        decided = [row for row in self.rows if row.decision and not row.id.endswith(ENGINE_DECISION)]
        return Summary(clauses=len(self.rows), must=len(must), should=len(self.rows) - len(must),
                       must_with_fault=sum(1 for row in must if row.faults),
                       must_unbreakable=sum(1 for row in must if row.unbreakable and not row.faults),
                       decisions=len(decided), decisions_with_variant=sum(1 for row in decided if row.variants),
                       decisions_sole=sum(1 for row in decided if row.sole_reading and not row.variants))


# -- counting the cases that name a clause ---------------------------------------------------------------------

def _is_case_marker(decorator: ast.expr) -> TypeGuard[ast.Call]:
    """``case(...)`` (``case = pytest.mark.case``), ``mark.case(...)`` or ``pytest.mark.case(...)``."""
    if not isinstance(decorator, ast.Call):
        return False
    func = decorator.func
    if isinstance(func, ast.Name):
        return func.id == "case"
    return isinstance(func, ast.Attribute) and func.attr == "case" and _names_mark(func.value)


def _names_mark(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "mark") or (
        isinstance(node, ast.Attribute) and node.attr == "mark")


def _module_string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments, so ``@case(CLAUSE)`` resolves to its clause id."""
    constants = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant) \
                and isinstance(statement.value.value, str):
            constants.update({target.id: statement.value.value
                              for target in statement.targets if isinstance(target, ast.Name)})
    return constants


def _clause_id_of(marker: ast.Call, constants: Mapping[str, str]) -> str | None:
    if not marker.args:
        return None
    first = marker.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    if isinstance(first, ast.Name):
        return constants.get(first.id)
    return None


def _scenario_of(decorator: ast.expr) -> str | None:
    """The scenario of a ``clients_case(SPEC, "scenario")`` decorator (targets/clients.py), else None."""
    if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name) \
            and decorator.func.id == "clients_case" and len(decorator.args) == 2 \
            and isinstance(decorator.args[1], ast.Constant) and isinstance(decorator.args[1].value, str):
        return decorator.args[1].value
    return None


def count_cases(source: str, client_cases: Callable[[str], Iterable[str]] = lambda scenario: ()) -> Counter[str]:
    """Clause id -> how many case decorators in this module's source name it; ``client_cases(scenario)`` gives
    the clauses a ``clients_case`` decorator parametrizes over (one case per client)."""
    tree = ast.parse(source)
    constants = _module_string_constants(tree)
    counts: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in filter(_is_case_marker, node.decorator_list):
                clause_id = _clause_id_of(decorator, constants)
                if clause_id is not None:
                    counts[clause_id] += 1
            for scenario in filter(None, map(_scenario_of, node.decorator_list)):
                counts.update(client_cases(scenario))
    return counts


def suite_files(suite_module: str) -> list[Path]:
    """The ``*.py`` files of a suite package (found without importing its test modules); none if it is absent."""
    try:
        found = importlib.util.find_spec(suite_module)
    except ModuleNotFoundError:
        return []
    if found is None or not found.submodule_search_locations:
        return [Path(found.origin)] if found is not None and found.origin else []
    return sorted(path for location in found.submodule_search_locations for path in Path(location).glob("*.py"))


def suite_case_counts(suite_module: str, client_cases: Callable[[str], Iterable[str]] = lambda s: ()) \
        -> Counter[str]:
    """Clause id -> number of cases naming it across the suite's modules (reads their source text)."""
    total: Counter[str] = Counter()
    for path in suite_files(suite_module):
        total.update(count_cases(path.read_text(encoding="utf-8"), client_cases))
    return total


# -- building the table ----------------------------------------------------------------------------------------

def _keys_pointing_at(mapping: Mapping[str, str], clause_id: str) -> tuple[str, ...]:
    return tuple(sorted(name for name, target in mapping.items() if target == clause_id))


def audit(spec, case_counts: Mapping[str, int] | None = None,
          divergences: Iterable[KnownDivergence] = ()) -> ProtocolAudit:
    """The audit of one protocol; ``case_counts`` defaults to counting the cases in ``spec.suite``;
    ``divergences``: the upstream servers' known divergences from it."""
    clients = getattr(spec, "clients", None) or {}
    counts = suite_case_counts(spec.suite, lambda scenario: scenario_clauses(spec.name, clients, scenario).values()) \
        if case_counts is None else case_counts
    variants = getattr(spec, "variants", None) or {}
    client_faults = getattr(spec, "client_faults", None) or {}
    rows = tuple(ClauseRow(id=clause.id, level=clause.level.value, requirement=clause.requirement,
                           source=clause.source, decision=clause.decision,
                           faults=_keys_pointing_at(spec.faults, clause.id) + tuple(
                               sorted(fault for fault, clauses in client_faults.items() if clause.id in clauses)),
                           variants=_keys_pointing_at(variants, clause.id),
                           cases=counts.get(clause.id, 0), unbreakable=clause.unbreakable,
                           sole_reading=clause.sole_reading)
                 for clause in sorted(spec.catalogue, key=lambda clause: clause.id))
    ordered = tuple(sorted(divergences, key=lambda d: (d.server, d.clause, d.case)))
    return ProtocolAudit(spec.name, rows, ordered)


def audit_all(specs: Mapping[str, object],
              divergences: Mapping[str, Iterable[KnownDivergence]] | None = None) -> list[ProtocolAudit]:
    return [audit(specs[name], divergences=(divergences or {}).get(name, ())) for name in sorted(specs)]


# -- rendering -------------------------------------------------------------------------------------------------

def summary_line(summary: Summary) -> str:
    percent = "n/a" if summary.must_with_fault_percent is None else f"{summary.must_with_fault_percent:.1f} %"
    breakable = summary.must - summary.must_unbreakable
    unbreakable = f" ({summary.must_unbreakable} no server can break)" if summary.must_unbreakable else ""
    return (f"{summary.clauses} clauses, {summary.must} MUST{unbreakable}, {summary.should} SHOULD; "
            f"MUST with a fault: {summary.must_with_fault}/{breakable} = {percent}; "
            f"decisions with a variant: {summary.decisions_with_variant}/{summary.decisions}"
            f"{f' ({summary.decisions_sole} admit no other reading)' if summary.decisions_sole else ''}")


def markdown_cell(text: str) -> str:
    """One table cell: on one line, whitespace collapsed, ``|`` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code_list(names: Iterable[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _markdown_row(row: ClauseRow) -> str:
    cells = (f"`{row.id}`", row.level, row.requirement, row.source, row.decision,
             _code_list(row.faults), _code_list(row.variants), str(row.cases), row.unbreakable, row.sole_reading)
    return "| " + " | ".join(markdown_cell(cell) for cell in cells) + " |"


def to_markdown(result: ProtocolAudit) -> str:
    header = [
        f"# {result.protocol}: clause audit",
        "",
        f"<!-- DO NOT EDIT: generated by `{REGENERATE}` -->",
        (f"Generated by `{REGENERATE}` from the {result.protocol} clause catalogue, the reference broker's "
         f"faults table (`ProtocolSpec.faults`) and the case decorators of its suite; do not edit it by hand, "
         f"regenerate it."),
        "",
        f"Summary: {summary_line(result.summary)}",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    known = []
    if result.divergences:
        known = ["", "## Known divergences of upstream servers", "",
                 "Where the upstream server breaks its own definitions or documentation "
                 "(`targets/upstream/expectations/`): XFAIL against that server, with the source.", "",
                 "| server | case | clause | reason | source |", "|---|---|---|---|---|"]
        known += ["| " + " | ".join(markdown_cell(cell) for cell in (d.server, f"`{d.case}`", f"`{d.clause}`",
                                                                      d.reason, d.source)) + " |"
                  for d in result.divergences]
    return "\n".join([*header, *map(_markdown_row, result.rows), *known]) + "\n"


def to_json_data(result: ProtocolAudit) -> dict:
    summary = result.summary
    return {"protocol": result.protocol,
            "known_divergences": [asdict(d) for d in result.divergences],
            "summary": {**asdict(summary), "must_with_fault_percent": summary.must_with_fault_percent},
            "clauses": [{**asdict(row), "faults": list(row.faults), "variants": list(row.variants)}
                        for row in result.rows]}


def to_json(result: ProtocolAudit) -> str:
    return json.dumps(to_json_data(result), indent=2, sort_keys=True) + "\n"


RENDERERS = {"md": to_markdown, "json": to_json}


def stdout_text(results: Iterable[ProtocolAudit], fmt: str) -> str:
    """Every table on standard output: Markdown tables one after another, or one JSON object by protocol."""
    results = list(results)
    if fmt == "json":
        return json.dumps({r.protocol: to_json_data(r) for r in results}, indent=2, sort_keys=True) + "\n"
    return "\n".join(map(to_markdown, results))


def rendered_files(results: Iterable[ProtocolAudit], fmt: str) -> dict[str, str]:
    """File name (``<protocol>.md`` / ``<protocol>.json``) -> its text, for ``--output DIR``."""
    render = RENDERERS[fmt]
    return {f"{result.protocol}.{fmt}": render(result) for result in results}
