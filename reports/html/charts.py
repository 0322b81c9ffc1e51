"""Charts of the conformance report, drawn by plotly.js in the browser from a copy next to the pages (no CDN).

Each function returns an HTML fragment (a div and the script that draws it); ``write_plotly`` puts
``assets/plotly.min.js`` into the site once, and pages with charts load it before their own scripts.
"""

from __future__ import annotations

from pathlib import Path

#: The report's verdict colours (assets/report.css), so charts and tables read alike.
COLOURS = {"OK": "#7bd17b", "XFAIL": "#b7e4b7", "NON-STRICT": "#f5e07a", "XPASS": "#f5b97a", "FAILED": "#f07b7b",
           "ERROR": "#c77bf0", "UNIMPLEMENTED": "#d8d8d8", "NOT-RUN": "#eeeeee", "BLOCKED": "#a9c4e8",
           "TARGET-DOWN": "#8a8a8a", "FLAKY": "#d9ec9a", "DIVERGENT": "#f0a37b"}
PLOTLY_JS = "plotly.min.js"
CONFIG = {"displaylogo": False, "responsive": True}


def write_plotly(out_dir: Path) -> None:
    from plotly.offline import get_plotlyjs

    target = Path(out_dir) / "assets" / PLOTLY_JS
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.write_text(get_plotlyjs(), encoding="utf-8")


def _html(figure, div_id: str, height: int) -> str:
    figure.update_layout(template="none", height=height, margin={"l": 60, "r": 20, "t": 40, "b": 60},
                         font={"family": "system-ui, sans-serif", "size": 12})
    body = figure.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=CONFIG)
    return f'<div class="chart" data-chart="{div_id}">{body}</div>'


def trend(rows: list[dict]) -> str:
    """Pass rate per target over its runs (oldest left)."""
    import plotly.graph_objects as go

    figure = go.Figure()
    for target in sorted({r["target"] for r in rows}):
        runs = sorted((r for r in rows if r["target"] == target), key=lambda r: -r["run_rank"])
        figure.add_trace(go.Scatter(
            x=[r["run_ts"] or r["run_id"] for r in runs],
            y=[None if r["pass_rate"] is None else 100 * r["pass_rate"] for r in runs],
            customdata=[[r["run_id"], r["passing"], r["executed"]] for r in runs], mode="lines+markers", name=target,
            hovertemplate="%{customdata[0]}<br>%{y:.1f}% (%{customdata[1]}/%{customdata[2]})<extra>" + target
                          + "</extra>"))
    figure.update_layout(title="Pass rate per target", yaxis={"title": "% passing", "range": [0, 105]})
    return _html(figure, "chart-trend", 340)


def verdicts_stacked(rows: list[dict], by: str, title: str, div_id: str) -> str:
    """Stacked bars of records per verdict; ``by`` is the row key on the x axis."""
    import plotly.graph_objects as go

    groups = sorted({r[by] for r in rows})
    counts: dict[tuple, int] = {}
    for r in rows:
        counts[(r[by], r["verdict"])] = counts.get((r[by], r["verdict"]), 0) + r["records"]
    verdicts = [v for v in COLOURS if any(k[1] == v for k in counts)] + sorted(
        {k[1] for k in counts if k[1] not in COLOURS})
    figure = go.Figure([go.Bar(name=v, x=groups, y=[counts.get((g, v), 0) for g in groups],
                               marker_color=COLOURS.get(v, "#999999")) for v in verdicts])
    figure.update_layout(barmode="stack", title=title, yaxis={"title": "records"})
    return _html(figure, div_id, 340)


def heatmap(matrix: list[dict], max_clauses: int = 400) -> str:
    """Clause x target, coloured by pass rate over the window (text: the latest verdict)."""
    import plotly.graph_objects as go

    targets = sorted({m["target"] for m in matrix})
    clauses = sorted({m["clause"] for m in matrix})[:max_clauses]
    cell = {(m["clause"], m["target"]): m for m in matrix}
    z = [[None if (c, t) not in cell or cell[(c, t)]["pass_rate"] is None else 100 * cell[(c, t)]["pass_rate"]
          for t in targets] for c in clauses]
    text = [[cell[(c, t)]["latest_verdict"] if (c, t) in cell else "" for t in targets] for c in clauses]
    figure = go.Figure(go.Heatmap(z=z, x=targets, y=clauses, text=text, zmin=0, zmax=100,
                                  colorscale=[[0, "#f07b7b"], [0.5, "#f5e07a"], [1, "#7bd17b"]],
                                  hovertemplate="%{y} on %{x}<br>%{z:.0f}% passing, latest %{text}<extra></extra>",
                                  colorbar={"title": "% passing"}))
    figure.update_layout(title="Clause x target: pass rate over the window", yaxis={"autorange": "reversed"},
                         margin={"l": 260})
    return _html(figure, "chart-heatmap", max(300, 40 + 16 * len(clauses)))
