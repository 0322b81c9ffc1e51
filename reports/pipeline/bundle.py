"""The zip to ship with ``spark-submit --py-files``: the packages the jobs import on executors.

    python -m wirecheck.reports.pipeline.bundle wirecheck-pipeline.zip

Executors still need the third-party packages (``pip install 'wirecheck[pipeline]'`` on every node).
"""

from __future__ import annotations

import importlib
import sys
import zipfile
from pathlib import Path

import wirecheck

PACKAGES = ("reports", "protocols")


def write_bundle(destination: str | Path) -> Path:
    """``wirecheck/__init__.py`` and ``wirecheck/<package>/...``, from a checkout or an installed wirecheck alike."""
    destination = Path(destination)
    with zipfile.ZipFile(destination, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.write(wirecheck.__file__, "wirecheck/__init__.py")
        for package in PACKAGES:
            root = Path(importlib.import_module(f"wirecheck.{package}").__path__[0])
            for path in sorted(root.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                    bundle.write(path, f"wirecheck/{package}/{path.relative_to(root).as_posix()}")
    return destination


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m wirecheck.reports.pipeline.bundle OUT.zip")
    print(write_bundle(sys.argv[1]))
