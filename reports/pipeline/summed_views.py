"""The report's aggregate views, computed on the driver from rows that Spark has already summed.

Spark reads the case rows once and sums them per (target, run, clause, verdict, ...) (``conformance.aggregate``).
Only the summed rows of the window's runs are collected, and the views below are built from them. Their number
is bounded by targets × runs × clauses × verdicts, whatever the number of case records: a few thousand rows
where the warehouse holds millions. Each view as a Spark query cost a planning pass, code generation and
the JIT compilation of that code, for a few thousand rows: 4–8 jobs and 0.5–3 s per view.

The definitions are those of SCHEMA.md: within a run the worst verdict of a clause wins (``schema.SEVERITY``),
the pass rate is passing records / executed records, and ratios are rounded half up to 4 places.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from typing import Iterable

from wirecheck.reports.api_support import support_of
from wirecheck.reports.pipeline.schema import EXECUTED, PASSING
from wirecheck.protocols.verdicts import worst as _worst


def ratio(part: int, whole: int) -> float | None:
    """part / whole rounded half up to 4 places (as SCHEMA.md says); None when nothing was counted."""
    if not whole:
        return None
    return float(Decimal(repr(part / whole)).quantize(Decimal("0.0001"), ROUND_HALF_UP))


def _order(*values):
    """A sort key with nulls first, as Spark orders ascending."""
    return tuple((value is not None, value) for value in values)


def rank_runs(run_times: list[dict]) -> list[dict]:
    """(target, run_id, run_ts) rows -> the same with ``run_rank``: 1 for the newest run of each target (runs
    without a time last, then by run id, newest first)."""
    by_target = defaultdict(list)
    for row in run_times:
        by_target[row["target"]].append(row)
    ranked = []
    for target in sorted(by_target, key=_order):
        runs = sorted(by_target[target], key=lambda r: r["run_id"], reverse=True)
        runs.sort(key=lambda r: r["run_ts"] or dt.datetime.min, reverse=True)  # stable: equal times keep the ids' order
        ranked += [{**row, "run_rank": n} for n, row in enumerate(runs, 1)]
    return ranked


def _counts(rows: list[dict]) -> tuple[int, int]:
    """(passing, executed) records of summed rows."""
    passing = sum(r["records"] for r in rows if r["verdict"] in PASSING)
    return passing, sum(r["records"] for r in rows if r["verdict"] in EXECUTED)


def _groups(rows: Iterable[dict], keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
    groups = defaultdict(list)
    for row in rows:
        groups[tuple(row[k] for k in keys)].append(row)
    return groups


def trend(recent: list[dict]) -> list[dict]:
    """Per run in the window: passing and executed records and the pass rate."""
    out = []
    for (target, run_id, rank), rows in _groups(recent, ("target", "run_id", "run_rank")).items():
        passing, executed = _counts(rows)
        times = [r["run_ts"] for r in rows if r["run_ts"] is not None]
        out.append({"target": target, "run_id": run_id, "run_rank": rank, "run_ts": min(times, default=None),
                    "passing": passing, "executed": executed, "pass_rate": ratio(passing, executed)})
    return sorted(out, key=lambda r: _order(r["target"], r["run_rank"]))


def verdict_totals(recent: list[dict]) -> list[dict]:
    """Per run in the window, protocol and verdict: the number of records."""
    keys = ("target", "run_id", "run_rank", "protocol", "verdict")
    out = [{**dict(zip(keys, key)), "records": sum(r["records"] for r in rows)}
           for key, rows in _groups(recent, keys).items()]
    return sorted(out, key=lambda r: _order(r["target"], r["run_rank"], r["protocol"], r["verdict"]))


def _latest_and_rate(recent: list[dict], keys: tuple[str, ...], extra: tuple[str, ...] = ()) -> list[dict]:
    """Per key: the worst verdict in the newest run that has the key (with that run's ``extra`` columns, the
    least of each), and the pass rate over the window."""
    out = []
    for key, rows in _groups(recent, keys).items():
        per_run = _groups(rows, ("run_rank", "run_id"))
        (rank, run_id) = min(per_run)
        newest = per_run[(rank, run_id)]
        passing, executed = _counts(rows)
        row = {**dict(zip(keys, key)), "latest_verdict": _worst(r["verdict"] for r in newest),
               "latest_run_id": run_id}
        for column in extra:
            row[column] = min((r[column] for r in newest if r[column] is not None), default=None)
        out.append({**row, "pass_rate": ratio(passing, executed), "passing": passing, "executed": executed,
                    "runs": len(per_run)})
    return out


def matrix(recent: list[dict]) -> list[dict]:
    """target × protocol × clause -> latest verdict and pass rate over the window; ``blocked_by``: when the
    latest run's records of the clause were BLOCKED, what blocked them (the precondition and its clause)."""
    cells = _latest_and_rate(recent, ("target", "protocol", "clause"), ("level", "requirement", "blocked_by"))
    return sorted(cells, key=lambda r: _order(r["protocol"], r["clause"], r["target"]))


def version_matrix(recent: list[dict]) -> list[dict]:
    """Kafka-like protocols: target × protocol × api × api_version -> latest verdict and pass rate."""
    versioned = [r for r in recent if r["api"] is not None and r["api_version"] is not None]
    cells = _latest_and_rate(versioned, ("target", "protocol", "api", "api_version"))
    return sorted(cells, key=lambda r: _order(r["target"], r["protocol"], r["api"], r["api_version"]))


def api_support(versions: list[dict]) -> list[dict]:
    """The rows of ``version_matrix`` per target × protocol × api: the versions advertised, working, failing, not
    advertised and untested by their latest verdicts (``reports.api_support.support_of``, as in run.json)."""
    cells: dict[tuple, dict[int, str]] = defaultdict(dict)
    for row in versions:
        cells[(row["target"], row["protocol"], row["api"])][row["api_version"]] = row["latest_verdict"]
    return [{"target": target, "protocol": protocol, "api": api, **support_of(by_version)}
            for (target, protocol, api), by_version in sorted(cells.items(), key=lambda item: _order(*item[0]))]


def coverage(clauses: list[dict], catalogue: list[tuple]) -> list[dict]:
    """Per protocol and level: clauses exercised / catalogued.

    ``clauses``: one row per (protocol, clause) the records name, with ``level`` (the least the records give)
    and ``executed`` (whether any record of it executed). ``catalogue``: ``catalogue.catalogue_rows``, where a
    protocol whose catalogue could not be loaded has one row with a null clause: there ``catalogued`` is null
    and ``exercised`` counts the distinct clauses its records name, at the level the records give.
    """
    exercised = {(r["protocol"], r["clause"]): r["level"] for r in clauses
                 if r["executed"] and r["clause"] is not None}
    counts = defaultdict(lambda: [0, 0])
    missing = set()
    for protocol, clause, level, *_ in catalogue:
        if clause is None:
            missing.add(protocol)
            continue
        counts[(protocol, level, True)][0] += 1
        counts[(protocol, level, True)][1] += (protocol, clause) in exercised
    for (protocol, _), level in exercised.items():
        if protocol in missing:
            counts[(protocol, level, False)][1] += 1
    rows = [{"protocol": protocol, "level": level, "catalogued": catalogued if present else None,
             "exercised": hit, "catalogue_present": present,
             "coverage": ratio(hit, catalogued) if present else None}
            for (protocol, level, present), (catalogued, hit) in counts.items()]
    return sorted(rows, key=lambda r: _order(r["protocol"], r["level"]))


def uncatalogued(clauses: list[dict], catalogue: list[tuple]) -> list[dict]:
    """Clauses the records name that their protocol's catalogue does not know (a stale case or catalogue)."""
    known = {(protocol, clause) for protocol, clause, *_ in catalogue if clause is not None}
    with_catalogue = {protocol for protocol, _ in known}
    rows = {(r["protocol"], r["clause"]) for r in clauses
            if r["protocol"] in with_catalogue and (r["protocol"], r["clause"]) not in known}
    return [{"protocol": p, "clause": c} for p, c in sorted(rows, key=lambda pc: _order(*pc))]


def failing_totals(recent: list[dict], failing: tuple[str, ...], latest: set[tuple[str, str]]) -> dict[str, int]:
    """{"<target> <run_id>": records with a failing verdict} for each target's latest run that has any."""
    totals = defaultdict(int)
    for row in recent:
        if (row["target"], row["run_id"]) in latest and row["verdict"] in failing:
            totals[f"{row['target']} {row['run_id']}"] += row["records"]
    return {key: n for key, n in totals.items() if n}
