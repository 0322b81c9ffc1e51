"""The capture conformance report as one static page: files, flows, violations by clause, violations."""

from __future__ import annotations

from pathlib import Path

from wirecheck.reports.html.site import copy_assets, esc, page, table, write


def write_capture_site(summary: dict, files: list[dict], flows: list[dict], violations: list[dict],
                       out_dir: Path) -> Path:
    out_dir = Path(out_dir)
    copy_assets(out_dir)
    by_clause = table(["protocol", "clause", "level", "violations", "flows"],
                      [[esc(r["protocol"]), f"<code>{esc(r['clause'])}</code>", esc(r["level"]),
                        esc(r["violations"]), esc(r["flows"])] for r in summary["by_clause"]], css="by-clause")
    file_rows = table(["file", "packets", "flows", "problems"],
                      [[esc(Path(str(f["file"])).name), esc(f["packets"]), esc(f["flows"]),
                        esc(f["problems"]) or "—"] for f in files], css="files")
    flow_rows = table(["file", "flow", "protocol", "told by", "state", "client frames", "server frames", "bytes",
                       "violations", "problems"],
                      [[esc(Path(str(f["file"])).name), esc(f["flow"]), esc(f["protocol"] or "unknown"),
                        esc(f["detected_by"]), esc(f["state"]), esc(f["client_frames"]), esc(f["server_frames"]),
                        esc(f["bytes"]), esc(f["violations"]), esc(f["problems"]) or "—"] for f in flows],
                      css="flows")
    shown = len(violations)
    note = "" if shown >= summary["violations"] else \
        f'<p class="muted">First {shown} of {summary["violations"]}; violations.parquet has them all.</p>'
    violation_rows = table(["flow", "side", "frame", "clause", "level", "message", "hex excerpt"],
                           [[esc(v["flow"]), esc(v["side"]), esc(v["frame_index"]), f"<code>{esc(v['clause'])}</code>",
                             esc(v["level"]), esc(v["message"]), f'<span class="hex">{esc(v["hex"])}</span>']
                            for v in violations])
    body = (f'<p>{summary["files"]} file(s), {summary["flows"]} flow(s), {summary["frames"]} frame(s), '
            f'{summary["violations"]} violation(s). Machine-readable: <a href="summary.json">summary.json</a>, '
            f'violations.parquet, flows.parquet.</p>'
            f"<h2>Violations by clause</h2>{by_clause}<h2>Files</h2>{file_rows}<h2>Flows</h2>{flow_rows}"
            f"<h2>Violations</h2>{note}{violation_rows}")
    write(out_dir / "index.html", page("wirecheck capture conformance", body, filterable=True))
    return out_dir / "index.html"
