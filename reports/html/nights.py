"""The report's pages across nights: ``safety.html`` (anomalies of the safety runs per target, night and kind,
and the runs) and ``coverage.html`` (the state-coverage maps per target, protocol and night, and the cells of the
clause catalogue each night reached, never-reached ones first). Built from summary.json's ``safety``,
``safety_runs``, ``state_coverage`` and ``state_coverage_cells`` (reports/pipeline/SCHEMA.md)."""

from __future__ import annotations

from pathlib import Path

from wirecheck.reports.html.site import esc, page, table, verdict_cell, write

SAFETY_PAGE, COVERAGE_PAGE = "safety.html", "coverage.html"


def links(summary: dict) -> str:
    """The index page's line pointing at the pages this module wrote (nothing when there is nothing to show)."""
    parts = []
    if summary.get("safety_runs"):
        parts.append(f'<a href="{SAFETY_PAGE}">Safety runs across nights</a> '
                     f'({len(summary["safety_runs"])} run(s))')
    if summary.get("state_coverage"):
        parts.append(f'<a href="{COVERAGE_PAGE}">State coverage across nights</a>')
    return f'<p>{" · ".join(parts)}</p>' if parts else ""


def write_pages(summary: dict, out_dir: Path) -> None:
    if summary.get("safety_runs"):
        write(Path(out_dir) / SAFETY_PAGE, _safety(summary))
    if summary.get("state_coverage"):
        write(Path(out_dir) / COVERAGE_PAGE, _coverage(summary))


def _groups(rows: list[dict], keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for row in rows:
        out.setdefault(tuple(row[k] for k in keys), []).append(row)
    return out


def _safety(summary: dict) -> str:
    sections = []
    for (target, protocol), rows in _groups(summary["safety"], ("target", "protocol")).items():
        dates = sorted({r["date"] for r in rows}, reverse=True)
        cell = {(r["kind"], r["date"]): r for r in rows}
        kinds = list(dict.fromkeys(r["kind"] for r in rows))  # the checker's order (summary.json is sorted so)
        body = []
        for kind in kinds:
            line = [f"<td><code>{esc(kind)}</code></td>"]
            for date in dates:
                r = cell.get((kind, date))
                if r is None:
                    line.append(verdict_cell(None, ""))
                    continue
                title = f"{r['anomalies']} in {r['runs_with']} of {r['runs']} run(s) on {date}"
                line.append(verdict_cell("FAILED" if r["anomalies"] else "OK", str(r["anomalies"]), title=title))
            body.append(line)
        sections.append(f"<h2>{esc(target)} · {esc(protocol)}</h2>"
                        + table(["anomaly kind", *dates], body, css="matrix safety"))
    runs = table(["target", "protocol", "run", "date", "result", "ok", "fail", "info", "acknowledged", "restarts",
                  "client crashes", "faults", "seconds", "directory"],
                 [[esc(r["target"]), esc(r["protocol"]), esc(r["run_id"]), esc(r["date"]),
                   verdict_cell("FAILED" if r["anomalies"] else "OK",
                                ", ".join(f"{k} {v}" for k, v in sorted((r["by_kind"] or {}).items()))
                                or "no anomaly"),
                   esc(r["ok"]), esc(r["fail"]), esc(r["info"]), esc(r["acknowledged"]), esc(r["restarts"]),
                   esc(r["client_crashes"]),
                   esc(", ".join(f"{k} {v}" for k, v in sorted((r["faults"] or {}).items())) or "none"),
                   esc(r["seconds"]), f"<code>{esc(r['run_dir'])}</code>"] for r in summary["safety_runs"]],
                 css="filterable runs")
    intro = ('<p><a href="index.html">matrix</a></p><p class="muted">Anomalies found by <code>wirecheck safety</code> '
             "per night (summed over the night's runs; hover a cell for how many runs had it), each target's "
             f'{esc(summary.get("window"))} most recent nights. A zero is a night that checked the kind and found '
             "none. Each run's directory holds its history, report and plot.svg.</p>")
    return page("wirecheck: safety across nights", intro + "".join(sections) + "<h2>Runs</h2>" + runs,
                filterable=True)


def _coverage(summary: dict) -> str:
    cells_of = _groups(summary.get("state_coverage_cells", []), ("target", "protocol"))
    sections = []
    for (target, protocol), rows in _groups(summary["state_coverage"], ("target", "protocol")).items():
        rows = sorted(rows, key=lambda r: r["night_rank"])
        nights = table(["night", "runs", "mutants", "cells reached", "catalogue cells reached", "transitions"],
                       [[esc(r["date"]), esc(r["runs"]), esc(r["mutants"]), esc(r["cells"]),
                         f"{esc(r['catalogue_reached'])} of {esc(r['catalogue'])}", esc(r["transitions"])]
                        for r in rows], css="coverage-nights")
        dates = [r["date"] for r in rows]
        cells = cells_of.get((target, protocol), [])
        never = sum(1 for c in cells if not c["ever_reached"])
        grid = []
        for c in cells:
            line = [f"<td><code>{esc(c['clause'])}</code></td>", f"<td>{esc(c['request'])}</td>",
                    f"<td>{esc(c['reaction'])}</td>",
                    verdict_cell("OK" if c["ever_reached"] else "FAILED", "yes" if c["ever_reached"] else "never")]
            reached = set(c["reached_on"] or [])
            line += [verdict_cell("OK" if d in reached else None, "✓" if d in reached else "") for d in dates]
            grid.append(line)
        sections.append(f"<h2>{esc(target)} · {esc(protocol)}</h2>{nights}"
                        f"<h3>Catalogue cells: {never} of {len(cells)} never reached</h3>"
                        + table(["clause", "request", "reaction", "ever reached", *dates], grid,
                                css="filterable matrix"))
    intro = ('<p><a href="index.html">matrix</a></p><p class="muted">The reaction states the bulk fuzz cases drove '
             "each target into (run.json <code>coverage</code>), per night: distinct (session state, request, "
             "reaction) cells, and the error cells the clause catalogue names. \"Never\": no night in the warehouse "
             "reached the cell; the nights' columns are the most recent ones.</p>")
    return page("wirecheck: state coverage across nights", intro + "".join(sections), filterable=True)
