"""The static reports render in headless Chromium from disk, with the matrix present and no console errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")

# Chromium logs every console message (uncaught exceptions and failed loads included) as ":CONSOLE" lines.
# The report's scripts log nothing, so any console line is a problem.
CONSOLE = re.compile(r":CONSOLE(\(\d+\))?[:\]]")


def _render(page, profile) -> tuple[str, str]:
    """(DOM after scripts ran, Chromium's log) of a page opened from disk."""
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, result.stderr


def _console_problems(log: str) -> list[str]:
    return [line for line in log.splitlines() if CONSOLE.search(line)]


def test_matrix_and_case_pages_render_without_console_errors(report, tmp_path):
    out = report
    summary = json.loads((out / "summary.json").read_text())
    dom, log = _render(out / "index.html", tmp_path / "profile")
    assert 'data-rendered="yes"' in dom  # report.js ran to the end
    assert dom.count('class="cell v-') >= len(summary["matrix"])
    assert 'class="cell v-FAILED"' in dom and "rustlog.framing.oversize" in dom
    assert _console_problems(log) == [], log[-3000:]
    case_page = out / summary["failing"][0]["page"]
    dom, log = _render(case_page, tmp_path / "profile")
    assert "Transcript" in dom and _console_problems(log) == []


def test_the_console_check_can_fail(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><head><link rel="stylesheet" href="missing.css"></head>'
                    "<body><script>undefinedFunction();</script></body></html>")
    _, log = _render(page, tmp_path / "profile")
    problems = _console_problems(log)
    assert any("Uncaught ReferenceError" in line for line in problems), log[-2000:]


def test_capture_report_renders_without_console_errors(tmp_path):
    from wirecheck.reports.html.captures import write_capture_site

    summary = {"files": 1, "flows": 1, "frames": 4, "violations": 1,
               "by_clause": [{"protocol": "kafka", "clause": "kafka.header.correlation-id", "level": "MUST",
                              "violations": 1, "flows": 1}]}
    flow = "127.0.0.1:53211 > 127.0.0.1:9092"
    index = write_capture_site(
        summary, [{"file": "/x/a.pcap", "packets": 12, "flows": 1, "problems": ""}],
        [{"file": "/x/a.pcap", "flow": flow, "protocol": "kafka", "detected_by": "port", "state": "complete",
          "client_frames": 2, "server_frames": 2, "bytes": 290, "violations": 1, "problems": ""}],
        [{"flow": flow, "side": "server", "frame_index": 0, "clause": "kafka.header.correlation-id", "level": "MUST",
          "message": "<script>alert(1)</script>", "hex": "0000000a57c1"}], tmp_path / "captures")
    dom, log = _render(index, tmp_path / "profile")
    assert 'data-rendered="yes"' in dom and "kafka.header.correlation-id" in dom
    assert "<script>alert(1)</script>" not in dom  # messages from the wire are escaped
    assert _console_problems(log) == []


def test_the_charts_are_drawn_by_plotly_in_the_browser(report, tmp_path):
    dom, log = _render(report / "index.html", tmp_path / "profile")
    charts = re.findall(r'data-chart="([^"]+)"', dom)
    assert charts == ["chart-trend", "chart-runs", "chart-protocols", "chart-heatmap"]
    # plotly.newPlot marks each drawn div and fills it with its SVG layers; an undrawn div stays empty
    assert dom.count("js-plotly-plot") >= len(charts), dom[:2000]
    assert dom.count('class="main-svg"') >= len(charts)
    assert 'class="hm"' in dom or "heatmaplayer" in dom  # the heatmap trace itself was drawn
    assert "http://" not in dom.split("<body", 1)[0] and "https://" not in dom.split("<body", 1)[0]
    assert _console_problems(log) == [], log[-3000:]


def test_the_chart_check_can_fail(report, tmp_path):
    """Without plotly.js the chart divs stay empty and the test above would see it."""
    broken = tmp_path / "site"
    shutil.copytree(report, broken)
    (broken / "assets" / "plotly.min.js").write_text("")
    dom, _ = _render(broken / "index.html", tmp_path / "profile")
    assert "js-plotly-plot" not in dom and 'class="main-svg"' not in dom
