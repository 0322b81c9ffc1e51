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
