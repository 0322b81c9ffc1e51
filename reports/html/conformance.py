"""The conformance report as static HTML, in the spirit of Autobahn's index.

``index.html``: targets across, clauses down (grouped by protocol), each cell coloured by the latest verdict
and showing the pass rate over the window; then coverage, regressions, flaky cases and the per-version matrix.
``targets/<slug>.html``: one page per target. ``cases/<slug>.html``: one page per failing case with the
clause, expected vs actual, the reproduce command and the transcript (with its pcap next to it).
"""

from __future__ import annotations

import json
from pathlib import Path

from wirecheck.reports.api_support import ranges
from wirecheck.reports.html import charts, nights
from wirecheck.reports.html.site import copy_assets, esc, page, pct, slug, table, verdict_cell, write

LEGEND = ["OK", "XFAIL", "FLAKY", "NON-STRICT", "DIVERGENT", "XPASS", "FAILED", "ERROR", "BLOCKED", "TARGET-DOWN", "UNIMPLEMENTED",
          "NOT-RUN"]


def case_page_name(case: dict) -> str:
    return f"cases/{slug(case['run_id'], case['nodeid'])}.html"


def target_page_name(target: str) -> str:
    return f"targets/{slug(target)}.html"


def _legend() -> str:
    return '<p class="legend">' + "".join(f'<span class="v-{v}">{v}</span>' for v in LEGEND) + "</p>"


def _matrix(summary: dict, failing_link: dict) -> str:
    targets = summary["targets"]
    cells = {(m["target"], m["clause"]): m for m in summary["matrix"]}
    clauses: dict[str, dict[str, dict]] = {}
    for m in summary["matrix"]:
        clauses.setdefault(m["protocol"], {}).setdefault(m["clause"], m)
    head = "".join(f'<th><a href="{esc(target_page_name(t))}">{esc(t)}</a></th>' for t in targets)
    rows = []
    for protocol in sorted(clauses):
        rows.append(f'<tr class="protocol"><th colspan="{len(targets) + 2}">{esc(protocol)}</th></tr>')
        for clause_id in sorted(clauses[protocol]):
            info = clauses[protocol][clause_id]
            row = [f'<td><code>{esc(clause_id)}</code></td>', f"<td>{esc(info.get('level'))}</td>"]
            for target in targets:
                m = cells.get((target, clause_id))
                if m is None:
                    row.append(verdict_cell(None, "", title="not run against this target"))
                    continue
                title = (f"{m['latest_verdict']} in {m['latest_run_id']}; pass rate {pct(m['pass_rate'])} "
                         f"over {m['runs']} run(s)")
                text = f"{m['latest_verdict']} {pct(m['pass_rate'])}"
                if m["latest_verdict"] == "BLOCKED":  # never reached: say what stopped it, not "not run"
                    title = f"blocked in {m['latest_run_id']}: {m.get('blocked_by') or 'a precondition failed'}"
                    text = f"BLOCKED by {m.get('blocked_by') or 'a precondition'}"
                row.append(verdict_cell(m["latest_verdict"], text, failing_link.get((target, clause_id)), title))
            rows.append("<tr>" + "".join(row) + "</tr>")
    return (f'<table class="filterable matrix"><thead><tr><th>clause</th><th>level</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def _sections(summary: dict) -> str:
    coverage = table(["protocol", "level", "exercised", "catalogued", "coverage", "catalogue"],
                     [[esc(c["protocol"]), esc(c["level"]), esc(c["exercised"]), esc(c["catalogued"]),
                       pct(c["coverage"]), "yes" if c["catalogue_present"] else "missing"]
                      for c in summary["coverage"]], css="coverage")
    regressions = table(["target", "case", "clause", "baseline run", "run", "message"],
                        [[esc(r["target"]), f"<code>{esc(r['nodeid'])}</code>", esc(r["clause"]),
                          esc(r["baseline_run_id"]), esc(r["run_id"]), esc(r["message"])]
                         for r in summary["regressions"]], css="regressions") if summary["regressions"] else \
        "<p>No regressions against each target's previous run.</p>"
    total = sum(summary.get("regressions_total", {}).values())
    if total > len(summary["regressions"]):
        regressions = (f'<p class="muted">{total} regressions, the first {len(summary["regressions"])} listed '
                       "(a bounded number per target; the gate prints them all).</p>" + regressions)
    flaky = table(["suite version", "target", "case", "verdicts"],
                  [[esc(f["suite_version"]), esc(f["target"]), f"<code>{esc(f['nodeid'])}</code>",
                    esc(", ".join(f"{k}: {v}" for k, v in sorted(f["verdicts"].items())))]
                   for f in summary["flaky"]], css="flaky") if summary["flaky"] else "<p>No flaky cases.</p>"
    versions = table(["target", "protocol", "api", "version", "latest", "pass rate", "runs"],
                     [[esc(v["target"]), esc(v["protocol"]), esc(v["api"]), esc(v["api_version"]),
                       verdict_cell(v["latest_verdict"]), pct(v["pass_rate"]), esc(v["runs"])]
                      for v in summary["versions"]], css="versions") if summary["versions"] else \
        "<p>No per-version cases.</p>"
    return (f"<h2>Clause coverage</h2>{coverage}<h2>Regressions</h2>{regressions}"
            f"<h2>Flaky cases</h2>{flaky}<h2>Real clients across targets and nights</h2>{_clients(summary)}"
            f"<h2>API support</h2>{_api_support(summary)}<h2>Per-version matrix</h2>{versions}")


def _clients(summary: dict) -> str:
    """target x client (its latest version) x scenario: the latest verdict, the last verdicts (newest first), the
    first run that failed and the start of the current failing streak."""
    rows = summary.get("clients") or []
    if not rows:
        return "<p>No real-client cases.</p>"

    def marks(history: list[dict]) -> str:
        return " ".join(f'<span class="v-{esc(h["verdict"])}" title="{esc(h["date"])} {esc(h["run_id"])}: '
                        f'{esc(h["verdict"])} ({esc(h["client_version"])})">{esc(h["verdict"])}</span>'
                        for h in history)

    return table(["target", "protocol", "client", "version", "scenario", "latest", "last runs (newest first)",
                  "first failed", "failing since"],
                 [[esc(c["target"]), esc(c["protocol"]), esc(c["client"]), esc(c["client_version"]),
                   esc(c["scenario"]),
                   verdict_cell(c["latest_verdict"], title=f"{c['latest_date']} {c['latest_run_id']}"),
                   marks(c["history"]), esc(c["first_failed_date"]), esc(c["failing_since_date"])]
                  for c in rows], css="clients")


def _api_support(summary: dict) -> str:
    """target x protocol x api: the versions advertised and found working by the latest verdicts."""
    rows = summary.get("api_support") or []
    if not rows:
        return "<p>No per-version cases.</p>"
    return table(["target", "protocol", "api", "advertised", "working", "failing", "not advertised"],
                 [[esc(r["target"]), esc(r["protocol"]), esc(r["api"])]
                  + [esc(ranges(r[k])) for k in ("advertised", "working", "failing", "not_advertised")]
                  for r in rows], css="api-support")


def _target_page(target: str, summary: dict, failing: list[dict]) -> str:
    rows = [[f"<code>{esc(m['clause'])}</code>", esc(m["protocol"]), esc(m.get("level")),
             verdict_cell(m["latest_verdict"]), pct(m["pass_rate"]), esc(m["runs"]), esc(m["latest_run_id"])]
            for m in summary["matrix"] if m["target"] == target]
    cases = [[f'<a href="../{esc(case_page_name(c))}"><code>{esc(c["nodeid"])}</code></a>', esc(c["clause"]),
              verdict_cell(c["verdict"]), esc(c["run_id"]), esc(c["message"])]
             for c in failing if c["target"] == target]
    body = ('<p><a href="../index.html">matrix</a></p><h2>Clauses</h2>'
            + table(["clause", "protocol", "level", "latest", "pass rate", "runs", "latest run"], rows)
            + "<h2>Failing cases in the latest run</h2>"
            + (table(["case", "clause", "verdict", "run", "message"], cases, css="cases") if cases else "<p>None.</p>"))
    return page(f"wirecheck: {target}", body, depth=1, filterable=True)


def _transcript_rows(transcript_json: str | None) -> tuple[str, dict | None]:
    if not transcript_json:
        return "<p>No transcript was recorded.</p>", None
    try:
        transcript = json.loads(transcript_json)
    except ValueError:
        return "<p>The transcript file is not valid JSON.</p>", None
    rows = [[esc(e.get("t")), esc(e.get("conn")), esc(e.get("kind")),
             f'<span class="hex">{esc(e.get("hex", ""))}</span>',
             esc(e.get("decoded") or e.get("detail") or " ".join(x for x in (e.get("local"), e.get("peer")) if x))]
            for e in transcript.get("events", [])]
    return table(["t (s)", "conn", "event", "bytes (hex)", "decoded"], rows, css="transcript"), transcript


def _history(case: dict) -> str:
    """The case's verdict in each run of the window, oldest first."""
    runs = sorted(case.get("history") or [], key=lambda r: -r["run_rank"])
    if not runs:
        return ""
    head = "".join(f"<th>{esc(r['run_id'])}</th>" for r in runs)
    cells = "".join(verdict_cell(r["verdict"]) for r in runs)
    return (f'<h2>History</h2><table class="history"><thead><tr>{head}</tr></thead>'
            f"<tbody><tr>{cells}</tr></tbody></table>")


def _case_page(case: dict, pcap_name: str | None) -> str:
    transcript_html, _ = _transcript_rows(case.get("transcript_json"))
    facts = [["case", f"<code>{esc(case['case'])}</code>"], ["node", f"<code>{esc(case['nodeid'])}</code>"],
             ["target", esc(case["target"])], ["run", esc(case["run_id"])],
             ["verdict", verdict_cell(case["verdict"])],
             ["clause", f"<code>{esc(case['clause'])}</code> ({esc(case.get('level'))})"],
             ["requirement", esc(case.get("requirement"))], ["source", esc(case.get("source"))],
             ["message", esc(case.get("message"))], ["expected", f"<pre>{esc(case.get('expected'))}</pre>"],
             ["actual", f"<pre>{esc(case.get('actual'))}</pre>"],
             ["reproduce", f"<pre>{esc(case.get('reproduce'))}</pre>"]]
    if pcap_name:
        facts.append(["capture", f'<a href="{esc(pcap_name)}">{esc(pcap_name)}</a> (open with Wireshark)'])
    body = (f'<p><a href="../index.html">matrix</a> · <a href="../{esc(target_page_name(case["target"]))}">'
            f'{esc(case["target"])}</a></p>'
            + table(["", ""], facts, css="facts") + _history(case) + "<h2>Transcript</h2>" + transcript_html)
    return page(f"{case['case']}: {case['verdict']}", body, depth=1)


def write_site(summary: dict, failing: list[dict], out_dir: Path) -> Path:
    """Write the whole report; ``failing`` are case rows (dicts) with ``transcript_json``."""
    from wirecheck.reports.pcap import write_pcap

    out_dir = Path(out_dir)
    copy_assets(out_dir)
    failing_link: dict = {}
    for case in failing:
        name = case_page_name(case)
        failing_link.setdefault((case["target"], case["clause"]), name)
        pcap_name = None
        _, transcript = _transcript_rows(case.get("transcript_json"))
        if transcript is not None:
            pcap_name = Path(name).with_suffix(".pcap").name
            (out_dir / "cases").mkdir(parents=True, exist_ok=True)
            write_pcap(transcript, out_dir / "cases" / pcap_name)
        write(out_dir / name, _case_page(case, pcap_name))
    for target in summary["targets"]:
        write(out_dir / target_page_name(target), _target_page(target, summary, failing))
    charts.write_plotly(out_dir)
    write(out_dir / "compare.html", _compare_page(summary))
    nights.write_pages(summary, out_dir)
    runs = ", ".join(sorted({r["run_id"] for r in summary["runs"] if r["run_rank"] == 1}))
    body = (f'<p class="muted">Latest verdict per clause and target, and the pass rate over each target\'s '
            f'{esc(summary["window"])} most recent runs. Latest runs: {esc(runs)}. '
            f'<a href="compare.html">What changed since the previous run</a>. '
            f'Machine-readable: <a href="summary.json">summary.json</a>.</p>' + nights.links(summary)
            + _charts(summary) + _run_info(summary)
            + "<h2>Matrix</h2>" + _legend() + _matrix(summary, failing_link) + _bounded_note(summary)
            + _sections(summary))
    write(out_dir / "index.html", page("wirecheck conformance matrix", body, filterable=True, charts=True))
    return out_dir / "index.html"


def _charts(summary: dict) -> str:
    if not summary.get("trend"):
        return ""
    latest = [r for r in summary["verdict_totals"] if r["run_rank"] == 1]
    per_run = [{**r, "run": f"{r['target']} · {r['run_id']}"} for r in summary["verdict_totals"]]
    return ('<div class="charts">' + charts.trend(summary["trend"])
            + charts.verdicts_stacked(per_run, "run", "Verdicts per run", "chart-runs")
            + charts.verdicts_stacked(latest, "protocol", "Verdicts per protocol (latest runs)", "chart-protocols")
            + charts.heatmap(summary["matrix"]) + "</div>")


def _run_info(summary: dict) -> str:
    rows = []
    for r in summary.get("run_info", []):
        targets = "; ".join(f"{k}: {v.get('address')}" + (" (reference" + (f", faults {', '.join(v['faults'])}"
                                                                             if v.get("faults") else "") + ")"
                                                          if v.get("reference") else "")
                            for k, v in sorted((r.get("targets") or {}).items()))
        totals = ", ".join(f"{k} {v}" for k, v in sorted((r.get("totals") or {}).items()))
        rows.append([esc(r["run_id"]), esc(r.get("started_at")), esc(r.get("finished_at") or "unfinished"),
                     esc(r.get("suite_version")), esc(r.get("profile")), "yes" if r.get("strict") else "no",
                     esc(targets), esc(totals), f"<code>{esc(' '.join(r.get('argv') or []))}</code>"])
    if not rows:
        return ""
    return "<h2>Runs</h2>" + table(["run", "started", "finished", "suite", "profile", "strict", "targets",
                                    "totals", "arguments"], rows, css="runs")


def _bounded_note(summary: dict) -> str:
    cut = {k: v for k, v in summary.get("failing_total", {}).items()
           if v > sum(1 for f in summary["failing"] if f"{f['target']} {f['run_id']}" == k)}
    if not cut:
        return ""
    return ('<p class="muted">Case pages are limited per run; the warehouse has every record. '
            + "; ".join(f"{esc(k)}: {v} failing" for k, v in sorted(cut.items())) + ".</p>")


def _compare_page(summary: dict) -> str:
    groups = {}
    for row in summary.get("comparison", []):
        groups.setdefault(row["change"], []).append(row)
    sections = []
    for change in ("regressed", "fixed", "new", "gone"):
        rows = groups.get(change, [])
        body = table(["target", "case", "clause", "old run", "new run"],
                     [[esc(r["target"]), f"<code>{esc(r['nodeid'])}</code>", esc(r["clause"]),
                       verdict_cell(r["old_verdict"], f"{r['old_verdict'] or '—'} ({r['old_run_id']})"),
                       verdict_cell(r["new_verdict"], f"{r['new_verdict'] or '—'} ({r['new_run_id']})")]
                      for r in rows], css=f"filterable compare-{change}") if rows else "<p>None.</p>"
        total = sum(n for key, n in summary.get("comparison_total", {}).items() if key.endswith(f" {change}"))
        shown = "" if total <= len(rows) else f'<p class="muted">The first {len(rows)} per target.</p>'
        sections.append(f'<h2 id="{change}">{change.capitalize()} ({total})</h2>{shown}{body}')
    intro = ('<p><a href="index.html">matrix</a></p><p class="muted">Each target\'s newest run against its '
             "previous one (or the two runs given with <code>--compare</code>). Regressed: held before, does not "
             "hold now (FAILED, ERROR, XPASS or any other verdict). Fixed: the other way round.</p>")
    return page("wirecheck: what changed", intro + "".join(sections), filterable=True)
