"""The report of one safety run: the checker's result with the run's facts (target, faults, windows, timing) as
``result.json``, and the same as text for people (``report.txt``, also printed)."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections import Counter
from pathlib import Path

from wirecheck.reports.safety.checker import KINDS, Result
from wirecheck.reports.safety.history import NEMESIS


def fault_windows(ops: list[dict]) -> list[dict]:
    """Each fault window: name, start, end (None if never closed), and what the start said."""
    open_at: dict[str, dict] = {}
    windows = []
    for op in ops:
        if op["process"] != NEMESIS or op["f"] != "fault":
            continue
        value = op["value"]
        if value["phase"] == "start":
            open_at[value["fault"]] = op
        elif value["fault"] in open_at:
            start = open_at.pop(value["fault"])
            windows.append({"fault": value["fault"], "start": start["time"], "end": op["time"],
                            **{k: v for k, v in start["value"].items() if k not in ("fault", "phase")}})
    windows += [{"fault": name, "start": op["time"], "end": None} for name, op in open_at.items()]
    return sorted(windows, key=lambda w: w["start"])


#: result.json's format; the run warehouse (reports/pipeline/safety.py) reads files that name it
SCHEMA = "wirecheck.safety/1"


def identity(facts: dict) -> dict:
    """What the warehouse files a run under: ``schema``, ``run_id`` (UTC start and a random suffix, like
    run.json's), ``started_at`` and ``finished_at`` (ISO 8601 UTC; the start is now less the run's ``seconds``).
    Facts that name any of them win."""
    finished = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    started = finished - dt.timedelta(seconds=round(float(facts.get("seconds") or 0)))
    return {"schema": SCHEMA, "run_id": f"{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}",
            "started_at": started.isoformat().replace("+00:00", "Z"),
            "finished_at": finished.isoformat().replace("+00:00", "Z")}


def build(result: Result, ops: list[dict], facts: dict) -> dict:
    windows = fault_windows(ops)
    by_kind = Counter((op["f"], op["type"]) for op in ops if op["process"] != NEMESIS and op["type"] != "invoke")
    return {**identity(facts), **facts, **result.as_dict(),
            "operations": {f"{f}:{t}": n for (f, t), n in sorted(by_kind.items())},
            "fault_counts": dict(Counter(w["fault"] for w in windows)), "fault_windows": windows}


def text(report: dict) -> str:
    lines = [f"safety {report.get('protocol', '?')} against {report.get('target', '?')}: "
             f"{'no anomaly' if report['valid'] else 'ANOMALIES'}",
             f"  {report['acknowledged']} values acknowledged, {report['read_values']} distinct values read; "
             f"completions {report['counts']}",
             f"  operations {report['operations']}",
             f"  faults {report['fault_counts'] or 'none'}"]
    for kind, why in report.get("unjudged", {}).items():
        lines.append(f"  not judged: {kind} ({why})")
    for note in report.get("notes", []):
        lines.append(f"  note: {note}")
    for kind in KINDS:
        count = report["anomaly_counts"].get(kind)
        if not count:
            continue
        lines.append(f"  {kind}: {count}")
        for witness in report["anomalies"][kind][:5]:
            lines.append(f"    {json.dumps(witness, separators=(',', ':'))}")
    return "\n".join(lines) + "\n"


def write(report: dict, directory: Path, ops: list[dict] | None = None) -> str:
    """result.json, report.txt and, given the history, plot.svg (reports/safety/plot.py)."""
    (directory / "result.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    rendered = text(report)
    (directory / "report.txt").write_text(rendered, encoding="utf-8")
    if ops is not None:
        from wirecheck.reports.safety import plot

        plot.write(ops, report["fault_windows"], rendered.splitlines()[0], directory / "plot.svg")
    return rendered
