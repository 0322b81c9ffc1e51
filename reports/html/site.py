"""Static HTML pages shared by the conformance report and the capture report.

Pages open from disk: relative links only, CSS and JS copied next to them, no external URL anywhere.
"""

from __future__ import annotations

import hashlib
import html
import re
from importlib import resources
from pathlib import Path

ASSETS = "assets"  # package data of reports.html (read through importlib.resources: also from a zip)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def esc(value) -> str:
    return "" if value is None else html.escape(str(value), quote=True)


def slug(*parts) -> str:
    """A file-name-safe, collision-free name for a target, case or flow."""
    text = "|".join("" if p is None else str(p) for p in parts)
    readable = _UNSAFE.sub("_", text)[:60].strip("_") or "x"
    return f"{readable}-{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def copy_assets(out_dir: Path) -> None:
    target = Path(out_dir) / "assets"
    target.mkdir(parents=True, exist_ok=True)
    for asset in resources.files("wirecheck.reports.html").joinpath(ASSETS).iterdir():
        if asset.is_file():
            (target / asset.name).write_bytes(asset.read_bytes())


def page(title: str, body: str, depth: int = 0, filterable: bool = False, charts: bool = False) -> str:
    """A whole page; ``depth`` is how many folders below the report root it lives (for asset links)."""
    up = "../" * depth
    filter_box = ('<input id="filter" type="search" placeholder="filter rows" aria-label="filter rows">'
                  ' <span id="shown" class="muted"></span>') if filterable else ""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title>"
            f'<link rel="stylesheet" href="{up}assets/report.css">'
            + (f'<script src="{up}assets/plotly.min.js"></script>' if charts else "") +
            f'<script src="{up}assets/report.js" defer></script></head>'
            f"<body><h1>{esc(title)}</h1>{filter_box}{body}</body></html>\n")


def table(headers: list[str], rows: list[list[str]], css: str = "filterable") -> str:
    """Rows are already-escaped HTML cells."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def verdict_cell(verdict: str | None, text: str | None = None, link: str | None = None, title: str = "") -> str:
    label = esc(text if text is not None else (verdict or "—"))
    if link:
        label = f'<a href="{esc(link)}">{label}</a>'
    return f'<td class="cell v-{esc(verdict or "none")}" title="{esc(title)}">{label}</td>'


def pct(value) -> str:
    return "—" if value is None else f"{100 * float(value):.0f}%"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
