"""The static gate: basedpyright over the whole checkout (settings in pyproject.toml), failing on

- any import that does not resolve, anywhere (a module, or a name the module does not define statically);
- any error at all in the shared engine (ENGINE below), checked in basedpyright's "basic" mode.

The protocol-specific code is read by the same run, for its imports only: scapy layers and Kafka's generated
messages give their fields at run time, which a checker cannot see.

    python scripts/typecheck.py            # exit 1 and one line per finding when the gate fails
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the shared engine, as basedpyright names the files (through the wirecheck/<package> links)
ENGINE = re.compile(r"^wirecheck/([^/]+\.py"
                    r"|(protocols|strategies|targets|reports)/[^/]+\.py"
                    r"|targets/(runner|transport)/[^/]+\.py)$")

IMPORT_RULES = {"reportMissingImports", "reportMissingModuleSource"}


def is_import_finding(diagnostic: dict) -> bool:
    return diagnostic.get("rule") in IMPORT_RULES or "is unknown import symbol" in diagnostic["message"]


def findings(report: dict) -> list[str]:
    out = []
    for diagnostic in report["generalDiagnostics"]:
        path = Path(diagnostic["file"]).relative_to(ROOT).as_posix()
        if diagnostic["severity"] != "error":
            continue
        if is_import_finding(diagnostic) or ENGINE.match(path):
            line = diagnostic["range"]["start"]["line"] + 1
            message = " ".join(diagnostic["message"].split())
            out.append(f"{path}:{line}: {diagnostic.get('rule', '')}: {message}")
    return out


def main() -> int:
    checker = shutil.which("basedpyright")
    if checker is None:
        print("basedpyright is not installed: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    run = subprocess.run([checker, "--outputjson"], cwd=ROOT, capture_output=True, text=True)
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        print(run.stdout + run.stderr, file=sys.stderr)
        return 2
    found = findings(report)
    for line in found:
        print(line)
    summary = report["summary"]
    print(f"basedpyright: {summary['filesAnalyzed']} files, {len(found)} findings "
          f"(unresolved imports anywhere, errors in the shared engine)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
