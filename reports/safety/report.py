"""The report of one safety run: the checker's result with the run's facts (target, faults, windows, timing) as
``result.json``, and the same as text for people (``report.txt``, also printed)."""

from __future__ import annotations

import json
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


def build(result: Result, ops: list[dict], facts: dict) -> dict:
    windows = fault_windows(ops)
    by_kind = Counter((op["f"], op["type"]) for op in ops if op["process"] != NEMESIS and op["type"] != "invoke")
    return {**facts, **result.as_dict(), "operations": {f"{f}:{t}": n for (f, t), n in sorted(by_kind.items())},
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


def write(report: dict, directory: Path) -> str:
    (directory / "result.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    rendered = text(report)
    (directory / "report.txt").write_text(rendered, encoding="utf-8")
    return rendered
