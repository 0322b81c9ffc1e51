"""summary.html as a QA lead reads it, rendered by headless Chromium: the verdict banner with the exit code first,
the failures by clause before the totals, the protocol x area table on passing runs too."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def run_rustlog(tmp_path: Path, *args: str) -> tuple[int, Path]:
    report = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites/rustlog/test_fetch.py", "-q", "-p", "no:xdist",
                           "-p", "no:cacheprovider", "-o", "addopts=", "--report-dir", str(report), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    [run_dir] = report.iterdir()
    return proc.returncode, run_dir


def render(page: Path, tmp_path: Path) -> tuple[str, Path]:
    """(the DOM Chromium built, a screenshot of the page)."""
    shot = tmp_path / "summary.png"
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1600"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=90)
    subprocess.run([*flags, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=90)
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout, shot


def test_a_failing_run_leads_with_its_verdict_and_the_clause_that_broke(tmp_path):
    code, run_dir = run_rustlog(tmp_path, "--reference-fault", "rustlog.at-hw-next-offset-zero")
    assert code == 1
    assert json.loads((run_dir / "run.json").read_text())["exit_status"] == 1
    dom, shot = render(run_dir / "summary.html", tmp_path)
    banner = dom.index("class=\"banner fail\"")
    assert "<strong>FAIL</strong> (exit code 1): 1 clause broke" in dom
    assert banner < dom.index("rustlog.fetch.at-hw") < dom.index("<h2>Totals</h2>")  # what broke before counts
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_passing_run_shows_pass_and_the_breakdown_by_area(tmp_path):
    code, run_dir = run_rustlog(tmp_path)
    assert code == 0
    dom, _ = render(run_dir / "summary.html", tmp_path)
    assert "class=\"banner pass\"" in dom and "<strong>PASS</strong> (exit code 0)" in dom
    assert "<h2>By protocol and area</h2>" in dom and "<td>rustlog</td><td>fetch</td>" in dom
