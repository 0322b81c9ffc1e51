"""The conformance report as static HTML, in the spirit of Autobahn's index.

``index.html``: targets across, clauses down (grouped by protocol), each cell coloured by the latest verdict
and showing the pass rate over the window; then coverage, regressions, flaky cases and the per-version matrix.
``targets/<slug>.html``: one page per target. ``cases/<slug>.html``: one page per failing case with the
clause, expected vs actual, the reproduce command and the transcript (with its pcap next to it).
"""

from __future__ import annotations

import json
from pathlib import Path

from reports.html.site import copy_assets, esc, page, pct, slug, table, verdict_cell, write

LEGEND = ["OK", "XFAIL", "NON-STRICT", "XPASS", "FAILED", "ERROR", "UNIMPLEMENTED", "NOT-RUN"]


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
            f"<h2>Flaky cases</h2>{flaky}<h2>Per-version matrix</h2>{versions}")


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
            + table(["", ""], facts, css="facts") + "<h2>Transcript</h2>" + transcript_html)
    return page(f"{case['case']}: {case['verdict']}", body, depth=1)


def write_site(summary: dict, failing: list[dict], out_dir: Path) -> Path:
    """Write the whole report; ``failing`` are case rows (dicts) with ``transcript_json``."""
    from reports.pcap import write_pcap

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
    runs = ", ".join(sorted({r["run_id"] for r in summary["runs"] if r["run_rank"] == 1}))
    body = (f'<p class="muted">Latest verdict per clause and target, and the pass rate over each target\'s '
            f'{esc(summary["window"])} most recent runs. Latest runs: {esc(runs)}. '
            f'Machine-readable: <a href="summary.json">summary.json</a>.</p>'
            + _legend() + _matrix(summary, failing_link) + _sections(summary))
    write(out_dir / "index.html", page("wirecheck conformance matrix", body, filterable=True))
    return out_dir / "index.html"
