"""The zip to ship with ``spark-submit --py-files``: the packages the jobs import on executors.

    python -m wirecheck.reports.pipeline.bundle wirecheck-pipeline.zip

Executors still need the third-party packages (``pip install 'wirecheck[pipeline]'`` on every node).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("reports", "protocols")


def write_bundle(destination: str | Path) -> Path:
    destination = Path(destination)
    with zipfile.ZipFile(destination, "w", zipfile.ZIP_DEFLATED) as bundle:
        for package in PACKAGES:
            for path in sorted((ROOT / package).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                    bundle.write(path, path.relative_to(ROOT).as_posix())
    return destination


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m wirecheck.reports.pipeline.bundle OUT.zip")
    print(write_bundle(sys.argv[1]))
