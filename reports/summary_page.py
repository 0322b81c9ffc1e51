"""summary.html in each run directory: one self-contained page (inline style, no script, no network, no Spark)
with the totals, the headline, and every case that did not pass: clause, expected vs actual, reproducer and
the conversation. Written by the run's controlling process once every worker's records are in."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from wirecheck.reports.api_support import ranges
from wirecheck.reports.events import RunFinished
from wirecheck.reports.records import replay_command
from wirecheck.reports.rootcause import by_clause
from wirecheck.protocols.verdicts import Verdict
from wirecheck.protocols.transcript import hexdump

STYLE = """body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse}
td,th{border:1px solid #bbb;padding:.2em .6em;text-align:left;vertical-align:top}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:85%}.bad{color:#b00}.headline{font-weight:bold}
details{margin:.3em 0}.banner{font-size:140%;padding:.5em 1em;margin-bottom:1em;border-radius:.3em}
.pass{background:#dfd;color:#060}.fail{background:#fdd;color:#900}.notrun{background:#eee;color:#444}"""
EVENTS_SHOWN = 80


def _marked(verdict: str) -> bool:
    """Shown with a warning mark (reports/verdicts' table; an unknown verdict is suspect)."""
    return Verdict.named(verdict).marked


class SummaryPage:
    """Writes summary.html from the controller's RunFinished: run.json and every worker's records, merged once."""

    def handle(self, event) -> None:
        if isinstance(event, RunFinished) and event.controller and event.document is not None \
                and event.run_dir is not None:
            (event.run_dir / "summary.html").write_text(render(event.run_dir, event.document, event.records),
                                                        encoding="utf-8")


def render(run_dir: Path, run: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
    """The page of one run: ``run`` (run.json) and its case ``records``."""
    groups = by_clause(records)
    parts = [_banner(run.get("exit_status"), groups),
             f"<h1>wirecheck run {escape(run['run_id'])}</h1>",
             f"<p>suite {escape(str(run.get('suite_version')))}, profile {escape(str(run.get('profile')))}, "
             f"started {escape(str(run.get('started_at')))}, finished {escape(str(run.get('finished_at')))}</p>"]
    if run.get("headline"):
        parts.append(f"<p class='headline bad'>{escape(run['headline'])}</p>")
    parts.append(_by_clause(groups))
    parts.append(_clients(run.get("clients") or []))
    parts.append(_api_support(run.get("api_support") or []))
    parts.append(_coverage(run.get("coverage") or {}))
    parts.append(_areas(records))
    parts.append(_targets(run.get("targets", {})))
    parts.append(_totals(run.get("totals") or {}))
    bad = [r for r in records if _marked(r["verdict"])]
    down = [r for r in bad if r["verdict"] == Verdict.TARGET_DOWN.value]
    shown = [r for r in bad if r["verdict"] != Verdict.TARGET_DOWN.value]
    parts.append(f"<h2>Cases that did not pass ({len(shown)}" +
                 (f", and {len(down)} TARGET-DOWN" if down else "") + ")</h2>")
    parts += [_case(run_dir, record, replay_command(run_dir, run, record)) for record in shown]
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>wirecheck "
            f"{escape(run['run_id'])}</title><style>{STYLE}</style></head><body>{''.join(parts)}</body></html>")


def _banner(exit_status: int | None, groups: list) -> str:
    """The run's verdict first: PASS (exit 0), FAIL (exit 1: what broke, in clauses and blocked cases), NOT RUN
    (any other exit: nothing could be judged)."""
    broke = [g for g in groups if "FAILED" in g.verdicts or "ERROR" in g.verdicts]
    if exit_status == 0:
        word, detail, style = "PASS", "every case that ran passed", "pass"
    elif exit_status == 1:
        blocked = sum(g.blocked for g in groups)
        clients = sum(len(g.client_scenarios) for g in groups)
        word, style = "FAIL", "fail"
        detail = (f"{len(broke)} clause{'s' if len(broke) != 1 else ''} broke"
                  + (f", {clients} client scenario{'s' if clients != 1 else ''} broken by them" if clients else "")
                  + (f", {blocked} case{'s' if blocked != 1 else ''} BLOCKED by them" if blocked else ""))
    else:
        word, detail, style = "NOT RUN", "no case could be judged", "notrun"
    return (f"<div class='banner {style}'><strong>{word}</strong> (exit code {escape(str(exit_status))}): "
            f"{escape(detail)}</div>")


def _areas(records: Sequence[Mapping[str, Any]]) -> str:
    """Protocol x area (the clause id's second part): how many cases of each verdict, for passing runs too."""
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for record in records:
        area = record["clause"].split(".")[1] if record["clause"].count(".") >= 2 else "-"
        cell = counts.setdefault((record["protocol"], area), {})
        cell[record["verdict"]] = cell.get(record["verdict"], 0) + 1
    verdicts = sorted({v for cell in counts.values() for v in cell}, key=lambda v: (not _marked(v), v))
    head = "".join(f"<th>{escape(v)}</th>" for v in verdicts)
    rows = "".join(f"<tr><td>{escape(protocol)}</td><td>{escape(area)}</td>" + "".join(
        f"<td class='{'bad' if _marked(v) and cell.get(v) else ''}'>{cell.get(v, '')}</td>" for v in verdicts)
        + "</tr>" for (protocol, area), cell in sorted(counts.items()))
    return f"<h2>By protocol and area</h2><table><tr><th>protocol</th><th>area</th>{head}</tr>{rows}</table>"


def _clients(rows: list[dict]) -> str:
    """The real-client matrix: one row per client (its version), one column per scenario."""
    if not rows:
        return ""
    scenarios = sorted({scenario for row in rows for scenario in row["scenarios"]})
    head = "".join(f"<th>{escape(s)}</th>" for s in scenarios)
    body = "".join(f"<tr><td>{escape(row['protocol'])}</td><td>{escape(row['client'])}</td>"
                   f"<td>{escape(str(row['version'] or ''))}</td>" + "".join(
                       f"<td class='{'bad' if _marked(row['scenarios'].get(s, 'OK')) else ''}'>"
                       f"{escape(row['scenarios'].get(s, ''))}</td>" for s in scenarios) + "</tr>" for row in rows)
    return (f"<h2>Real clients</h2><table><tr><th>protocol</th><th>client</th><th>version</th>{head}</tr>"
            f"{body}</table>")


def _api_support(rows: list[dict]) -> str:
    """Per message: the versions advertised, working and failing (protocols with per-version cases), and how
    many of its cases passed."""
    rows = [row for row in rows if row["executed"] or row.get("advertised")]
    if not rows:
        return ""

    def versions(row: dict, key: str) -> str:
        return escape(ranges(row[key])) if key in row else ""

    body = "".join(
        f"<tr><td>{escape(row['protocol'])}</td><td>{escape(row['message'])}</td><td>{escape(row['by'])}</td>"
        f"<td>{versions(row, 'advertised')}</td><td>{versions(row, 'working')}</td>"
        f"<td class='{'bad' if row.get('failing') else ''}'>{versions(row, 'failing')}</td>"
        f"<td class='{'' if row['passed'] == row['executed'] else 'bad'}'>{row['passed']}/{row['executed']}</td></tr>"
        for row in rows)
    return ("<h2>API support</h2><table><tr><th>protocol</th><th>message</th><th>by</th><th>versions advertised</th>"
            f"<th>working</th><th>failing</th><th>cases passed</th></tr>{body}</table>")


def _coverage(maps: dict) -> str:
    """Per protocol, a heatmap of request x reaction (mutants per cell, all session states summed; darker is more),
    the catalogue's cells marked where no mutant reached them, mutants per session state and the state moves."""
    if not maps:
        return ""
    parts = ["<h2>State coverage of the bulk fuzzer</h2>"]
    for protocol, one in maps.items():
        counts: dict[tuple[str, str], int] = {}
        for cell in one["cells"]:
            key = (cell["request"].split(" v", 1)[0], cell["reaction"])
            counts[key] = counts.get(key, 0) + cell["count"]
        missed = {(c["request"], c["reaction"]) for c in one["catalogue"] if not c["reached"]}
        requests = sorted({r for r, _ in counts} | {r for r, _ in missed})
        reactions = sorted({x for _, x in counts} | {x for _, x in missed})
        top = max(counts.values(), default=1)
        head = "".join(f"<th>{escape(x)}</th>" for x in reactions)
        body = "".join(f"<tr><th>{escape(r)}</th>"
                       f"{''.join(_heat(counts.get((r, x), 0), top, (r, x) in missed) for x in reactions)}</tr>"
                       for r in requests)
        distinct = one["distinct"]
        states = ", ".join(f"{escape(s)} {n}" for s, n in one["states"].items())
        moves = "; ".join(f"{escape(m['from'])} &rarr; {escape(m['to'])} by {escape(m['request'])} "
                          f"({escape(m['reaction'])}) &times;{m['count']}" for m in one["transitions"]) or "none"
        parts.append(
            f"<h3>{escape(protocol)}</h3><p>{one['mutants']} mutants; {distinct['cells']} reaction states, "
            f"{distinct['transitions']} transitions; catalogue cells reached {distinct['catalogue_reached']}/"
            f"{distinct['catalogue']} (&#10007;: named by a clause, never reached); mutants per session state: "
            f"{states}; state moves: {moves}</p><table><tr><th>request \\ reaction</th>{head}</tr>{body}</table>")
    return "".join(parts)


def _heat(count: int, top: int, missed: bool) -> str:
    """One heatmap cell: shaded by the log of its count; a catalogue cell never reached is marked."""
    if missed:
        return "<td class='bad' title='named by the catalogue, never reached'>&#10007;</td>"
    if not count:
        return "<td></td>"
    shade = 95 - int(55 * math.log1p(count) / math.log1p(top))
    return f"<td style='background:hsl(210,70%,{shade}%)'>{count}</td>"


def _targets(targets: dict) -> str:
    rows = "".join(f"<tr><td>{escape(name)}</td><td>{escape(str(t.get('address')))}</td>"
                   f"<td>{escape(str(t.get('found') or ('reference broker' if t.get('reference') else '')))}</td></tr>"
                   for name, t in targets.items())
    return f"<h2>Targets</h2><table><tr><th>protocol</th><th>address</th><th>probe</th></tr>{rows}</table>"


def _totals(totals: dict) -> str:
    rows = "".join(f"<tr><td class='{'bad' if _marked(v) else ''}'>{escape(v)}</td><td>{n}</td></tr>"
                   for v, n in sorted(totals.items()))
    return f"<h2>Totals</h2><table><tr><th>verdict</th><th>cases</th></tr>{rows}</table>"


def _by_clause(groups: list) -> str:
    """The failures by root cause: each clause that broke, its cases (parameters collapsed), what it blocked."""
    if not groups:
        return ""
    rows = "".join(
        f"<tr><td class='{'bad' if 'FAILED' in g.verdicts or 'ERROR' in g.verdicts else ''}'>{escape(g.clause)}</td>"
        f"<td>{escape(', '.join(f'{v} {n}' for v, n in sorted(g.verdicts.items())) or 'none of its own')}</td>"
        f"<td>{escape('; '.join(f'{case} [{len(params)}]' if len(params) > 1 else case for case, params in g.cases.items()))}</td>"
        f"<td>{escape(g.consequences() or 'nothing else')}</td></tr>" for g in groups)
    return ("<h2>Failures by clause</h2><table><tr><th>clause</th><th>cases</th><th>case IDs</th>"
            f"<th>what else it broke</th></tr>{rows}</table>")


def _case(run_dir: Path, record: Mapping[str, Any], replay: str | None = None) -> str:
    rows = [("verdict", record["verdict"]), ("clause", f"[{record['level']}] {record['clause']}: "
                                                       f"{record['requirement']}"),
            ("source", record["source"]), ("message", record["message"]), ("expected", record.get("expected")),
            ("actual", record.get("actual")), ("target", record.get("target")),
            ("attempts", record.get("attempts")), ("reproduce", record.get("reproduce")), ("replay", replay)]
    if record.get("blocked_by"):
        blocker = record["blocked_by"]
        rows.insert(1, ("blocked by", f"[{blocker['level']}] {blocker['clause']}: expected {blocker['expected']}; "
                                      f"got {blocker['actual']}"))
    table = "".join(f"<tr><th>{name}</th><td>{escape(str(value))}</td></tr>" for name, value in rows
                    if value not in (None, "", 1))
    conversation = ""
    if record.get("transcript"):
        path = run_dir / record["transcript"]
        if path.exists():
            conversation = _conversation(json.loads(path.read_text()))
    return (f"<h3>{escape(record['case'])} <small>{escape(record['nodeid'])}</small></h3>"
            f"<table>{table}</table>{conversation}")


def _conversation(transcript: dict) -> str:
    blocks = [(f"attempt {a['attempt']}: {a['outcome']}", a["events"]) for a in transcript.get("attempts", [])] + \
        [("last attempt" if transcript.get("attempts") else "conversation", transcript.get("events", []))]
    return "".join(f"<details><summary>{escape(title)} ({len(events)} events)</summary>"
                   f"<pre>{escape(_render(events))}</pre></details>" for title, events in blocks)


def _render(events: list[dict]) -> str:
    lines = []
    if len(events) > EVENTS_SHOWN:
        lines.append(f"... {len(events) - EVENTS_SHOWN} earlier events not shown")
    for e in events[-EVENTS_SHOWN:]:
        head = f"{e['t']:9.4f}s conn#{e['conn']} {e['kind'].upper():8}"
        if "hex" in e:
            data = bytes.fromhex(e["hex"][:1024])
            lines.append(f"{head} {e.get('len', len(data))} bytes  {e.get('decoded', e.get('detail', ''))}".rstrip())
            lines += ["      " + row for row in hexdump(data)]
        else:
            lines.append(f"{head} {e.get('detail') or e.get('peer', '')}".rstrip())
    return "\n".join(lines)
