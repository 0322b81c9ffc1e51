"""The plot of one safety run: throughput and latency over time with the fault windows shaded, as one SVG file
(``plot.svg`` beside result.json) that any browser opens from disk: no script, no font or file fetched, nothing
to install (the pipeline's plotly is an optional extra; a run's report must not need it).

Two panels share the time axis (seconds since the run began, the history's clock):

- throughput: ok / fail / info completions per second (every client operation, polls and assigns included);
- latency (log scale): per operation kind, the median and the maximum of its ok completions in each second, and
  every fail and info completion as a mark of its own (at most ``MAX_MARKS`` of each, evenly spread), since those
  are the ones that pile up in fault windows.

Each fault window (``report.fault_windows``) is a shaded band over both panels, one colour per fault; hovering a
band shows its name, start and end. Client crashes are ticks under the throughput panel.
"""

from __future__ import annotations

import math
from collections import defaultdict
from html import escape
from pathlib import Path

from wirecheck.reports.safety.history import NEMESIS, completions

TYPE_COLOURS = {"ok": "#2e8b57", "fail": "#d62728", "info": "#f39c12"}
FUNCTION_COLOURS = {"send": "#1f77b4", "txn": "#9467bd", "poll": "#7f7f7f"}
FAULT_COLOURS = ("#c6dbef", "#dadaeb", "#fdd0a2", "#d9d9d9", "#c7e9c0", "#fcc5c0", "#e5d8bd", "#bcbddc")
MAX_MARKS = 2000  # fail / info marks each: the SVG stays a few hundred kB at 100,000 operations
LATENCY_FLOOR = 1e-4  # s: a completion in the same clock tick still gets a place on the log axis
WIDTH, PANEL, LEFT, RIGHT, TOP, GAP = 1100, 220, 70, 240, 40, 50


def series(ops: list[dict], bucket: float = 1.0) -> dict:
    """What the plot draws, from a history: ``end`` (the last event's time), ``throughput`` (type -> completions
    per bucket, index = floor(time / bucket)), ``latency`` (function -> [(bucket, median, max)] of its ok
    completions), ``marks`` (type fail/info -> [(time, latency)]) and ``crashes`` (times)."""
    end = max((op["time"] for op in ops), default=0.0)
    buckets = int(end // bucket) + 1
    throughput = {t: [0] * buckets for t in TYPE_COLOURS}
    ok_latencies: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    marks: dict[str, list[tuple[float, float]]] = {"fail": [], "info": []}
    for invoked, done in completions(ops):
        slot = int(done["time"] // bucket)
        throughput[done["type"]][slot] += 1
        latency = max(done["time"] - invoked["time"], LATENCY_FLOOR)
        if done["type"] == "ok":
            if done["f"] in FUNCTION_COLOURS:
                ok_latencies[done["f"]][slot].append(latency)
        else:
            marks[done["type"]].append((done["time"], latency))
    latency = {f: [(slot, _median(sorted(values)), max(values)) for slot, values in sorted(per_slot.items())]
               for f, per_slot in ok_latencies.items()}
    crashes = [op["time"] for op in ops if op["f"] == "crash" and op["process"] != NEMESIS]
    return {"end": end, "bucket": bucket, "throughput": throughput, "latency": latency,
            "marks": {t: _spread(m, MAX_MARKS) for t, m in marks.items()},
            "marked": {t: len(m) for t, m in marks.items()}, "crashes": crashes}


def _median(values: list[float]) -> float:
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _spread(items: list, limit: int) -> list:
    """At most ``limit`` of ``items``, evenly spaced over the list (so over time): the shape of a pile-up stays."""
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def ticks(high: float, most: int = 10) -> list[float]:
    """Round axis values from 0 to ``high`` (steps of 1, 2 or 5 times a power of ten), at most ``most`` + 1."""
    if high <= 0:
        return [0.0]
    raw = high / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(high / step + 1e-9) + 1)]


def _num(value: float) -> str:
    return f"{value:.6g}"


def _x(time: float, end: float) -> float:
    return LEFT + (WIDTH - LEFT - RIGHT) * (time / end if end else 0.0)


def svg(ops: list[dict], windows: list[dict], title: str) -> str:
    """The whole SVG document: ``windows`` as ``report.fault_windows`` gives them, ``title`` above the panels."""
    data = series(ops)
    end = max(data["end"], max((w["end"] or w["start"] for w in windows), default=0.0), 1.0)
    top1, top2 = TOP, TOP + PANEL + GAP
    height = top2 + PANEL + 40
    right = WIDTH - RIGHT
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">',
           f"<title>{escape(title)}</title>", '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-size="14" font-weight="bold">{escape(title)}</text>']
    # fault windows under everything else, over both panels
    colour_of: dict[str, str] = {}
    for w in windows:
        colour = colour_of.setdefault(w["fault"], FAULT_COLOURS[len(colour_of) % len(FAULT_COLOURS)])
        x0, x1 = _x(w["start"], end), _x(end if w["end"] is None else w["end"], end)
        until = "never closed" if w["end"] is None else f"{w['end']:.3f} s"
        out.append(f'<rect class="fault" data-fault="{escape(w["fault"])}" x="{x0:.2f}" y="{top1}" '
                   f'width="{max(x1 - x0, 1.0):.2f}" height="{top2 + PANEL - top1}" fill="{colour}" '
                   f'fill-opacity="0.6"><title>{escape(w["fault"])}: {w["start"]:.3f} s to {until}</title></rect>')
    out += _throughput(data, end, top1)
    out += _latency(data, end, top2)
    for t in ticks(end):
        x = _x(t, end)
        out.append(f'<text x="{x:.2f}" y="{top2 + PANEL + 15}" text-anchor="middle">{_num(t)}</text>')
    out.append(f'<text x="{(LEFT + right) / 2}" y="{top2 + PANEL + 32}" text-anchor="middle">'
               "seconds since the run began</text>")
    out += _legend(data, colour_of, right + 12, top1)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _frame(top: int, label: str) -> list[str]:
    return [f'<rect x="{LEFT}" y="{top}" width="{WIDTH - LEFT - RIGHT}" height="{PANEL}" fill="none" '
            'stroke="#444"/>',
            f'<text transform="translate(16,{top + PANEL / 2}) rotate(-90)" text-anchor="middle">{label}</text>']


def _throughput(data: dict, end: float, top: int) -> list[str]:
    peak = max((max(counts, default=0) for counts in data["throughput"].values()), default=0)
    scale = ticks(max(peak, 1), 5)
    high = scale[-1] if scale[-1] >= peak else scale[-1] + (scale[1] - scale[0] if len(scale) > 1 else 1)

    def y(value: float) -> float:
        return top + PANEL - PANEL * value / high

    out = _frame(top, "completions / s")
    for v in ticks(high, 5):
        out.append(f'<text x="{LEFT - 6}" y="{y(v) + 4:.2f}" text-anchor="end">{_num(v)}</text>')
    bucket = data["bucket"]
    for type_, counts in data["throughput"].items():
        if not any(counts):
            continue
        points = " ".join(f"{_x((i + 0.5) * bucket, end):.2f},{y(n):.2f}" for i, n in enumerate(counts))
        out.append(f'<polyline class="throughput" data-type="{type_}" points="{points}" fill="none" '
                   f'stroke="{TYPE_COLOURS[type_]}" stroke-width="1.5"/>')
    for t in data["crashes"]:
        x = _x(t, end)
        out.append(f'<line class="crash" x1="{x:.2f}" x2="{x:.2f}" y1="{top + PANEL}" y2="{top + PANEL + 8}" '
                   f'stroke="black"><title>client crash at {t:.3f} s</title></line>')
    return out


def _latency(data: dict, end: float, top: int) -> list[str]:
    values = [v for rows in data["latency"].values() for _, *both in rows for v in both]
    values += [lat for marks in data["marks"].values() for _, lat in marks]
    low = math.floor(math.log10(min(values, default=LATENCY_FLOOR)))
    high = max(math.ceil(math.log10(max(values, default=1.0))), low + 1)

    def y(value: float) -> float:
        return top + PANEL - PANEL * (math.log10(value) - low) / (high - low)

    out = _frame(top, "latency (s, log)")
    for power in range(low, high + 1):
        out.append(f'<text x="{LEFT - 6}" y="{y(10.0 ** power) + 4:.2f}" text-anchor="end">{_num(10.0 ** power)}'
                   "</text>")
        if low < power < high:
            out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(10.0 ** power):.2f}" '
                       f'y2="{y(10.0 ** power):.2f}" stroke="#ddd"/>')
    bucket = data["bucket"]
    for f, rows in sorted(data["latency"].items()):
        for which, index, dash in (("median", 1, ""), ("max", 2, ' stroke-dasharray="4 3"')):
            steps, last = [], None
            for row in rows:  # a second without an ok completion of ``f`` breaks the line (no made-up slope)
                steps.append(("L" if last == row[0] - 1 else "M")
                             + f"{_x((row[0] + 0.5) * bucket, end):.2f},{y(row[index]):.2f}")
                last = row[0]
            out.append(f'<path class="latency" data-f="{f}" data-stat="{which}" d="{" ".join(steps)}" fill="none" '
                       f'stroke="{FUNCTION_COLOURS[f]}" stroke-width="1.2"{dash}/>')
    for type_, marks in data["marks"].items():
        for t, lat in marks:
            out.append(f'<circle class="mark" data-type="{type_}" cx="{_x(t, end):.2f}" cy="{y(lat):.2f}" r="2" '
                       f'fill="{TYPE_COLOURS[type_]}"/>')
    return out


def _legend(data: dict, colour_of: dict[str, str], x: float, top: int) -> list[str]:
    entries = [(TYPE_COLOURS[t], f"{t} / s") for t in TYPE_COLOURS if any(data["throughput"][t])]
    entries += [(FUNCTION_COLOURS[f], f"{f} latency (median, max dashed)") for f in sorted(data["latency"])]
    for type_, shown in data["marks"].items():
        if shown:
            cut = data["marked"][type_]
            entries.append((TYPE_COLOURS[type_], f"{type_} op" + (f" ({len(shown)} of {cut})" if cut > len(shown)
                                                                   else "")))
    entries += [(colour, f"fault: {name}") for name, colour in colour_of.items()]
    if data["crashes"]:
        entries.append(("black", "client crash (tick)"))
    out = []
    for i, (colour, label) in enumerate(entries):
        y = top + 14 * i
        out.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{x + 14}" y="{y + 9}">{escape(label)}</text>')
    return out


def write(ops: list[dict], windows: list[dict], title: str, path: Path) -> Path:
    path.write_text(svg(ops, windows, title), encoding="utf-8")
    return path
